//! Integer SCFQ virtual time of the delay-tolerant classes (used by
//! [`super::scheduler`]): fixed-point steps per bit, wrapping comparisons.

/// Fixed-point scale of SCFQ virtual time: the class with the largest ω
/// advances 2^20 virtual units per bit.
const VT_SCALE: f64 = (1u64 << 20) as f64;
/// Largest per-bit virtual advance (ω ratios beyond 2^10 saturate here);
/// with sizes below 2^32 bits a tag step stays below 2^62.
const VT_MAX_STEP: f64 = (1u64 << 30) as f64;

/// Whether virtual time `a` is before `b` (wrapping, like TCP sequence
/// numbers: tags in use are always within 2^63 of each other).
pub(super) fn vt_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

pub(super) fn vt_max(a: u64, b: u64) -> u64 {
    if vt_before(a, b) {
        b
    } else {
        a
    }
}

/// Virtual units per bit of each delay-tolerant class, ∝ 1/ω_c.
pub(super) fn vt_steps(omega: [f64; 5]) -> [u64; 5] {
    let top = omega
        .iter()
        .copied()
        .filter(|w| w.is_finite())
        .fold(0.0, f64::max);
    omega.map(|w| {
        if top > 0.0 && w.is_finite() && w > 0.0 {
            libm::round(VT_SCALE * top / w).clamp(1.0, VT_MAX_STEP) as u64
        } else {
            VT_MAX_STEP as u64
        }
    })
}
