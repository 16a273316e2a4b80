//! Turning a namespace run's counter samples into per-flow and per-link
//! measurements ([`crate::results::finish`] computes the rest).

use std::collections::BTreeMap;

use super::mgmt::FaceSnapshot;
use super::run::RunData;
use crate::metrics::{mean_rate, percentile, windowed_rates};
use crate::results::{
    finish, is_congestion_drop, FlowResult, LinkResult, Measurements, RunResult, RATE_WINDOW_S,
};
use crate::scenario::Scenario;

fn series(
    samples: &[(f64, String, FaceSnapshot)],
    node: &str,
    f: impl Fn(&FaceSnapshot) -> Option<f64>,
) -> Vec<(f64, f64)> {
    samples
        .iter()
        .filter(|(_, n, _)| n == node)
        .filter_map(|(t, _, s)| f(s).map(|v| (*t, v)))
        .collect()
}

/// Drop counters as `node:reason` -> count, summed over the node's faces.
/// (A face that closed during the run takes its counters with it.)
fn drops_of(snaps: &BTreeMap<String, FaceSnapshot>) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (node, s) in snaps {
        for st in &s.states {
            for (r, c) in &st.drops {
                *m.entry(format!("{node}:{r}")).or_insert(0) += c;
            }
        }
    }
    m
}

/// node -> flows penalised as greedy on its faces so far (non-zero only).
fn penalties_of(snaps: &BTreeMap<String, FaceSnapshot>) -> BTreeMap<String, u64> {
    snaps
        .iter()
        .map(|(node, s)| {
            (
                node.clone(),
                s.states.iter().map(|st| st.penalised_flows).sum(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

pub fn derive(sc: &Scenario, scheme: &str, d: &RunData) -> RunResult {
    let t_end = d.duration_s;
    let half = t_end / 2.0;
    let mut flows = Vec::new();
    for f in &sc.flows {
        let (start, stop) = d.flow_times.get(&f.name).copied().unwrap_or((0.0, 0.0));
        // The face's bytes per Data at its last sample (it starts at zero
        // with icncat's connection and vanishes when icncat closes it).
        let frame_bytes = d.flow_faces.get(&f.name).and_then(|(node, id)| {
            d.samples
                .iter()
                .rev()
                .filter(|(_, n, _)| n == node)
                .find_map(|(_, _, s)| s.face(*id))
                .filter(|x| x.counters.n_out_data > 0)
                .map(|x| x.n_out_bytes as f64 / x.counters.n_out_data as f64)
        });
        let (bytes, nacks) = match d.flow_faces.get(&f.name) {
            Some((node, id)) => {
                let b = series(&d.samples, node, |s| {
                    s.face(*id).map(|x| x.n_out_bytes as f64)
                });
                let n = d
                    .samples
                    .iter()
                    .filter(|(_, n, _)| n == node)
                    .filter_map(|(_, _, s)| s.face(*id).map(|x| x.counters.n_out_nacks))
                    .max()
                    .unwrap_or(0);
                (b, n)
            }
            None => (Vec::new(), 0),
        };
        // A flow that completed early stops where its face vanished.
        let stop = bytes.last().map_or(stop, |(t, _)| stop.min(t + 0.1));
        let (a, b) = (start.max(half), stop.min(t_end));
        let rate = if b > a {
            mean_rate(&bytes, a, b) * 8.0
        } else {
            0.0
        };
        let rates: Vec<(f64, f64)> = windowed_rates(&bytes, start, stop, RATE_WINDOW_S)
            .into_iter()
            .map(|(t, r)| (t, r * 8.0))
            .collect();
        let samples = d.flow_rtts.get(&f.name).map_or(&[][..], Vec::as_slice);
        let rtts: Vec<f64> = samples.iter().map(|(_, r)| *r).collect();
        // Each sample at its time on the run's clock (icncat's fetch starts
        // with the flow); a log without times puts them at the start.
        let rtt_series_ms = samples
            .iter()
            .map(|(t, r)| (start + t.unwrap_or(0.0), *r))
            .collect();
        let stats = d.flow_stats.get(&f.name);
        // icncat's own clock, from its start to the last segment.
        let delivery_s = f.size_bytes.and_then(|_| {
            let s = stats?;
            s.get("completed")?
                .as_bool()
                .filter(|c| *c)
                .and_then(|_| s.get("elapsed_s")?.as_f64())
        });
        flows.push(FlowResult {
            name: f.name.clone(),
            consumer: f.consumer.clone(),
            size_bytes: f.size_bytes,
            delivery_s,
            class: f.class.clone(),
            start_s: start,
            stop_s: stop,
            rate_last_half_bps: rate,
            frame_bytes,
            rates,
            send_rates: d
                .flow_send_rates
                .get(&f.name)
                .map(|v| v.iter().map(|&(t, r)| (start + t, r)).collect())
                .unwrap_or_default(),
            nacks,
            rtt_min_ms: rtts.iter().copied().reduce(f64::min),
            rtt_p95_ms: percentile(&rtts[rtts.len() / 2..], 0.95),
            rtt_series_ms,
            error: d.flow_errors.get(&f.name).cloned(),
            icncat_stats: stats.cloned(),
        });
    }

    let mut links = Vec::new();
    for (m, &(fwd, rev)) in sc.measure.iter().zip(&d.measured_faces) {
        let cap = sc.link(&m.from, &m.to).expect("validated").capacity_bps;
        let bytes = series(&d.samples, &m.from, |s| {
            s.face(fwd).map(|x| x.n_out_bytes as f64)
        });
        let utilisation = mean_rate(&bytes, half, t_end) * 8.0 / cap as f64;
        // Average Data size on this face over the last half (the grid's
        // window), to express queued Interests as time; the whole run's
        // when no Data left in the last half; the scenario's segment size
        // (a Data's content, short of its name and signature) when none
        // left at all.
        let data_count = series(&d.samples, &m.from, |s| {
            s.face(fwd).map(|x| x.counters.n_out_data as f64)
        });
        let whole_run = match (d.first[&m.from].face(fwd), d.last[&m.from].face(fwd)) {
            (Some(a), Some(b)) if b.counters.n_out_data > a.counters.n_out_data => {
                (b.n_out_bytes - a.n_out_bytes) as f64
                    / (b.counters.n_out_data - a.counters.n_out_data) as f64
            }
            _ => f64::from(sc.segment_bytes),
        };
        let data_size =
            crate::metrics::mean_frame_since(&bytes, &data_count, half).unwrap_or(whole_run);
        let data_q = series(&d.samples, &m.from, |s| {
            s.state(fwd).map(|x| x.queue_data_bytes as f64)
        });
        let int_q = rev.map(|r| {
            series(&d.samples, &m.to, |s| {
                s.state(r).map(|x| x.queue_interests as f64)
            })
        });
        let queue_series_ms: Vec<(f64, f64)> = data_q
            .iter()
            .map(|(t, q)| {
                let iq = int_q
                    .as_ref()
                    .and_then(|s| crate::metrics::value_at(s, *t))
                    .unwrap_or(0.0);
                (*t, (q + iq * data_size) * 8.0 / cap as f64 * 1e3)
            })
            .collect();
        let delays: Vec<f64> = queue_series_ms
            .iter()
            .filter(|(t, _)| *t >= half)
            .map(|x| x.1)
            .collect();
        let marks = match (d.first[&m.from].state(fwd), d.last[&m.from].state(fwd)) {
            (Some(a), Some(b)) => b.n_out_marked.saturating_sub(a.n_out_marked),
            _ => 0,
        };
        let stamped_rates = rev.map_or_else(Vec::new, |r| {
            series(&d.samples, &m.to, |s| {
                s.state(r)?.primary_rate_bps.map(|x| x as f64)
            })
        });
        let target_rates = rev.map_or_else(Vec::new, |r| {
            series(&d.samples, &m.to, |s| {
                s.state(r)?.target_rate_bps.map(|x| x as f64)
            })
        });
        let utilisation_series = windowed_rates(&bytes, 0.0, t_end, RATE_WINDOW_S)
            .into_iter()
            .map(|(t, r)| (t, r * 8.0 / cap as f64))
            .collect();
        let drops_series = series(&d.samples, &m.from, |s| {
            Some(
                s.states
                    .iter()
                    .flat_map(|st| &st.drops)
                    .filter(|(r, _)| is_congestion_drop(r))
                    .map(|(_, c)| *c as f64)
                    .sum(),
            )
        });
        links.push(LinkResult {
            from: m.from.clone(),
            to: m.to.clone(),
            capacity_bps: cap,
            utilisation,
            frame_bytes: data_size,
            queue_p95_ms: percentile(&delays, 0.95).unwrap_or(0.0),
            queue_max_ms: delays.iter().copied().fold(0.0, f64::max),
            marks,
            stamped_rates,
            target_rates,
            queue_series_ms,
            utilisation_series,
            drops_series,
        });
    }

    let (before, after) = (drops_of(&d.first), drops_of(&d.last));
    let drops_by_reason: BTreeMap<String, u64> = after
        .iter()
        .map(|(r, c)| (r.clone(), c - before.get(r).copied().unwrap_or(0).min(*c)))
        .filter(|(_, c)| *c > 0)
        .collect();
    let penalised_flows = penalties_of(&d.last);
    finish(
        sc,
        scheme,
        t_end,
        Measurements {
            flows,
            links,
            drops_by_reason,
            penalised_flows,
            emulation: d.caps.emulation,
            groups: super::mcast::results(sc, d),
        },
    )
}
