//! The Data markers of a face (PCON's CoDel, WinCM's multi-marking CoDel),
//! one for the whole face or one per flow on flow-queued faces.
//!
//! On a flow-queued face (`engine::queue`, `cc_core::fq`) a packet's
//! sojourn is its own flow's queueing, so each flow gets its own marker
//! and only flows whose packets wait above the target are marked (RFC 8290
//! §4.1: CoDel per flow queue). CoDel's MTU rule (no congestion while at
//! most one packet is queued) looks at the whole face's backlog, as Linux
//! `fq_codel` does: judged per flow, every flow could keep one packet
//! standing whatever it waited for its turn, N flows kept N to 2N packets
//! queued, and the envelope sweep measured p95 queues of 2N Data (e.g.
//! ten flows of 1200-byte Data at 2 Mbit/s and 150 ms: 95-105 ms; with the
//! face's backlog, 70-75 ms).
//! Per-flow markers that went idle are dropped at the periodic refresh;
//! their counters stay in the face totals.

use std::collections::BTreeMap;

use cc_core::codel::{CodelConfig, CodelMarker};
use cc_core::wincm::{MultiMarkCodel, MultiMarkConfig, StandingQueue};
use cc_core::{Duration, Timestamp};

use crate::engine::QueueView;

/// Which marking law and its configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MarkerLaw {
    Codel(CodelConfig),
    MultiMark(MultiMarkConfig),
}

/// A Data dequeued from a flow-queued face, for its flow's marker.
#[derive(Debug, Clone, Copy)]
struct FlowDequeue {
    /// Bytes of the flow still queued behind it.
    backlog_bytes: usize,
    /// The face's queue stands (`StandingQueue`, W14).
    standing: bool,
}

#[derive(Debug, Clone)]
enum Marker {
    Codel(CodelMarker),
    MultiMark(MultiMarkCodel),
}

impl Marker {
    fn new(law: MarkerLaw) -> Self {
        match law {
            MarkerLaw::Codel(c) => Marker::Codel(CodelMarker::new(c)),
            MarkerLaw::MultiMark(c) => Marker::MultiMark(MultiMarkCodel::new(c)),
        }
    }

    /// `flow`: on a flow-queued face, what the per-flow marker reads
    /// besides the face's backlog.
    fn on_dequeue(
        &mut self,
        now: Timestamp,
        sojourn: Duration,
        backlog_bytes: usize,
        packet_bytes: usize,
        capacity_bps: Option<u64>,
        flow: Option<FlowDequeue>,
    ) -> bool {
        match self {
            Marker::Codel(c) => {
                c.observe_packet(packet_bytes);
                c.on_dequeue(now, sojourn, backlog_bytes)
            }
            Marker::MultiMark(m) => {
                // At most one packet's bytes behind this one: the queue
                // (nearly) emptied. Algorithm 1 has no MTU rule; per flow
                // it takes CoDel's (on the face's backlog, see the module
                // doc), or a flow is marked for the last packet it sent
                // while the link idles. Prompt re-entry re-arms only on
                // it: a queue hovering at target dips under it all the
                // time on a real link (W11 in docs/deviations.md).
                let emptied = backlog_bytes <= packet_bytes;
                // Within one packet's time of the link (W13).
                let excused = emptied && m.mtu_excused(sojourn, packet_bytes, capacity_bps);
                let s = if flow.is_some() && excused {
                    Duration::ZERO
                } else {
                    sojourn
                };
                match flow {
                    // The flow's own queue emptied: its cuts arrived (W14).
                    Some(f) => m.on_dequeue_flow(
                        now,
                        s,
                        emptied,
                        f.backlog_bytes <= packet_bytes,
                        f.standing,
                    ),
                    None => m.on_dequeue_emptied(now, s, emptied),
                }
            }
        }
    }

    fn idle(&self, now: Timestamp) -> bool {
        match self {
            Marker::Codel(c) => c.is_idle(now),
            Marker::MultiMark(m) => m.is_idle(now),
        }
    }

    fn marking(&self) -> bool {
        match self {
            Marker::Codel(c) => c.is_marking(),
            Marker::MultiMark(m) => m.stop_marking_time().is_some(),
        }
    }

    /// (marks, episodes) so far.
    fn counts(&self) -> (u64, u64) {
        match self {
            Marker::Codel(c) => (c.stats().marks, c.stats().episodes),
            Marker::MultiMark(m) => (m.stats().marks, m.stats().episodes),
        }
    }
}

/// Per-flow markers a face keeps (the bound RFC 8290's 1024 buckets gave
/// when flows were folded into them). A flow that finds them all in use
/// (each is dropped once idle, at the periodic refresh) is judged by the
/// face's own marker on its own sojourn until one frees: a flood of flows
/// costs no more memory than before, and ordinary loads never reach it.
pub(crate) const MAX_FLOW_MARKERS: usize = 1024;

/// A face's marker: whole-face, or per flow when the face queues per flow.
#[derive(Debug, Clone)]
pub(crate) struct FaceMarker {
    law: MarkerLaw,
    whole: Marker,
    flows: BTreeMap<u32, Marker>,
    /// Counters of per-flow markers already dropped.
    retired: (u64, u64),
    /// Whether the face's queue stands (WinCM's per-flow markers, W14).
    standing: StandingQueue,
}

impl FaceMarker {
    pub(crate) fn new(law: MarkerLaw) -> Self {
        FaceMarker {
            law,
            whole: Marker::new(law),
            flows: BTreeMap::new(),
            retired: (0, 0),
            standing: StandingQueue::default(),
        }
    }

    /// A Data of `packet_bytes` left after `sojourn`; whether to mark it.
    pub(crate) fn on_dequeue(
        &mut self,
        now: Timestamp,
        sojourn: Duration,
        packet_bytes: usize,
        view: &QueueView,
    ) -> bool {
        // WinCM: whether the face's queue stands (W14), emptied as W11
        // and CoDel's MTU rule read it (at most one packet behind). Fed
        // every Data the face sends, priority Data too; only per-flow
        // markers read it.
        let standing = match self.law {
            MarkerLaw::MultiMark(c) => {
                self.standing
                    .on_dequeue(&c, now, sojourn, view.stats.data_bytes <= packet_bytes)
            }
            MarkerLaw::Codel(_) => false,
        };
        // A new flow past the bound is judged by the face's marker.
        let flow = view
            .flow
            .filter(|f| self.flows.len() < MAX_FLOW_MARKERS || self.flows.contains_key(&f.bucket));
        match flow {
            Some(flow) => {
                let law = self.law;
                self.flows
                    .entry(flow.bucket)
                    .or_insert_with(|| Marker::new(law))
                    .on_dequeue(
                        now,
                        sojourn,
                        view.stats.data_bytes,
                        packet_bytes,
                        view.capacity_bps,
                        Some(FlowDequeue {
                            backlog_bytes: flow.backlog_bytes,
                            standing,
                        }),
                    )
            }
            None => self.whole.on_dequeue(
                now,
                sojourn,
                view.stats.data_bytes,
                packet_bytes,
                view.capacity_bps,
                None,
            ),
        }
    }

    /// Drops per-flow markers with no episode under way.
    pub(crate) fn prune(&mut self, now: Timestamp) {
        let retired = &mut self.retired;
        self.flows.retain(|_, m| {
            if m.idle(now) {
                let (a, b) = m.counts();
                retired.0 += a;
                retired.1 += b;
                false
            } else {
                true
            }
        });
    }

    /// Per-flow markers alive.
    #[cfg(test)]
    pub(crate) fn flow_markers(&self) -> usize {
        self.flows.len()
    }

    /// Adds this face's marks, episodes and marking state to `s`.
    pub(crate) fn add_status(&self, s: &mut crate::engine::CcFaceStatus) {
        let (marks, episodes, marking) = self.status();
        s.aqm_marks += marks;
        s.aqm_episodes += episodes;
        s.aqm_marking |= marking;
    }

    /// (marks, episodes, some marker is marking now).
    pub(crate) fn status(&self) -> (u64, u64, bool) {
        let (mut marks, mut episodes) = self.whole.counts();
        marks += self.retired.0;
        episodes += self.retired.1;
        let mut marking = self.whole.marking();
        for m in self.flows.values() {
            let (a, b) = m.counts();
            marks += a;
            episodes += b;
            marking |= m.marking();
        }
        (marks, episodes, marking)
    }
}

/// The markers of every face of a node, one law for all: what PCON and
/// WinCM keep per node (they differ only in how a mark is written).
pub(crate) struct FaceMarkers {
    law: MarkerLaw,
    faces: BTreeMap<crate::engine::FaceId, FaceMarker>,
}

impl FaceMarkers {
    pub(crate) fn new(law: MarkerLaw) -> Self {
        FaceMarkers {
            law,
            faces: BTreeMap::new(),
        }
    }

    pub(crate) fn face_added(&mut self, face: crate::engine::FaceId) {
        let law = self.law;
        self.faces
            .entry(face)
            .or_insert_with(|| FaceMarker::new(law));
    }

    pub(crate) fn face_removed(&mut self, face: crate::engine::FaceId) {
        self.faces.remove(&face);
    }

    /// A packet left `face` after `sojourn`: whether to mark it (Data only).
    pub(crate) fn on_dequeue(
        &mut self,
        now: Timestamp,
        face: crate::engine::FaceId,
        pkt: &crate::engine::OutPacket,
        sojourn: Duration,
        view: &QueueView,
    ) -> bool {
        pkt.kind == crate::engine::PacketKind::Data
            && self
                .faces
                .get_mut(&face)
                .is_some_and(|m| m.on_dequeue(now, sojourn, pkt.wire.len(), view))
    }

    /// Drops idle per-flow markers (periodic).
    pub(crate) fn prune(&mut self, now: Timestamp) {
        self.faces.values_mut().for_each(|f| f.prune(now));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.faces.is_empty()
    }

    pub(crate) fn add_status(
        &self,
        face: crate::engine::FaceId,
        s: &mut crate::engine::CcFaceStatus,
    ) {
        if let Some(m) = self.faces.get(&face) {
            m.add_status(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{DataFlow, FaceId, QueueStats};

    fn view(flow: Option<u32>, data_bytes: usize) -> QueueView {
        view_on(flow, data_bytes, Some(10_000_000))
    }

    fn view_on(flow: Option<u32>, data_bytes: usize, capacity_bps: Option<u64>) -> QueueView {
        QueueView {
            face: FaceId(1),
            stats: QueueStats {
                data_bytes,
                ..QueueStats::default()
            },
            capacity_bps,
            flow: flow.map(|bucket| DataFlow {
                bucket,
                backlog_bytes: 0,
            }),
        }
    }

    /// Under flow queueing a flow is judged on its own sojourn: the flow
    /// whose packets wait is marked, the one served at once is not.
    #[test]
    fn only_the_waiting_flow_is_marked() {
        let mut m = FaceMarker::new(MarkerLaw::Codel(CodelConfig::default()));
        let (mut fat, mut thin) = (0, 0);
        for k in 0..400u64 {
            let now = Timestamp::from_millis(k);
            let v = view(Some(1), 40_000);
            fat += u64::from(m.on_dequeue(now, Duration::from_millis(30), 1000, &v));
            let v = view(Some(2), 40_000);
            thin += u64::from(m.on_dequeue(now, Duration::from_millis(1), 1000, &v));
        }
        assert!(fat >= 3 && thin == 0, "fat {fat} thin {thin}");
        assert_eq!(m.status().0, fat);
        m.prune(Timestamp::from_millis(400));
        assert_eq!(m.flow_markers(), 1, "the thin flow's marker is idle");
        assert_eq!(m.status().0, fat);
    }

    /// Per-flow markers stop at their bound: beyond it a new flow is judged
    /// by the face's marker (still marked when it waits), and a flow that
    /// has one keeps it.
    #[test]
    fn flow_markers_are_bounded_and_the_face_marker_takes_the_rest() {
        let mut m = FaceMarker::new(MarkerLaw::Codel(CodelConfig::default()));
        let n = MAX_FLOW_MARKERS as u32 + 500;
        let mut marked_beyond = 0;
        for k in 0..400u64 {
            let now = Timestamp::from_millis(k);
            for f in 0..n {
                let v = view(Some(f), 400_000);
                let mark = m.on_dequeue(now, Duration::from_millis(30), 1000, &v);
                marked_beyond += u64::from(mark && f >= MAX_FLOW_MARKERS as u32);
            }
            assert!(m.flow_markers() <= MAX_FLOW_MARKERS);
        }
        assert_eq!(m.flow_markers(), MAX_FLOW_MARKERS);
        assert!(marked_beyond > 0, "the face's marker judged the rest");
        assert_eq!(
            m.status().0,
            m.flows.values().map(|f| f.counts().0).sum::<u64>() + m.whole.counts().0
        );
    }

    /// Marks of a per-flow marker fed 400 dequeues, one a millisecond, of
    /// `packet_bytes` that waited `sojourn` with `backlog` bytes left.
    fn marks(
        law: MarkerLaw,
        sojourn: Duration,
        packet_bytes: usize,
        backlog: usize,
        capacity_bps: Option<u64>,
    ) -> u64 {
        let mut m = FaceMarker::new(law);
        (0..400u64)
            .map(|k| {
                let v = view_on(Some(2), backlog, capacity_bps);
                u64::from(m.on_dequeue(Timestamp::from_millis(k), sojourn, packet_bytes, &v))
            })
            .sum()
    }

    /// CoDel's MTU rule reads the face's backlog (Linux fq_codel): a flow
    /// with one packet queued that waited its turn behind a long face
    /// queue is marked; once the face holds at most one packet, nobody is
    /// (8 KB packets on 2 Mbit/s: 30 ms is within one packet's time).
    #[test]
    fn the_mtu_rule_reads_the_face_backlog() {
        for law in [
            MarkerLaw::Codel(CodelConfig::default()),
            MarkerLaw::MultiMark(MultiMarkConfig::default()),
        ] {
            let (d, cap) = (Duration::from_millis(30), Some(2_000_000));
            let on_busy = marks(law, d, 8000, 80_000, cap);
            let on_idle = marks(law, d, 8000, 8000, cap);
            assert!(on_busy > 0 && on_idle == 0, "{law:?}: {on_busy} {on_idle}");
        }
    }

    /// Marks on two WinCM flows whose own queues are empty but whose Data
    /// wait 40 ms behind a face queue of 40 kB, one Data every 10 ms for
    /// 2 s; every `low_every`-th Data leaves at target instead.
    fn two_flows_behind_a_face_queue(cfg: MultiMarkConfig, low_every: u64) -> u64 {
        let mut m = FaceMarker::new(MarkerLaw::MultiMark(cfg));
        (0..200u64)
            .map(|k| {
                let v = view_on(Some(1 + (k % 2) as u32), 40_000, Some(2_000_000));
                let d = if low_every > 0 && k % low_every == 0 {
                    5
                } else {
                    40
                };
                let now = Timestamp::from_millis(10 * k);
                u64::from(m.on_dequeue(now, Duration::from_millis(d), 1200, &v))
            })
            .sum()
    }

    /// W14: while the face's queue stands, a flow whose own queue is empty
    /// is marked on every Data that waited above target once its first
    /// episode has run; with W14 off, or while some Data leave at target
    /// (no standing queue), each episode waits an interval again.
    #[test]
    fn a_standing_face_queue_lets_a_flows_own_drain_rearm_its_episodes() {
        let on = MultiMarkConfig::default();
        let off = MultiMarkConfig {
            standing_reentry: false,
            ..on
        };
        let with = two_flows_behind_a_face_queue(on, 0);
        let without = two_flows_behind_a_face_queue(off, 0);
        assert!(
            with >= 170 && without < 120,
            "with {with} without {without}"
        );
        let not_standing = two_flows_behind_a_face_queue(on, 7);
        assert_eq!(not_standing, two_flows_behind_a_face_queue(off, 7));
    }

    /// WinCM with W13 (off by default): the MTU rule excuses the wait behind one packet, not
    /// more. 8 KB Data on 2 Mbit/s take 32 ms: one that waited 70 ms with
    /// one packet behind it is counted; one that waited 35 ms, or any on a
    /// face of unknown capacity, or with W13 off (Linux's rule, the
    /// default), is excused. PCON's CoDel keeps the plain rule.
    #[test]
    fn wincm_excuses_one_packet_time_behind_the_mtu_rule() {
        let wincm = MarkerLaw::MultiMark(MultiMarkConfig {
            mtu_excuse_one_packet: true,
            ..MultiMarkConfig::default()
        });
        let cap = Some(2_000_000);
        assert!(marks(wincm, Duration::from_millis(70), 8000, 8000, cap) > 0);
        assert_eq!(marks(wincm, Duration::from_millis(35), 8000, 8000, cap), 0);
        assert_eq!(marks(wincm, Duration::from_millis(70), 8000, 8000, None), 0);
        let linux = MarkerLaw::MultiMark(MultiMarkConfig::default());
        assert_eq!(marks(linux, Duration::from_millis(70), 8000, 8000, cap), 0);
        let pcon = MarkerLaw::Codel(CodelConfig::default());
        assert_eq!(marks(pcon, Duration::from_millis(70), 8000, 8000, cap), 0);
    }
}
