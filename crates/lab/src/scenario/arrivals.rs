//! `[[arrivals]]`: finite transfers arriving as a Poisson process (MIRCC's
//! Abilene and diamond experiments). Expanded into ordinary flows when the
//! file is read, so both runners run them as any other `[[flow]]`, and the
//! same seed gives the same arrivals in virtual time and on real hosts.

use super::raw::RawArrivals;
use super::{non_negative, Flow};

/// Arrivals per table at most: a run is at most 60 s, and the namespace
/// runner starts one icncat and one icnput per flow.
const MAX_ARRIVALS: usize = 200;

/// SplitMix64: a few lines of a well-known generator, so the arrivals do
/// not depend on a crate's version of its stream.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<'a>(&mut self, xs: &'a [String]) -> &'a String {
        &xs[(self.next_u64() % xs.len() as u64) as usize]
    }
}

/// The flows of one `[[arrivals]]` table: exponential gaps of mean
/// `mean_interarrival_s` from `start_s` until `stop_s`, each fetching
/// `size_mb` from a producer drawn from `producers` to a consumer drawn
/// from `consumers`; each runs until it completes or the run ends.
pub(super) fn expand(
    a: &RawArrivals,
    ctx: &str,
    duration_s: f64,
    has: &dyn Fn(&str) -> bool,
) -> Result<Vec<Flow>, String> {
    if a.name.is_empty() || a.name.len() > 8 || !a.name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("{ctx}: name must be 1-8 ASCII letters/digits"));
    }
    if a.consumers.is_empty() || a.producers.is_empty() {
        return Err(format!("{ctx}: consumers and producers must not be empty"));
    }
    if let Some(n) = a.consumers.iter().chain(&a.producers).find(|n| !has(n)) {
        return Err(format!("{ctx}: no node `{n}`"));
    }
    if let Some(n) = a.consumers.iter().find(|n| a.producers.contains(n)) {
        return Err(format!("{ctx}: `{n}` is both a consumer and a producer"));
    }
    let mean = a.mean_interarrival_s;
    if !(mean.is_finite() && mean > 0.0) {
        return Err(format!("{ctx}: mean_interarrival_s must be > 0"));
    }
    let size_mb = a.size_mb;
    if !(size_mb.is_finite() && size_mb > 0.0) {
        return Err(format!("{ctx}: size_mb must be > 0"));
    }
    let start_s = non_negative(a.start_s, "start_s", ctx)?.unwrap_or(0.0);
    let stop_s = non_negative(a.stop_s, "stop_s", ctx)?.unwrap_or(duration_s);
    if start_s >= stop_s || stop_s > duration_s {
        return Err(format!("{ctx}: need start_s < stop_s <= duration_s"));
    }
    let mut rng = SplitMix(a.seed.unwrap_or(1));
    let mut flows = Vec::new();
    let mut t = start_s;
    loop {
        t += -mean * (1.0 - rng.unit()).ln();
        if t >= stop_s {
            break;
        }
        if flows.len() == MAX_ARRIVALS {
            return Err(format!("{ctx}: more than {MAX_ARRIVALS} arrivals"));
        }
        let consumer = rng.pick(&a.consumers).clone();
        let producer = rng.pick(&a.producers).clone();
        flows.push(Flow {
            name: format!("{}{}", a.name, flows.len()),
            consumer,
            producer,
            // Millisecond starts: the namespace runner cannot honour finer.
            start_s: (t * 1e3).round() / 1e3,
            stop_s: duration_s,
            class: a.class.clone().unwrap_or_else(|| "be".to_owned()),
            objective_bps: None,
            cc: None,
            rate_bps: None,
            size_bytes: Some((size_mb * 1e6) as u64),
        });
    }
    if flows.is_empty() {
        return Err(format!("{ctx}: no arrival before stop_s (seed {})", rng.0));
    }
    Ok(flows)
}
