//! Random arrival orders, losses, duplicates and clock steps through the
//! receiver's reorder/repair buffer: the application always gets each
//! sequence number from the first one on exactly once, in order, as its
//! own payload or as a gap; repair requests are only for open holes; the
//! buffers stay within their bounds.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_multicast::{Delivery, Reorder, RepairConfig};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Packet `seq` arrives.
    Packet(u64),
    /// Time passes and repairs are polled.
    Tick(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            4 => (0u64..60).prop_map(Op::Packet),
            1 => (1u64..1500).prop_map(Op::Tick),
        ],
        1..200,
    )
}

fn payload(seq: u64) -> Bytes {
    Bytes::copy_from_slice(&seq.to_be_bytes())
}

proptest! {
    #[test]
    fn deliveries_are_complete_ordered_and_bounded(ops in ops(), finish in any::<bool>()) {
        let cfg = RepairConfig {
            max_missing: 8,
            max_buffered: 12,
            max_burst: 4,
            ..RepairConfig::default()
        };
        let mut r = Reorder::new(cfg);
        let mut now = Timestamp::ZERO;
        let mut out: Vec<Delivery> = Vec::new();
        let mut first: Option<u64> = None;
        let mut high = 0u64;
        let mut asks = Vec::new();
        for op in ops {
            match op {
                Op::Packet(s) => {
                    first.get_or_insert(s);
                    if first.is_some_and(|f| s >= f) {
                        high = high.max(s + 1);
                    }
                    r.on_packet(now, s, payload(s));
                }
                Op::Tick(ms) => {
                    now += Duration::from_millis(ms);
                    asks.clear();
                    r.poll_repairs(now, &mut asks);
                    prop_assert!(asks.len() <= cfg.max_burst);
                    prop_assert!(asks.windows(2).all(|w| w[0] < w[1]));
                    if let (Some(f), Some(a)) = (first, asks.first()) {
                        prop_assert!(*a >= f && *asks.last().unwrap() < high);
                    }
                }
            }
            prop_assert!(r.missing_len() <= cfg.max_missing);
            out.extend(core::iter::from_fn(|| r.pop()));
        }
        if finish {
            r.finish();
            out.extend(core::iter::from_fn(|| r.pop()));
            prop_assert!(r.is_settled());
        }
        let seqs: Vec<u64> = out
            .iter()
            .map(|d| match d {
                Delivery::Payload { seq, payload: p } => {
                    assert_eq!(*p, payload(*seq), "payload of another packet");
                    *seq
                }
                Delivery::Gap { seq } => *seq,
            })
            .collect();
        if let Some(f) = first {
            let expect: Vec<u64> = (f..f + seqs.len() as u64).collect();
            prop_assert_eq!(&seqs, &expect);
            if finish {
                prop_assert_eq!(seqs.len() as u64, high - f);
            }
        } else {
            prop_assert!(seqs.is_empty());
        }
    }
}
