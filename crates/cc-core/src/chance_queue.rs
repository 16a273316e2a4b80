//! The queue that flows paced at steady rates meet by chance.
//!
//! Rate laws pace each flow evenly, but nothing aligns the phases of
//! different flows: their Data still meet at a link now and then, and the
//! queue that builds there drains by itself. It is no congestion, and no
//! rate cut removes it (it only lowers the load); a law that charges it
//! settles below the link. CCC's standing-queue test and RCP's β·q/d term
//! discount it.

/// The queue, in Data, that `n` flows each paced at a steady rate reach or
/// exceed 5 % of the time on a link they load to `rho`, when nothing
/// aligns their phases (the N·D/D/1 queue). Its tail is
/// P(Q > k) ≈ exp(−2k(k + n(1 − ρ))/n) (Roberts and Virtamo, "The
/// superposition of periodic cell arrival streams in an ATM multiplexer",
/// IEEE Trans. Commun. 1991), so k is the root of
/// k² + k·n(1 − ρ) − n·ln(20)/2 = 0: 2.0 Data for three flows and 3.6 for
/// ten at ρ = 0.95. `n` may be an estimate (RCP's input over its rate).
pub fn paced_chance_queue_data(n: f64, rho: f64) -> f64 {
    if !n.is_finite() || n <= 0.0 {
        return 0.0;
    }
    let b = n * (1.0 - rho.clamp(0.0, 1.0));
    (-b + libm::sqrt(b * b + 2.0 * n * libm::log(20.0))) / 2.0
}

/// The mean of that queue, in Data: the integral of the same tail,
/// ∫₀^∞ exp(−2x(x + b)/n) dx with b = n(1 − ρ), which is
/// ½·√(πn/2)·exp(b²/2n)·erfc(b/√(2n)): 1.75 Data for ten flows at
/// ρ = 0.95. What a queue sampled at a random instant shows on average.
pub fn paced_chance_queue_mean_data(n: f64, rho: f64) -> f64 {
    if !n.is_finite() || n <= 0.0 {
        return 0.0;
    }
    let b = n * (1.0 - rho.clamp(0.0, 1.0));
    0.5 * libm::sqrt(core::f64::consts::PI * n / 2.0)
        * libm::exp(b * b / (2.0 * n))
        * libm::erfc(b / libm::sqrt(2.0 * n))
}

#[cfg(test)]
mod tests {
    use super::paced_chance_queue_data as k;
    use super::paced_chance_queue_mean_data as mean;

    #[test]
    fn the_mean_is_the_integral_of_the_tail() {
        for (n, rho) in [
            (1.0, 0.95),
            (3.0, 0.95),
            (10.0, 0.95),
            (10.0, 1.0),
            (40.0, 0.9),
        ] {
            let b = n * (1.0 - rho);
            let step = 1e-3;
            let sum: f64 = (0..100_000)
                .map(|i| {
                    let x = (i as f64 + 0.5) * step;
                    libm::exp(-2.0 * x * (x + b) / n) * step
                })
                .sum();
            assert!(
                (mean(n, rho) - sum).abs() < 1e-3,
                "{n} {rho}: {} {sum}",
                mean(n, rho)
            );
        }
        assert!(
            (mean(10.0, 0.95) - 1.75).abs() < 0.01,
            "{}",
            mean(10.0, 0.95)
        );
        assert_eq!(mean(0.0, 0.95), 0.0);
        assert!(mean(10.0, 0.95) < k(10.0, 0.95));
    }

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
}
