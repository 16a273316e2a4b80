//! The bound math on hand-computed cases.

use super::*;

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() / y < 0.01)
}

#[test]
fn shares_of_the_parking_lots() {
    let t = parking_lot_2(9_000_000);
    let mm = t.max_min_shares();
    assert!(close(&mm, &[3e6, 6e6, 3e6, 3e6]), "{mm:?}");
    let t = parking_lot_3(12_000_000);
    let mm = t.max_min_shares();
    assert!(close(&mm, &[2e6, 2e6, 8e6, 2e6, 10e6]), "{mm:?}");
}

#[test]
fn proportional_fair_shares_of_parking_lot_2() {
    // Maximise Σ log x subject to x0 + x1 = C and x0 + x2 + x3 = C. With
    // link prices p1, p2: x1 = 1/p1, x2 = x3 = 1/p2, x0 = 1/(p1 + p2), so
    // p1 = 1/(C − x0), p2 = 2/(C − x0) and x0 = (C − x0)/3: x0 = C/4,
    // x1 = 3C/4, x2 = x3 = 3C/8.
    let c = 9e6;
    let want = [c / 4.0, 3.0 * c / 4.0, 3.0 * c / 8.0, 3.0 * c / 8.0];
    let pf = parking_lot_2(9_000_000).proportional_fair_shares();
    assert!(close(&pf, &want), "{pf:?} vs {want:?}");
    // On one link every flow gets C/N.
    let pf = dumbbell(10_000_000, 50, 4).proportional_fair_shares();
    assert!(close(&pf, &[2.5e6; 4]), "{pf:?}");
}

#[test]
fn base_rtts_count_access_links() {
    // 10 ms dumbbell: core delay 3 ms, access 1 + 1 ms: 2 × 5 = 10 ms.
    let t = dumbbell(2_000_000, 10, 1);
    assert_eq!(t.base_rtt_ms(&t.flows[0]), 10);
    let t = mixed_rtt(10_000_000);
    let rtts: Vec<u64> = t.flows.iter().map(|f| t.base_rtt_ms(f)).collect();
    assert_eq!(rtts, [10, 50, 150]);
    let t = parking_lot_2(10_000_000);
    assert_eq!(t.base_rtt_ms(&t.flows[0]), 24);
    assert_eq!(t.base_rtt_ms(&t.flows[1]), 14);
}

#[test]
fn window_floor_of_ten_8k_flows_on_2_mbit() {
    // 8 KB Data as 8075-byte frames on the link. BDP: 2 Mbit/s ×
    // 10 ms = 2500 bytes; ten flows keep 80 750 bytes in flight, so 78 250
    // wait beyond the BDP (9.7 Data, 313.0 ms), plus the Data in service:
    // 86 325 bytes, 345.3 ms.
    let t = dumbbell(2_000_000, 10, 10);
    let waiting_ms: f64 = (10.0 * 8075.0 - 2500.0) * 8.0 / 2e6 * 1e3;
    assert!((waiting_ms - 313.0).abs() < 1e-9, "{waiting_ms}");
    let ms = t.window_queue_floor_ms(0, 8075.0);
    assert!((ms - 345.3).abs() < 1e-9, "{ms}");
    // One flow on a link whose BDP holds it: only the Data in service.
    let t = dumbbell(10_000_000, 50, 1);
    let ms = t.window_queue_floor_ms(0, 4400.0);
    assert!((ms - 3.52).abs() < 1e-9, "{ms}");
}

#[test]
fn paced_floor_rounds_the_chance_queue_up_to_whole_data() {
    // Ten flows at ρ = 0.95: the N·D/D/1 p95 root is 3.6 Data, so 4 Data
    // of 1200 bytes on 2 Mbit/s: 19.2 ms.
    let t = dumbbell(2_000_000, 10, 10);
    let k = cc_core::chance_queue::paced_chance_queue_data(10.0, 0.95);
    assert!((3.5..3.7).contains(&k), "{k}");
    let ms = t.paced_queue_floor_ms(0, 1200.0, 0.95);
    assert!((ms - 4.0 * 1200.0 * 8.0 / 2e6 * 1e3).abs() < 1e-9, "{ms}");
    // Three flows at full load: root 2.1, so 3 Data.
    let t = dumbbell(10_000_000, 10, 3);
    let ms = t.paced_queue_floor_ms(0, 8000.0, 1.0);
    assert!((ms - 3.0 * 8000.0 * 8.0 / 10e6 * 1e3).abs() < 1e-9, "{ms}");
}

fn figures(util: f64, flow_bps: Vec<f64>, p95_queue_ms: f64, drops: u64) -> Figures {
    Figures {
        jain: crate::net::flows::jain(&flow_bps),
        utilisation: vec![util],
        flow_bps,
        p95_queue_ms,
        drops,
        frame_bytes: 1281.0,
    }
}

#[test]
fn a_rate_scheme_within_the_bounds_passes() {
    let t = dumbbell(10_000_000, 10, 3);
    let f = figures(0.95, vec![3.1e6, 3.2e6, 3.2e6], 4.0, 0);
    assert!(check(&t, Family::Rate, &f).is_empty());
}

#[test]
fn a_rate_scheme_breaking_every_bound_says_which() {
    // Three flows on 10 Mbit/s with 1281-byte frames: two Data 2.05 ms,
    // paced floor at ρ = 0.8 is ⌈1.7⌉ = 2 Data, so the bound is 10 ms.
    let t = dumbbell(10_000_000, 10, 3);
    let f = figures(0.80, vec![6.0e6, 1.0e6, 1.0e6], 12.5, 3);
    assert_eq!(
        check(&t, Family::Rate, &f),
        [
            "link 0 utilisation 80.0% < 90%",
            "p95 queue 12.5 ms > 10.0 ms",
            "3 congestion drops",
            "Jain 0.561 < 0.95",
        ]
    );
}

#[test]
fn several_bottlenecks_hold_rate_schemes_to_max_min_and_windows_to_pf() {
    let t = parking_lot_2(9_000_000);
    let mut f = figures(0.95, vec![2.0e6, 6.9e6, 3.4e6, 3.3e6], 5.0, 0);
    f.utilisation = vec![0.99, 0.97];
    assert_eq!(
        check(&t, Family::Rate, &f),
        [
            "flow 0 2.00 Mbit/s vs max-min 3.00 (> 10% off)",
            "flow 1 6.90 Mbit/s vs max-min 6.00 (> 10% off)",
            "flow 2 3.40 Mbit/s vs max-min 3.00 (> 10% off)",
        ]
    );
    assert!((max_min_deviation(&t, &f) - 1.0 / 3.0).abs() < 1e-9);
    // Proportional-fair: the long flow's share is C/4 = 2.25 Mbit/s, so
    // 2.0 is above 0.75 of it and the window check finds only the queue.
    f.p95_queue_ms = 30.0;
    assert_eq!(
        check(&t, Family::Window, &f),
        ["p95 queue 30.0 ms > 25.0 ms"]
    );
    f.flow_bps[0] = 1.0e6;
    assert_eq!(
        check(&t, Family::Window, &f)[1],
        "flow 0 1.00 Mbit/s < 0.75 x proportional-fair 2.25"
    );
}
