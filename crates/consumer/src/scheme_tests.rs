//! Every `--cc` value builds a law; the small in-crate laws behave.

use super::*;

#[test]
fn every_scheme_builds_with_the_expected_limit_kind() {
    for kind in LawKind::ALL {
        let opts = SchemeOptions {
            kind,
            ..SchemeOptions::default()
        };
        let (law, tagger) = build(&opts);
        let is_rate = matches!(law.limit(), SendLimit::Rate { .. });
        let want_rate = matches!(
            kind,
            LawKind::Rcp | LawKind::Mircc | LawKind::Ccc | LawKind::Qsccp
        );
        assert_eq!(is_rate, want_rate, "{kind}");
        assert_eq!(tagger.scheme_name(), kind.name());
    }
}

#[test]
fn fixed_rate_in_bits_deflates_by_measured_size() {
    let opts = SchemeOptions {
        kind: LawKind::Fixed,
        rate: Some(RateSpec::BitsPerSec(8e6)),
        ..SchemeOptions::default()
    };
    let (mut law, _) = build(&opts);
    law.on_data(
        Timestamp::ZERO,
        &DataFeedback {
            data_size_bytes: 1000,
            ..Default::default()
        },
    );
    match law.limit() {
        SendLimit::Rate {
            interests_per_sec, ..
        } => assert!((interests_per_sec - 1000.0).abs() < 1e-6),
        l => panic!("{l:?}"),
    }
}

#[test]
fn qsccp_adopts_first_target_then_smooths() {
    let mut q = QsccpConsumer::new(100_000.0, 1000.0, 100);
    let fb = |tr: f64| DataFeedback {
        data_size_bytes: 1000,
        target_rate_bps: Some(tr),
        ..Default::default()
    };
    q.on_data(Timestamp::ZERO, &fb(8e6));
    assert_eq!(q.rate_bps(), 8e6);
    q.on_data(Timestamp::ZERO, &fb(4e6));
    assert!((q.rate_bps() - (0.8 * 8e6 + 0.2 * 4e6)).abs() < 1e-6);
    match q.limit() {
        SendLimit::Rate {
            interests_per_sec, ..
        } => assert!((interests_per_sec - 7.2e6 / 8000.0).abs() < 1e-6),
        l => panic!("{l:?}"),
    }
}

#[test]
fn ccc_paces_at_min_of_objective_and_constraint() {
    let mut c = CccConsumer::new(RateSpec::InterestsPerSec(500.0), 1000.0, 100);
    assert_eq!(
        c.limit(),
        SendLimit::Rate {
            interests_per_sec: 500.0,
            max_outstanding: 100
        }
    );
    c.on_data(
        Timestamp::ZERO,
        &DataFeedback {
            pace_constraint_ips: Some(200.0),
            ..Default::default()
        },
    );
    assert_eq!(
        c.limit(),
        SendLimit::Rate {
            interests_per_sec: 200.0,
            max_outstanding: 100
        }
    );
    c.on_data(
        Timestamp::ZERO,
        &DataFeedback {
            pace_constraint_ips: Some(900.0),
            ..Default::default()
        },
    );
    assert_eq!(
        c.limit(),
        SendLimit::Rate {
            interests_per_sec: 500.0,
            max_outstanding: 100
        }
    );
}

#[test]
fn mircc_tagger_marks_class_and_learns_paths() {
    use rand::SeedableRng;
    let opts = SchemeOptions {
        kind: LawKind::Mircc,
        ..SchemeOptions::default()
    };
    let (law, mut tagger) = build(&opts);
    let mut rng = StdRng::seed_from_u64(1);
    let cc = tagger
        .tag(Timestamp::ZERO, 0, law.limit(), &mut rng)
        .unwrap();
    assert_eq!(cc.traffic_class, Some(TrafficClass::Primary));
    assert_eq!(cc.steering_hint, None, "first Interests are hint-less");
    let fb = DataFeedback {
        data_size_bytes: 1000,
        primary_rate_bps: Some(8e6),
        path_id: Some(9),
        ..Default::default()
    };
    tagger.on_data(Timestamp::ZERO, 0, &fb, &CcFields::default());
    match law.limit() {
        SendLimit::Rate {
            interests_per_sec, ..
        } => assert!((interests_per_sec - 1000.0).abs() < 1.0),
        l => panic!("{l:?}"),
    }
    let hinted = (1..200)
        .filter(|s| {
            tagger
                .tag(Timestamp::ZERO, *s, law.limit(), &mut rng)
                .unwrap()
                .steering_hint
                .is_some()
        })
        .count();
    assert!(hinted > 170, "about 97% carry a hint: {hinted}");
}

#[test]
fn service_classes_parse() {
    assert_eq!(parse_service_class("EF"), Ok(ServiceClass::Ef));
    assert!(parse_service_class("gold").is_err());
}

/// Drives a pipeline with a real law in virtual time: every request is
/// answered after 10 ms with `fb`, except that `mark_at` Data carry a mark.
fn drive(
    kind: LawKind,
    fb: DataFeedback,
    mark_at: &[u64],
    rounds: u64,
) -> (crate::Pipeline, Vec<f64>) {
    use crate::pipeline::{Pipeline, PipelineConfig};
    use bytes::Bytes;
    let opts = SchemeOptions {
        kind,
        ..SchemeOptions::default()
    };
    let (law, _) = build(&opts);
    let cfg = PipelineConfig {
        cwa: false,
        ..PipelineConfig::default()
    };
    let mut p = Pipeline::new(cfg, law);
    let mut limits = Vec::new();
    let mut now = Timestamp::ZERO;
    let mut pending = std::collections::VecDeque::new();
    for _ in 0..rounds {
        while let Some(r) = p.poll_transmit(now) {
            pending.push_back((now + cc_core::Duration::from_millis(10), r.segment));
        }
        now += cc_core::Duration::from_millis(1);
        while pending
            .front()
            .is_some_and(|x: &(Timestamp, u64)| x.0 <= now)
        {
            let (_, seg) = pending.pop_front().unwrap();
            let mark = u64::from(mark_at.contains(&seg));
            p.handle_data(
                now,
                seg,
                Bytes::from_static(b"x"),
                None,
                DataFeedback {
                    congestion_mark: mark,
                    ..fb
                },
            );
            limits.push(match p.limit() {
                SendLimit::Window { interests } => interests,
                SendLimit::Rate {
                    interests_per_sec, ..
                } => interests_per_sec,
            });
        }
        p.handle_timeout(now);
    }
    (p, limits)
}

#[test]
fn window_laws_grow_then_back_off_on_a_mark() {
    let fb = DataFeedback {
        data_size_bytes: 1000,
        ..Default::default()
    };
    for kind in [LawKind::Aimd, LawKind::Cubic, LawKind::Pcon, LawKind::Wincm] {
        let (p, w) = drive(kind, fb, &[60], 200);
        let peak = w.iter().take(59).fold(0.0f64, |a, b| a.max(*b));
        assert!(peak > 8.0, "{kind}: window grew to {peak}");
        let st = p.stats();
        assert_eq!(st.congestion_marks, 1, "{kind}");
        assert_eq!(st.mark_decreases, 1, "{kind}: {:?}", &w[50..]);
        let after = w[60];
        assert!(after < w[59], "{kind}: {} -> {after}", w[59]);
    }
}

#[test]
fn window_laws_back_off_on_timeout() {
    let fb = DataFeedback {
        data_size_bytes: 1000,
        ..Default::default()
    };
    for kind in [LawKind::Aimd, LawKind::Cubic, LawKind::Pcon, LawKind::Wincm] {
        // Grow, then the link goes silent: every outstanding Interest times out.
        let (mut p, w) = drive(kind, fb, &[], 60);
        let before = *w.last().unwrap();
        while p.poll_transmit(Timestamp::from_millis(61)).is_some() {}
        assert!(p.in_flight() > 0, "{kind}");
        p.handle_timeout(Timestamp::from_secs_f64(5.0));
        let after = match p.limit() {
            SendLimit::Window { interests } => interests,
            l => panic!("{l:?}"),
        };
        assert!(after < before, "{kind}: {before} -> {after}");
        let st = p.stats();
        assert_eq!(st.timeout_decreases, 1, "{kind}");
        assert!(st.timeouts > 0, "{kind}");
        assert!(
            p.rtt().rto() >= cc_core::Duration::from_millis(400),
            "RTO backed off"
        );
    }
}

#[test]
fn rate_laws_follow_stamped_rates() {
    // 8 Mbit/s stamped, 1000-byte Data: 1000 Interests/s.
    let fb = DataFeedback {
        data_size_bytes: 1000,
        primary_rate_bps: Some(8e6),
        secondary_rate_bps: Some(0.0),
        path_id: Some(1),
        target_rate_bps: Some(8e6),
        pace_constraint_ips: Some(1000.0),
        ..Default::default()
    };
    for kind in [LawKind::Rcp, LawKind::Qsccp, LawKind::Ccc] {
        let (_, r) = drive(kind, fb, &[], 300);
        let last = *r.last().unwrap();
        assert!((last - 1000.0).abs() < 1.0, "{kind}: {last}");
    }
}

#[test]
fn mircc_rate_drops_on_a_lower_nack_rate() {
    let fb = DataFeedback {
        data_size_bytes: 1000,
        primary_rate_bps: Some(8e6),
        path_id: Some(1),
        ..Default::default()
    };
    let (law, mut tagger) = build(&SchemeOptions {
        kind: LawKind::Mircc,
        ..SchemeOptions::default()
    });
    let mut law = law;
    tagger.on_data(Timestamp::ZERO, 0, &fb, &CcFields::default());
    let ips = |l: &dyn ConsumerLaw| match l.limit() {
        SendLimit::Rate {
            interests_per_sec, ..
        } => interests_per_sec,
        x => panic!("{x:?}"),
    };
    assert!((ips(law.as_ref()) - 1000.0).abs() < 1.0);
    law.on_nack(
        Timestamp::ZERO,
        &NackFeedback {
            congestion: true,
            primary_rate_bps: Some(4e6),
            path_id: Some(1),
            ..Default::default()
        },
    );
    assert!((ips(law.as_ref()) - 500.0).abs() < 1.0);
    law.on_nack(
        Timestamp::ZERO,
        &NackFeedback {
            congestion: true,
            primary_rate_bps: Some(16e6),
            path_id: Some(1),
            ..Default::default()
        },
    );
    assert!(
        (ips(law.as_ref()) - 500.0).abs() < 1.0,
        "a Nack never raises the rate"
    );
}

#[test]
fn fixed_and_none_keep_their_limit_under_marks() {
    let fb = DataFeedback {
        data_size_bytes: 1000,
        ..Default::default()
    };
    for kind in [LawKind::None, LawKind::Fixed] {
        let (p, w) = drive(kind, fb, &[5, 6, 7], 40);
        assert!(w.windows(2).all(|x| x[0] == x[1]), "{kind}");
        assert_eq!(p.stats().mark_decreases, 0);
    }
}
