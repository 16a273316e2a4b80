//! Scenario files (`configs/scenarios/*.toml`): a topology, the flows that
//! run on it and the schemes to compare. See docs/testbed.md for the format.
//! serde reads the file ([`raw`]); this module checks what serde cannot
//! (names that must exist, ranges) and builds the [`Scenario`] both runners take.

mod arrivals;
mod graph;
mod groups;
mod raw;
#[cfg(test)]
mod tests;

use cc_core::Profile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::LabError;
pub use groups::Group;
use raw::{RawFlow, RawScenario};

/// Every scheme `[cc] scheme` accepts.
pub const SCHEMES: [&str; 7] = ["none", "pcon", "rcp", "mircc", "ccc", "wincm", "qsccp"];

/// One node: a namespace running one icnfwd, or one engine in virtual time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    pub name: String,
}

/// A bidirectional link; capacity, delay and loss apply in each direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub a: String,
    pub b: String,
    pub capacity_bps: u64,
    pub delay_ms: f64,
    pub loss: f64,
}

/// A static route from the file (`[[route]]`): at `node`, Interests of
/// flow `flow` (prefix `/<flow>`) go to the neighbour `via`. A node with
/// routes of its own for a flow gets only those for it; the other nodes
/// keep the computed ones ([`Scenario::routes_for`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    pub node: String,
    pub flow: String,
    pub via: String,
    pub cost: u64,
}

/// One consumer/producer pair fetching one object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flow {
    pub name: String,
    pub consumer: String,
    pub producer: String,
    /// Seconds from the run's start, before time scaling.
    pub start_s: f64,
    pub stop_s: f64,
    /// QSCCP service class (`--class`).
    pub class: String,
    /// CCC objective (`--objective`), bit/s.
    pub objective_bps: Option<f64>,
    /// Consumer law override (e.g. `fixed` for a greedy flow); else the run's scheme.
    pub cc: Option<String>,
    /// `--rate` for `fixed` (or the initial rate of rate laws), bit/s.
    pub rate_bps: Option<f64>,
    /// Object size; absent = large enough to last until `stop_s`. A sized
    /// flow ends when it has the whole object; its delivery time is measured.
    pub size_bytes: Option<u64>,
}

/// A directed link whose sending face is measured (queue, bytes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub name: String,
    pub title: String,
    pub duration_s: f64,
    /// Shorter duration for the CI subset; flow times scale with it.
    pub ci_duration_s: f64,
    pub schemes: Vec<String>,
    /// Window of the `none` consumers (`--cc fixed --init-cwnd`).
    pub none_window: u32,
    /// Content bytes per Data (`icnput --segment-size`), one size for every
    /// scheme (icnput's default, 8000, when absent): a scheme that needs its
    /// own Data size to pass a scenario is a defect of the scheme, not a
    /// property of the scenario.
    pub segment_bytes: u32,
    /// CI-subset length per scheme, overriding `ci_duration_s` (at most
    /// `duration_s`; see `ci_duration_for`).
    pub ci_duration_s_by_scheme: BTreeMap<String, f64>,
    pub cc_period_ms: u64,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    /// Routes given in the file; the rest are computed.
    pub routes: Vec<Route>,
    /// The first entry is "the bottleneck" of the table.
    pub measure: Vec<Measured>,
    /// Extra `[cc]` lines per scheme (`[cc_<scheme>]` tables), verbatim.
    pub cc_extra: BTreeMap<String, Vec<(String, Value)>>,
    /// Settling target after a flow arrival: each flow's own final rate
    /// (`"final"`, default) or the equal share of the bottleneck capacity
    /// (`"fair_share"`).
    pub settle_to_fair_share: bool,
    /// One computed next hop per node instead of every equal-length one
    /// (MIRCC's "multipath forwarding disabled" runs).
    pub single_path: bool,
    /// SRMCC multicast groups (`[[group]]`).
    pub groups: Vec<Group>,
    /// Every node's `[multicast_groups]` lines (icnfwd's keys), verbatim.
    pub multicast_groups: Vec<(String, Value)>,
    /// Packets per face queue (drop-tail), as the SRMCC paper's Qmax;
    /// `None`: the engine's bound. Virtual time only: icnfwd has no such
    /// key, so the namespace runner warns and runs without it.
    pub queue_packets: Option<usize>,
    /// Parameter profile of every scheme's forwarders and consumers
    /// (`icnlab --profile`; not a file key: one scenario runs under both).
    pub profile: Profile,
    /// `[consumer]`: knobs of the consumer laws beside the profile, as
    /// icncat's flags (each deviation of a consumer law can be switched
    /// alone, docs/deviations.md).
    pub consumer: ConsumerKnobs,
}

/// `[consumer]` of a scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ConsumerKnobs {
    /// CCC's Interests in flight before the first Data (`--ccc-initial-window`).
    pub ccc_initial_window: Option<u32>,
    /// CCC's lowest pace, Interests/s (`--ccc-min-pace`).
    pub ccc_min_pace_ips: Option<f64>,
    /// WinCM: Data sent before the last cut add nothing in the congestion
    /// state (`--wincm-hold-after-cut`).
    pub wincm_hold_after_cut: Option<bool>,
    /// WinCM: BIC's growth limited while the RTT shows a queue
    /// (`--wincm-queue-growth-limit`).
    pub wincm_queue_growth_limit: Option<bool>,
    /// WinCM: the congestion state's growth limited while a queue shows
    /// (`--wincm-growth-limit-in-congestion`).
    pub wincm_growth_limit_in_congestion: Option<bool>,
    /// WinCM: a mark's cut stops at the path's measured product
    /// (`--wincm-bandwidth-floor`).
    pub wincm_bandwidth_floor: Option<bool>,
}

/// `configs/scenarios/<name>.toml` of this checkout, or `name` itself when
/// it names a file (a user's own scenario).
pub fn scenario_path(name: &str) -> PathBuf {
    if name.ends_with(".toml") {
        return PathBuf::from(name);
    }
    scenarios_dir().join(format!("{name}.toml"))
}

/// The checkout's `configs/scenarios`.
pub fn scenarios_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/scenarios"
    ))
}

pub(super) fn non_negative(x: Option<f64>, key: &str, ctx: &str) -> Result<Option<f64>, String> {
    match x {
        Some(v) if !(v.is_finite() && v >= 0.0) => {
            Err(format!("{ctx}: `{key}` must be a non-negative number"))
        }
        _ => Ok(x),
    }
}

/// A per-scheme table (`[segment_bytes]`, `[ci_duration_s_by_scheme]`):
/// scheme name = number within `range`.
fn scheme_table(
    t: &BTreeMap<String, f64>,
    key: &str,
    range: std::ops::RangeInclusive<f64>,
) -> Result<BTreeMap<String, f64>, String> {
    for (k, n) in t {
        if !SCHEMES.contains(&k.as_str()) {
            return Err(format!("{key}: unknown scheme `{k}`"));
        }
        if !range.contains(n) {
            return Err(format!(
                "{key}.{k} must be {}..={}",
                range.start(),
                range.end()
            ));
        }
    }
    Ok(t.clone())
}

impl Scenario {
    /// Length of `scheme`'s run in the CI subset: `ci_duration_s` unless
    /// `[ci_duration_s_by_scheme]` names the scheme.
    pub fn ci_duration_for(&self, scheme: &str) -> f64 {
        self.ci_duration_s_by_scheme
            .get(scheme)
            .copied()
            .unwrap_or(self.ci_duration_s)
    }

    /// Reads and checks a scenario file; errors name the file (and the line).
    pub fn load(path: &Path) -> Result<Scenario, LabError> {
        let text = std::fs::read_to_string(path).map_err(|source| LabError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Scenario::parse_named(&text, &path.display().to_string())
    }

    /// Parses a scenario given as text.
    pub fn parse(text: &str) -> Result<Scenario, LabError> {
        Scenario::parse_named(text, "<scenario>")
    }

    /// Parses `text`, naming `file` in errors.
    pub fn parse_named(text: &str, file: &str) -> Result<Scenario, LabError> {
        let raw: RawScenario = toml::from_str(text).map_err(|e| LabError::toml(file, text, &e))?;
        Scenario::from_raw(raw).map_err(|msg| LabError::Invalid {
            file: file.to_string(),
            msg,
        })
    }

    fn from_raw(v: RawScenario) -> Result<Scenario, String> {
        let duration_s = non_negative(v.duration_s, "duration_s", "scenario")?.unwrap_or(30.0);
        let ci_duration_s =
            non_negative(v.ci_duration_s, "ci_duration_s", "scenario")?.unwrap_or(duration_s);
        if !(1.0..=60.0).contains(&duration_s) || !(1.0..=duration_s).contains(&ci_duration_s) {
            return Err("duration_s must be 1..=60 and ci_duration_s 1..=duration_s".into());
        }
        for s in &v.schemes {
            if !SCHEMES.contains(&s.as_str()) {
                return Err(format!("unknown scheme {s:?} (known: {SCHEMES:?})"));
            }
        }
        let none_window = non_negative(v.none_window, "none_window", "scenario")?.unwrap_or(256.0);
        let cc_period_ms =
            non_negative(v.cc_period_ms, "cc_period_ms", "scenario")?.unwrap_or(100.0);
        let segment_bytes = match v.segment_bytes {
            None => 8000,
            Some(b) if (100.0..=60_000.0).contains(&b) && b.fract() == 0.0 => b as u32,
            Some(b) => {
                return Err(format!(
                    "segment_bytes = {b}: a whole number within 100..=60000"
                ))
            }
        };
        let ci_duration_s_by_scheme = scheme_table(
            &v.ci_duration_s_by_scheme,
            "ci_duration_s_by_scheme",
            1.0..=duration_s,
        )?;

        let mut nodes: Vec<Node> = Vec::new();
        for (i, n) in v.node.iter().enumerate() {
            let ctx = format!("node[{i}]");
            let name = n.name.clone();
            if name.is_empty()
                || name.len() > 12
                || !name.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Err(format!("{ctx}: name must be 1-12 ASCII letters/digits"));
            }
            if nodes.iter().any(|x| x.name == name) {
                return Err(format!("{ctx}: duplicate node {name}"));
            }
            nodes.push(Node { name });
        }
        let has = |n: &str| nodes.iter().any(|x| x.name == n);

        let mut links = Vec::new();
        for (i, l) in v.link.iter().enumerate() {
            let ctx = format!("link[{i}]");
            if !has(&l.a) || !has(&l.b) || l.a == l.b {
                return Err(format!("{ctx}: a and b must be two different nodes"));
            }
            let cap = non_negative(l.capacity_mbps, "capacity_mbps", &ctx)?
                .filter(|c| *c > 0.0)
                .ok_or_else(|| format!("{ctx}: capacity_mbps > 0 required"))?;
            let loss = non_negative(l.loss, "loss", &ctx)?.unwrap_or(0.0);
            if loss >= 1.0 {
                return Err(format!("{ctx}: loss must be below 1"));
            }
            links.push(Link {
                a: l.a.clone(),
                b: l.b.clone(),
                capacity_bps: (cap * 1e6) as u64,
                delay_ms: non_negative(l.delay_ms, "delay_ms", &ctx)?.unwrap_or(0.0),
                loss,
            });
        }

        let mut flows = v
            .flow
            .iter()
            .enumerate()
            .map(|(i, f)| flow(f, &format!("flow[{i}]"), duration_s, &has))
            .collect::<Result<Vec<Flow>, String>>()?;
        for (i, a) in v.arrivals.iter().enumerate() {
            flows.extend(arrivals::expand(
                a,
                &format!("arrivals[{i}]"),
                duration_s,
                &has,
            )?);
        }
        for (i, f) in flows.iter().enumerate() {
            if flows[..i].iter().any(|g| g.name == f.name) {
                return Err(format!("duplicate flow name `{}`", f.name));
            }
        }
        let groups = v
            .group
            .iter()
            .enumerate()
            .map(|(i, g)| groups::group(g, &format!("group[{i}]"), duration_s, &has))
            .collect::<Result<Vec<Group>, String>>()?;
        for (i, g) in groups.iter().enumerate() {
            if groups[..i].iter().any(|h| h.name == g.name)
                || flows.iter().any(|f| f.name == g.name)
            {
                return Err(format!("group name `{}` is taken", g.name));
            }
        }
        if flows.is_empty() && groups.is_empty() {
            return Err("a scenario needs at least one [[flow]], [[arrivals]] or [[group]]".into());
        }
        let multicast_groups = match &v.multicast_groups {
            None => Vec::new(),
            Some(t) => t
                .iter()
                .map(|(k, x)| Ok((k.clone(), serde_json::to_value(x)?)))
                .collect::<Result<Vec<_>, serde_json::Error>>()
                .map_err(|e| format!("multicast_groups: {e}"))?,
        };
        let consumer = v
            .consumer
            .as_ref()
            .map_or(Ok(ConsumerKnobs::default()), |c| match c.ccc_min_pace_ips {
                Some(p) if !(p.is_finite() && p >= 0.0) => {
                    Err(format!("consumer.ccc_min_pace_ips = {p}: a pace, >= 0"))
                }
                _ => Ok(ConsumerKnobs {
                    ccc_initial_window: c.ccc_initial_window,
                    ccc_min_pace_ips: c.ccc_min_pace_ips,
                    wincm_hold_after_cut: c.wincm_hold_after_cut,
                    wincm_queue_growth_limit: c.wincm_queue_growth_limit,
                    wincm_growth_limit_in_congestion: c.wincm_growth_limit_in_congestion,
                    wincm_bandwidth_floor: c.wincm_bandwidth_floor,
                }),
            })?;
        let queue_packets = match v.queue_packets {
            None => None,
            Some(q) if (2.0..=100_000.0).contains(&q) && q.fract() == 0.0 => Some(q as usize),
            Some(q) => return Err(format!("queue_packets = {q}: whole, 2..=100000")),
        };
        let link_between = |x: &str, y: &str| {
            links
                .iter()
                .any(|l| (l.a == x && l.b == y) || (l.a == y && l.b == x))
        };

        let mut routes = Vec::new();
        for (i, r) in v.route.iter().enumerate() {
            let ctx = format!("route[{i}]");
            if !flows.iter().any(|f| f.name == r.flow) {
                return Err(format!("{ctx}: no flow `{}`", r.flow));
            }
            if !link_between(&r.node, &r.via) {
                return Err(format!("{ctx}: `{}` has no link to `{}`", r.node, r.via));
            }
            let cost = non_negative(r.cost, "cost", &ctx)?.unwrap_or(10.0);
            if cost.fract() != 0.0 {
                return Err(format!("{ctx}: cost must be a whole number"));
            }
            routes.push(Route {
                node: r.node.clone(),
                flow: r.flow.clone(),
                via: r.via.clone(),
                cost: cost as u64,
            });
        }

        let mut measure = Vec::new();
        for m in &v.measure {
            let [from, to] = &m[..] else {
                return Err("`measure` entries are [\"from\", \"to\"]".into());
            };
            if !link_between(from, to) {
                return Err(format!("measure [{from}, {to}] is not a link"));
            }
            measure.push(Measured {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if measure.is_empty() {
            return Err("`measure` needs at least the bottleneck".into());
        }

        let mut cc_extra = BTreeMap::new();
        for (s, t) in v.cc_tables() {
            if let Some(t) = t {
                let kv = t
                    .iter()
                    .map(|(k, x)| Ok((k.clone(), serde_json::to_value(x)?)))
                    .collect::<Result<Vec<_>, serde_json::Error>>()
                    .map_err(|e| format!("cc_{s}: {e}"))?;
                cc_extra.insert(s.to_string(), kv);
            }
        }
        let settle_to_fair_share = match v.settle_to.as_deref() {
            None | Some("final") => false,
            Some("fair_share") => true,
            Some(o) => {
                return Err(format!(
                    "settle_to {o:?}: expected \"final\" or \"fair_share\""
                ))
            }
        };
        let sc = Scenario {
            settle_to_fair_share,
            single_path: v.single_path,
            name: v.name,
            title: v.title,
            duration_s,
            ci_duration_s,
            schemes: v.schemes,
            none_window: none_window as u32,
            segment_bytes,
            ci_duration_s_by_scheme,
            cc_period_ms: cc_period_ms as u64,
            nodes,
            links,
            flows,
            routes,
            measure,
            cc_extra,
            groups,
            multicast_groups,
            queue_packets,
            profile: Profile::Tuned,
            consumer,
        };
        for f in &sc.flows {
            if sc.hops(&f.consumer, &f.producer).is_none() {
                return Err(format!("flow {}: no path", f.name));
            }
        }
        for g in &sc.groups {
            for r in &g.receivers {
                if sc.hops(r, &g.source).is_none() {
                    return Err(format!("group {}: no path from {r} to the source", g.name));
                }
            }
        }
        Ok(sc)
    }
}

/// One `[[flow]]`, checked against the nodes and the run's length.
fn flow(
    f: &RawFlow,
    ctx: &str,
    duration_s: f64,
    has: &dyn Fn(&str) -> bool,
) -> Result<Flow, String> {
    if !has(&f.consumer) || !has(&f.producer) {
        return Err(format!("{ctx}: consumer and producer must be nodes"));
    }
    let start_s = non_negative(f.start_s, "start_s", ctx)?.unwrap_or(0.0);
    let stop_s = non_negative(f.stop_s, "stop_s", ctx)?.unwrap_or(duration_s);
    if start_s >= stop_s || stop_s > duration_s {
        return Err(format!("{ctx}: need start_s < stop_s <= duration_s"));
    }
    Ok(Flow {
        name: f.name.clone(),
        consumer: f.consumer.clone(),
        producer: f.producer.clone(),
        start_s,
        stop_s,
        class: f.class.clone().unwrap_or_else(|| "be".to_owned()),
        objective_bps: non_negative(f.objective_mbps, "objective_mbps", ctx)?.map(|m| m * 1e6),
        cc: f.cc.clone(),
        rate_bps: non_negative(f.rate_mbps, "rate_mbps", ctx)?.map(|m| m * 1e6),
        size_bytes: non_negative(f.size_mb, "size_mb", ctx)?.map(|m| (m * 1e6) as u64),
    })
}
