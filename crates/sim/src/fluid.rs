//! A tiny deterministic virtual-time model of one bottleneck link, for
//! closed-loop tests of the explicit-rate laws (RCP, MIRCC).
//!
//! Fluid model, stepped every `step` (1 ms by default):
//! * each active flow asks for Data at the rate its [`RateConsumer`] allows;
//!   the Interests enter the link's shaper, so the Data-equivalent input
//!   `y = Σ x_i` feeds the law and the queue;
//! * the queue (Data-equivalent bytes, bounded by `buffer_bytes`, the excess
//!   being Nacked) grows by `(y − C)·step`;
//! * the link law runs every `law.period()` with the bytes that arrived,
//!   the queue and the mean RTT of the active flows (base RTT + queueing);
//! * flow `i` hears the rate stamped `rtt_i + q/C` ago (the Data it
//!   receives now were stamped when they crossed the link), once it has been
//!   active for one RTT; until then it sends at its initial rate.
//!
//! Nothing reads a clock or an RNG: the same inputs give the same series.
//! [`settling_time`], [`overshoot`] and [`peak_queue_bytes`] summarise a
//! run after an event such as a flow arrival; the first two are
//! [`crate::response`]'s measures over the samples, so this model and the
//! engine and namespace runs settle and overshoot by one definition.

use cc_core::rcp::{LinkRateLaw, RateConsumer, RateConsumerConfig};
use cc_core::{ConsumerLaw, DataFeedback, Duration, SendLimit, Timestamp};

use crate::response::{Blip, Grid};

/// One flow of the scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowSpec {
    /// Base round-trip time (no queueing).
    pub rtt: Duration,
    /// When the flow starts sending.
    pub start: Timestamp,
    /// When it stops (`None`: runs to the end).
    pub stop: Option<Timestamp>,
}

/// Link and run parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimConfig {
    /// Bottleneck capacity in the Data direction (bit/s).
    pub capacity_bps: f64,
    /// Queue bound (Data-equivalent bytes).
    pub buffer_bytes: f64,
    /// Integration step.
    pub step: Duration,
    /// Length of the run.
    pub duration: Duration,
    /// One sample is recorded every this many steps.
    pub sample_every: u32,
    /// Data size the consumers see (bytes).
    pub data_size_bytes: u32,
    /// Consumer parameters (initial rate, Data size estimate).
    pub consumer: RateConsumerConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            capacity_bps: 1e6,
            buffer_bytes: 10_000.0,
            step: Duration::from_millis(1),
            duration: Duration::from_secs(20),
            sample_every: 10,
            data_size_bytes: 1000,
            consumer: RateConsumerConfig {
                initial_data_size_bytes: 1000.0,
                ..RateConsumerConfig::default()
            },
        }
    }
}

/// One recorded instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Virtual time.
    pub t: Timestamp,
    /// Rate the link stamps (bit/s).
    pub stamped_bps: f64,
    /// Data-equivalent input rate y (bit/s).
    pub input_bps: f64,
    /// Queue (Data-equivalent bytes).
    pub queue_bytes: f64,
    /// Per-flow Data rate (bit/s; 0 when inactive).
    pub flow_bps: Vec<f64>,
}

/// The run's time series plus totals.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeSeries {
    /// Samples in time order.
    pub samples: Vec<Sample>,
    /// Data-equivalent bytes Nacked because the queue was full.
    pub nacked_bytes: f64,
}

/// Runs `flows` over one bottleneck governed by `law`.
pub fn run_link<L: LinkRateLaw>(law: &mut L, cfg: &SimConfig, flows: &[FlowSpec]) -> TimeSeries {
    let step_s = cfg.step.as_secs_f64();
    let step_ns = cfg.step.as_nanos().max(1);
    let steps = usize::try_from(cfg.duration.as_nanos() / step_ns).unwrap_or(usize::MAX);
    let period_steps = (law.period().as_nanos() / step_ns).max(1);
    let mut consumers: Vec<RateConsumer> = flows
        .iter()
        .map(|_| RateConsumer::new(cfg.consumer))
        .collect();
    let mut history: Vec<f64> = Vec::with_capacity(steps.min(10_000_000));
    let mut rates = vec![0.0; flows.len()];
    let mut out = TimeSeries::default();
    let (mut queue, mut arrived) = (0.0f64, 0.0f64);
    let mut until_update = period_steps;
    let mut until_sample = 0u32;
    let c = cfg.capacity_bps.max(1.0);
    for k in 0..steps {
        let now = Timestamp::from_nanos(u64::try_from(k as u128 * step_ns).unwrap_or(u64::MAX));
        history.push(law.rate_bps());
        let qdelay = queue * 8.0 / c;
        let mut y = 0.0;
        let (mut rtt_sum, mut active) = (0.0, 0u32);
        for (i, f) in flows.iter().enumerate() {
            let on = now >= f.start && f.stop.is_none_or(|s| now < s);
            if !on {
                rates[i] = 0.0;
                continue;
            }
            let lag = f.rtt.as_secs_f64() + qdelay;
            if (now - f.start).as_secs_f64() >= lag {
                let back = (lag / step_s) as usize;
                let stamped = history[k.saturating_sub(back)];
                let fb = DataFeedback {
                    rtt: Some(Duration::from_secs_f64(lag)),
                    data_size_bytes: cfg.data_size_bytes,
                    primary_rate_bps: Some(stamped),
                    ..DataFeedback::default()
                };
                consumers[i].on_data(now, &fb);
            }
            rates[i] = match consumers[i].limit() {
                SendLimit::Rate {
                    interests_per_sec, ..
                } => interests_per_sec * 8.0 * f64::from(cfg.data_size_bytes),
                SendLimit::Window { .. } => 0.0,
            };
            y += rates[i];
            rtt_sum += lag;
            active += 1;
        }
        arrived += y * step_s / 8.0;
        queue += (y - c) * step_s / 8.0;
        if queue < 0.0 {
            queue = 0.0;
        } else if queue > cfg.buffer_bytes {
            out.nacked_bytes += queue - cfg.buffer_bytes;
            queue = cfg.buffer_bytes;
        }
        until_update -= 1;
        if until_update == 0 {
            until_update = period_steps;
            let rtt = if active > 0 {
                Duration::from_secs_f64(rtt_sum / f64::from(active))
            } else {
                Duration::ZERO
            };
            let at = now + cfg.step;
            law.update(at, arrived as u64, queue as u64, rtt);
            arrived = 0.0;
        }
        if until_sample == 0 {
            until_sample = cfg.sample_every.max(1);
            out.samples.push(Sample {
                t: now,
                stamped_bps: law.rate_bps(),
                input_bps: y,
                queue_bytes: queue,
                flow_bps: rates.clone(),
            });
        }
        until_sample -= 1;
    }
    out
}

/// The samples at or after `from` as a [`Grid`], one series per column
/// `column(i, sample)` for `i` in `0..n`, and the time from `from` to the
/// first of them. `None` when no sample is that late.
fn grid_after(
    series: &TimeSeries,
    from: Timestamp,
    n: usize,
    column: impl Fn(usize, &Sample) -> f64,
) -> Option<(Grid, Duration)> {
    let first = series.samples.iter().position(|s| s.t >= from)?;
    let after = &series.samples[first..];
    // Samples are evenly spaced (every `sample_every` steps); with a single
    // one the spacing never enters a measure.
    let step_s = match series.samples.as_slice() {
        [a, b, ..] => (b.t - a.t).as_secs_f64(),
        _ => 1.0,
    };
    let grid = Grid {
        step_s,
        series: (0..n)
            .map(|i| after.iter().map(|s| column(i, s)).collect())
            .collect(),
    };
    Some((grid, after[0].t - from))
}

/// Time after `from` until every selected flow's rate enters and stays
/// within `tolerance` (relative) of `target_bps`: the strict settling of
/// [`Grid::response`] (every excursion counts), so it ends at the first
/// sample back in the band. `None` if it never settles.
pub fn settling_time(
    series: &TimeSeries,
    from: Timestamp,
    flows: &[usize],
    target_bps: f64,
    tolerance: f64,
) -> Option<Duration> {
    // A flow the samples do not have is never inside the band.
    let (grid, lead) = grid_after(series, from, flows.len(), |i, s| {
        s.flow_bps.get(flows[i]).copied().unwrap_or(f64::INFINITY)
    })?;
    let finals = vec![target_bps; flows.len()];
    let r = grid.response(&finals, tolerance, Blip::NONE);
    // The grid counts whole sample periods in f64 seconds: back to ns.
    r.settling_strict_s
        .map(|s| lead + Duration::from_nanos((s * 1e9).round() as u64))
}

/// Overshoot of the stamped rate around `target_bps` after `from`: the
/// larger excursion ([`crate::response::Response::worst`]) once the rate has fallen through
/// the target, the step answer a flow arrival asks for. A rate that never
/// falls through it is measured over the whole span (a band of zero).
pub fn overshoot(series: &TimeSeries, from: Timestamp, target_bps: f64) -> f64 {
    grid_after(series, from, 1, |_, s| s.stamped_bps).map_or(0.0, |(grid, _)| {
        grid.response(&[target_bps], 0.0, Blip::NONE).worst()
    })
}

/// Largest queue after `from` (Data-equivalent bytes).
pub fn peak_queue_bytes(series: &TimeSeries, from: Timestamp) -> f64 {
    series
        .samples
        .iter()
        .filter(|s| s.t >= from)
        .map(|s| s.queue_bytes)
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_core::mircc::{MirccConfig, MirccRate};

    /// A hand-made run: samples every 10 ms, one flow and the stamped rate
    /// both following `rates`.
    fn series(rates: &[f64]) -> TimeSeries {
        let samples = rates
            .iter()
            .enumerate()
            .map(|(k, &r)| Sample {
                t: Timestamp::from_millis(10 * k as u64),
                stamped_bps: r,
                input_bps: r,
                queue_bytes: 0.0,
                flow_bps: vec![r],
            })
            .collect();
        TimeSeries {
            samples,
            nacked_bytes: 0.0,
        }
    }

    #[test]
    fn settling_and_overshoot_are_the_grid_measures_from_the_event_on() {
        // Before 20 ms: the old rate; then a fall to 4 (20 % under 5), back
        // in the ±10 % band from the sample at 50 ms.
        let s = series(&[10.0, 10.0, 10.0, 4.0, 4.4, 5.2, 5.0, 5.0]);
        let from = Timestamp::from_millis(20);
        assert_eq!(
            settling_time(&s, from, &[0], 5.0, 0.1),
            Some(Duration::from_millis(30))
        );
        assert!((overshoot(&s, from, 5.0) - 0.2).abs() < 1e-9);
        // An event between samples counts the wait for the first one.
        let from = Timestamp::from_millis(15);
        assert_eq!(
            settling_time(&s, from, &[0], 5.0, 0.1),
            Some(Duration::from_millis(35))
        );
        // A flow the samples lack, or a run that ends out of the band,
        // never settles; nothing after the event, nothing measured.
        assert_eq!(settling_time(&s, from, &[1], 5.0, 0.1), None);
        assert_eq!(settling_time(&s, from, &[0], 8.0, 0.1), None);
        assert_eq!(
            settling_time(&s, Timestamp::from_millis(1000), &[0], 5.0, 0.1),
            None
        );
        assert_eq!(overshoot(&s, Timestamp::from_millis(1000), 5.0), 0.0);
    }

    #[test]
    fn single_flow_fills_the_link_to_eta() {
        let cfg = SimConfig {
            duration: Duration::from_secs(5),
            ..SimConfig::default()
        };
        let flows = [FlowSpec {
            rtt: Duration::from_millis(100),
            start: Timestamp::ZERO,
            stop: None,
        }];
        let mut law = MirccRate::new(MirccConfig::default(), cfg.capacity_bps);
        let s = run_link(&mut law, &cfg, &flows);
        let last = s.samples.last().unwrap();
        assert!((last.flow_bps[0] - 0.95e6).abs() < 0.02e6, "{last:?}");
        assert!(last.queue_bytes < 1000.0);
        assert_eq!(
            run_link(
                &mut MirccRate::new(MirccConfig::default(), 1e6),
                &cfg,
                &flows
            )
            .samples
            .len(),
            s.samples.len()
        );
    }
}
