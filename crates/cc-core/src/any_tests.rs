use super::*;
use crate::time::Duration;
use alloc::boxed::Box;
use proptest::prelude::*;

/// Each law built by hand, as a caller without the enum would.
fn boxed(kind: LawKind, cfg: &ConsumerLawConfig) -> Box<dyn ConsumerLaw> {
    match kind {
        LawKind::None => Box::new(FixedWindow::new(cfg.none)),
        LawKind::Fixed => match cfg.fixed {
            FixedLawConfig::Window(w) => Box::new(FixedWindow::new(w)),
            FixedLawConfig::Rate(r) => Box::new(FixedRate::new(r)),
        },
        LawKind::Aimd => Box::new(Aimd::new(cfg.aimd)),
        LawKind::Cubic => Box::new(Cubic::new(cfg.cubic)),
        LawKind::Pcon => match cfg.pcon_window {
            PconWindow::Aimd => Box::new(Aimd::new(crate::pcon::pcon_aimd(cfg.aimd))),
            PconWindow::Cubic => Box::new(Cubic::new(CubicConfig {
                ignore_marks: false,
                ..cfg.cubic
            })),
        },
        LawKind::Rcp => Box::new(RateConsumer::new(cfg.rcp)),
        LawKind::Mircc => Box::new(MirccConsumer::new(cfg.mircc)),
        LawKind::Ccc => Box::new(CccConsumer::new(cfg.ccc)),
        LawKind::Wincm => Box::new(WincmConsumer::new(cfg.wincm)),
        LawKind::Qsccp => Box::new(QsccpConsumer::new(cfg.qsccp)),
    }
}

#[derive(Debug, Clone)]
enum Event {
    Sent(bool),
    Data {
        rtt_ms: u64,
        mark: u64,
        size: u32,
        rate_bps: f64,
    },
    Nack {
        congestion: bool,
        rate_bps: f64,
    },
    Timeout,
}

fn apply(law: &mut dyn ConsumerLaw, now: Timestamp, ev: &Event) {
    match *ev {
        Event::Sent(retx) => law.on_interest_sent(now, retx),
        Event::Data {
            rtt_ms,
            mark,
            size,
            rate_bps,
        } => law.on_data(
            now,
            &DataFeedback {
                rtt: Some(Duration::from_millis(rtt_ms)),
                congestion_mark: mark,
                data_size_bytes: size,
                primary_rate_bps: Some(rate_bps),
                secondary_rate_bps: Some(rate_bps / 4.0),
                path_id: Some(7),
                pace_constraint_ips: Some(rate_bps / 8000.0),
                target_rate_bps: Some(rate_bps),
                ..DataFeedback::default()
            },
        ),
        Event::Nack {
            congestion,
            rate_bps,
        } => law.on_nack(
            now,
            &NackFeedback {
                congestion,
                primary_rate_bps: Some(rate_bps),
                secondary_rate_bps: None,
                path_id: None,
            },
        ),
        Event::Timeout => law.on_timeout(now),
    }
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => any::<bool>().prop_map(Event::Sent),
        4 => (1u64..500, 0u64..3, 100u32..9000, 1e5f64..1e8).prop_map(|(rtt_ms, m, size, rate_bps)| Event::Data {
            rtt_ms,
            mark: u64::from(m == 2),
            size,
            rate_bps,
        }),
        1 => (any::<bool>(), 1e5f64..1e8).prop_map(|(congestion, rate_bps)| Event::Nack { congestion, rate_bps }),
        1 => Just(Event::Timeout),
    ]
}

#[test]
fn every_kind_builds_its_law() {
    let cfg = ConsumerLawConfig::default();
    for kind in LawKind::ALL {
        let law = AnyConsumerLaw::new(kind, &cfg);
        let want = if kind == LawKind::None {
            LawKind::Fixed
        } else {
            kind
        };
        assert_eq!(law.kind(), want, "{kind}");
        // CCC keeps a small window until its first Data (ccc.rs), then paces.
        let rate = matches!(kind, LawKind::Rcp | LawKind::Mircc | LawKind::Qsccp);
        assert_eq!(
            matches!(law.limit(), SendLimit::Rate { .. }),
            rate,
            "{kind}"
        );
    }
    assert_eq!(
        AnyConsumerLaw::new(LawKind::None, &cfg).limit(),
        SendLimit::Window { interests: 64.0 }
    );
    let rate = ConsumerLawConfig {
        fixed: FixedLawConfig::Rate(FixedRateConfig::default()),
        ..cfg
    };
    assert!(matches!(
        AnyConsumerLaw::new(LawKind::Fixed, &rate),
        AnyConsumerLaw::FixedRate(_)
    ));
}

#[test]
fn pcon_reacts_to_marks_even_when_aimd_ignores_them() {
    let cfg = ConsumerLawConfig {
        aimd: AimdConfig {
            init_cwnd: 20.0,
            init_ssthresh: 10.0,
            ignore_marks: true,
            ..AimdConfig::default()
        },
        ..ConsumerLawConfig::default()
    };
    let marked = Event::Data {
        rtt_ms: 50,
        mark: 1,
        size: 1000,
        rate_bps: 1e6,
    };
    let mut aimd = AnyConsumerLaw::new(LawKind::Aimd, &cfg);
    let mut pcon = AnyConsumerLaw::new(LawKind::Pcon, &cfg);
    let t = Timestamp::from_millis(100);
    apply(&mut aimd, t, &marked);
    apply(&mut pcon, t, &marked);
    let w = |l: &AnyConsumerLaw| match l.limit() {
        SendLimit::Window { interests } => interests,
        other => panic!("window law gave {other:?}"),
    };
    assert!(w(&aimd) > 20.0, "ignored mark: additive increase");
    assert_eq!(
        w(&pcon),
        10.0,
        "PCON cuts on a mark: by α/2, and α starts at 1"
    );
}

proptest! {
    /// The enum forwards every event to its law: after any sequence of
    /// events it answers exactly what the law behind a `Box<dyn>` answers.
    #[test]
    fn enum_matches_boxed_law(
        kind in proptest::sample::select(LawKind::ALL.to_vec()),
        cubic_pcon in any::<bool>(),
        events in proptest::collection::vec((event(), 0u64..200), 1..120),
    ) {
        let cfg = ConsumerLawConfig {
            pcon_window: if cubic_pcon { PconWindow::Cubic } else { PconWindow::Aimd },
            ..ConsumerLawConfig::default()
        };
        let mut any = AnyConsumerLaw::new(kind, &cfg);
        let mut dynamic = boxed(kind, &cfg);
        let mut now = Timestamp::ZERO;
        for (ev, dt_ms) in &events {
            now += Duration::from_millis(*dt_ms);
            apply(&mut any, now, ev);
            apply(dynamic.as_mut(), now, ev);
            prop_assert_eq!(any.limit(), dynamic.limit());
        }
    }
}
