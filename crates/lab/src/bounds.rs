//! The operating envelope's bounds (`icn_sim::envelope`, the check the
//! virtual-time grid applies) on a lab run: the bounds' topology from a
//! scenario, and a run's figures in the bounds' terms.
//!
//! The figures mean what the grid's mean (`crates/forwarder/tests/
//! cc_envelope/run.rs`), from what both runners record:
//! - utilisation: the frame bytes each measured link carried over the last
//!   half, against its capacity ([`LinkResult::utilisation`]);
//! - flow rates in the bottleneck's frame bytes: each flow's last-half
//!   rate at its application face, times the measured links' mean frame
//!   size over the bytes that face sent per Data (the grid scales the
//!   consumer's Data bytes by the bottleneck's frame/Data size ratio);
//! - p95 queue: the worst measured link's Data backlog plus the Interests
//!   held on its reverse face at the mean frame size (both runners);
//! - congestion drops over the last half, on the measured links' sending
//!   nodes (the grid counts every node; the lab samples drops only there);
//! - frame size: the measured links' mean frame size.

use icn_forwarder::cc::CcScheme;
use icn_sim::envelope::{self, Family, Figures, Flow, Link, Topology};

use crate::metrics::value_at;
use crate::results::RunResult;
use crate::scenario::Scenario;
use crate::LabError;

fn err(sc: &Scenario, what: String) -> LabError {
    LabError::Sweep(format!("{}: no envelope bounds: {what}", sc.name))
}

/// The nodes flow `i` of `sc` crosses, consumer to producer, along its
/// routes; an error when a node offers it several next hops (the bounds
/// need one path per flow).
fn path_of(sc: &Scenario, i: usize) -> Result<Vec<String>, LabError> {
    let f = &sc.flows[i];
    let routes = sc.routes_for(f);
    let mut path = vec![f.consumer.clone()];
    while path.last() != Some(&f.producer) {
        let here = path.last().expect("non-empty");
        let mut next: Vec<&str> = routes
            .iter()
            .filter(|(n, _, _)| n == here)
            .map(|(_, v, _)| v.as_str())
            .collect();
        next.dedup();
        match next[..] {
            [v] if path.len() <= sc.nodes.len() => path.push(v.to_string()),
            [] => return Err(err(sc, format!("flow {} has no route at {here}", f.name))),
            _ => {
                return Err(err(
                    sc,
                    format!("flow {} has no single path at {here}", f.name),
                ))
            }
        }
    }
    Ok(path)
}

/// The bounds' topology of `sc`: the routers are every node between a
/// flow's consumer and producer, the links those routers share (the
/// measured ones first, in `measure` order, as bottlenecks; `a` is the
/// measured link's receiving end), and each flow's extra access delay is
/// what its two access links add beyond 1 ms each.
pub fn topology(sc: &Scenario) -> Result<Topology, LabError> {
    let paths: Vec<Vec<String>> = (0..sc.flows.len())
        .map(|i| path_of(sc, i))
        .collect::<Result<_, _>>()?;
    let mut routers: Vec<String> = Vec::new();
    for p in &paths {
        if p.len() < 3 {
            return Err(err(
                sc,
                format!("{} -> {}: no router", p[0], p[p.len() - 1]),
            ));
        }
        for n in &p[1..p.len() - 1] {
            if !routers.contains(n) {
                routers.push(n.clone());
            }
        }
    }
    let index = |n: &str| routers.iter().position(|r| r == n);
    let ms = |x: f64| x.round().max(0.0) as u64;
    let mut links: Vec<Link> = Vec::new();
    for m in &sc.measure {
        let (Some(a), Some(b)) = (index(&m.to), index(&m.from)) else {
            return Err(err(sc, format!("{} -> {} joins no routers", m.from, m.to)));
        };
        let l = sc
            .link(&m.from, &m.to)
            .ok_or_else(|| err(sc, format!("no link {} - {}", m.from, m.to)))?;
        links.push(Link {
            a,
            b,
            capacity_bps: l.capacity_bps,
            delay_ms: ms(l.delay_ms),
            bottleneck: true,
        });
    }
    let mut flows = Vec::new();
    for p in &paths {
        let inner = &p[1..p.len() - 1];
        let path: Vec<usize> = inner.iter().filter_map(|n| index(n)).collect();
        for w in path.windows(2) {
            let known = links
                .iter()
                .any(|l| (l.a, l.b) == (w[0], w[1]) || (l.a, l.b) == (w[1], w[0]));
            if !known {
                let l = sc
                    .link(&routers[w[0]], &routers[w[1]])
                    .expect("a routed path follows links");
                links.push(Link {
                    a: w[0],
                    b: w[1],
                    capacity_bps: l.capacity_bps,
                    delay_ms: ms(l.delay_ms),
                    bottleneck: false,
                });
            }
        }
        let access = |x: &str, y: &str| sc.link(x, y).map_or(1.0, |l| l.delay_ms);
        let n = p.len();
        let extra = access(&p[0], &p[1]) + access(&p[n - 2], &p[n - 1]) - 2.0;
        flows.push(Flow {
            path,
            access_delay_ms: ms(extra),
        });
    }
    Ok(Topology {
        name: sc.name.clone(),
        routers: routers.len(),
        links,
        flows,
    })
}

/// The figures of `r` (a run of `sc`, whose measured links are the
/// bounds' bottlenecks in order) in the bounds' terms (module doc).
pub fn figures(sc: &Scenario, r: &RunResult) -> Figures {
    let utilisation: Vec<f64> = r.links.iter().map(|l| l.utilisation).collect();
    // Mean frame size over every measured link: bytes over frames.
    let carried: Vec<f64> = r
        .links
        .iter()
        .map(|l| l.utilisation * l.capacity_bps as f64)
        .collect();
    let total: f64 = carried.iter().sum();
    let frames: f64 = carried
        .iter()
        .zip(&r.links)
        .map(|(b, l)| b / l.frame_bytes.max(1.0))
        .sum();
    let frame_bytes = if frames > 0.0 {
        total / frames
    } else {
        r.links.first().map_or(0.0, |l| l.frame_bytes)
    };
    // Each flow's Data in the bottleneck's frame bytes: its face's rate
    // scaled by the link's frame size over the face's bytes per Data.
    let flow_bps: Vec<f64> = r
        .flows
        .iter()
        .map(|f| {
            let own = f.frame_bytes.filter(|b| *b > 0.0).unwrap_or(frame_bytes);
            let scale = if own > 0.0 { frame_bytes / own } else { 1.0 };
            f.rate_last_half_bps * scale
        })
        .collect();
    let half = r.duration_s / 2.0;
    let mut senders: Vec<&str> = Vec::new();
    let mut drops = 0.0;
    for (m, l) in sc.measure.iter().zip(&r.links) {
        if senders.contains(&m.from.as_str()) {
            continue;
        }
        senders.push(&m.from);
        let at = |s: f64| value_at(&l.drops_series, s).unwrap_or(0.0);
        drops += (at(r.duration_s) - at(half)).max(0.0);
    }
    Figures {
        jain: icn_sim::net::flows::jain(&flow_bps),
        utilisation,
        flow_bps,
        p95_queue_ms: r.links.iter().map(|l| l.queue_p95_ms).fold(0.0, f64::max),
        drops: drops.round() as u64,
        frame_bytes,
    }
}

/// The family of bounds a run's scheme (`mircc` or `mircc/real`) is held
/// to; `None` for `none` and unknown names.
pub fn family(scheme: &str) -> Option<Family> {
    let name = scheme.split('/').next().unwrap_or(scheme);
    CcScheme::ALL
        .iter()
        .find(|s| s.name() == name)
        .and_then(|s| Family::of(*s))
}

/// The bounds `r` breaks (empty: it holds them all), or `None` when no
/// bound applies to its scheme.
pub fn check(sc: &Scenario, t: &Topology, r: &RunResult) -> Option<Vec<String>> {
    let family = family(&r.scheme)?;
    Some(envelope::check(t, family, &figures(sc, r)))
}

/// `ok`, `-` (no bound applies) or the bounds broken, `; `-separated.
pub fn verdict_text(v: &Option<Vec<String>>) -> String {
    match v {
        None => "-".to_string(),
        Some(e) if e.is_empty() => "ok".to_string(),
        Some(e) => e.join("; "),
    }
}

#[cfg(test)]
mod tests;
