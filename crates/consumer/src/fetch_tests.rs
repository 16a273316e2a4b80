//! Fetcher against an in-memory publisher, in virtual time.

use super::*;
use crate::publisher::{Content, Publisher, PublisherConfig};
use crate::scheme::{Scheme, SchemeOptions};
use cc_core::LawKind;

fn publisher(len: usize) -> (Publisher, Vec<u8>) {
    let body: Vec<u8> = (0..len).map(|i| (i * 31 % 256) as u8).collect();
    let cfg = PublisherConfig {
        segment_size: 1000,
        version: 42,
        ..PublisherConfig::default()
    };
    (
        Publisher::new(
            "/f".parse().unwrap(),
            Content::Memory(body.clone().into()),
            cfg,
        ),
        body,
    )
}

/// A fetch of `/f` with the default scheme, seeded.
fn seeded_fetcher(discovery: Discovery) -> Fetcher {
    let cfg = FetchConfig {
        discovery,
        seed: Some(5),
        ..FetchConfig::default()
    };
    Fetcher::new(
        "/f".parse().unwrap(),
        cfg,
        Scheme::new(&SchemeOptions::default()),
    )
}

/// Runs a fetch where the link drops every `drop_every`-th Interest (0 = none).
fn run(
    kind: LawKind,
    name: &str,
    discovery: Discovery,
    drop_every: u64,
) -> (Fetcher, Vec<u8>, Vec<u8>) {
    let (mut p, body) = publisher(25_500);
    let opts = SchemeOptions {
        kind,
        rate: Some(crate::RateSpec::InterestsPerSec(2000.0)),
        ..SchemeOptions::default()
    };
    let cfg = FetchConfig {
        discovery,
        seed: Some(3),
        ..FetchConfig::default()
    };
    let mut f = Fetcher::new(name.parse().unwrap(), cfg, Scheme::new(&opts));
    let mut now = Timestamp::ZERO;
    let mut out = Vec::new();
    let mut in_flight: Vec<(Timestamp, Bytes)> = Vec::new();
    let mut n = 0u64;
    for _ in 0..100_000 {
        while let Some(pkt) = f.poll_transmit(now) {
            n += 1;
            if drop_every != 0 && n % drop_every == 0 {
                continue;
            }
            let (lp, i) = match decode_packet(pkt).unwrap() {
                (lp, Some(NetPacket::Interest(i))) => (lp, i),
                other => panic!("{other:?}"),
            };
            if let Some(d) = p.handle_interest_cc(&i, &lp.cc) {
                in_flight.push((now + Duration::from_millis(5), d));
            }
        }
        while let Some(c) = f.poll_output() {
            out.extend_from_slice(&c);
        }
        if f.is_done() || f.error().is_some() {
            break;
        }
        let next = in_flight.first().map(|x| x.0);
        now = match (next, f.poll_timeout()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("stalled"),
        };
        while in_flight.first().is_some_and(|x| x.0 <= now) {
            let (_, d) = in_flight.remove(0);
            f.handle_packet(now, d);
        }
        if f.poll_timeout().is_some_and(|t| t <= now) {
            f.handle_timeout(now);
        }
    }
    (f, out, body)
}

#[test]
fn fetches_with_every_discovery_mode() {
    for d in [Discovery::Auto, Discovery::Rdr, Discovery::Latest] {
        let (f, out, body) = run(LawKind::Cubic, "/f", d, 0);
        assert!(f.is_done(), "{d:?}: {:?}", f.error());
        assert_eq!(out, body);
        assert_eq!(f.versioned_name().unwrap().to_string(), "/f/v=42");
    }
    let (f, out, body) = run(LawKind::Aimd, "/f/v=42", Discovery::Auto, 0);
    assert!(f.is_done());
    assert_eq!(out, body);
}

#[test]
fn every_scheme_completes_under_loss_with_retransmissions() {
    for kind in LawKind::ALL {
        let (f, out, body) = run(kind, "/f", Discovery::Auto, 7);
        assert!(f.is_done(), "{kind}: {:?}", f.error());
        assert_eq!(out, body, "{kind}");
        let st = f.stats();
        assert!(st.retransmissions > 0 && st.timeouts > 0, "{kind}: {st:?}");
        assert_eq!(st.segments_received, 26);
    }
}

#[test]
fn missing_name_fails_discovery_after_retries() {
    let (mut p, _) = publisher(10);
    let mut cfg = FetchConfig {
        seed: Some(1),
        ..FetchConfig::default()
    };
    cfg.pipeline.max_retries = Some(1);
    let mut f = Fetcher::new(
        "/nothing".parse().unwrap(),
        cfg,
        Scheme::new(&SchemeOptions::default()),
    );
    let mut now = Timestamp::ZERO;
    for _ in 0..20 {
        while let Some(pkt) = f.poll_transmit(now) {
            if let Ok((_, Some(NetPacket::Interest(i)))) = decode_packet(pkt) {
                assert!(p.handle_interest(&i).is_none());
            }
        }
        match f.poll_timeout() {
            Some(t) => {
                now = t;
                f.handle_timeout(now);
            }
            None => break,
        }
    }
    assert!(
        matches!(f.error(), Some(FetchError::Discovery { .. })),
        "{:?}",
        f.error()
    );
}

/// A discovery probe Nacked for congestion (a shaper full for a moment) is
/// sent again after a back-off; the fetch goes on. Other Nacks still end
/// the probe.
#[test]
fn congestion_nack_on_discovery_backs_off_and_retries() {
    let (mut p, body) = publisher(9_000);
    let mut f = seeded_fetcher(Discovery::Rdr);
    let mut now = Timestamp::ZERO;
    let nack = |pkt: Bytes| {
        LpPacket {
            nack: Some(NackReason::Congestion),
            fragment: Some(pkt),
            ..LpPacket::default()
        }
        .encode()
    };
    // Nacked twice: each time the probe waits, then goes out again.
    for k in 1..=2u64 {
        let pkt = f.poll_transmit(now).expect("probe");
        f.handle_packet(now, nack(pkt));
        assert!(f.error().is_none(), "{:?}", f.error());
        assert!(
            f.poll_transmit(now).is_none(),
            "no resend before the back-off"
        );
        let t = f.poll_timeout().expect("back-off timer");
        assert_eq!(t, now + Duration::from_millis(50 * k));
        now = t;
        f.handle_timeout(now);
    }
    // Answered the third time: the fetch completes.
    let mut out = Vec::new();
    for _ in 0..1000 {
        while let Some(pkt) = f.poll_transmit(now) {
            let (lp, i) = match decode_packet(pkt).unwrap() {
                (lp, Some(NetPacket::Interest(i))) => (lp, i),
                other => panic!("{other:?}"),
            };
            if let Some(d) = p.handle_interest_cc(&i, &lp.cc) {
                f.handle_packet(now, d);
            }
        }
        while let Some(c) = f.poll_output() {
            out.extend_from_slice(&c);
        }
        if f.is_done() {
            break;
        }
        now += Duration::from_millis(1);
    }
    assert!(f.is_done(), "{:?}", f.error());
    assert_eq!(out, body);
    // A NoRoute Nack on discovery still fails it.
    let mut f = Fetcher::new(
        "/g".parse().unwrap(),
        FetchConfig {
            discovery: Discovery::Rdr,
            ..FetchConfig::default()
        },
        Scheme::new(&SchemeOptions::default()),
    );
    let pkt = f.poll_transmit(Timestamp::ZERO).unwrap();
    let lp = LpPacket {
        nack: Some(NackReason::NoRoute),
        fragment: Some(pkt),
        ..LpPacket::default()
    };
    f.handle_packet(Timestamp::ZERO, lp.encode());
    assert!(f.error().is_some());
}

#[test]
fn no_route_nack_on_a_segment_fails_the_fetch() {
    let mut f = Fetcher::new(
        "/f/v=1".parse().unwrap(),
        FetchConfig::default(),
        Scheme::new(&SchemeOptions::default()),
    );
    let now = Timestamp::ZERO;
    let pkt = f.poll_transmit(now).unwrap();
    let lp = LpPacket {
        nack: Some(NackReason::NoRoute),
        fragment: Some(pkt),
        ..LpPacket::default()
    };
    f.handle_packet(now, lp.encode());
    // Segment 0 is below any final block: the only outstanding one failed.
    assert!(f.error().is_some());
}

fn rate_of(f: &Fetcher) -> f64 {
    match f.pipeline().limit() {
        cc_core::SendLimit::Rate {
            interests_per_sec, ..
        } => interests_per_sec,
        other => panic!("{other:?}"),
    }
}

/// An explicit-rate consumer whose first Interest a shaper refuses learns
/// the link's rate from the Nack and retries at once: its start-up rate
/// (80 kbit/s over 8 KB Data, one Interest per 0.8 s) is only a guess. It
/// waited for the guess's next slot, and a joining flow got nothing for
/// 0.8 s (the arrival scenario's rare failure).
#[test]
fn rate_consumer_refused_before_any_data_retries_at_the_nacks_rate() {
    for kind in [LawKind::Rcp, LawKind::Mircc] {
        let opts = SchemeOptions {
            kind,
            ..SchemeOptions::default()
        };
        // Strict pacing: the test times the retry to its slot.
        let cfg = FetchConfig {
            pipeline: crate::PipelineConfig {
                pace_jitter: 0.0,
                ..crate::PipelineConfig::default()
            },
            ..FetchConfig::default()
        };
        let mut f = Fetcher::new("/f/v=1".parse().unwrap(), cfg, Scheme::new(&opts));
        let mut now = Timestamp::ZERO;
        let first = match decode_packet(f.poll_transmit(now).expect("segment 0")).unwrap() {
            (_, Some(NetPacket::Interest(i))) => i.wire().unwrap().clone(),
            other => panic!("{other:?}"),
        };
        assert!(
            f.poll_transmit(now).is_none(),
            "{kind}: paced at its start rate"
        );
        now += Duration::from_millis(3);
        let mut lp = LpPacket {
            nack: Some(NackReason::Congestion),
            fragment: Some(first),
            ..LpPacket::default()
        };
        lp.cc.primary_rate_bps = Some(icn_tlv::cc::rate_to_wire(5e6));
        f.handle_packet(now, lp.encode());
        let ips = rate_of(&f);
        assert!((ips - 5e6 / (8.0 * 8100.0)).abs() < 1.0, "{kind}: {ips}");
        // The retry goes out one slot of the Nack's rate after the first
        // send (the 1 ms back-off ends within it).
        let slot = Duration::from_secs_f64(1.0 / ips);
        let retry = loop {
            if let Some(p) = f.poll_transmit(now) {
                break p;
            }
            now = f.poll_timeout().expect("retry timer");
            assert!(
                now <= Timestamp::ZERO + slot + Duration::from_millis(1),
                "{kind}: no retry by {now:?}"
            );
            f.handle_timeout(now);
        };
        let (_, i) = match decode_packet(retry).unwrap() {
            (lp, Some(NetPacket::Interest(i))) => (lp, i),
            other => panic!("{other:?}"),
        };
        assert_eq!(i.name.to_string(), "/f/v=1/seg=0", "{kind}");
        // A later Nack's rate only lowers it (it covers part of the path).
        let mut lp = LpPacket {
            nack: Some(NackReason::Congestion),
            fragment: Some(i.wire().unwrap().clone()),
            ..LpPacket::default()
        };
        lp.cc.primary_rate_bps = Some(icn_tlv::cc::rate_to_wire(9e6));
        f.handle_packet(now, lp.encode());
        assert!((rate_of(&f) - ips).abs() < 1e-9, "{kind}");
    }
}

/// The version-discovery Data crossed the same forwarders as the segments
/// will: its stamped rate sets the first segments' pace, and its (small)
/// size does not count as a segment's.
#[test]
fn discovery_data_hands_its_stamped_rate_to_the_law() {
    for kind in [LawKind::Rcp, LawKind::Mircc] {
        let (mut p, _) = publisher(50_000);
        let opts = SchemeOptions {
            kind,
            ..SchemeOptions::default()
        };
        let cfg = FetchConfig {
            discovery: Discovery::Rdr,
            ..FetchConfig::default()
        };
        let mut f = Fetcher::new("/f".parse().unwrap(), cfg, Scheme::new(&opts));
        let now = Timestamp::ZERO;
        let probe = f.poll_transmit(now).expect("probe");
        let (lp, i) = match decode_packet(probe).unwrap() {
            (lp, Some(NetPacket::Interest(i))) => (lp, i),
            other => panic!("{other:?}"),
        };
        let d = p.handle_interest_cc(&i, &lp.cc).expect("metadata");
        let (mut lp, _) = decode_packet(d).unwrap();
        lp.cc.primary_rate_bps = Some(icn_tlv::cc::rate_to_wire(4e6));
        f.handle_packet(now, lp.encode());
        assert!(f.versioned_name().is_some(), "{kind}");
        let ips = rate_of(&f);
        assert!((ips - 4e6 / (8.0 * 8100.0)).abs() < 1.0, "{kind}: {ips}");
    }
}

/// A latest-version probe answered after the metadata one: its Data is
/// segment 0, which the pipeline has asked for by then too, so it may
/// answer either Interest and gives no RTT sample.
#[test]
fn a_late_probe_answer_is_no_rtt_sample() {
    let (mut p, _) = publisher(9_000);
    let mut f = seeded_fetcher(Discovery::Auto);
    let answer = |p: &mut Publisher, pkt: Bytes| {
        let (lp, i) = match decode_packet(pkt).unwrap() {
            (lp, Some(NetPacket::Interest(i))) => (lp, i),
            other => panic!("{other:?}"),
        };
        p.handle_interest_cc(&i, &lp.cc).expect("answered")
    };
    let t0 = Timestamp::ZERO;
    let rdr = answer(&mut p, f.poll_transmit(t0).expect("metadata probe"));
    let latest = answer(&mut p, f.poll_transmit(t0).expect("latest probe"));
    // The metadata comes back after 150 ms; the pipeline asks for segment 0.
    let t1 = t0 + Duration::from_millis(150);
    f.handle_packet(t1, rdr);
    let seg0 = f.poll_transmit(t1).expect("segment 0");
    // The latest probe's answer (segment 0) 60 ms after that request.
    f.handle_packet(t1 + Duration::from_millis(60), latest);
    assert_eq!(f.pipeline().rtt().srtt(), None, "no sample from it");
    assert_eq!(f.pipeline().stats().ambiguous_rtt_samples, 1);
    // The pipeline's own segment 0 Data is a duplicate now; the next
    // segment's Data is timed as usual.
    let own = answer(&mut p, seg0);
    f.handle_packet(t1 + Duration::from_millis(150), own);
    let t2 = t1 + Duration::from_millis(150);
    let next = f.poll_transmit(t2).expect("segment 1");
    let d = answer(&mut p, next);
    f.handle_packet(t2 + Duration::from_millis(150), d);
    assert_eq!(f.pipeline().rtt().srtt(), Some(Duration::from_millis(150)));
}
