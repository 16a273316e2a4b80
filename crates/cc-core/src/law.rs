//! The small interface shared by the consumer sides of every scheme.
//!
//! A consumer pipeline (icncat, the simulator, tests) owns one law, reports
//! what happened to each Interest, and asks the law how much it may send.
//! Window laws answer with a number of Interests in flight, rate laws with an
//! Interest rate; the pipeline enforces either. Every callback has a no-op
//! default so that a law only implements the events it reacts to.

use crate::time::{Duration, Timestamp};
use core::fmt;
use core::str::FromStr;

/// How much a consumer may send right now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SendLimit {
    /// At most this many Interests outstanding (a congestion window).
    Window { interests: f64 },
    /// Interests paced at this rate (Interests per second), with at most
    /// `max_outstanding` in flight as a safety bound.
    Rate {
        interests_per_sec: f64,
        max_outstanding: u32,
    },
}

/// What one returning Data told the consumer.
///
/// Fields a scheme does not use stay `None`/zero; a law reads only its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DataFeedback {
    /// Round-trip time of this Interest/Data exchange (not measured for
    /// retransmitted Interests, per Karn's rule: then `None`).
    pub rtt: Option<Duration>,
    /// NDNLPv2 CongestionMark value (0 = unmarked; WinCM may carry a count).
    pub congestion_mark: u64,
    /// Size of the Data packet on the wire, in bytes.
    pub data_size_bytes: u32,
    /// Segment number of the Data, when the name has one.
    pub segment: Option<u64>,
    /// RCP/MIRCC primary stamped rate (bit/s), minimum along the path.
    pub primary_rate_bps: Option<f64>,
    /// MIRCC secondary stamped rate (bit/s).
    pub secondary_rate_bps: Option<f64>,
    /// MIRCC path id (hash of the hops the Data came through).
    pub path_id: Option<u64>,
    /// CCC pace constraint returned by the network (Interests per second).
    pub pace_constraint_ips: Option<f64>,
    /// QSCCP TargetRate (bit/s).
    pub target_rate_bps: Option<f64>,
}

impl DataFeedback {
    /// When this Data's Interest left, for a Data received at `now`:
    /// `now − rtt` (`None` without an RTT sample, i.e. a retransmission).
    /// The rules that ask "was this Interest sent after t" (once-per-RTT
    /// gates, per-round averages) read it from here.
    pub fn sent_at(&self, now: Timestamp) -> Option<Timestamp> {
        self.rtt.map(|rtt| now - rtt)
    }

    /// Whether this Data's Interest left before `t`; false when either is
    /// unknown (a retransmission, or no `t` yet).
    pub fn sent_before(&self, now: Timestamp, t: Option<Timestamp>) -> bool {
        self.sent_at(now).zip(t).is_some_and(|(sent, t)| sent < t)
    }
}

/// What one returning Nack told the consumer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NackFeedback {
    /// True for NackReason Congestion; other reasons are not congestion
    /// signals and most laws ignore them.
    pub congestion: bool,
    /// Rates a Nack may carry (MIRCC/RCP stamp Nacks too).
    pub primary_rate_bps: Option<f64>,
    pub secondary_rate_bps: Option<f64>,
    pub path_id: Option<u64>,
}

/// The consumer side of a congestion-control scheme.
pub trait ConsumerLaw {
    /// Called for every Interest sent (first transmission or retransmission).
    fn on_interest_sent(&mut self, _now: Timestamp, _retransmission: bool) {}
    /// Called for every Data that satisfies an outstanding Interest.
    fn on_data(&mut self, _now: Timestamp, _fb: &DataFeedback) {}
    /// Called for every Nack.
    fn on_nack(&mut self, _now: Timestamp, _fb: &NackFeedback) {}
    /// Called when an Interest's retransmission timer fires.
    fn on_timeout(&mut self, _now: Timestamp) {}
    /// How much may be sent now.
    fn limit(&self) -> SendLimit;
    /// For a window law that paces: the rate, Interests per second, at
    /// which the sender spreads what its window allows (on top of the
    /// window, never instead of it). `None`: send as the window opens.
    fn pace_ips(&self) -> Option<f64> {
        None
    }
}

/// The scheme names the CLI (`--cc`) and the config (`[cc] scheme`) accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum LawKind {
    /// No congestion control (a fixed window on the consumer).
    None,
    /// A fixed window or a constant Interest rate.
    Fixed,
    /// AIMD window as ndn-tools' ndnget.
    Aimd,
    /// CUBIC window as ndn-tools' ndnget.
    Cubic,
    /// PCON: CoDel marking in forwarders, AIMD/CUBIC consumer reacting to marks.
    Pcon,
    /// RCP: explicit per-link rates stamped into Data.
    Rcp,
    /// MIRCC: multipath-aware dual-class RCP.
    Mircc,
    /// CCC: cooperative pace objectives and constraints.
    Ccc,
    /// WinCM: CoDel multi-marking, additive-decrease window, UIN/UIW forwarding.
    Wincm,
    /// QSCCP: QoS classes, scheduler tree, PECN target rates.
    Qsccp,
}

impl LawKind {
    /// Every scheme, in the order the CLI documents them.
    pub const ALL: [LawKind; 10] = [
        LawKind::None,
        LawKind::Fixed,
        LawKind::Aimd,
        LawKind::Cubic,
        LawKind::Pcon,
        LawKind::Rcp,
        LawKind::Mircc,
        LawKind::Ccc,
        LawKind::Wincm,
        LawKind::Qsccp,
    ];

    /// The name used on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            LawKind::None => "none",
            LawKind::Fixed => "fixed",
            LawKind::Aimd => "aimd",
            LawKind::Cubic => "cubic",
            LawKind::Pcon => "pcon",
            LawKind::Rcp => "rcp",
            LawKind::Mircc => "mircc",
            LawKind::Ccc => "ccc",
            LawKind::Wincm => "wincm",
            LawKind::Qsccp => "qsccp",
        }
    }
}

impl fmt::Display for LawKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name given is not a known scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLaw;

impl fmt::Display for UnknownLaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown congestion-control scheme (expected one of none, fixed, aimd, cubic, pcon, rcp, mircc, ccc, wincm, qsccp)")
    }
}

impl core::error::Error for UnknownLaw {}

impl FromStr for LawKind {
    type Err = UnknownLaw;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LawKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or(UnknownLaw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_law_name_round_trips_through_from_str() {
        for k in LawKind::ALL {
            assert_eq!(k.name().parse::<LawKind>(), Ok(k));
        }
        assert!("reno".parse::<LawKind>().is_err());
    }
}
