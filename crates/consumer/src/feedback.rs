//! The one place where the NDNLPv2 congestion-control fields of a received
//! Data or Nack become cc-core feedback.
//!
//! Forwarders stamp these fields hop by hop (MIRCC/RCP rates and path id,
//! CCC pace constraint, QSCCP TargetRate, CongestionMark); the law only ever
//! sees them through [`data_feedback`] and [`nack_feedback`]. A scheme says
//! which stamped fields it follows with [`Reads`]: a `fixed` bit rate, for
//! instance, must not follow rates an RCP forwarder stamps on every Data.

use crate::pipeline::NackKind;
use cc_core::{DataFeedback, NackFeedback};
use icn_tlv::{CcFields, NackReason};

/// Which network-stamped fields a scheme's law follows. Marks and the Data
/// size always reach the law (laws that do not use them ignore them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    /// MIRCC/RCP primary and secondary rates and the path id.
    pub rates: bool,
    /// CCC pace constraint.
    pub pace_constraint: bool,
    /// QSCCP TargetRate.
    pub target_rate: bool,
}

impl Reads {
    /// Nothing stamped (window laws, fixed rates).
    pub const NONE: Reads = Reads {
        rates: false,
        pace_constraint: false,
        target_rate: false,
    };
}

/// CCC paces travel as milli-Interests per second; the one encoding rule
/// (rounding, "unbounded") is icn-tlv's.
pub use icn_tlv::cc::{ips_from_wire, ips_to_wire};

fn bps(v: Option<u64>) -> Option<f64> {
    v.map(icn_tlv::cc::rate_from_wire)
}

/// Feedback of one Data: `mark` is the LP CongestionMark (0 when absent),
/// `data_size_bytes` the Data packet's wire size. The pipeline fills `rtt`
/// and `segment`.
pub fn data_feedback(
    cc: &CcFields,
    mark: Option<u64>,
    data_size_bytes: usize,
    reads: Reads,
) -> DataFeedback {
    DataFeedback {
        congestion_mark: mark.unwrap_or(0),
        data_size_bytes: u32::try_from(data_size_bytes).unwrap_or(u32::MAX),
        primary_rate_bps: bps(cc.primary_rate_bps).filter(|_| reads.rates),
        secondary_rate_bps: bps(cc.secondary_rate_bps).filter(|_| reads.rates),
        path_id: cc.path_id.filter(|_| reads.rates),
        pace_constraint_ips: cc
            .pace_constraint_milli_ips
            .map(ips_from_wire)
            .filter(|_| reads.pace_constraint),
        target_rate_bps: bps(cc.target_rate_bps).filter(|_| reads.target_rate),
        ..DataFeedback::default()
    }
}

/// Feedback of one Nack. The pipeline sets `congestion` from the reason.
pub fn nack_feedback(cc: &CcFields, reason: NackReason, reads: Reads) -> NackFeedback {
    NackFeedback {
        congestion: matches!(reason, NackReason::Congestion),
        primary_rate_bps: bps(cc.primary_rate_bps).filter(|_| reads.rates),
        secondary_rate_bps: bps(cc.secondary_rate_bps).filter(|_| reads.rates),
        path_id: cc.path_id.filter(|_| reads.rates),
    }
}

/// The pipeline's view of a NackReason.
pub fn nack_kind(r: NackReason) -> NackKind {
    match r {
        NackReason::Congestion => NackKind::Congestion,
        NackReason::Duplicate => NackKind::Duplicate,
        NackReason::NoRoute => NackKind::NoRoute,
        NackReason::None => NackKind::Other(0),
        NackReason::Other(c) => NackKind::Other(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamped() -> CcFields {
        CcFields {
            primary_rate_bps: Some(8_000_000),
            secondary_rate_bps: Some(2_000_000),
            path_id: Some(77),
            pace_constraint_milli_ips: Some(1_500_500),
            target_rate_bps: Some(3_000_000),
            ..CcFields::default()
        }
    }

    #[test]
    fn every_field_maps_with_its_unit() {
        let all = Reads {
            rates: true,
            pace_constraint: true,
            target_rate: true,
        };
        let fb = data_feedback(&stamped(), Some(2), 8_100, all);
        assert_eq!(fb.congestion_mark, 2);
        assert_eq!(fb.data_size_bytes, 8_100);
        assert_eq!(fb.primary_rate_bps, Some(8e6));
        assert_eq!(fb.secondary_rate_bps, Some(2e6));
        assert_eq!(fb.path_id, Some(77));
        assert_eq!(fb.pace_constraint_ips, Some(1500.5));
        assert_eq!(fb.target_rate_bps, Some(3e6));
        assert_eq!((fb.rtt, fb.segment), (None, None));
        let n = nack_feedback(&stamped(), NackReason::Congestion, all);
        assert!(n.congestion);
        assert_eq!(n.primary_rate_bps, Some(8e6));
        assert_eq!(n.path_id, Some(77));
    }

    #[test]
    fn unread_fields_stay_out_but_marks_and_size_do_not() {
        let fb = data_feedback(&stamped(), Some(1), 100, Reads::NONE);
        assert_eq!(fb.congestion_mark, 1);
        assert_eq!(fb.data_size_bytes, 100);
        assert_eq!(fb.primary_rate_bps, None);
        assert_eq!(fb.pace_constraint_ips, None);
        assert_eq!(fb.target_rate_bps, None);
        let n = nack_feedback(&stamped(), NackReason::NoRoute, Reads::NONE);
        assert!(!n.congestion);
        assert_eq!(n.primary_rate_bps, None);
        let only_target = Reads {
            target_rate: true,
            ..Reads::NONE
        };
        let fb = data_feedback(&stamped(), None, 1, only_target);
        assert_eq!(fb.congestion_mark, 0);
        assert_eq!((fb.primary_rate_bps, fb.target_rate_bps), (None, Some(3e6)));
    }

    #[test]
    fn pace_wire_round_trip() {
        assert_eq!(ips_to_wire(1.5), 1500);
        assert_eq!(ips_from_wire(ips_to_wire(123.456)), 123.456);
        assert_eq!(ips_to_wire(-1.0), 0);
        assert_eq!(ips_to_wire(f64::INFINITY), u64::MAX);
        // The rule rounds (the old consumer copy truncated 0.0019 to 1).
        assert_eq!(ips_to_wire(0.0019), 2);
    }
}
