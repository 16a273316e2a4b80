//! The virtual-time runner: the scenario in `icn_sim::net::Network`
//! with real engines and icncat's fetch per flow, driven in 1 ms steps of
//! simulated time (no sleeps, no root), reproducible from a seed.

pub(crate) mod build;
mod consumer;
mod mcast;
mod sample;

use std::collections::BTreeMap;

use cc_core::{Duration, Timestamp};

use crate::metrics::{mean_frame_since, mean_rate, percentile, windowed_rates};
use crate::results::{finish, FlowResult, LinkResult, Measurements, RunResult, RATE_WINDOW_S};
use crate::scenario::Scenario;
use crate::LabError;
use build::Built;
use sample::LinkSample;

/// How a virtual-time run goes.
#[derive(Debug, Clone, Copy)]
pub struct SimOptions {
    /// Seeds the links' loss and the consumers' per-Interest choices.
    pub seed: u64,
    /// Run length; flow times scale with it (as in the namespace runner).
    pub duration_s: f64,
    /// Sampling period of the time series (the namespace runner: 100 ms).
    pub sample_ms: u64,
}

/// Tick of the consumers: icncat reacts to each packet and paces in
/// microseconds; 1 ms is below every scenario's RTT.
const STEP: Duration = Duration::from_millis(1);

fn secs(t: Timestamp) -> f64 {
    t.saturating_since(Timestamp::ZERO).as_secs_f64()
}

/// Runs `sc` under `scheme`; `progress(simulated s, total s)` is called
/// about once per simulated second.
pub fn run(
    sc: &Scenario,
    scheme: &str,
    opts: &SimOptions,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<RunResult, LabError> {
    let scale = opts.duration_s / sc.duration_s;
    let mut b = build::build(sc, scheme, opts.seed, scale)?;
    let end = Timestamp::ZERO + Duration::from_nanos((opts.duration_s * 1e9) as u64);
    let period = Duration::from_millis(opts.sample_ms.max(1));
    let mut links: Vec<Vec<LinkSample>> = vec![Vec::new(); sc.measure.len()];
    // Per flow: (run time s, Data bytes and Nacks its app face received).
    let mut apps: Vec<Vec<(f64, u64, u64)>> = vec![Vec::new(); sc.flows.len()];
    // Per group: (run time s, source's sent bytes, each receiver's delivered bytes).
    let mut mc: Vec<Vec<(f64, u64, Vec<u64>)>> = vec![Vec::new(); sc.groups.len()];
    let mut last_report = -1.0;
    while b.net.now() < end {
        let next = (b.net.now() + period).min(end);
        while b.net.now() < next {
            for f in &mut b.flows {
                f.tick(&mut b.net);
            }
            for g in &mut b.groups {
                g.tick(&mut b.net);
            }
            b.net.run_for(STEP);
        }
        for (k, s) in sample::sample_links(sc, &b).into_iter().enumerate() {
            links[k].push(s);
        }
        let t = secs(b.net.now());
        for (i, s) in sample::sample_apps(&b).into_iter().enumerate() {
            apps[i].push((t, s.0, s.1));
        }
        for (g, m) in b.groups.iter().zip(&mut mc) {
            let rx = g.receivers.iter().map(|r| r.delivered_bytes).collect();
            m.push((t, g.sent_bytes(), rx));
        }
        if t - last_report >= 1.0 || b.net.now() >= end {
            progress(t, opts.duration_s);
            last_report = t;
        }
    }
    let mut r = measure(sc, scheme, &b, &links, &apps, opts);
    r.groups = mcast::results(sc, &b.groups, &mc, opts.duration_s);
    Ok(r)
}

/// The figures of a finished run, in the namespace runner's terms.
fn measure(
    sc: &Scenario,
    scheme: &str,
    b: &Built,
    links: &[Vec<LinkSample>],
    apps: &[Vec<(f64, u64, u64)>],
    opts: &SimOptions,
) -> RunResult {
    let t_end = opts.duration_s;
    let half = t_end / 2.0;
    let scale = t_end / sc.duration_s;
    let flows = sc
        .flows
        .iter()
        .zip(&b.flows)
        .zip(apps)
        .zip(&b.app_faces)
        .map(|(((f, ff), app), &(node, face))| {
            let (start, stop) = (f.start_s * scale, f.stop_s * scale);
            // Data bytes icnfwd delivered to the consumer's face, as the
            // namespace runner reads them.
            let bytes: Vec<(f64, f64)> = app.iter().map(|&(t, b, _)| (t, b as f64)).collect();
            let (a, z) = (start.max(half), stop.min(t_end));
            let rtts: Vec<f64> = ff.rtts.iter().map(|x| x.1).collect();
            FlowResult {
                name: f.name.clone(),
                consumer: f.consumer.clone(),
                size_bytes: f.size_bytes,
                delivery_s: f
                    .size_bytes
                    .and(ff.done_s)
                    .map(|done| (done - start).max(0.0)),
                class: f.class.clone(),
                start_s: start,
                stop_s: stop,
                rate_last_half_bps: if z > a {
                    mean_rate(&bytes, a, z) * 8.0
                } else {
                    0.0
                },
                frame_bytes: b.net.node(node).face(face).and_then(|x| {
                    let c = &x.counters;
                    (c.n_out_data > 0).then(|| c.n_out_bytes as f64 / c.n_out_data as f64)
                }),
                rates: windowed_rates(&bytes, start, stop, RATE_WINDOW_S)
                    .into_iter()
                    .map(|(t, r)| (t, r * 8.0))
                    .collect(),
                send_rates: ff.send_rates.clone(),
                nacks: app.last().map_or(0, |x| x.2),
                rtt_min_ms: rtts.iter().copied().reduce(f64::min),
                rtt_p95_ms: percentile(&rtts[rtts.len() / 2..], 0.95),
                rtt_series_ms: ff.rtts.clone(),
                error: None,
                icncat_stats: None,
            }
        })
        .collect();
    let links = sc
        .measure
        .iter()
        .zip(links)
        .map(|(m, s)| link_result(sc, m.from.as_str(), m.to.as_str(), s, half, t_end))
        .collect();
    let mut drops_by_reason = BTreeMap::new();
    let mut penalised_flows = BTreeMap::new();
    for (name, &n) in &b.nodes {
        for (r, c) in b.net.node(n).counters().drops.nonzero() {
            drops_by_reason.insert(format!("{name}:{}", r.as_str()), c);
        }
        let p: u64 = b
            .net
            .node(n)
            .faces()
            .map(|(_, f)| f.cc.penalised_flows)
            .sum();
        if p > 0 {
            penalised_flows.insert(name.clone(), p);
        }
    }
    finish(
        sc,
        scheme,
        t_end,
        Measurements {
            flows,
            links,
            drops_by_reason,
            penalised_flows,
            emulation: true,
            groups: Vec::new(),
        },
    )
}

/// One measured link's figures from its samples.
fn link_result(
    sc: &Scenario,
    from: &str,
    to: &str,
    s: &[LinkSample],
    half: f64,
    t_end: f64,
) -> LinkResult {
    let cap = sc.link(from, to).map_or(1, |l| l.capacity_bps) as f64;
    let bytes: Vec<(f64, f64)> = s.iter().map(|x| (x.t_s, x.bytes as f64)).collect();
    let last = s.last().copied().unwrap_or_default();
    // Mean frame size on the link over the last half (the grid's window),
    // to express held Interests as Data time; the whole run's when no
    // frame left in the last half; the scenario's segment size (a frame's
    // content, some 80 bytes short of the frame: 1281-byte frames carry
    // 1200-byte segments) when the link carried no frame at all.
    let frames: Vec<(f64, f64)> = s.iter().map(|x| (x.t_s, x.frames as f64)).collect();
    let frame_bytes = match mean_frame_since(&bytes, &frames, half) {
        Some(f) => f,
        None if last.frames > 0 => last.bytes as f64 / last.frames as f64,
        None => f64::from(sc.segment_bytes),
    };
    let queue_series_ms: Vec<(f64, f64)> = s
        .iter()
        .map(|x| {
            let q = x.data_queue_bytes as f64 + x.held_interests as f64 * frame_bytes;
            (x.t_s, q * 8.0 / cap * 1e3)
        })
        .collect();
    let delays: Vec<f64> = queue_series_ms
        .iter()
        .filter(|(t, _)| *t >= half)
        .map(|x| x.1)
        .collect();
    let opt_series = |f: fn(&LinkSample) -> Option<u64>| -> Vec<(f64, f64)> {
        s.iter()
            .filter_map(|x| Some((x.t_s, f(x)? as f64)))
            .collect()
    };
    LinkResult {
        from: from.to_string(),
        to: to.to_string(),
        capacity_bps: cap as u64,
        utilisation: mean_rate(&bytes, half, t_end) * 8.0 / cap,
        frame_bytes,
        queue_p95_ms: percentile(&delays, 0.95).unwrap_or(0.0),
        queue_max_ms: delays.iter().copied().fold(0.0, f64::max),
        marks: last.marks,
        stamped_rates: opt_series(|x| x.stamped_bps),
        target_rates: opt_series(|x| x.target_bps),
        queue_series_ms,
        utilisation_series: windowed_rates(&bytes, 0.0, t_end, RATE_WINDOW_S)
            .into_iter()
            .map(|(t, r)| (t, r * 8.0 / cap))
            .collect(),
        drops_series: s.iter().map(|x| (x.t_s, x.drops as f64)).collect(),
    }
}
