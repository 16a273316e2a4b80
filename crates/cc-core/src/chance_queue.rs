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
}
