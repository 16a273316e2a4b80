//! Step-response measures of rate series (MIRCC Fig. 3: how fast and with
//! how much overshoot rates reach a new share after flows arrive), shared
//! by the virtual-time arrival test (`crates/forwarder/tests/cc_arrival.rs`)
//! and the namespace testbed (`tests/cc_scenarios.rs`), so both compute
//! settling, overshoot and undershoot the same way.
//!
//! Series live on a uniform grid starting at the step (the arrival).
//! Settling: the time until every series stays within a band of its final
//! value. Overshoot and undershoot: once a series has fallen through its
//! final value (the link reacted to the arrival), its highest excursion
//! above and below it. The first fall marks the reaction: what comes
//! before it is the old rate, not an overshoot. A series that never falls
//! through is measured from its first entry into the band, and one that
//! never enters it over its whole span: a final value it does not reach
//! is an excursion however it approaches.

/// Series of equal length sampled every `step_s`, from the step on.
#[derive(Debug, Clone)]
pub struct Grid {
    pub step_s: f64,
    pub series: Vec<Vec<f64>>,
}

/// Excursions that do not unsettle a series: no longer than `max_s` and
/// no further than `max_dev` (relative) from the final value. A short
/// shallow step is sampling or scheduling noise; a short deep swing is
/// the control law itself and counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blip {
    pub max_s: f64,
    pub max_dev: f64,
}

impl Blip {
    /// Every excursion counts.
    pub const NONE: Blip = Blip {
        max_s: 0.0,
        max_dev: 0.0,
    };
}

/// How the series of a [`Grid`] answered the step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Response {
    /// Until every series stays within the band, not counting excursions
    /// within the [`Blip`] allowance after the first return into it;
    /// `None`: not before the end.
    pub settling_s: Option<f64>,
    /// The same, counting every excursion.
    pub settling_strict_s: Option<f64>,
    /// Highest excursion above the final value after the reaction (the
    /// first fall through it, see the module doc), relative.
    pub over: f64,
    /// Deepest excursion below it from the same point, relative.
    pub under: f64,
}

impl Response {
    /// The larger excursion, over or under.
    pub fn worst(&self) -> f64 {
        self.over.max(self.under)
    }
}

impl Grid {
    /// Step series (`(time s, value)` at each change or sample, held until
    /// the next) sampled every `step_s` over `[from, to)`. `None` when a
    /// series is empty or the span holds no sample.
    pub fn from_steps(series: &[&[(f64, f64)]], from: f64, to: f64, step_s: f64) -> Option<Grid> {
        if series.is_empty() || series.iter().any(|s| s.is_empty()) || step_s <= 0.0 {
            return None;
        }
        let n = ((to - from) / step_s) as usize;
        if n == 0 {
            return None;
        }
        let series = series
            .iter()
            .map(|s| {
                (0..n)
                    .map(|k| {
                        let t = from + k as f64 * step_s;
                        s[s.partition_point(|(ts, _)| *ts <= t).saturating_sub(1)].1
                    })
                    .collect()
            })
            .collect();
        Some(Grid { step_s, series })
    }

    /// Samples per series.
    pub fn len(&self) -> usize {
        self.series.first().map_or(0, Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each series' mean over its last `fraction` of the grid.
    pub fn tail_means(&self, fraction: f64) -> Vec<f64> {
        let n = self.len();
        let from = n - ((n as f64 * fraction).ceil() as usize).clamp(1, n.max(1));
        self.series
            .iter()
            .map(|s| s[from..].iter().sum::<f64>() / (n - from) as f64)
            .collect()
    }

    /// The response against each series' final value (`finals[i]` for
    /// series `i`), settling into ±`band` (relative); excursions within
    /// `blip` are left out of [`Response::settling_s`].
    pub fn response(&self, finals: &[f64], band: f64, blip: Blip) -> Response {
        assert_eq!(
            finals.len(),
            self.series.len(),
            "one final value per series"
        );
        let n = self.len();
        let out: Vec<bool> = (0..n)
            .map(|k| {
                self.series
                    .iter()
                    .zip(finals)
                    .any(|(s, f)| (s[k] - f).abs() > band * f)
            })
            .collect();
        let settled_after = |k: Option<usize>| match k {
            None => Some(0.0),
            Some(k) if k + 1 < n => Some((k + 1) as f64 * self.step_s),
            Some(_) => None,
        };
        let settling_strict_s = settled_after(out.iter().rposition(|&o| o));
        let dev = |k: usize| {
            self.series
                .iter()
                .zip(finals)
                .map(|(s, f)| (s[k] - f).abs() / f)
                .fold(0.0f64, f64::max)
        };
        // The last out-of-band sample of a run beyond the allowance.
        let blip_len = (blip.max_s / self.step_s + 1e-9).floor() as usize;
        let mut last_long = None;
        let mut k = 0;
        while k < n {
            if !out[k] {
                k += 1;
                continue;
            }
            let start = k;
            while k < n && out[k] {
                k += 1;
            }
            // The answer to the step itself (a run from the start) and a
            // run still open at the end count however short they are.
            let deep = (start..k).any(|j| dev(j) > blip.max_dev);
            if k - start > blip_len || deep || start == 0 || k == n {
                last_long = Some(k - 1);
            }
        }
        let (mut over, mut under) = (0.0f64, 0.0f64);
        for (s, &f) in self.series.iter().zip(finals) {
            // The reaction: the first fall through the final value; for a
            // series that approaches from above without crossing, its first
            // entry into the band; for one that never gets there, the
            // start (all of it strays).
            let from = s
                .windows(2)
                .position(|w| w[0] > f && w[1] <= f)
                .map(|k| k + 1)
                .or_else(|| s.iter().position(|x| (x - f).abs() <= band * f))
                .unwrap_or(0);
            for &x in &s[from..] {
                over = over.max((x - f) / f);
                under = under.max((f - x) / f);
            }
        }
        Response {
            settling_s: settled_after(last_long),
            settling_strict_s,
            over,
            under,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(x: Option<f64>, want: f64) -> bool {
        x.is_some_and(|x| (x - want).abs() < 1e-9)
    }

    fn grid(s: Vec<f64>) -> Grid {
        Grid {
            step_s: 0.1,
            series: vec![s],
        }
    }

    #[test]
    fn settles_after_the_last_excursion() {
        // Old rate 10, falls to 4 (undershoot 20 % of 5), back at 5 by 0.4 s.
        let g = grid(vec![10.0, 4.0, 4.4, 5.2, 5.0, 5.0, 5.0, 5.0]);
        let r = g.response(&[5.0], 0.1, Blip::NONE);
        assert!(
            near(r.settling_strict_s, 0.3) && near(r.settling_s, 0.3),
            "{r:?}"
        );
        assert!((r.under - 0.2).abs() < 1e-9 && (r.over - 0.04).abs() < 1e-9);
    }

    /// One sample, up to 30 % off.
    const SHORT: Blip = Blip {
        max_s: 0.1,
        max_dev: 0.3,
    };

    #[test]
    fn a_blip_no_longer_than_the_allowance_does_not_unsettle() {
        let g = grid(vec![10.0, 5.0, 5.0, 5.0, 6.0, 5.0, 5.0, 5.0]);
        let r = g.response(&[5.0], 0.1, SHORT);
        assert!(
            near(r.settling_strict_s, 0.5) && near(r.settling_s, 0.1),
            "{r:?}"
        );
        // Excursions still count as overshoot.
        assert!((r.over - 0.2).abs() < 1e-9);
        // Two samples out is no blip.
        let g = grid(vec![10.0, 5.0, 5.0, 6.0, 6.0, 5.0, 5.0, 5.0]);
        assert!(near(g.response(&[5.0], 0.1, SHORT).settling_s, 0.5));
        // Nor is one sample 40 % off: a swing, not noise.
        let g = grid(vec![10.0, 5.0, 5.0, 5.0, 3.0, 5.0, 5.0, 5.0]);
        let r = g.response(&[5.0], 0.1, SHORT);
        assert!(near(r.settling_s, 0.5), "{r:?}");
    }

    #[test]
    fn a_target_approached_from_above_or_missed_still_counts() {
        // Down from 10 towards 5 without crossing: measured from entry.
        let g = grid(vec![10.0, 8.0, 5.4, 5.2, 5.1, 5.2]);
        let r = g.response(&[5.0], 0.1, Blip::NONE);
        assert!((r.over - 0.08).abs() < 1e-9 && r.under == 0.0, "{r:?}");
        // Stuck at 7 against a target of 5: all of it strays.
        let g = grid(vec![10.0, 8.0, 7.0, 7.0]);
        let r = g.response(&[5.0], 0.1, Blip::NONE);
        assert!((r.over - 1.0).abs() < 1e-9 && r.under == 0.0, "{r:?}");
        assert_eq!(r.settling_s, None);
    }

    #[test]
    fn out_of_band_at_the_end_never_settles() {
        let g = grid(vec![10.0, 5.0, 5.0, 6.0]);
        let r = g.response(&[5.0], 0.1, SHORT);
        assert_eq!((r.settling_s, r.settling_strict_s), (None, None));
    }

    #[test]
    fn step_series_are_held_between_points() {
        let s: &[(f64, f64)] = &[(0.0, 1.0), (0.25, 2.0)];
        let g = Grid::from_steps(&[s], 0.0, 0.5, 0.1).unwrap();
        assert_eq!(g.series[0], vec![1.0, 1.0, 1.0, 2.0, 2.0]);
        assert_eq!(g.tail_means(0.4), vec![2.0]);
        assert!(Grid::from_steps(&[&[]], 0.0, 1.0, 0.1).is_none());
    }
}
