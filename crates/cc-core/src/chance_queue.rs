//! The queue that flows paced at steady rates meet by chance.
//!
//! Rate laws pace each flow evenly, but nothing aligns the phases of
//! different flows: their Data still meet at a link now and then, and the
//! queue that builds there drains by itself. It is no congestion, and no
//! rate cut removes it (it only lowers the load); a law that charges it
//! settles below the link. CCC's standing-queue test discounts it.

/// The queue, in Data, that `n` flows each paced at a steady rate reach or
/// exceed 5 % of the time on a link they load to `rho`, when nothing
/// aligns their phases (the N·D/D/1 queue). Its tail is
/// P(Q > k) ≈ exp(−2k(k + n(1 − ρ))/n) (Roberts and Virtamo, "The
/// superposition of periodic cell arrival streams in an ATM multiplexer",
/// IEEE Trans. Commun. 1991), so k is the root of
/// k² + k·n(1 − ρ) − n·ln(20)/2 = 0: 2.0 Data for three flows and 3.6 for
/// ten at ρ = 0.95.
pub fn paced_chance_queue_data(n: f64, rho: f64) -> f64 {
    if !n.is_finite() || n <= 0.0 {
        return 0.0;
    }
    let b = n * (1.0 - rho.clamp(0.0, 1.0));
    (-b + libm::sqrt(b * b + 2.0 * n * libm::log(20.0))) / 2.0
}

/// The mean number of Data in the system (waiting or being sent) of `n`
/// flows each paced at a steady rate on a link they load to `rho`, when
/// nothing aligns their phases: the N·D/D/1 queue, exactly (Eckberg, "The
/// single server queue with periodic arrival process and deterministic
/// service times", IEEE Trans. Commun. 1979):
/// P(Q > x) = Σ_{m>x} C(n,m)·((m−x)/D)^m·(1 − (m−x)/D)^(n−m)·(D−n+x)/(D−m+x)
/// with D = n/ρ Data times per period, and E[Q] = Σ_x P(Q > x).
/// One flow has only its own Data to send: ρ. Ten flows at ρ = 0.95:
/// 2.07 Data, of which 1.12 wait. A non-integer `n` (an estimate)
/// interpolates between its neighbours; `rho` is held below 0.99 (at 1
/// the formula has no steady state) and `n` at 200 (beyond, the queue
/// grows as √n and the estimate no longer matters).
pub fn paced_chance_queue_mean_data(n: f64, rho: f64) -> f64 {
    if !n.is_finite() || n <= 0.0 || !rho.is_finite() || rho <= 0.0 {
        return 0.0;
    }
    let rho = rho.min(0.99);
    let n = n.clamp(1.0, 200.0);
    let lo = libm::floor(n);
    let w = n - lo;
    let at_lo = eckberg_mean(lo as u32, rho);
    if w == 0.0 {
        return at_lo;
    }
    at_lo * (1.0 - w) + eckberg_mean(lo as u32 + 1, rho) * w
}

/// E[Q] of the N·D/D/1 queue for `n` ≥ 1 sources at load `rho` < 1.
fn eckberg_mean(n: u32, rho: f64) -> f64 {
    let nf = f64::from(n);
    let d = nf / rho;
    let ln_fact = |k: u32| libm::lgamma(f64::from(k) + 1.0);
    let mut mean = 0.0;
    for x in 0..n {
        let xf = f64::from(x);
        let mut tail = 0.0;
        for m in x + 1..=n {
            let mf = f64::from(m);
            let p = (mf - xf) / d;
            let ln_c = ln_fact(n) - ln_fact(m) - ln_fact(n - m);
            let ln_term = ln_c + mf * libm::log(p) + (nf - mf) * libm::log1p(-p);
            tail += libm::exp(ln_term) * (d - nf + xf) / (d - mf + xf);
        }
        if tail < 1e-9 {
            break;
        }
        mean += tail;
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::paced_chance_queue_data as k;

    #[test]
    fn grows_with_the_number_of_flows_and_the_load() {
        assert_eq!(k(0.0, 0.95), 0.0);
        assert_eq!(k(f64::NAN, 0.95), 0.0);
        assert!((k(3.0, 0.95) - 2.0).abs() < 0.1, "{}", k(3.0, 0.95));
        assert!((k(10.0, 0.95) - 3.6).abs() < 0.1, "{}", k(10.0, 0.95));
        assert!((k(10.0, 1.0) - 3.9).abs() < 0.1, "{}", k(10.0, 1.0));
        assert!((1..50).all(|n| k(f64::from(n + 1), 0.95) > k(f64::from(n), 0.95)));
        assert!(k(10.0, 0.8) < k(10.0, 0.95));
    }

    #[test]
    fn the_mean_is_eckbergs_and_one_flow_meets_only_itself() {
        use super::paced_chance_queue_mean_data as m;
        assert_eq!(m(0.0, 0.95), 0.0);
        assert_eq!(m(f64::NAN, 0.95), 0.0);
        // One flow: only its own Data, in the system a fraction ρ of the time.
        assert!((m(1.0, 0.95) - 0.95).abs() < 1e-9, "{}", m(1.0, 0.95));
        // Two flows by hand: P(Q > 0) = ρ, P(Q > 1) = (1/D)²·(D−1)/(D−1) = ρ²/4.
        let two = 0.9 + 0.9 * 0.9 / 4.0;
        assert!((m(2.0, 0.9) - two).abs() < 1e-9, "{} vs {two}", m(2.0, 0.9));
        assert!((m(10.0, 0.95) - 2.07).abs() < 0.01, "{}", m(10.0, 0.95));
        assert!((m(3.0, 0.95) - 1.35).abs() < 0.01, "{}", m(3.0, 0.95));
        // Between neighbours, and growing with flows and load.
        assert!(m(2.5, 0.95) > m(2.0, 0.95) && m(2.5, 0.95) < m(3.0, 0.95));
        assert!((1..60).all(|n| m(f64::from(n + 1), 0.95) > m(f64::from(n), 0.95)));
        assert!(m(10.0, 0.8) < m(10.0, 0.95));
        // Overload is held just below 1, not a non-number.
        assert!(m(10.0, 1.3).is_finite() && m(10.0, 1.3) >= m(10.0, 0.95));
        // The mean sits below the 5 % quantile.
        assert!(m(10.0, 0.95) < k(10.0, 0.95));
    }
}
