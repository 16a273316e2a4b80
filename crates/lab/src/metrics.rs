//! Figures computed from sampled counters: rates over windows, Jain's
//! fairness index, percentiles, settling time and overshoot.

/// Jain's fairness index of non-negative throughputs: (Σx)² / (n Σx²),
/// 1 when all are equal, 1/n when one flow has everything.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        return 0.0;
    }
    sum * sum / (n * sq)
}

/// The `p`-quantile (0..=1) by nearest rank; `None` when empty.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// A cumulative counter sampled over time: `(t_s, value)`, `t_s` ascending.
pub type Series = [(f64, f64)];

/// The counter's value at `t`, linearly interpolated (clamped at the ends).
pub fn value_at(s: &Series, t: f64) -> Option<f64> {
    let first = s.first()?;
    if t <= first.0 {
        return Some(first.1);
    }
    for w in s.windows(2) {
        let ((t0, v0), (t1, v1)) = (w[0], w[1]);
        if t <= t1 {
            let f = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
            return Some(v0 + f * (v1 - v0));
        }
    }
    s.last().map(|x| x.1)
}

/// Mean frame size from `t0` to the end: the bytes over the frames counted
/// since the first sample at or after `t0` (`bytes` and `frames` are
/// cumulative counters); `None` when no frame was counted since. The
/// lab's frame size is the last half's, the envelope grid's window: a
/// run's first Data (RDR metadata) are smaller, and the whole run's mean
/// counted them.
pub fn mean_frame_since(bytes: &Series, frames: &Series, t0: f64) -> Option<f64> {
    let i = bytes.iter().position(|(t, _)| *t >= t0)?;
    let j = frames.iter().position(|(t, _)| *t >= t0)?;
    let (b0, b1) = (bytes[i].1, bytes.last()?.1);
    let (f0, f1) = (frames[j].1, frames.last()?.1);
    (f1 > f0).then(|| (b1 - b0) / (f1 - f0))
}

/// Mean rate (per second) of a cumulative counter between `t0` and `t1`.
pub fn mean_rate(s: &Series, t0: f64, t1: f64) -> f64 {
    if t1 <= t0 {
        return 0.0;
    }
    match (value_at(s, t0), value_at(s, t1)) {
        (Some(a), Some(b)) => (b - a).max(0.0) / (t1 - t0),
        _ => 0.0,
    }
}

/// Mean of the samples `(t, value)` taken at `t0 ≤ t ≤ t1`; 0 when none.
pub fn mean_between(samples: &[(f64, f64)], t0: f64, t1: f64) -> f64 {
    let (sum, n) = samples
        .iter()
        .filter(|(t, _)| *t >= t0 && *t <= t1)
        .fold((0.0, 0usize), |(s, n), x| (s + x.1, n + 1));
    sum / n.max(1) as f64
}

/// Rates over consecutive windows of `w` seconds from `t0` to `t1`:
/// `(window end, rate)`.
pub fn windowed_rates(s: &Series, t0: f64, t1: f64, w: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut t = t0;
    while t + w <= t1 + 1e-9 {
        out.push((t + w, mean_rate(s, t, t + w)));
        t += w;
    }
    out
}

/// Settling after a change at `t_change`: the time from `t_change` to the
/// end of the first window after which every flow's windowed rate stays
/// within `band` (relative) of `target` until the end. `None` if never.
/// `rates[i]` are `(window end, rate)` of flow i, all on the same windows.
pub fn settling_time(
    rates: &[Vec<(f64, f64)>],
    t_change: f64,
    target: f64,
    band: f64,
) -> Option<f64> {
    let n = rates.iter().map(Vec::len).min()?;
    let ok = |k: usize| {
        rates
            .iter()
            .all(|r| (r[k].1 - target).abs() <= band * target)
    };
    let mut settled_from = None;
    for k in (0..n).rev() {
        if rates[0][k].0 <= t_change {
            break;
        }
        if ok(k) {
            settled_from = Some(k);
        } else {
            break;
        }
    }
    let k = settled_from?;
    // Settled from the window ending at rates[0][k].0: the time the band
    // was entered is that window's start.
    let w = if k > 0 {
        rates[0][k].0 - rates[0][k - 1].0
    } else {
        0.0
    };
    Some((rates[0][k].0 - w - t_change).max(0.0))
}

/// Largest relative excursion above `target` among the windowed rates after
/// `t_change`: max(x / target - 1), at least 0.
pub fn overshoot(rates: &[Vec<(f64, f64)>], t_change: f64, target: f64) -> f64 {
    rates
        .iter()
        .flatten()
        .filter(|(t, _)| *t > t_change)
        .map(|(_, x)| x / target - 1.0)
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_between_keeps_the_window_and_survives_an_empty_one() {
        let s = [(0.0, 10.0), (1.0, 20.0), (2.0, 40.0), (3.0, 80.0)];
        assert_eq!(mean_between(&s, 1.0, 2.0), 30.0);
        assert_eq!(mean_between(&s, 5.0, 6.0), 0.0);
    }

    /// A 300-byte first Data then 4481-byte ones: the last half's mean is
    /// the full frame, where the whole run's was smaller; no frame since
    /// `t0` gives none.
    #[test]
    fn the_frame_size_is_the_last_halfs() {
        let frames = [(0.0, 0.0), (1.0, 1.0), (2.0, 11.0), (3.0, 21.0)];
        let bytes: Vec<(f64, f64)> = frames
            .iter()
            .map(|&(t, f)| {
                (
                    t,
                    if f > 0.0 {
                        300.0 + (f - 1.0) * 4481.0
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        assert_eq!(mean_frame_since(&bytes, &frames, 1.5), Some(4481.0));
        assert!(bytes[3].1 / frames[3].1 < 4481.0);
        let idle = [(0.0, 0.0), (1.0, 5.0), (2.0, 5.0)];
        assert_eq!(mean_frame_since(&idle, &idle, 1.5), None);
        assert_eq!(mean_frame_since(&idle, &idle, 9.0), None);
    }

    #[test]
    fn jain_bounds() {
        assert!((jain(&[5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!(jain(&[3.0, 1.0]) < 0.9);
        assert_eq!(jain(&[]), 0.0);
    }

    #[test]
    fn percentiles() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&xs, 0.95), Some(95.0));
        assert_eq!(percentile(&xs, 0.0), Some(1.0));
        assert_eq!(percentile(&xs, 1.0), Some(100.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn rates_from_cumulative_counters() {
        let s: Vec<(f64, f64)> = (0..=10)
            .map(|i| (f64::from(i), f64::from(i) * 100.0))
            .collect();
        assert!((mean_rate(&s, 2.0, 6.0) - 100.0).abs() < 1e-9);
        assert!((mean_rate(&s, 2.5, 3.5) - 100.0).abs() < 1e-9);
        assert_eq!(value_at(&s, -1.0), Some(0.0));
        assert_eq!(value_at(&s, 99.0), Some(1000.0));
        let w = windowed_rates(&s, 0.0, 10.0, 2.0);
        assert_eq!(w.len(), 5);
        assert!(w.iter().all(|(_, r)| (r - 100.0).abs() < 1e-9));
    }

    #[test]
    fn settling_and_overshoot() {
        // Flow converges to 10 at t = 5 after a change at t = 2, peaking at 15.
        let a: Vec<(f64, f64)> = (1..=10)
            .map(|t| {
                let x = match t {
                    1 | 2 => 0.0,
                    3 => 15.0,
                    4 => 7.0,
                    _ => 10.0,
                };
                (f64::from(t), x)
            })
            .collect();
        let b: Vec<(f64, f64)> = a.iter().map(|(t, _)| (*t, 10.0)).collect();
        let st = settling_time(&[a.clone(), b.clone()], 2.0, 10.0, 0.1).unwrap();
        assert!((st - 2.0).abs() < 1e-9, "{st}");
        assert!((overshoot(std::slice::from_ref(&a), 2.0, 10.0) - 0.5).abs() < 1e-9);
        // Never settles when the last window is out of band.
        let mut c = b.clone();
        c.last_mut().unwrap().1 = 20.0;
        assert_eq!(settling_time(&[a, c], 2.0, 10.0, 0.1), None);
    }
}
