//! Every `--cc` value builds cc-core's law with the flags applied, the
//! per-Interest fields are right, and stamped fields reach the law through
//! the one feedback mapping.

use super::*;
use crate::feedback::data_feedback;
use crate::pipeline::{Pipeline, PipelineConfig};
use bytes::Bytes;
use cc_core::Duration;
use rand::rngs::StdRng;
use rand::SeedableRng;

fn opts(kind: LawKind) -> SchemeOptions {
    SchemeOptions {
        kind,
        ..SchemeOptions::default()
    }
}

fn value(l: SendLimit) -> f64 {
    match l {
        SendLimit::Window { interests } => interests,
        SendLimit::Rate {
            interests_per_sec, ..
        } => interests_per_sec,
    }
}

#[test]
fn every_scheme_builds_its_cc_core_law() {
    for kind in LawKind::ALL {
        let s = Scheme::new(&opts(kind));
        assert_eq!(s.kind(), kind);
        // CCC keeps a small window until its first Data, then paces.
        let want_rate = matches!(kind, LawKind::Rcp | LawKind::Mircc | LawKind::Qsccp);
        assert_eq!(
            matches!(s.limit(), SendLimit::Rate { .. }),
            want_rate,
            "{kind}"
        );
        // AnyConsumerLaw names the same scheme (a fixed window says Fixed).
        let law_kind = s.law().kind();
        if kind == LawKind::None {
            assert_eq!(law_kind, LawKind::Fixed);
        } else {
            assert_eq!(law_kind, kind);
        }
    }
    assert_eq!(
        Scheme::new(&opts(LawKind::None)).limit(),
        SendLimit::Window { interests: 64.0 }
    );
}

#[test]
fn fixed_rate_in_bits_deflates_and_ignores_stamped_rates() {
    let o = SchemeOptions {
        kind: LawKind::Fixed,
        rate: Some(RateSpec::BitsPerSec(8e6)),
        ..SchemeOptions::default()
    };
    let mut s = Scheme::new(&o);
    assert_eq!(s.reads(), Reads::NONE);
    // An RCP forwarder stamps 1 Mbit/s: the mapping drops it for `fixed`.
    let cc = CcFields {
        primary_rate_bps: Some(1_000_000),
        ..CcFields::default()
    };
    s.on_data(Timestamp::ZERO, &data_feedback(&cc, None, 1000, s.reads()));
    assert!((value(s.limit()) - 1000.0).abs() < 1e-6, "{:?}", s.limit());
    let pps = SchemeOptions {
        kind: LawKind::Fixed,
        rate: Some(RateSpec::InterestsPerSec(250.0)),
        ..SchemeOptions::default()
    };
    assert_eq!(value(Scheme::new(&pps).limit()), 250.0);
}

#[test]
fn ndnget_flags_reach_the_window_laws() {
    let o = SchemeOptions {
        init_cwnd: Some(10.0),
        init_ssthresh: Some(4.0),
        aimd_step: 2.5,
        aimd_beta: 0.25,
        cubic_beta: 0.9,
        fast_conv: true,
        reset_cwnd_to_init: true,
        disable_cwa: true,
        ..SchemeOptions::default()
    };
    let c = o.law_config();
    assert_eq!(
        (
            c.aimd.init_cwnd,
            c.aimd.init_ssthresh,
            c.aimd.ai_step,
            c.aimd.md_coef
        ),
        (10.0, 4.0, 2.5, 0.25)
    );
    assert!(c.aimd.reset_cwnd_to_init && c.aimd.disable_cwa);
    assert_eq!((c.cubic.beta, c.cubic.init_cwnd), (0.9, 10.0));
    assert!(c.cubic.fast_convergence);
    assert_eq!(c.aimd.rtt.k, 8.0, "ndnget's K");
    // Behaviour, not just fields: AIMD with beta 0.25 keeps a quarter.
    let mut s = Scheme::new(&SchemeOptions {
        kind: LawKind::Aimd,
        reset_cwnd_to_init: false,
        ..o.clone()
    });
    s.on_timeout(Timestamp::from_secs_f64(1.0));
    assert_eq!(value(s.limit()), 2.5);
    // CUBIC floors ssthresh at the initial window: grow from 2 first.
    let mut s = Scheme::new(&SchemeOptions {
        kind: LawKind::Cubic,
        init_cwnd: None,
        ..o
    });
    s.on_interest_sent(Timestamp::ZERO, false);
    for i in 1..=18 {
        let fb = DataFeedback {
            rtt: Some(Duration::from_millis(100)),
            ..DataFeedback::default()
        };
        s.on_data(Timestamp::from_millis(i), &fb);
    }
    let before = value(s.limit());
    s.on_timeout(Timestamp::from_secs_f64(1.0));
    assert!(
        (value(s.limit()) - 0.9 * before).abs() < 1e-9,
        "{before} {:?}",
        s.limit()
    );
}

#[test]
fn rate_flag_is_only_the_starting_rate() {
    let o = SchemeOptions {
        kind: LawKind::Rcp,
        rate: Some(RateSpec::BitsPerSec(80e6)),
        ..SchemeOptions::default()
    };
    let mut s = Scheme::new(&o);
    assert!((value(s.limit()) - 80e6 / (8.0 * 8100.0)).abs() < 1e-6);
    let cc = CcFields {
        primary_rate_bps: Some(8_000_000),
        ..CcFields::default()
    };
    s.on_data(Timestamp::ZERO, &data_feedback(&cc, None, 1000, s.reads()));
    assert!((value(s.limit()) - 1000.0).abs() < 1e-6);
}

#[test]
fn ccc_and_qsccp_interests_carry_objective_class_and_size() {
    let mut rng = StdRng::seed_from_u64(1);
    let mut s = Scheme::new(&SchemeOptions {
        kind: LawKind::Ccc,
        objective: Some(RateSpec::BitsPerSec(8e6)),
        ..SchemeOptions::default()
    });
    s.on_data(
        Timestamp::ZERO,
        &data_feedback(&CcFields::default(), None, 1000, s.reads()),
    );
    let cc = s.tag(0, &mut rng).unwrap();
    assert_eq!(cc.pace_objective_milli_ips, Some(1_000_000));
    assert_eq!(cc.flow_data_size_bytes, Some(1000));
    let mut q = Scheme::new(&SchemeOptions {
        kind: LawKind::Qsccp,
        class: ServiceClass::Ef,
        ..SchemeOptions::default()
    });
    let cc = q.tag(0, &mut rng).unwrap();
    assert_eq!(cc.service_class, Some(ServiceClass::Ef));
    assert_eq!(cc.downstream_rate_bps, Some(u64::MAX));
    assert_eq!(cc.flow_data_size_bytes, Some(8100));
    assert!(Scheme::new(&opts(LawKind::Cubic))
        .tag(0, &mut rng)
        .is_none());
    let r = Scheme::new(&opts(LawKind::Rcp)).tag(0, &mut rng).unwrap();
    assert_eq!(r.traffic_class, Some(TrafficClass::Primary));
}

#[test]
fn mircc_ties_paths_to_the_hints_it_sent() {
    let mut rng = StdRng::seed_from_u64(1);
    let mut s = Scheme::new(&opts(LawKind::Mircc));
    let cc = s.tag(0, &mut rng).unwrap();
    assert_eq!(cc.traffic_class, Some(TrafficClass::Primary));
    assert_eq!(cc.steering_hint, None, "no path known yet: hint-less");
    let stamped = CcFields {
        primary_rate_bps: Some(8_000_000),
        path_id: Some(9),
        // What a producer might reflect: the residue, not the hint sent.
        steering_hint: Some(3),
        ..CcFields::default()
    };
    let mut fb = data_feedback(&stamped, None, 1000, s.reads());
    fb.segment = Some(0);
    s.on_data(Timestamp::ZERO, &fb);
    assert!((value(s.limit()) - 1000.0).abs() < 1.0);
    // Now Interests carry a random hint for path 9; the Data of one of them
    // teaches the law that this hint leads onto path 9.
    let sent = s.tag(1, &mut rng).unwrap().steering_hint;
    let mut fb = data_feedback(&stamped, None, 1000, s.reads());
    fb.segment = Some(1);
    s.on_data(Timestamp::from_millis(1), &fb);
    let AnyConsumerLaw::Mircc(m) = s.law() else {
        panic!()
    };
    assert_eq!(m.paths().len(), 1);
    assert_eq!(m.paths()[0].hint, sent);
    let hinted = (2..200)
        .filter(|seg| s.tag(*seg, &mut rng).unwrap().steering_hint == sent)
        .count();
    assert!(hinted > 170, "about 97% carry the path's hint: {hinted}");
}

#[test]
fn service_classes_parse() {
    assert_eq!(parse_service_class("EF"), Ok(ServiceClass::Ef));
    assert!(parse_service_class("gold").is_err());
}

#[test]
fn pcon_never_hides_marks() {
    let mut o = opts(LawKind::Pcon);
    o.ignore_marks = true;
    assert!(!o.pipeline_ignores_marks());
    o.kind = LawKind::Cubic;
    assert!(o.pipeline_ignores_marks());
}

/// Drives a pipeline with a scheme in virtual time: every request is
/// answered after 10 ms with Data carrying `cc`, marked for `mark_at`.
fn drive(
    kind: LawKind,
    cc: CcFields,
    mark_at: &[u64],
    rounds: u64,
) -> (Pipeline<Scheme>, Vec<f64>) {
    let s = Scheme::new(&opts(kind));
    let cfg = PipelineConfig {
        cwa: false,
        ..PipelineConfig::default()
    };
    let mut p = Pipeline::new(cfg, s);
    let mut limits = Vec::new();
    let mut now = Timestamp::ZERO;
    let mut pending = std::collections::VecDeque::new();
    for _ in 0..rounds {
        while let Some(r) = p.poll_transmit(now) {
            pending.push_back((now + Duration::from_millis(10), r.segment));
        }
        now += Duration::from_millis(1);
        while pending
            .front()
            .is_some_and(|x: &(Timestamp, u64)| x.0 <= now)
        {
            let (_, seg) = pending.pop_front().unwrap();
            let mark = mark_at.contains(&seg).then_some(1);
            let fb = data_feedback(&cc, mark, 1000, p.law().reads());
            p.handle_data(now, seg, Bytes::from_static(b"x"), None, fb);
            limits.push(value(p.limit()));
        }
        p.handle_timeout(now);
    }
    (p, limits)
}

#[test]
fn window_laws_grow_then_back_off_on_a_mark() {
    for kind in [LawKind::Aimd, LawKind::Cubic, LawKind::Pcon, LawKind::Wincm] {
        let (p, w) = drive(kind, CcFields::default(), &[60], 200);
        let peak = w.iter().take(59).fold(0.0f64, |a, b| a.max(*b));
        assert!(peak > 8.0, "{kind}: window grew to {peak}");
        let st = p.stats();
        assert_eq!(st.congestion_marks, 1, "{kind}");
        if kind == LawKind::Pcon {
            // This path answers every Interest in 10 ms however many are
            // in flight: it delivers the whole window per minimum RTT, and
            // the tuned PCON consumer never cuts below what the path
            // delivers (cc-core `AimdConfig::bandwidth_floor`).
            assert_eq!(st.mark_decreases, 0, "{kind}: {:?}", &w[50..]);
            assert!(w[60] <= w[59], "{kind}: {} -> {}", w[59], w[60]);
            continue;
        }
        assert_eq!(st.mark_decreases, 1, "{kind}: {:?}", &w[50..]);
        assert!(w[60] < w[59], "{kind}: {} -> {}", w[59], w[60]);
    }
}

#[test]
fn wincm_decreases_on_every_mark_of_an_episode() {
    // WinCM's additive decrease is per marked Data (β = 4 each); window
    // laws with CWA would decrease once.
    let (p, w) = drive(LawKind::Wincm, CcFields::default(), &[60, 61, 62], 200);
    assert_eq!(p.stats().mark_decreases, 3, "{:?}", &w[55..66]);
    let (p, _) = drive(LawKind::Cubic, CcFields::default(), &[60, 61, 62], 200);
    assert_eq!(p.stats().mark_decreases, 1);
}

#[test]
fn window_laws_back_off_on_timeout() {
    for kind in [LawKind::Aimd, LawKind::Cubic, LawKind::Pcon, LawKind::Wincm] {
        // Grow, then the link goes silent: every outstanding Interest times out.
        let (mut p, w) = drive(kind, CcFields::default(), &[], 60);
        let before = *w.last().unwrap();
        while p.poll_transmit(Timestamp::from_millis(61)).is_some() {}
        assert!(p.in_flight() > 0, "{kind}");
        p.handle_timeout(Timestamp::from_secs_f64(5.0));
        let after = value(p.limit());
        assert!(after < before, "{kind}: {before} -> {after}");
        let st = p.stats();
        assert_eq!(st.timeout_decreases, 1, "{kind}");
        assert!(st.timeouts > 0, "{kind}");
        assert!(
            p.rtt().rto() >= Duration::from_millis(400),
            "RTO backed off"
        );
    }
}

#[test]
fn rate_laws_follow_stamped_fields_from_the_wire() {
    // 8 Mbit/s (or 1000 Interests/s) stamped, 1000-byte Data: 1000/s.
    let cc = CcFields {
        primary_rate_bps: Some(8_000_000),
        secondary_rate_bps: Some(0),
        path_id: Some(1),
        target_rate_bps: Some(8_000_000),
        pace_constraint_milli_ips: Some(1_000_000),
        ..CcFields::default()
    };
    for kind in [LawKind::Rcp, LawKind::Mircc, LawKind::Qsccp, LawKind::Ccc] {
        let (_, r) = drive(kind, cc, &[], 300);
        let last = *r.last().unwrap();
        assert!((last - 1000.0).abs() < 1.0, "{kind}: {last}");
    }
}

#[test]
fn rate_laws_move_when_the_network_lowers_its_stamp() {
    for kind in [LawKind::Rcp, LawKind::Qsccp, LawKind::Ccc] {
        let mut s = Scheme::new(&opts(kind));
        let stamp = |bps: u64| CcFields {
            primary_rate_bps: Some(bps),
            target_rate_bps: Some(bps),
            pace_constraint_milli_ips: Some(bps / 8),
            ..CcFields::default()
        };
        for _ in 0..50 {
            s.on_data(
                Timestamp::ZERO,
                &data_feedback(&stamp(16_000_000), None, 1000, s.reads()),
            );
        }
        let high = value(s.limit());
        for _ in 0..50 {
            s.on_data(
                Timestamp::ZERO,
                &data_feedback(&stamp(4_000_000), None, 1000, s.reads()),
            );
        }
        let low = value(s.limit());
        assert!(
            (high - 2000.0).abs() < 1.0 && (low - 500.0).abs() < 1.0,
            "{kind}: {high} {low}"
        );
    }
}

#[test]
fn mircc_rate_drops_on_a_lower_nack_rate_only() {
    use crate::feedback::nack_feedback;
    use icn_tlv::NackReason;
    let mut s = Scheme::new(&opts(LawKind::Mircc));
    let cc = |bps: u64| CcFields {
        primary_rate_bps: Some(bps),
        path_id: Some(1),
        ..CcFields::default()
    };
    s.on_data(
        Timestamp::ZERO,
        &data_feedback(&cc(8_000_000), None, 1000, s.reads()),
    );
    assert!((value(s.limit()) - 1000.0).abs() < 1.0);
    let r = s.reads();
    s.on_nack(
        Timestamp::ZERO,
        &nack_feedback(&cc(4_000_000), NackReason::Congestion, r),
    );
    assert!((value(s.limit()) - 500.0).abs() < 1.0);
    s.on_nack(
        Timestamp::ZERO,
        &nack_feedback(&cc(16_000_000), NackReason::Congestion, r),
    );
    assert!(
        (value(s.limit()) - 500.0).abs() < 1.0,
        "a Nack never raises the rate"
    );
}

#[test]
fn fixed_and_none_keep_their_limit_under_marks() {
    for kind in [LawKind::None, LawKind::Fixed] {
        let (p, w) = drive(kind, CcFields::default(), &[5, 6, 7], 40);
        assert!(w.windows(2).all(|x| x[0] == x[1]), "{kind}");
        assert_eq!(p.stats().mark_decreases, 0);
    }
}

/// `--profile paper` gives PCON ndnget's halving on a mark (tuned: the cut
/// in proportion to the marked fraction, which starts at one, so the first
/// mark halves too; `--aimd-mark-beta` makes it a fixed factor) and WinCM
/// the paper's β = 4 (tuned 1.5); `--aimd-mark-beta` wins over either.
#[test]
fn pcon_and_wincm_profiles_reach_the_laws() {
    let mark = DataFeedback {
        congestion_mark: 1,
        ..DataFeedback::default()
    };
    let after_mark = |kind, profile, mark_beta: Option<f64>| {
        let o = SchemeOptions {
            kind,
            profile,
            aimd_mark_beta: mark_beta,
            init_cwnd: Some(20.0),
            ..SchemeOptions::default()
        };
        let mut law = AnyConsumerLaw::new(kind, &o.law_config());
        law.on_data(Timestamp::from_millis(100), &mark);
        value(law.limit())
    };
    assert_eq!(after_mark(LawKind::Pcon, Profile::Tuned, None), 10.0);
    assert_eq!(after_mark(LawKind::Pcon, Profile::Tuned, Some(0.8)), 16.0);
    assert_eq!(after_mark(LawKind::Pcon, Profile::Paper, None), 10.0);
    assert_eq!(after_mark(LawKind::Pcon, Profile::Paper, Some(0.9)), 18.0);
    assert_eq!(after_mark(LawKind::Aimd, Profile::Tuned, None), 10.0);
    // WinCM's initial window is also its floor: grow it from 1 first.
    let wincm = |profile| {
        let o = SchemeOptions {
            kind: LawKind::Wincm,
            profile,
            ..SchemeOptions::default()
        };
        let mut law = AnyConsumerLaw::new(LawKind::Wincm, &o.law_config());
        let t = Timestamp::from_millis(100);
        for _ in 0..12 {
            law.on_data(t, &DataFeedback::default());
        }
        assert_eq!(value(law.limit()), 13.0);
        law.on_data(t, &mark);
        value(law.limit())
    };
    assert_eq!(wincm(Profile::Tuned), 11.5);
    assert_eq!(wincm(Profile::Paper), 9.0);
}
