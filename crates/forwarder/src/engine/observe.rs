//! Read-only views for the status datasets: what congestion-control header
//! fields each face sends (what this node tells its neighbours, summarised
//! per second), the Content Store's figures, and the CC hook object for
//! readers that know its type.

use cc_core::{Duration, Timestamp};
use icn_tlv::CcFields;

use super::cc_hooks::CcHooks;
use super::forwarder::Forwarder;
use super::multicast_hook::MulticastHook;
use super::queue::PacketKind;

/// Length of one [`CcStamps`] window.
pub const STAMP_WINDOW: Duration = Duration::from_secs(1);

/// Smallest and largest value one header field took in a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StampRange {
    /// Smallest value sent.
    pub min: u64,
    /// Largest value sent.
    pub max: u64,
}

impl StampRange {
    fn fold(r: &mut Option<StampRange>, v: Option<u64>) {
        let Some(v) = v else { return };
        *r = Some(match *r {
            Some(x) => StampRange {
                min: x.min.min(v),
                max: x.max.max(v),
            },
            None => StampRange { min: v, max: v },
        });
    }
}

/// The CC header fields one face sent during one window. Several flows
/// leaving by a face each carry their own value, hence a range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StampWindow {
    /// CCC pace constraint on Data and Nacks (eq. 9: what the downstream
    /// may send), milli-Interests/s.
    pub pace_constraint: Option<StampRange>,
    /// QSCCP TargetRate on Data and Nacks (the PECN rate R the downstream
    /// hears), bit/s.
    pub target_rate: Option<StampRange>,
    /// CCC pace objective on Interests (Algorithm 1's share), milli-Interests/s.
    pub pace_objective: Option<StampRange>,
    /// QSCCP DownstreamRate on Interests, bit/s.
    pub downstream_rate: Option<StampRange>,
}

impl StampWindow {
    /// True when no field was sent.
    pub fn is_empty(&self) -> bool {
        *self == StampWindow::default()
    }
}

/// Per-face summary of the CC fields sent, over [`STAMP_WINDOW`] windows.
///
/// [`last_window`](Self::last_window) is the last complete window. A face
/// that stopped sending such fields shows an empty window once the next
/// one closes (windows close on the next packet or periodic CC update), so
/// a scrape sees live values, not the last flow's forever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CcStamps {
    published: StampWindow,
    current: StampWindow,
    start: Timestamp,
}

impl CcStamps {
    pub(super) fn new(now: Timestamp) -> Self {
        CcStamps {
            published: StampWindow::default(),
            current: StampWindow::default(),
            start: now,
        }
    }

    /// The last complete window.
    pub fn last_window(&self) -> &StampWindow {
        &self.published
    }

    /// Closes the current window if it is over: it becomes the published
    /// one, unless a whole window has passed since (then nothing was sent
    /// in the last window and an empty one is published).
    pub(super) fn roll(&mut self, now: Timestamp) {
        if now < self.start + STAMP_WINDOW {
            return;
        }
        self.published = if now < self.start + STAMP_WINDOW + STAMP_WINDOW {
            self.current
        } else {
            StampWindow::default()
        };
        self.current = StampWindow::default();
        self.start = now;
    }

    /// A packet of `kind` with `cc` leaves the face at `now`.
    pub(super) fn observe(&mut self, now: Timestamp, kind: PacketKind, cc: &CcFields) {
        self.roll(now);
        let w = &mut self.current;
        match kind {
            PacketKind::Interest => {
                StampRange::fold(&mut w.pace_objective, cc.pace_objective_milli_ips);
                StampRange::fold(&mut w.downstream_rate, cc.downstream_rate_bps);
            }
            PacketKind::Data | PacketKind::Nack => {
                StampRange::fold(&mut w.pace_constraint, cc.pace_constraint_milli_ips);
                StampRange::fold(&mut w.target_rate, cc.target_rate_bps);
            }
        }
    }
}

/// The Content Store's occupancy, bounds and lookups (NFD's `cs/info`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsStats {
    /// Data stored.
    pub entries: u64,
    /// Wire bytes stored.
    pub bytes: u64,
    /// Bound on entries (`[tables] cs_max_packets`).
    pub max_entries: u64,
    /// Bound on bytes (`[tables] cs_max_bytes`).
    pub max_bytes: u64,
    /// Interests answered from the store.
    pub hits: u64,
    /// Interests looked up and not found.
    pub misses: u64,
}

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// The Content Store's figures.
    pub fn cs_stats(&self) -> CsStats {
        CsStats {
            entries: self.cs.len() as u64,
            bytes: self.cs.bytes() as u64,
            max_entries: self.cfg.cs_max_packets as u64,
            max_bytes: self.cfg.cs_max_bytes as u64,
            hits: self.counters.n_cs_hits,
            misses: self.counters.n_cs_misses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constraint(v: u64) -> CcFields {
        CcFields {
            pace_constraint_milli_ips: Some(v),
            ..CcFields::default()
        }
    }

    #[test]
    fn a_window_publishes_the_range_of_each_field_once_it_closes() {
        let t0 = Timestamp::ZERO;
        let mut s = CcStamps::new(t0);
        s.observe(t0, PacketKind::Data, &constraint(5_000));
        s.observe(
            t0 + Duration::from_millis(10),
            PacketKind::Data,
            &constraint(2_000),
        );
        let objective = CcFields {
            pace_objective_milli_ips: Some(9),
            target_rate_bps: Some(1), // not an Interest field: ignored
            ..CcFields::default()
        };
        s.observe(
            t0 + Duration::from_millis(20),
            PacketKind::Interest,
            &objective,
        );
        assert!(s.last_window().is_empty(), "window still open");
        s.roll(t0 + STAMP_WINDOW);
        let w = *s.last_window();
        assert_eq!(
            w.pace_constraint,
            Some(StampRange {
                min: 2_000,
                max: 5_000
            })
        );
        assert_eq!(w.pace_objective, Some(StampRange { min: 9, max: 9 }));
        assert_eq!((w.target_rate, w.downstream_rate), (None, None));
    }

    #[test]
    fn a_face_that_stops_stamping_shows_an_empty_window() {
        let t0 = Timestamp::ZERO;
        let mut s = CcStamps::new(t0);
        s.observe(t0, PacketKind::Data, &constraint(7));
        s.roll(t0 + STAMP_WINDOW);
        assert!(!s.last_window().is_empty());
        s.roll(t0 + STAMP_WINDOW + STAMP_WINDOW);
        assert!(s.last_window().is_empty());
        // A long silence, then one packet: the old window is not published.
        s.observe(
            t0 + Duration::from_secs(3),
            PacketKind::Data,
            &constraint(7),
        );
        s.observe(
            t0 + Duration::from_secs(10),
            PacketKind::Data,
            &constraint(8),
        );
        assert!(s.last_window().is_empty());
    }
}
