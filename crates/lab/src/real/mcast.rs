//! A scenario's multicast groups on namespaces: `icnput --multicast` on
//! each group's source node, `icncat --subscribe` on each receiver node
//! (started and stopped on the run's timeline like a flow's icncat), and
//! the figures read back from the face counters, icncat's report and
//! icnput's log.

use std::path::Path;
use std::time::{Duration, Instant};

use super::bins::Bins;
use super::mgmt::FaceSnapshot;
use super::topo::{ChildGuard, Testbed};
use crate::metrics::{mean_between, mean_rate, windowed_rates};
use crate::multicast::{GroupResult, ReceiverResult};
use crate::results::RATE_WINDOW_S;
use crate::scenario::{Group, Scenario};

/// Why a group cannot run on namespaces: icnput has flags for the chunk
/// size and the RTT only, so the other SRMCC knobs must be the defaults.
pub fn unsupported(g: &Group) -> Option<String> {
    let d = cc_core::srmcc::SrmccConfig::default();
    let knobs = [
        ("gamma", g.gamma, d.gamma),
        ("oth1", g.oth1, d.oth1),
        ("oth2", g.oth2, d.oth2),
        ("initial_rate_kbps", g.initial_rate_bps, d.initial_rate_bps),
    ];
    knobs
        .iter()
        .find(|(_, v, dv)| (v - dv).abs() > 1e-9)
        .map(|(k, _, _)| {
            format!(
                "group {}: `{k}` other than SRMCC's default needs an icnput flag it does not have (--sim runs it)",
                g.name
            )
        })
}

/// The receivers of every group, flattened: (group index, node).
pub fn receivers(sc: &Scenario) -> Vec<(usize, String)> {
    sc.groups
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.receivers.iter().map(move |r| (i, r.clone())))
        .collect()
}

/// The key a receiver's face, times and report go under (not a flow name:
/// those have no `@`).
pub fn key(g: &Group, node: &str) -> String {
    format!("{}@{node}", g.name)
}

/// icncat's arguments for a receiver of `g` on `node`, after the transport.
pub fn receiver_args(sc: &Scenario, g: &Group, node: &str, dir: &Path, secs: f64) -> Vec<String> {
    let k = key(g, node);
    vec![
        g.prefix(),
        "--subscribe".into(),
        "-o".into(),
        "/dev/null".into(),
        "-q".into(),
        "--access-capacity".into(),
        format!("{}bps", sc.access_bps(g, node)),
        "--stats-json".into(),
        dir.join(format!("{k}.stats.json")).display().to_string(),
        "--duration".into(),
        format!("{:.3}", secs.max(0.001)),
    ]
}

/// Starts every group's source; waits until each has registered its group
/// (it then says it waits for subscribers). Returns when each started.
pub fn start_sources(
    sc: &Scenario,
    tb: &mut Testbed,
    bins: &Bins,
    dir: &Path,
) -> Result<Vec<Instant>, String> {
    let mut started = Vec::new();
    for g in &sc.groups {
        // Enough stream for the whole run at the fastest link.
        let max_cap = sc.links.iter().map(|l| l.capacity_bps).max().unwrap_or(1) as f64;
        let len = ((g.stop_s - g.start_s) * max_cap / 8.0 * 1.5).min(4e9) as u64;
        let file = dir.join(format!("{}.stream", g.name));
        let f = std::fs::File::create(&file).map_err(|e| e.to_string())?;
        f.set_len(len.max(1)).map_err(|e| e.to_string())?;
        let mut cmd = tb.nodes[&g.source]
            .ns
            .command(bins.icnput.to_str().ok_or("path")?);
        cmd.arg(g.prefix())
            .arg(&file)
            .arg("--multicast")
            .args(["--transport", &tb.transport(&g.source)])
            .args(["--chunk-size", &g.payload_bytes.to_string()]);
        if let Some(ms) = g.rtt_ms {
            cmd.args(["--rtt", &format!("{}", ms.round() as u64)]);
        }
        let log = dir.join(format!("{}.icnput.log", g.name));
        let mut p = ChildGuard::spawn(&format!("icnput --multicast {}", g.name), cmd, log)?;
        started.push(Instant::now());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string(&p.log)
            .unwrap_or_default()
            .contains("waiting for subscribers")
        {
            if !p.alive() || Instant::now() > deadline {
                return Err(format!("{} did not register:\n{}", p.name, p.log_tail(10)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tb.procs.push(p);
    }
    Ok(started)
}

/// The rates icnput logged once a second, `(s since its start, bit/s)`.
fn logged_rates(log: &str) -> Vec<(f64, f64)> {
    log.lines()
        .filter_map(|l| {
            let (t, rest) = l.trim_start().split_once("s rate")?;
            let r = rest.split_whitespace().next()?;
            Some((t.trim().parse().ok()?, r.parse().ok()?))
        })
        .collect()
}

/// What the namespace run saw of the groups.
#[derive(Debug, Default)]
pub struct GroupData {
    /// Per group: when its icnput started, seconds relative to the run's
    /// time zero (negative: before it).
    pub source_start_s: Vec<f64>,
}

/// The groups' figures from a run's data; receivers sit in its flow maps
/// (faces, times, reports) under [`key`].
pub fn results(sc: &Scenario, d: &super::run::RunData) -> Vec<GroupResult> {
    let (dir, data, samples, t_end) = (&d.dir, &d.groups, &d.samples[..], d.duration_s);
    let (faces, times, stats) = (&d.flow_faces, &d.flow_times, &d.flow_stats);
    let counter = |node: &str, id: u64, f: fn(&icn_tlv::nfd::dataset::FaceStatus) -> u64| {
        samples
            .iter()
            .filter(|(_, n, _)| n == node)
            .filter_map(|(t, _, s)| Some((*t, f(s.face(id)?) as f64)))
            .collect::<Vec<(f64, f64)>>()
    };
    let bits = |pts: &[(f64, f64)], a: f64, b: f64| -> Vec<(f64, f64)> {
        windowed_rates(pts, a, b, RATE_WINDOW_S)
            .into_iter()
            .map(|(t, r)| (t, r * 8.0))
            .collect()
    };
    sc.groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            let scale = t_end / sc.duration_s;
            let (start, stop) = (g.start_s * scale, g.stop_s * scale);
            let half = start + (stop - start) / 2.0;
            let log = std::fs::read_to_string(dir.join(format!("{}.icnput.log", g.name)))
                .unwrap_or_default();
            let offset = data.source_start_s.get(gi).copied().unwrap_or(0.0);
            let source_rates: Vec<(f64, f64)> = logged_rates(&log)
                .into_iter()
                .map(|(t, r)| (t + offset, r))
                .filter(|(t, _)| *t >= 0.0)
                .collect();
            // What icnput sent into its forwarder: its app face's input.
            let sent = source_face(g, samples)
                .map(|id| counter(&g.source, id, |f| f.n_in_bytes))
                .unwrap_or_default();
            let receivers = g
                .receivers
                .iter()
                .map(|node| {
                    let k = key(g, node);
                    let (a, b) = times.get(&k).copied().unwrap_or((start, stop));
                    let pts = faces
                        .get(&k)
                        .map(|(n, id)| counter(n, *id, |f| f.n_out_bytes))
                        .unwrap_or_default();
                    let st = stats.get(&k);
                    let n = |f: &str| st.and_then(|s| s.get(f)?.as_u64()).unwrap_or(0);
                    ReceiverResult {
                        node: node.clone(),
                        access_bps: sc.access_bps(g, node),
                        goodput_last_half_bps: mean_rate(&pts, half.max(a), stop.min(b)) * 8.0,
                        goodput: bits(&pts, a, b),
                        packets: n("packets"),
                        holes: n("repaired") + n("late") + n("unrepaired"),
                        repaired: n("repaired"),
                        unrepaired: n("unrepaired"),
                    }
                })
                .collect();
            GroupResult {
                name: g.name.clone(),
                source: g.source.clone(),
                start_s: start,
                stop_s: stop,
                source_rate_last_half_bps: mean_between(&source_rates, half, stop),
                source_rates,
                source_sent: bits(&sent, start, stop),
                feedback_in: log
                    .lines()
                    .rev()
                    .find_map(|l| {
                        l.split("feedback ")
                            .nth(1)?
                            .split_whitespace()
                            .next()?
                            .parse()
                            .ok()
                    })
                    .unwrap_or(0),
                receivers,
            }
        })
        .collect()
}

/// icnput's face on the source node: the local face whose input grew most
/// (the stream), found from the samples.
fn source_face(g: &Group, samples: &[(f64, String, FaceSnapshot)]) -> Option<u64> {
    let last = samples.iter().rev().find(|(_, n, _)| *n == g.source)?;
    last.2
        .faces
        .iter()
        .filter(|f| f.face_scope == 1)
        .max_by_key(|f| f.n_in_bytes)
        .map(|f| f.face_id)
}

#[cfg(test)]
mod tests {
    #[test]
    fn icnput_rate_lines_parse() {
        let log = "waiting for subscribers of /video\n     2.0s rate      51234 bit/s  sent      12  feedback 3  (Omax 0.000 Omin 0.000 fair 100)\n     3.0s rate     102468 bit/s  sent      30  feedback 5\n";
        assert_eq!(
            super::logged_rates(log),
            vec![(2.0, 51234.0), (3.0, 102468.0)]
        );
    }
}
