//! Closed-loop runs of the explicit-rate laws over one bottleneck link
//! (`icn_sim::fluid`), after MIRCC §3.2 / Figures 2-3: a 1 Mbit/s bottleneck,
//! one long background flow, three flows arriving together.
//!
//! Both laws run with the same period T = 100 ms (≈ the RTT, as MIRCC
//! §3.1.2 asks) and the same 10-Data shaper queue (the third-party MIRCC
//! code's shaper bound). RCP is tried with the reference router's gains
//! (α = β = 0.4) and with the classic RCP gains (α = 0.1, β = 1).
//!
//! Finding kept out of the assertions: when the RTTs exceed T (150-200 ms)
//! and the queue is 20 Data, MIRCC's self-tuned β over-reacts and RCP
//! settles sooner; with a 10 ms period RCP (α = β = 0.4) is about as fast
//! as MIRCC at 100 ms. The ordering asserted here is the paper's, in the
//! regime the paper describes.

use cc_core::mircc::{MirccConfig, MirccRate};
use cc_core::rcp::{LinkRateLaw, RcpConfig, RcpLink};
use cc_core::{Duration, Timestamp};
use icn_sim::fluid::{
    overshoot, peak_queue_bytes, run_link, settling_time, FlowSpec, SimConfig, TimeSeries,
};

const C: f64 = 1e6;
const ETA: f64 = 0.95;

fn arrival_scenario(rtts_ms: [u64; 4], arrival: Timestamp) -> Vec<FlowSpec> {
    rtts_ms
        .iter()
        .enumerate()
        .map(|(i, &r)| FlowSpec {
            rtt: Duration::from_millis(r),
            start: if i == 0 { Timestamp::ZERO } else { arrival },
            stop: None,
        })
        .collect()
}

fn run(law: &mut impl LinkRateLaw, flows: &[FlowSpec]) -> TimeSeries {
    let cfg = SimConfig {
        capacity_bps: C,
        duration: Duration::from_secs(25),
        ..SimConfig::default()
    };
    run_link(law, &cfg, flows)
}

fn rcp(alpha: f64, beta: f64) -> RcpLink {
    let cfg = RcpConfig {
        alpha,
        beta,
        period: Duration::from_millis(100),
        ..RcpConfig::default()
    };
    RcpLink::new(cfg, C)
}

fn mircc() -> MirccRate {
    MirccRate::new(MirccConfig::default(), C)
}

struct Metrics {
    settle: Duration,
    overshoot: f64,
}

fn metrics(s: &TimeSeries, arrival: Timestamp) -> Metrics {
    let fair = ETA * C / 4.0;
    let settle = settling_time(s, arrival, &[0, 1, 2, 3], fair, 0.10)
        .expect("flows must settle at the fair share");
    // Steady state: everyone at ηC/4 within 2%, queue drained.
    let last = s.samples.last().unwrap();
    for &x in &last.flow_bps {
        assert!((x - fair).abs() < 0.02 * fair, "final rate {x} vs {fair}");
    }
    assert!(
        last.queue_bytes < 100.0,
        "queue not drained: {}",
        last.queue_bytes
    );
    Metrics {
        settle,
        overshoot: overshoot(s, arrival, fair),
    }
}

#[test]
fn single_flow_and_equal_start_converge_to_fair_share() {
    for n in [1usize, 2, 5] {
        let flows: Vec<FlowSpec> = (0..n)
            .map(|i| FlowSpec {
                rtt: Duration::from_millis(60 + 20 * i as u64),
                start: Timestamp::ZERO,
                stop: None,
            })
            .collect();
        let fair = ETA * C / n as f64;
        for (name, s) in [
            ("mircc", run(&mut mircc(), &flows)),
            ("rcp", run(&mut rcp(0.4, 0.4), &flows)),
        ] {
            let last = s.samples.last().unwrap();
            for &x in &last.flow_bps {
                assert!(
                    (x - fair).abs() < 0.02 * fair,
                    "{name} n={n}: {x} vs {fair}"
                );
            }
            let total: f64 = last.flow_bps.iter().sum();
            assert!(total <= C, "{name}: over capacity");
        }
    }
}

#[test]
fn mircc_settles_faster_and_overshoots_less_than_rcp_after_arrivals() {
    let arrival = Timestamp::from_secs_f64(10.0);
    for rtts in [
        [80, 100, 120, 140],
        [100, 100, 100, 100],
        [60, 90, 70, 110],
        [40, 50, 60, 70],
    ] {
        let flows = arrival_scenario(rtts, arrival);
        let m = metrics(&run(&mut mircc(), &flows), arrival);
        for (alpha, beta) in [(0.4, 0.4), (0.1, 1.0)] {
            let r = metrics(&run(&mut rcp(alpha, beta), &flows), arrival);
            eprintln!(
                "rtts {rtts:?}: MIRCC settle {:?} overshoot {:.2}; RCP(α={alpha}, β={beta}) settle {:?} overshoot {:.2}",
                m.settle, m.overshoot, r.settle, r.overshoot
            );
            assert!(
                m.settle < r.settle,
                "settling: MIRCC {:?} vs RCP {:?}",
                m.settle,
                r.settle
            );
            assert!(
                m.overshoot < 0.8 * r.overshoot,
                "overshoot: MIRCC {} vs RCP {}",
                m.overshoot,
                r.overshoot
            );
        }
    }
}

#[test]
fn departures_give_the_bandwidth_back() {
    // Three flows; two leave at 8 s: the survivor climbs back to ηC.
    let flows: Vec<FlowSpec> = (0..3)
        .map(|i| FlowSpec {
            rtt: Duration::from_millis(100),
            start: Timestamp::ZERO,
            stop: (i > 0).then(|| Timestamp::from_secs_f64(8.0)),
        })
        .collect();
    for s in [run(&mut mircc(), &flows), run(&mut rcp(0.4, 0.4), &flows)] {
        let last = s.samples.last().unwrap();
        assert!((last.flow_bps[0] - ETA * C).abs() < 0.02 * ETA * C);
        assert_eq!(last.flow_bps[1], 0.0);
        assert!(peak_queue_bytes(&s, Timestamp::from_secs_f64(8.0)) < 10_000.0);
    }
}
