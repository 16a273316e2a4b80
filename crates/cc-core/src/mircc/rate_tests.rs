use super::*;

const RTT: Duration = Duration::from_millis(100);

fn ms(x: u64) -> Timestamp {
    Timestamp::from_millis(x)
}

/// Bytes that make y = `bps` over a 100 ms period.
fn bytes_for(bps: f64) -> u64 {
    (bps * 0.1 / 8.0) as u64
}

#[test]
fn the_paper_starts_rs_at_eta_c_and_tuned_at_its_floor() {
    let paper = MirccRate::new(MirccConfig::paper(), 1e6);
    assert_eq!(paper.secondary_bps(), 0.95e6);
    assert!(!MirccConfig::paper().secondary_keeps_headroom);
    let tuned = MirccRate::new(MirccConfig::tuned(), 1e6);
    assert_eq!(tuned.secondary_bps(), MirccConfig::tuned().min_rate_bps);
    assert_eq!(paper.primary_bps(), tuned.primary_bps());
}

#[test]
fn eqs_2_to_5_by_hand() {
    let cfg = MirccConfig::default();
    let mut r = MirccRate::new(cfg, 1e6);
    r.update(ms(0), 0, 0, RTT); // seeds the EWMAs; clamps to η·C
    assert_eq!(r.primary_bps(), 0.95e6);
    // y = 0.5 Mbit/s, q = 1250 bytes (10 kbit), d = 100 ms.
    let y = 0.5e6;
    let out = r.update(ms(100), bytes_for(y), 1250, RTT);
    let r_prev = 0.95e6;
    let n_hat = 1e6 / r_prev;
    let beta = 1.0; // (y − 0)/y
    let base = (0.95e6 - beta * 10_000.0 / 0.1) / n_hat;
    let excess = r_prev - y / n_hat;
    // First-period seeds: base0 = η²C (y = 0), excess0 = R0.
    let base0 = 0.95e6 * r_prev / 1e6;
    let excess0 = r_prev;
    let expect = 0.5 * (base0 + base) + 0.5 * (excess0 + excess);
    assert!((out - expect.min(0.95e6)).abs() < 1e-6, "{out} vs {expect}");
}

#[test]
fn secondary_starts_at_its_floor_and_grows_into_free_capacity() {
    let cfg = MirccConfig::default();
    let mut r = MirccRate::new(cfg, 10e6);
    assert_eq!(r.rates_bps(), (9.5e6, cfg.min_rate_bps));
    // Primary input at half the link, no secondary: Cs = 5 Mbit/s.
    let mut rs = Vec::new();
    for k in 0..30 {
        r.update_dual(ms(100 * k), bytes_for(5e6), 0, 0, RTT);
        rs.push(r.secondary_bps());
    }
    assert!(rs[1] < 0.1e6, "no jump to η·C: {rs:?}");
    assert!(rs.windows(2).take(15).all(|w| w[1] > w[0]), "{rs:?}");
    assert!(rs[29] > 0.9 * 0.95 * 5e6, "{rs:?}");
}

#[test]
fn overload_cuts_straight_to_fair_share() {
    // One flow at η·C; three more arrive: y = 4·η·C > C.
    let cfg = MirccConfig {
        ewma_alpha: 1.0, // no smoothing, to see eq. 3/4 directly
        ..MirccConfig::default()
    };
    let mut r = MirccRate::new(cfg, 1e6);
    r.update(ms(0), bytes_for(0.95e6), 0, RTT);
    let out = r.update(ms(100), bytes_for(4.0 * 0.95e6), 0, RTT);
    // N̂ = y/R = 4, base = η·C/4, excess = R − y/N̂ = 0.
    assert!((out - 0.95e6 / 4.0).abs() < 1.0, "{out}");
}

#[test]
fn equilibrium_is_eta_c_with_empty_queue() {
    let mut r = MirccRate::new(MirccConfig::default(), 1e6);
    let mut t = 0;
    for _ in 0..50 {
        r.update(ms(t), bytes_for(0.95e6), 0, RTT);
        t += 100;
    }
    assert!((r.primary_bps() - 0.95e6).abs() < 1e3);
}

#[test]
fn secondary_gets_left_over_capacity() {
    // Figure 4, scenario 2 style: primary load 5 Mbit/s on a 15 Mbit/s
    // link, no secondary traffic yet: Cs = 10 Mbit/s and Rs → η·Cs
    // (N̂s floors at 1, so the single secondary "flow" may take it all).
    let cfg = MirccConfig {
        ewma_alpha: 1.0,
        secondary_keeps_headroom: false, // eq. 11 as written
        ..MirccConfig::default()
    };
    let mut r = MirccRate::new(cfg, 15e6);
    let mut t = 0;
    for _ in 0..20 {
        r.update_dual(ms(t), bytes_for(5e6), 0, 0, RTT);
        t += 100;
    }
    let (rp, rs) = r.rates_bps();
    assert!(rp > 5e6, "primary not saturated: {rp}");
    // With ys = 0: N̂s = max(Cs/Rs, 1), base = η·Cs/N̂s, excess = Rs:
    // Rs grows until clamped at η·C.
    assert!(rs >= 0.95 * 10e6, "{rs}");
    // Secondary overload ys = 2·Cs: N̂s = ys/Rs(t−T), excess = 0 and
    // Rs = η·Cs·Rs(t−T)/ys (eqs. 12-16 with α = 1).
    let rs_prev = rs;
    let ys = 20e6;
    let (_, rs) = r.update_dual(ms(t), bytes_for(5e6), bytes_for(ys), 0, RTT);
    let expect = 0.95 * 10e6 * rs_prev / ys;
    assert!((rs - expect).abs() / expect < 1e-3, "{rs} vs {expect}");
}

/// Three flows that send primary Interests at Rp and secondary ones at
/// Rs on one link, closed loop: the total input y = 3·(Rp + Rs) after
/// 100 periods.
fn single_path_total_input(cfg: MirccConfig) -> f64 {
    let c = 20e6;
    let mut r = MirccRate::new(cfg, c);
    let mut y = (0.0, 0.0);
    for k in 0..100 {
        let (rp, rs) = r.update_dual(ms(100 * k), bytes_for(y.0), bytes_for(y.1), 0, RTT);
        y = (3.0 * rp, 3.0 * rs);
    }
    (y.0 + y.1) / c
}

#[test]
fn both_classes_together_keep_eta_headroom() {
    let tuned = single_path_total_input(MirccConfig::default());
    assert!((tuned - 0.95).abs() < 0.005, "tuned total {tuned}");
    let paper = single_path_total_input(MirccConfig {
        secondary_keeps_headroom: false,
        ..MirccConfig::default()
    });
    // Eq. 11: η·C + η·(C − η·C) = 0.9975·C, nothing left for headers
    // or jitter.
    assert!(paper > 0.99, "paper total {paper}");
}

#[test]
fn raised_floor_holds_the_primary_rate_only() {
    let mut r = MirccRate::new(MirccConfig::default(), 10e6);
    r.update(ms(0), 0, 0, RTT);
    r.set_floor_bps(648_000.0);
    // A huge queue drives base far below zero: Rp stops at the raised
    // floor, Rs at the configured one.
    let (rp, rs) = r.update_dual(ms(100), bytes_for(20e6), bytes_for(5e6), 10_000_000, RTT);
    assert_eq!(rp, 648_000.0);
    assert_eq!(rs, 10_000.0);
    r.set_floor_bps(-5.0);
    assert_eq!(r.floor_bps(), 10_000.0);
}

#[test]
fn inflation_is_the_size_ratio() {
    let mut i = Inflation::new(0.125, 1.0);
    assert_eq!(i.factor(), 1.0);
    assert_eq!(i.data_bytes(), None);
    i.on_interest(50);
    i.on_data(1000);
    assert_eq!(i.factor(), 20.0);
    assert_eq!(i.data_bytes(), Some(1000.0));
    assert_eq!(i.inflate(100), 2000);
    i.on_data(2000);
    assert!((i.factor() - 1125.0 / 50.0).abs() < 1e-9);
}

/// A small first Data (RDR metadata) then 8 KB segments: the EWMA
/// still averages 3.6 KB after four segments, the booking factor books
/// full segments from the first one on; when Data shrink for good it
/// decays back to the EWMA.
#[test]
fn booking_follows_a_rise_at_once_and_decays_to_the_average() {
    let mut i = Inflation::new(0.125, 1.0);
    i.on_interest(60);
    i.on_data(300);
    assert_eq!(i.booking_factor(), 5.0);
    for _ in 0..4 {
        i.on_data(8000);
        assert_eq!(i.booking_factor(), 8000.0 / 60.0);
    }
    assert!(i.factor() < 0.5 * i.booking_factor(), "{}", i.factor());
    for _ in 0..200 {
        i.on_data(1000);
    }
    let (avg, booked) = (i.factor(), i.booking_factor());
    assert!(
        booked >= avg && booked - avg < 1e-6 * avg,
        "{avg} vs {booked}"
    );
}
