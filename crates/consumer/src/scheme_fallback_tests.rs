//! Rate schemes behind forwarders that stamp no rate fall back to AIMD and
//! hand control back to the rate law at the first stamped rate.

use super::*;
use crate::feedback::data_feedback;
use crate::pipeline::{Pipeline, PipelineConfig};
use bytes::Bytes;
use cc_core::Duration;
use std::collections::VecDeque;

/// Data the test network delivers per millisecond.
const DATA_PER_MS: usize = 10;

const RATE_KINDS: [LawKind; 4] = [LawKind::Rcp, LawKind::Mircc, LawKind::Qsccp, LawKind::Ccc];

/// A network answering every Interest after 10 ms with a 1000-byte Data,
/// at most [`DATA_PER_MS`] of them per millisecond (80 Mbit/s): a link, so
/// that the fallback's slow start fills a queue instead of putting
/// hundreds of thousands of Interests through the pipeline (a minute of a
/// debug test run).
struct Net {
    p: Pipeline<Scheme>,
    now: Timestamp,
    pending: VecDeque<(Timestamp, u64)>,
}

impl Net {
    fn new(kind: LawKind) -> Self {
        let s = Scheme::new(&SchemeOptions {
            kind,
            ..SchemeOptions::default()
        });
        let cfg = PipelineConfig {
            cwa: false,
            ..PipelineConfig::default()
        };
        Net {
            p: Pipeline::new(cfg, s),
            now: Timestamp::ZERO,
            pending: VecDeque::new(),
        }
    }

    /// Runs `ms` milliseconds; Data carry `cc`, the one for `mark` is marked.
    /// Returns how many Data arrived.
    fn run(&mut self, ms: u64, cc: CcFields, mark: Option<u64>) -> usize {
        let mut got = 0;
        for _ in 0..ms {
            while let Some(r) = self.p.poll_transmit(self.now) {
                self.pending
                    .push_back((self.now + Duration::from_millis(10), r.segment));
            }
            self.now += Duration::from_millis(1);
            let mut served = 0;
            while served < DATA_PER_MS && self.pending.front().is_some_and(|x| x.0 <= self.now) {
                served += 1;
                let (_, seg) = self.pending.pop_front().unwrap();
                let m = (mark == Some(seg)).then_some(1);
                let fb = data_feedback(&cc, m, 1000, self.p.law().reads());
                self.p
                    .handle_data(self.now, seg, Bytes::from_static(b"x"), None, fb);
                got += 1;
            }
            self.p.handle_timeout(self.now);
        }
        got
    }
}

fn stamped(bps: u64) -> CcFields {
    CcFields {
        primary_rate_bps: Some(bps),
        secondary_rate_bps: Some(0),
        path_id: Some(1),
        target_rate_bps: Some(bps),
        // CCC: the same pace in Interests/s of the 1000-byte Data.
        pace_constraint_milli_ips: Some(bps / 8),
        ..CcFields::default()
    }
}

#[test]
fn unstamped_path_switches_to_aimd_that_grows_and_backs_off() {
    for kind in RATE_KINDS {
        let mut n = Net::new(kind);
        // Two unstamped Data: still the rate law at its initial rate.
        let mut got = 0;
        while got < RATE_FALLBACK_AFTER_DATA as usize - 1 {
            got += n.run(1, CcFields::default(), None);
        }
        assert!(!n.p.law().rate_fallback_active(), "{kind} after {got} Data");
        assert!(matches!(n.p.limit(), SendLimit::Rate { .. }), "{kind}");
        n.run(3_000, CcFields::default(), None);
        assert!(n.p.law().rate_fallback_active(), "{kind}");
        // Slow start: the window grows far above anything the initial
        // rate allowed (80-100 kbit/s of 1000-byte Data: ~10 Interests/s).
        let got = n.run(500, CcFields::default(), None);
        assert!(got > 200, "{kind}: {got} Data in 0.5 s under the fallback");
        let SendLimit::Window { interests: before } = n.p.limit() else {
            panic!("{kind}: fallback without a window");
        };
        // A congestion mark halves it.
        let next = n.p.stats().segments_received + 2;
        n.run(30, CcFields::default(), Some(next));
        let SendLimit::Window { interests: after } = n.p.limit() else {
            panic!("{kind}: fallback left early");
        };
        assert!(after < before, "{kind}: {before} -> {after} after a mark");
        // The first stamped rate hands control back to the rate law.
        n.run(50, stamped(8_000_000), None);
        assert!(!n.p.law().rate_fallback_active(), "{kind}");
        assert!(
            matches!(n.p.limit(), SendLimit::Rate { interests_per_sec, .. }
                if (interests_per_sec - 1000.0).abs() < 1.0),
            "{kind}: {:?}",
            n.p.limit()
        );
    }
}

#[test]
fn stamped_paths_never_fall_back() {
    for kind in RATE_KINDS {
        let mut n = Net::new(kind);
        n.run(3_000, stamped(2_000_000), None);
        assert!(!n.p.law().rate_fallback_active(), "{kind}");
        assert!(matches!(n.p.limit(), SendLimit::Rate { .. }), "{kind}");
    }
}
