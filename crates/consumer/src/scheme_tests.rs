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
