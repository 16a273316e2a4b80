//! Virtual-time tests of the pipeline with small reference laws.

use super::*;
use cc_core::{DataFeedback, NackFeedback};

/// AIMD as ndnget (slow start, +1/cwnd, halve on a congestion event).
#[derive(Debug)]
struct TestAimd {
    cwnd: f64,
    ssthresh: f64,
}

impl ConsumerLaw for TestAimd {
    fn on_data(&mut self, _now: Timestamp, fb: &DataFeedback) {
        if fb.congestion_mark > 0 {
            self.on_timeout(Timestamp::ZERO);
        } else if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd.floor();
        }
    }
    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        if fb.congestion {
            self.on_timeout(now);
        }
    }
    fn on_timeout(&mut self, _now: Timestamp) {
        self.ssthresh = (self.cwnd * 0.5).max(2.0);
        self.cwnd = self.ssthresh;
    }
    fn limit(&self) -> SendLimit {
        SendLimit::Window {
            interests: self.cwnd,
        }
    }
}

fn aimd() -> TestAimd {
    TestAimd {
        cwnd: 2.0,
        ssthresh: f64::INFINITY,
    }
}

/// A constant rate.
struct TestRate(f64);
impl ConsumerLaw for TestRate {
    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: self.0,
            max_outstanding: 1000,
        }
    }
}

fn ms(v: u64) -> Timestamp {
    Timestamp::from_millis(v)
}

fn data<L: ConsumerLaw>(p: &mut Pipeline<L>, now: Timestamp, seg: u64, fin: u64, mark: u64) {
    let fb = DataFeedback {
        congestion_mark: mark,
        data_size_bytes: 100,
        ..Default::default()
    };
    p.handle_data(now, seg, Bytes::from(vec![seg as u8; 10]), Some(fin), fb);
}

fn drain<L: ConsumerLaw>(p: &mut Pipeline<L>, now: Timestamp) -> Vec<Request> {
    let mut v = Vec::new();
    while let Some(r) = p.poll_transmit(now) {
        v.push(r);
    }
    v
}

/// A loss-free link with a fixed RTT: every request is answered after `rtt`.
fn run_lossless<L: ConsumerLaw>(p: &mut Pipeline<L>, last: u64, rtt_ms: u64) -> Timestamp {
    let mut now = ms(0);
    let mut pending: VecDeque<(Timestamp, u64)> = VecDeque::new();
    for _ in 0..100_000 {
        for r in drain(p, now) {
            pending.push_back((now + Duration::from_millis(rtt_ms), r.segment));
        }
        if p.is_done() {
            return now;
        }
        let next_arrival = pending.front().map(|x| x.0);
        let t = match (next_arrival, p.poll_timeout()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("stalled"),
        };
        now = t;
        while pending.front().is_some_and(|x| x.0 <= now) {
            let (_, seg) = pending.pop_front().unwrap();
            if seg <= last {
                data(p, now, seg, last, 0);
            }
        }
        p.handle_timeout(now);
    }
    panic!("did not finish");
}

#[test]
fn window_pipeline_fetches_in_order_and_grows() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    let end = run_lossless(&mut p, 99, 10);
    let mut out = Vec::new();
    while let Some(c) = p.poll_output() {
        out.push(c[0]);
    }
    assert_eq!(out, (0..100u64).map(|s| s as u8).collect::<Vec<_>>());
    let st = p.stats();
    assert_eq!(st.segments_received, 100);
    assert_eq!(st.bytes_received, 1000);
    assert_eq!(st.retransmissions, 0);
    // Slow start doubles per RTT: 100 segments take far fewer than 100 RTTs.
    assert!(end < ms(100), "took {end:?}");
    assert!(matches!(p.limit(), SendLimit::Window { interests } if interests > 16.0));
    assert!((st.rtt_min_ms.unwrap() - 10.0).abs() < 1e-6);
}

#[test]
fn window_is_enforced() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    let r = drain(&mut p, ms(0));
    assert_eq!(r.len(), 2);
    assert_eq!(p.in_flight(), 2);
    data(&mut p, ms(5), 0, 1000, 0);
    // cwnd 3, one in flight: two more.
    assert_eq!(drain(&mut p, ms(5)).len(), 2);
}

#[test]
fn marks_decrease_once_per_rtt() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    let mut now = ms(0);
    // Grow the window to 10 first.
    let mut sent = drain(&mut p, now);
    while !matches!(p.limit(), SendLimit::Window { interests } if interests >= 10.0) {
        now += Duration::from_millis(1);
        let r = sent.remove(0);
        data(&mut p, now, r.segment, 10_000, 0);
        sent.extend(drain(&mut p, now));
    }
    // Three marked Data from the same window: one decrease.
    for _ in 0..3 {
        let r = sent.remove(0);
        data(&mut p, now, r.segment, 10_000, 1);
    }
    let st = p.stats();
    assert_eq!(st.congestion_marks, 3);
    assert_eq!(st.mark_decreases, 1);
    assert!(matches!(p.limit(), SendLimit::Window { interests } if (interests - 5.0).abs() < 1e-9));
}

#[test]
fn ignore_marks_counts_without_decreasing() {
    let cfg = PipelineConfig {
        ignore_marks: true,
        ..Default::default()
    };
    let mut p = Pipeline::new(cfg, aimd());
    drain(&mut p, ms(0));
    data(&mut p, ms(1), 0, 100, 1);
    let st = p.stats();
    assert_eq!((st.congestion_marks, st.mark_decreases), (1, 0));
    assert_eq!(p.limit(), SendLimit::Window { interests: 3.0 });
}

#[test]
fn timeout_retransmits_with_backoff_and_karn() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    let r = drain(&mut p, ms(0));
    assert_eq!(r.len(), 2);
    // Initial RTO is 1 s.
    assert_eq!(p.poll_timeout(), Some(ms(100))); // sample tick first
    p.handle_timeout(ms(100));
    assert_eq!(p.poll_timeout(), Some(ms(200)));
    p.handle_timeout(ms(1000));
    let st = p.stats();
    assert_eq!(st.timeouts, 2);
    // The window is already at its floor of 2: no decrease to count.
    assert_eq!(st.timeout_decreases, 0);
    assert_eq!(p.rtt().rto(), Duration::from_secs(2));
    let r = drain(&mut p, ms(1000));
    assert_eq!(
        r,
        vec![
            Request {
                segment: 0,
                retransmission: true
            },
            Request {
                segment: 1,
                retransmission: true
            }
        ]
    );
    // A Data for a retransmitted Interest is not an RTT sample.
    data(&mut p, ms(1005), 0, 1, 0);
    assert_eq!(p.rtt().samples(), 0);
    data(&mut p, ms(1006), 1, 1, 0);
    assert!(p.is_done());
    assert_eq!(p.stats().retransmissions, 2);
}

#[test]
fn retry_limit_fails_the_fetch() {
    let cfg = PipelineConfig {
        max_retries: Some(2),
        ..Default::default()
    };
    let mut p = Pipeline::new(cfg, TestRate(1000.0));
    let mut now = ms(0);
    assert_eq!(p.poll_transmit(now).map(|r| r.segment), Some(0));
    for _ in 0..10 {
        now += Duration::from_secs(70);
        p.handle_timeout(now);
        while p.poll_transmit(now).is_some() {}
        if p.error().is_some() {
            break;
        }
    }
    assert_eq!(
        p.error(),
        Some(&PipelineError::RetriesExhausted {
            segment: 0,
            retries: 2
        })
    );
    assert!(p.poll_transmit(now).is_none());
}

/// Strict pacing (no lag), so each gap is exact.
fn strict() -> PipelineConfig {
    PipelineConfig {
        pace_jitter: 0.0,
        ..PipelineConfig::default()
    }
}

#[test]
fn a_lagging_pacer_keeps_its_slots_and_its_lags_differ_by_seed() {
    let sends = |seed| {
        let cfg = PipelineConfig {
            pace_seed: seed,
            ..PipelineConfig::default()
        };
        let mut p = Pipeline::new(cfg, TestRate(100.0));
        let mut at = Vec::new();
        for t in 0..10_000u64 {
            let now = Timestamp::ZERO + Duration::from_micros(100 * t);
            while p.poll_transmit(now).is_some() {
                at.push(now);
            }
        }
        at
    };
    let a = sends(1);
    // 100/s over one second: the slots stay 10 ms apart, so no lag adds up.
    assert!((99..=101).contains(&a.len()), "sent {}", a.len());
    for (k, t) in a.iter().enumerate() {
        // Slot k at 10·k ms, left within a fifth of the gap (0.1 ms grid).
        let slot = Duration::from_millis(10 * k as u64);
        let late = *t - (Timestamp::ZERO + slot);
        assert!(late <= Duration::from_micros(2_100), "{k}: {late:?}");
    }
    assert!(a.iter().enumerate().any(|(k, t)| *t - Timestamp::ZERO
        > Duration::from_millis(10 * k as u64) + Duration::from_micros(100)));
    assert_ne!(a, sends(2));
}

#[test]
fn rate_pacing_spaces_interests() {
    let mut p = Pipeline::new(strict(), TestRate(100.0));
    assert!(p.poll_transmit(ms(0)).is_some());
    assert!(p.poll_transmit(ms(0)).is_none());
    assert_eq!(p.poll_timeout(), Some(ms(10)));
    assert!(p.poll_transmit(ms(10)).is_some());
    // Over one second at 100/s, about 100 Interests leave.
    let mut n = 2;
    let mut t = 10;
    while t < 1000 {
        t += 1;
        n += drain(&mut p, ms(t)).len();
    }
    assert!((99..=102).contains(&n), "sent {n}");
}

/// A window of 20 that asks to be paced at 100 Interests/s.
struct TestPacedWindow;
impl ConsumerLaw for TestPacedWindow {
    fn limit(&self) -> SendLimit {
        SendLimit::Window { interests: 20.0 }
    }
    fn pace_ips(&self) -> Option<f64> {
        Some(100.0)
    }
}

/// A window law never lags: the default pipeline spaces it exactly.
#[test]
fn a_paced_window_spaces_its_interests_and_keeps_its_cap() {
    let mut p = Pipeline::new(PipelineConfig::default(), TestPacedWindow);
    // The window would let 20 go at once; the pace lets one per 10 ms.
    assert_eq!(drain(&mut p, ms(0)).len(), 1);
    assert_eq!(p.poll_timeout(), Some(ms(10)));
    assert_eq!(drain(&mut p, ms(10)).len(), 1);
    // No Data comes back: after 20 the window, not the pace, stops it.
    let mut n = 2;
    for t in 11..1000 {
        n += drain(&mut p, ms(t)).len();
    }
    assert_eq!(n, 20);
}

#[test]
fn rate_pacer_catch_up_is_bounded() {
    let cfg = PipelineConfig {
        max_burst: 4.0,
        ..Default::default()
    };
    let mut p = Pipeline::new(cfg, TestRate(1000.0));
    assert!(p.poll_transmit(ms(0)).is_some());
    // Sleeping 100 ms does not release 100 Interests at once.
    let n = drain(&mut p, ms(100)).len();
    assert!((4..=6).contains(&n), "burst {n}");
}

#[test]
fn a_paced_window_makes_up_time_not_interests() {
    // 100 Interests/s, 10 ms apart: a late wake-up sends the one due and
    // one more, not the rate laws' eight.
    let mut p = Pipeline::new(PipelineConfig::default(), TestPacedWindow);
    assert_eq!(drain(&mut p, ms(0)).len(), 1);
    assert_eq!(drain(&mut p, ms(100)).len(), 2);
}

#[test]
fn a_fast_pace_keeps_its_rate_on_a_millisecond_tick() {
    // 5000 Interests/s polled once a millisecond (the virtual network's
    // tick, tokio's timer granularity): the catch-up covers the tick.
    struct FastPacedWindow;
    impl ConsumerLaw for FastPacedWindow {
        fn limit(&self) -> SendLimit {
            SendLimit::Window {
                interests: 10_000.0,
            }
        }
        fn pace_ips(&self) -> Option<f64> {
            Some(5000.0)
        }
    }
    let mut p = Pipeline::new(PipelineConfig::default(), FastPacedWindow);
    let mut n = 0;
    for t in 0..150 {
        n += drain(&mut p, ms(t)).len();
    }
    assert!((745..=755).contains(&n), "{n} Interests in 150 ms");
}

#[test]
fn congestion_nack_retransmits_and_no_route_fails() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    drain(&mut p, ms(0));
    p.handle_nack(ms(1), 0, NackKind::Congestion, NackFeedback::default());
    let st = p.stats();
    assert_eq!((st.nacks, st.nacks_congestion), (1, 1));
    // The first Nack of a segment backs it off 1 ms.
    assert!(drain(&mut p, ms(1)).iter().all(|r| !r.retransmission));
    assert_eq!(p.poll_timeout(), Some(ms(2)));
    p.handle_timeout(ms(2));
    // Segment 1's Data opens the window; the retransmission goes first.
    data(&mut p, ms(2), 1, 5, 0);
    assert_eq!(
        p.poll_transmit(ms(2)),
        Some(Request {
            segment: 0,
            retransmission: true
        })
    );
    data(&mut p, ms(2), 0, 5, 0);
    p.handle_nack(ms(3), 2, NackKind::NoRoute, NackFeedback::default());
    assert_eq!(
        p.error(),
        Some(&PipelineError::Nack {
            segment: 2,
            reason: NackKind::NoRoute
        })
    );
}

/// A segment Nacked for congestion again and again is retried after 1, 2,
/// 4, ... ms up to `max_nack_backoff` (ndncatchunks' DataFetcher), so a
/// law that does not slow down on Nacks (a fixed window) spreads its
/// retries instead of spending them in a few round trips; the retry
/// limit still ends the fetch.
#[test]
fn congestion_nacks_back_a_segment_off_exponentially() {
    let cfg = PipelineConfig {
        max_nack_backoff: Duration::from_millis(50),
        max_retries: Some(9),
        ..strict()
    };
    let mut p = Pipeline::new(cfg, TestRate(1000.0));
    // Segment 0 is Nacked every time it is sent; the others stay pending.
    let mut now = ms(0);
    let mut sends = Vec::new();
    while p.error().is_none() && now < ms(2000) {
        p.handle_timeout(now);
        while let Some(r) = p.poll_transmit(now) {
            if r.segment == 0 {
                sends.push(now);
                p.handle_nack(now, 0, NackKind::Congestion, NackFeedback::default());
            }
        }
        now = p
            .poll_timeout()
            .unwrap_or(now + Duration::from_millis(1))
            .max(now);
    }
    let gaps: Vec<u64> = sends
        .windows(2)
        .map(|w| (w[1] - w[0]).as_micros() as u64)
        .collect();
    let want_ms = [1u64, 2, 4, 8, 16, 32, 50, 50, 50];
    assert_eq!(gaps.len(), want_ms.len(), "sends at {sends:?}");
    for (gap_us, want) in gaps.iter().zip(want_ms) {
        // The 1 ms pacer may add up to one Interest gap.
        assert!(
            (want * 1000..=want * 1000 + 1000).contains(gap_us),
            "gaps {gaps:?} µs, want {want_ms:?} ms"
        );
    }
    // The tenth Nack spends the last retry: the fetch fails, it does not
    // hang.
    assert!(matches!(
        p.error(),
        Some(PipelineError::RetriesExhausted { segment: 0, .. })
    ));
}

#[test]
fn nack_beyond_unknown_end_is_tolerated() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    drain(&mut p, ms(0)); // 0 and 1
    p.handle_nack(ms(1), 1, NackKind::NoRoute, NackFeedback::default());
    assert!(p.error().is_none());
    data(&mut p, ms(2), 0, 0, 0);
    assert!(p.is_done());
    assert!(p.error().is_none());
}

#[test]
fn final_block_cancels_later_segments() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    drain(&mut p, ms(0));
    data(&mut p, ms(1), 0, 0, 0);
    assert!(p.is_done());
    assert_eq!(p.in_flight(), 0);
    assert!(p.poll_transmit(ms(1)).is_none());
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn out_of_order_data_is_reassembled() {
    let mut p = Pipeline::new(PipelineConfig::default(), TestRate(1e6));
    drain(&mut p, ms(0));
    let reqs = drain(&mut p, ms(1));
    assert!(reqs.len() >= 4);
    data(&mut p, ms(1), 2, 3, 0);
    data(&mut p, ms(1), 1, 3, 0);
    assert!(p.poll_output().is_none());
    data(&mut p, ms(1), 0, 3, 0);
    data(&mut p, ms(1), 3, 3, 0);
    let got: Vec<u8> = std::iter::from_fn(|| p.poll_output())
        .map(|c| c[0])
        .collect();
    assert_eq!(got, vec![0, 1, 2, 3]);
    assert!(p.is_done());
}

#[test]
fn reorder_window_bounds_requests() {
    let cfg = PipelineConfig {
        max_reorder_segments: 5,
        ..Default::default()
    };
    let mut p = Pipeline::new(cfg, TestRate(1e9));
    drain(&mut p, ms(0));
    assert_eq!(drain(&mut p, ms(1)).len(), 4);
    data(&mut p, ms(1), 1, 100, 0);
    assert!(drain(&mut p, ms(1)).is_empty(), "segment 0 still missing");
    data(&mut p, ms(1), 0, 100, 0);
    assert_eq!(drain(&mut p, ms(2)).len(), 2);
}

#[test]
fn time_series_is_sampled() {
    let mut p = Pipeline::new(PipelineConfig::default(), aimd());
    run_lossless(&mut p, 399, 20);
    let st = p.stats();
    assert!(!st.series.is_empty());
    let w: Vec<f64> = st.series.iter().filter_map(|s| s.window).collect();
    assert!(
        w.windows(2).all(|x| x[1] >= x[0]),
        "window never shrinks without loss: {w:?}"
    );
    assert!(st.goodput_bps > 0.0);
}

proptest::proptest! {
    /// Whatever the loss pattern, a completed fetch delivers every segment
    /// exactly once and in order.
    #[test]
    fn delivery_is_exact_under_random_loss(seed in 0u64..1000, last in 0u64..60) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let cfg = PipelineConfig { max_retries: None, ..Default::default() };
        let mut p = Pipeline::new(cfg, aimd());
        let mut now = ms(0);
        let mut pending: Vec<(Timestamp, u64)> = Vec::new();
        for _ in 0..200_000 {
            for r in drain(&mut p, now) {
                if rng.random_bool(0.7) {
                    let d = Duration::from_millis(rng.random_range(1..30));
                    pending.push((now + d, r.segment));
                }
            }
            if p.is_done() { break; }
            pending.sort();
            let t = match (pending.first().map(|x| x.0), p.poll_timeout()) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).unwrap(),
            };
            now = t;
            while pending.first().is_some_and(|x| x.0 <= now) {
                let (_, seg) = pending.remove(0);
                if seg <= last { data(&mut p, now, seg, last, 0); }
            }
            p.handle_timeout(now);
        }
        proptest::prop_assert!(p.is_done());
        let got: Vec<u8> = std::iter::from_fn(|| p.poll_output()).map(|c| c[0]).collect();
        proptest::prop_assert_eq!(got, (0..=last).map(|s| s as u8).collect::<Vec<_>>());
    }
}

#[test]
fn log_events_record_limit_changes_and_rtt_samples() {
    let cfg = PipelineConfig {
        log_events: true,
        ..Default::default()
    };
    let mut p = Pipeline::new(cfg, aimd());
    drain(&mut p, ms(0));
    data(&mut p, ms(10), 0, 100, 0);
    data(&mut p, ms(12), 1, 100, 0);
    let ev: Vec<LogEvent> = std::iter::from_fn(|| p.poll_log()).collect();
    let limits: Vec<f64> = ev
        .iter()
        .filter_map(|e| match e {
            LogEvent::Limit {
                limit: SendLimit::Window { interests },
                ..
            } => Some(*interests),
            _ => None,
        })
        .collect();
    assert_eq!(limits, vec![2.0, 3.0, 4.0]);
    let rtts: Vec<(u64, Duration)> = ev
        .iter()
        .filter_map(|e| match e {
            LogEvent::Rtt { segment, rtt, .. } => Some((*segment, *rtt)),
            _ => None,
        })
        .collect();
    assert_eq!(
        rtts,
        vec![
            (0, Duration::from_millis(10)),
            (1, Duration::from_millis(12))
        ]
    );
    // Off by default: nothing is kept.
    let mut q = Pipeline::new(PipelineConfig::default(), aimd());
    drain(&mut q, ms(0));
    data(&mut q, ms(10), 0, 100, 0);
    assert!(q.poll_log().is_none());
}

/// A rate the test can change, as a network stamp would.
struct SharedRate(std::rc::Rc<std::cell::Cell<f64>>);
impl ConsumerLaw for SharedRate {
    fn limit(&self) -> SendLimit {
        SendLimit::Rate {
            interests_per_sec: self.0.get(),
            max_outstanding: 1000,
        }
    }
}

#[test]
fn a_raised_rate_takes_effect_at_once() {
    let rate = std::rc::Rc::new(std::cell::Cell::new(1.0));
    let mut p = Pipeline::new(strict(), SharedRate(rate.clone()));
    assert!(p.poll_transmit(ms(0)).is_some());
    // At 1/s the next would wait a second; the network now allows 1000/s.
    rate.set(1000.0);
    assert!(p.poll_timeout().unwrap() <= ms(1));
    assert!(p.poll_transmit(ms(1)).is_some());
    // And a lowered rate spaces the next one by the new gap.
    rate.set(10.0);
    assert!(p.poll_transmit(ms(2)).is_none());
    assert!(p.poll_transmit(ms(100)).is_none());
    assert!(p.poll_transmit(ms(101)).is_some());
}

#[test]
fn rto_backs_off_once_per_loss_episode_even_without_cwa() {
    let cfg = PipelineConfig {
        cwa: false,
        ..strict()
    };
    let mut p = Pipeline::new(cfg, TestRate(1000.0));
    let mut now = ms(0);
    // Ten Interests, one per ms; none answered.
    for _ in 0..10 {
        while p.poll_transmit(now).is_some() {}
        now += Duration::from_millis(1);
    }
    let sent = p.stats().interests_sent;
    assert!(sent >= 10, "{sent}");
    // Their timers fire in separate batches: one episode, one backoff.
    for t in 1000..1010 {
        p.handle_timeout(ms(t));
    }
    assert_eq!(p.stats().timeouts, sent);
    assert_eq!(p.rtt().rto(), Duration::from_secs(2));
    // A retransmission sent now that times out again opens a new episode.
    let r = p.poll_transmit(ms(1010)).unwrap();
    assert!(r.retransmission);
    p.handle_timeout(ms(3100));
    assert_eq!(p.rtt().rto(), Duration::from_secs(4));
}
