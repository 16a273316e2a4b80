//! The RTT behind SRMCC's adaptation cycle (4 × RTT, paper §4), measured
//! rather than configured (docs/algorithms.md §4.4 item 6: the RTT to the
//! farthest receiver that reported).
//!
//! A receiver sends an RTT probe now and then: an ordinary Interest named
//! `/<group>/32=mcast-rtt/seq=<id>[/t=<last rtt, µs>]`, FIB-routed to the
//! source like a repair Interest; its name is new each time, so no cache or
//! PIT entry answers it on the way. The source answers with an empty Data
//! of the same name (the receiver's RTT sample) and reads the last RTT the
//! receiver measured from the name: the source learns every receiver's RTT
//! with nothing new in the codec or the tree nodes, one probe behind.
//!
//! What a receiver reports is the least sample since it joined (the
//! path's base RTT), not a smoothed RTT: a smoothed RTT includes the queue
//! the source is there to react to, so a standing queue at a tree node
//! would stretch the cycle and slow the very reaction that drains it
//! (tests/mcast_testbed.rs against two CUBIC flows: the smoothed RTT made
//! the cycle about 1.8 s, 19 adaptations in 34 s instead of 84; the least
//! of the last 16 samples still gave 27, the queue standing for longer).
//! A path that gets longer keeps the shorter cycle, the safe side.

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_tlv::{Component, Data, MetaInfo, Name};

use crate::wire::MAX_GROUP_COMPONENTS;

/// Keyword component (type 32) of an RTT probe.
pub const RTT_KEYWORD: &[u8] = b"mcast-rtt";

/// One RTT probe's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RttProbe {
    /// The group.
    pub group: Name,
    /// The receiver's probe number (makes the name new).
    pub id: u64,
    /// The RTT the receiver measured with its previous probe.
    pub last_rtt: Option<Duration>,
}

impl RttProbe {
    /// `/<group>/32=mcast-rtt/seq=<id>[/t=<µs>]`.
    pub fn name(&self) -> Name {
        let n = self
            .group
            .append(Component::keyword(Bytes::from_static(RTT_KEYWORD)))
            .append(Component::sequence_num(self.id));
        match self.last_rtt {
            Some(r) => n.append(Component::timestamp(
                u64::try_from(r.as_micros()).unwrap_or(u64::MAX),
            )),
            None => n,
        }
    }

    /// Recognises a probe name; `None` for any other name.
    pub fn from_name(name: &Name) -> Option<RttProbe> {
        let n = name.len();
        let (kw_at, last_rtt) = match name.last()?.as_timestamp() {
            Some(us) => (n.checked_sub(3)?, Some(Duration::from_micros(us))),
            None => (n.checked_sub(2)?, None),
        };
        if kw_at == 0 || kw_at > MAX_GROUP_COMPONENTS {
            return None;
        }
        let kw = name.get(kw_at)?;
        if kw.typ() != 32 || kw.value().as_ref() != RTT_KEYWORD {
            return None;
        }
        Some(RttProbe {
            group: name.prefix(kw_at),
            id: name.get(kw_at + 1)?.as_sequence_num()?,
            last_rtt,
        })
    }

    /// The source's answer: an empty Data of the probe's name, never
    /// cached for longer than it takes to arrive.
    pub fn answer(name: &Name) -> Bytes {
        let mut d = Data::new(name.clone(), Bytes::new());
        d.meta = MetaInfo {
            freshness_period: Some(Duration::ZERO),
            ..MetaInfo::default()
        };
        d.encode()
    }
}

/// A receiver's side: one probe at a time; the smoothed RTT (gain 1/8)
/// for its statistics, the base RTT (least sample) for its reports.
#[derive(Debug, Clone)]
pub struct RttProber {
    period: Duration,
    next_at: Timestamp,
    next_id: u64,
    outstanding: Option<(u64, Timestamp)>,
    srtt: Option<Duration>,
    base: Option<Duration>,
}

impl RttProber {
    /// Probes every `period`, the first at `now`.
    pub fn new(period: Duration, now: Timestamp) -> Self {
        RttProber {
            period,
            next_at: now,
            next_id: 0,
            outstanding: None,
            srtt: None,
            base: None,
        }
    }

    /// The probe due at `now`, if any (a probe not answered within a
    /// period is given up and replaced).
    pub fn poll(&mut self, now: Timestamp, group: &Name) -> Option<RttProbe> {
        if now < self.next_at {
            return None;
        }
        self.next_at = now + self.period;
        let id = self.next_id;
        self.next_id += 1;
        self.outstanding = Some((id, now));
        Some(RttProbe {
            group: group.clone(),
            id,
            last_rtt: self.base_rtt(),
        })
    }

    /// When the next probe is due.
    pub fn poll_timeout(&self) -> Timestamp {
        self.next_at
    }

    /// A probe's answer arrived; returns the sample when it was the
    /// outstanding probe.
    pub fn on_answer(&mut self, now: Timestamp, probe: &RttProbe) -> Option<Duration> {
        let (id, sent) = self.outstanding?;
        if probe.id != id {
            return None;
        }
        self.outstanding = None;
        let sample = now.saturating_since(sent);
        self.base = Some(self.base.map_or(sample, |b| b.min(sample)));
        self.srtt = Some(match self.srtt {
            None => sample,
            Some(s) => {
                let s = s.as_nanos() as f64;
                Duration::from_nanos((s + (sample.as_nanos() as f64 - s) / 8.0) as u64)
            }
        });
        Some(sample)
    }

    /// The smoothed RTT to the source.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The least RTT sampled: what the probes report.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base
    }
}

/// The source's side: the largest RTT among the last reports (each
/// receiver reports once per probe period, so a receiver that left drops
/// out after `keep` reports of the others).
#[derive(Debug, Clone)]
pub struct FarthestRtt {
    keep: usize,
    reports: VecDeque<Duration>,
}

impl FarthestRtt {
    /// Remembers the last `keep` reports.
    pub fn new(keep: usize) -> Self {
        FarthestRtt {
            keep: keep.max(1),
            reports: VecDeque::new(),
        }
    }

    /// A receiver reported `rtt`.
    pub fn report(&mut self, rtt: Duration) {
        if self.reports.len() >= self.keep {
            self.reports.pop_front();
        }
        self.reports.push_back(rtt);
    }

    /// The largest remembered report.
    pub fn max(&self) -> Option<Duration> {
        self.reports.iter().copied().max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Timestamp {
        Timestamp::from_millis(x)
    }

    #[test]
    fn probe_names_round_trip_and_other_names_are_not_probes() {
        let g: Name = "/mc/g".parse().unwrap();
        for last_rtt in [None, Some(Duration::from_micros(123_456))] {
            let p = RttProbe {
                group: g.clone(),
                id: 7,
                last_rtt,
            };
            assert_eq!(RttProbe::from_name(&p.name()), Some(p));
        }
        for other in [
            "/mc/g/seq=3",
            "/mc/g/32=mcast-join",
            "/seq=3",
            "/32=mcast-rtt/seq=1",
        ] {
            assert_eq!(
                RttProbe::from_name(&other.parse().unwrap()),
                None,
                "{other}"
            );
        }
    }

    /// One probe per period; the answer gives the sample, the next probe
    /// carries the smoothed RTT; a stale answer is ignored.
    #[test]
    fn a_prober_measures_and_reports_its_rtt() {
        let g: Name = "/g".parse().unwrap();
        let mut p = RttProber::new(Duration::from_secs(1), ms(0));
        let first = p.poll(ms(0), &g).unwrap();
        assert_eq!(first.last_rtt, None);
        assert!(p.poll(ms(500), &g).is_none());
        assert_eq!(p.on_answer(ms(80), &first), Some(Duration::from_millis(80)));
        assert_eq!(p.on_answer(ms(90), &first), None, "answered already");
        let second = p.poll(ms(1000), &g).unwrap();
        assert_eq!(second.last_rtt, Some(Duration::from_millis(80)));
        assert_eq!(
            p.on_answer(ms(1160), &second),
            Some(Duration::from_millis(160))
        );
        // 80 + (160 − 80)/8 = 90 ms.
        assert_eq!(p.srtt(), Some(Duration::from_millis(90)));
        // The next probe reports the base RTT, not the smoothed one.
        let third = p.poll(ms(2000), &g).unwrap();
        assert_eq!(third.last_rtt, Some(Duration::from_millis(80)));
    }

    /// A queue that builds up (and stands) does not raise the report.
    #[test]
    fn the_report_is_the_base_rtt() {
        let g: Name = "/g".parse().unwrap();
        let mut p = RttProber::new(Duration::from_secs(1), ms(0));
        let mut t = 0;
        let mut probe_with = |p: &mut RttProber, rtt: u64| {
            let probe = p.poll(ms(t), &g).unwrap();
            p.on_answer(ms(t + rtt), &probe);
            t += 1000;
            probe
        };
        probe_with(&mut p, 40);
        for _ in 0..30 {
            probe_with(&mut p, 400);
        }
        assert_eq!(p.base_rtt(), Some(Duration::from_millis(40)));
        assert!(p.srtt() > Some(Duration::from_millis(300)));
        assert_eq!(
            probe_with(&mut p, 400).last_rtt,
            Some(Duration::from_millis(40))
        );
    }

    #[test]
    fn the_source_keeps_the_farthest_recent_report() {
        let mut f = FarthestRtt::new(3);
        assert_eq!(f.max(), None);
        for r in [50, 200, 60, 70] {
            f.report(Duration::from_millis(r));
        }
        assert_eq!(f.max(), Some(Duration::from_millis(200)));
        f.report(Duration::from_millis(40));
        assert_eq!(f.max(), Some(Duration::from_millis(70)), "200 aged out");
    }
}
