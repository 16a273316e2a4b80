//! Scenario files (`configs/scenarios/*.toml`): a topology, the flows that
//! run on it and the schemes to compare. See docs/testbed.md for the format.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde_json::Value;

use super::minitoml;

/// Every scheme `[cc] scheme` accepts.
pub const SCHEMES: [&str; 7] = ["none", "pcon", "rcp", "mircc", "ccc", "wincm", "qsccp"];

/// One testbed node: a namespace running one icnfwd.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
}

/// A bidirectional link; capacity, delay and loss apply in each direction.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub node: String,
    pub flow: String,
    pub via: String,
    pub cost: u64,
}

/// One consumer/producer pair fetching one object.
#[derive(Debug, Clone, PartialEq)]
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
    /// Object size; absent = large enough to last until `stop_s`.
    pub size_bytes: Option<u64>,
}

/// A directed link whose sending face is measured (queue, bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub title: String,
    pub duration_s: f64,
    /// Shorter duration for the CI subset; flow times scale with it.
    pub ci_duration_s: f64,
    pub schemes: Vec<String>,
    /// Window of the `none` consumers (`--cc fixed --init-cwnd`).
    pub none_window: u32,
    /// Content bytes per Data (`icnput --segment-size`), per scheme; schemes
    /// not listed use icnput's default, 8000 (see `segment_bytes_for`).
    pub segment_bytes: BTreeMap<String, u32>,
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
}

fn field<'a>(obj: &'a Value, key: &str, ctx: &str) -> Result<&'a Value, String> {
    obj.get(key)
        .ok_or_else(|| format!("{ctx}: missing `{key}`"))
}

fn string(obj: &Value, key: &str, ctx: &str) -> Result<String, String> {
    field(obj, key, ctx)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{ctx}: `{key}` must be a string"))
}

fn opt_f64(obj: &Value, key: &str, ctx: &str) -> Result<Option<f64>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .map(Some)
            .ok_or_else(|| format!("{ctx}: `{key}` must be a non-negative number")),
    }
}

fn f64_or(obj: &Value, key: &str, default: f64, ctx: &str) -> Result<f64, String> {
    Ok(opt_f64(obj, key, ctx)?.unwrap_or(default))
}

const KNOWN_TOP: [&str; 12] = [
    "segment_bytes",
    "ci_duration_s_by_scheme",
    "settle_to",
    "name",
    "title",
    "duration_s",
    "ci_duration_s",
    "schemes",
    "none_window",
    "cc_period_ms",
    "measure",
    "node",
];

fn check_keys(obj: &Value, known: &[&str], ctx: &str) -> Result<(), String> {
    if let Some(m) = obj.as_object() {
        for k in m.keys() {
            if !known.contains(&k.as_str()) {
                return Err(format!("{ctx}: unknown key `{k}`"));
            }
        }
    }
    Ok(())
}

/// A per-scheme table (`[segment_bytes]`, `[ci_duration_s_by_scheme]`):
/// scheme name = number within `range`.
fn parse_scheme_table(
    v: &Value,
    key: &str,
    range: std::ops::RangeInclusive<f64>,
) -> Result<BTreeMap<String, f64>, String> {
    let mut out = BTreeMap::new();
    let Some(t) = v.get(key) else {
        return Ok(out);
    };
    let t = t
        .as_object()
        .ok_or(format!("{key} must be a table of scheme = number"))?;
    for (k, x) in t {
        if !SCHEMES.contains(&k.as_str()) {
            return Err(format!("{key}: unknown scheme `{k}`"));
        }
        let n = x.as_f64().filter(|n| range.contains(n)).ok_or(format!(
            "{key}.{k} must be {}..={}",
            range.start(),
            range.end()
        ))?;
        out.insert(k.clone(), n);
    }
    Ok(out)
}

impl Scenario {
    /// Data content bytes of `scheme`'s producers (icnput's default 8000
    /// unless `[segment_bytes]` names the scheme).
    pub fn segment_bytes_for(&self, scheme: &str) -> u32 {
        self.segment_bytes.get(scheme).copied().unwrap_or(8000)
    }

    /// Length of `scheme`'s run in the CI subset: `ci_duration_s` unless
    /// `[ci_duration_s_by_scheme]` names the scheme.
    pub fn ci_duration_for(&self, scheme: &str) -> f64 {
        self.ci_duration_s_by_scheme
            .get(scheme)
            .copied()
            .unwrap_or(self.ci_duration_s)
    }

    pub fn load(path: &Path) -> Result<Scenario, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Scenario::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Scenario, String> {
        let v = minitoml::parse(text).map_err(|e| e.to_string())?;
        let top = v.as_object().expect("parse returns an object");
        for k in top.keys() {
            let ok = KNOWN_TOP.contains(&k.as_str())
                || k == "link"
                || k == "flow"
                || k == "route"
                || k.strip_prefix("cc_")
                    .is_some_and(|s| SCHEMES.contains(&s) && k != "cc_period_ms");
            if !ok {
                return Err(format!("unknown key `{k}`"));
            }
        }
        let name = string(&v, "name", "scenario")?;
        let title = string(&v, "title", "scenario")?;
        let duration_s = f64_or(&v, "duration_s", 30.0, "scenario")?;
        let ci_duration_s = f64_or(&v, "ci_duration_s", duration_s, "scenario")?;
        if !(1.0..=60.0).contains(&duration_s) || !(1.0..=duration_s).contains(&ci_duration_s) {
            return Err("duration_s must be 1..=60 and ci_duration_s 1..=duration_s".into());
        }
        let schemes: Vec<String> = field(&v, "schemes", "scenario")?
            .as_array()
            .ok_or("`schemes` must be an array")?
            .iter()
            .map(|s| {
                s.as_str()
                    .filter(|s| SCHEMES.contains(s))
                    .map(str::to_owned)
                    .ok_or_else(|| format!("unknown scheme {s} (known: {SCHEMES:?})"))
            })
            .collect::<Result<_, _>>()?;
        let none_window = f64_or(&v, "none_window", 256.0, "scenario")? as u32;
        let cc_period_ms = f64_or(&v, "cc_period_ms", 100.0, "scenario")? as u64;
        let segment_bytes = parse_scheme_table(&v, "segment_bytes", 100.0..=60_000.0)?
            .into_iter()
            .map(|(k, b)| (k, b as u32))
            .collect();
        let ci_duration_s_by_scheme =
            parse_scheme_table(&v, "ci_duration_s_by_scheme", 1.0..=duration_s)?;

        let mut nodes = Vec::new();
        for (i, n) in arr(&v, "node").iter().enumerate() {
            let ctx = format!("node[{i}]");
            check_keys(n, &["name"], &ctx)?;
            let name = string(n, "name", &ctx)?;
            if name.is_empty()
                || name.len() > 12
                || !name.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Err(format!("{ctx}: name must be 1-12 ASCII letters/digits"));
            }
            if nodes.iter().any(|x: &Node| x.name == name) {
                return Err(format!("{ctx}: duplicate node {name}"));
            }
            nodes.push(Node { name });
        }
        let has = |n: &str| nodes.iter().any(|x| x.name == n);

        let mut links = Vec::new();
        for (i, l) in arr(&v, "link").iter().enumerate() {
            let ctx = format!("link[{i}]");
            check_keys(l, &["a", "b", "capacity_mbps", "delay_ms", "loss"], &ctx)?;
            let (a, b) = (string(l, "a", &ctx)?, string(l, "b", &ctx)?);
            if !has(&a) || !has(&b) || a == b {
                return Err(format!("{ctx}: a and b must be two different nodes"));
            }
            let cap = opt_f64(l, "capacity_mbps", &ctx)?
                .filter(|c| *c > 0.0)
                .ok_or_else(|| format!("{ctx}: capacity_mbps > 0 required"))?;
            let loss = f64_or(l, "loss", 0.0, &ctx)?;
            if loss >= 1.0 {
                return Err(format!("{ctx}: loss must be below 1"));
            }
            links.push(Link {
                a,
                b,
                capacity_bps: (cap * 1e6) as u64,
                delay_ms: f64_or(l, "delay_ms", 0.0, &ctx)?,
                loss,
            });
        }

        let mut flows = Vec::new();
        for (i, f) in arr(&v, "flow").iter().enumerate() {
            let ctx = format!("flow[{i}]");
            check_keys(
                f,
                &[
                    "name",
                    "consumer",
                    "producer",
                    "start_s",
                    "stop_s",
                    "class",
                    "objective_mbps",
                    "cc",
                    "rate_mbps",
                    "size_mb",
                ],
                &ctx,
            )?;
            let name = string(f, "name", &ctx)?;
            let (consumer, producer) = (string(f, "consumer", &ctx)?, string(f, "producer", &ctx)?);
            if !has(&consumer) || !has(&producer) {
                return Err(format!("{ctx}: consumer and producer must be nodes"));
            }
            let start_s = f64_or(f, "start_s", 0.0, &ctx)?;
            let stop_s = f64_or(f, "stop_s", duration_s, &ctx)?;
            if start_s >= stop_s || stop_s > duration_s {
                return Err(format!("{ctx}: need start_s < stop_s <= duration_s"));
            }
            flows.push(Flow {
                name,
                consumer,
                producer,
                start_s,
                stop_s,
                class: f
                    .get("class")
                    .and_then(Value::as_str)
                    .unwrap_or("be")
                    .to_owned(),
                objective_bps: opt_f64(f, "objective_mbps", &ctx)?.map(|m| m * 1e6),
                cc: f.get("cc").and_then(Value::as_str).map(str::to_owned),
                rate_bps: opt_f64(f, "rate_mbps", &ctx)?.map(|m| m * 1e6),
                size_bytes: opt_f64(f, "size_mb", &ctx)?.map(|m| (m * 1e6) as u64),
            });
        }
        if flows.is_empty() {
            return Err("a scenario needs at least one [[flow]]".into());
        }

        let mut routes = Vec::new();
        for (i, r) in arr(&v, "route").iter().enumerate() {
            let ctx = format!("route[{i}]");
            check_keys(r, &["node", "flow", "via", "cost"], &ctx)?;
            let (node, flow, via) = (
                string(r, "node", &ctx)?,
                string(r, "flow", &ctx)?,
                string(r, "via", &ctx)?,
            );
            if !flows.iter().any(|f| f.name == flow) {
                return Err(format!("{ctx}: no flow `{flow}`"));
            }
            if !links
                .iter()
                .any(|l| (l.a == node && l.b == via) || (l.a == via && l.b == node))
            {
                return Err(format!("{ctx}: `{node}` has no link to `{via}`"));
            }
            let cost = f64_or(r, "cost", 10.0, &ctx)?;
            if cost.fract() != 0.0 {
                return Err(format!("{ctx}: cost must be a whole number"));
            }
            routes.push(Route {
                node,
                flow,
                via,
                cost: cost as u64,
            });
        }

        let mut measure = Vec::new();
        for m in field(&v, "measure", "scenario")?
            .as_array()
            .ok_or("`measure` must be an array of [from, to] pairs")?
        {
            let pair: Vec<&str> = m
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let [from, to] = pair[..] else {
                return Err("`measure` entries are [\"from\", \"to\"]".into());
            };
            if !links
                .iter()
                .any(|l| (l.a == from && l.b == to) || (l.a == to && l.b == from))
            {
                return Err(format!("measure [{from}, {to}] is not a link"));
            }
            measure.push(Measured {
                from: from.into(),
                to: to.into(),
            });
        }
        if measure.is_empty() {
            return Err("`measure` needs at least the bottleneck".into());
        }

        let mut cc_extra = BTreeMap::new();
        for s in SCHEMES {
            if let Some(t) = v.get(format!("cc_{s}")) {
                let t = t.as_object().ok_or(format!("cc_{s} must be a table"))?;
                cc_extra.insert(
                    s.to_string(),
                    t.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                );
            }
        }
        let settle_to_fair_share = match v.get("settle_to").and_then(Value::as_str) {
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
            name,
            title,
            duration_s,
            ci_duration_s,
            schemes,
            none_window,
            segment_bytes,
            ci_duration_s_by_scheme,
            cc_period_ms,
            nodes,
            links,
            flows,
            routes,
            measure,
            cc_extra,
        };
        for f in &sc.flows {
            if sc.hops(&f.consumer, &f.producer).is_none() {
                return Err(format!("flow {}: no path", f.name));
            }
        }
        Ok(sc)
    }

    /// The link between two nodes.
    pub fn link(&self, a: &str, b: &str) -> Option<&Link> {
        self.links
            .iter()
            .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
    }

    pub fn neighbours<'a>(&'a self, n: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.links.iter().filter_map(move |l| {
            if l.a == n {
                Some(l.b.as_str())
            } else if l.b == n {
                Some(l.a.as_str())
            } else {
                None
            }
        })
    }

    /// Hop distance of every node to `dst` (BFS).
    pub fn distances_to(&self, dst: &str) -> BTreeMap<String, u32> {
        let mut d = BTreeMap::new();
        d.insert(dst.to_string(), 0);
        let mut q = VecDeque::from([dst.to_string()]);
        while let Some(n) = q.pop_front() {
            let dn = d[&n];
            for m in self.neighbours(&n) {
                if !d.contains_key(m) {
                    d.insert(m.to_string(), dn + 1);
                    q.push_back(m.to_string());
                }
            }
        }
        d
    }

    /// One-way propagation delay of a fewest-hops path from `from` to `to`
    /// (the smallest among equal-hop paths), ms.
    pub fn path_delay_ms(&self, from: &str, to: &str) -> Option<f64> {
        let d = self.distances_to(to);
        let mut best: BTreeMap<String, f64> = BTreeMap::new();
        best.insert(to.to_string(), 0.0);
        let mut order: Vec<(&String, &u32)> = d.iter().collect();
        order.sort_by_key(|(_, h)| **h);
        for (n, &h) in order {
            if h == 0 {
                continue;
            }
            let via = self
                .neighbours(n)
                .filter(|m| d.get(*m) == Some(&(h - 1)))
                .filter_map(|m| Some(best.get(m)? + self.link(n, m)?.delay_ms))
                .fold(f64::INFINITY, f64::min);
            best.insert(n.clone(), via);
        }
        best.get(from).copied().filter(|x| x.is_finite())
    }

    /// Hops from `from` to `to`, if connected.
    pub fn hops(&self, from: &str, to: &str) -> Option<u32> {
        self.distances_to(to).get(from).copied()
    }

    /// Static routes towards a producer: at every node, each neighbour one
    /// hop closer to `producer` (so equal-length paths are all offered, and
    /// the strategy picks), with cost 10 × the hops left.
    pub fn routes_towards(&self, producer: &str) -> Vec<(String, String, u64)> {
        let d = self.distances_to(producer);
        let mut out = Vec::new();
        for n in &self.nodes {
            let Some(&dn) = d.get(&n.name) else { continue };
            for m in self.neighbours(&n.name) {
                if d.get(m).is_some_and(|&dm| dm + 1 == dn) {
                    out.push((n.name.clone(), m.to_string(), 10 * u64::from(dn)));
                }
            }
        }
        out
    }
}

impl Scenario {
    /// The routes of one flow, (node, next hop, cost): the file's
    /// `[[route]]`s for it, and the computed ones ([`routes_towards`]) at
    /// every node the file gives none for it.
    ///
    /// [`routes_towards`]: Scenario::routes_towards
    pub fn routes_for(&self, flow: &Flow) -> Vec<(String, String, u64)> {
        let given: Vec<&Route> = self.routes.iter().filter(|r| r.flow == flow.name).collect();
        let mut out: Vec<(String, String, u64)> = self
            .routes_towards(&flow.producer)
            .into_iter()
            .filter(|(n, _, _)| !given.iter().any(|r| &r.node == n))
            .collect();
        out.extend(
            given
                .iter()
                .map(|r| (r.node.clone(), r.via.clone(), r.cost)),
        );
        out
    }
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIAMOND: &str = r#"
        name = "t"
        title = "test"
        duration_s = 20
        ci_duration_s = 10
        schemes = ["none", "mircc"]
        measure = [["x", "r"]]
        [cc_qsccp]
        ef_limit_bps = 1000000
        [[node]]
        name = "c"
        [[node]]
        name = "r"
        [[node]]
        name = "x"
        [[node]]
        name = "y"
        [[node]]
        name = "p"
        [[link]]
        a = "c"
        b = "r"
        capacity_mbps = 100
        [[link]]
        a = "r"
        b = "x"
        capacity_mbps = 10
        delay_ms = 5
        [[link]]
        a = "r"
        b = "y"
        capacity_mbps = 10
        [[link]]
        a = "x"
        b = "p"
        capacity_mbps = 100
        [[link]]
        a = "y"
        b = "p"
        capacity_mbps = 100
        [[flow]]
        name = "f1"
        consumer = "c"
        producer = "p"
    "#;

    #[test]
    fn diamond_parses_and_routes_both_paths() {
        let s = Scenario::parse(DIAMOND).unwrap();
        assert_eq!(s.flows[0].stop_s, 20.0);
        assert_eq!(s.link("x", "r").unwrap().capacity_bps, 10_000_000);
        assert_eq!(s.hops("c", "p"), Some(3));
        assert_eq!(s.path_delay_ms("p", "p"), Some(0.0));
        assert!(s.path_delay_ms("c", "p").is_some_and(|d| d >= 0.0));
        let r = s.routes_towards("p");
        assert!(r.contains(&("r".into(), "x".into(), 20)));
        assert!(r.contains(&("r".into(), "y".into(), 20)));
        assert!(r.contains(&("c".into(), "r".into(), 30)));
        assert!(!r.iter().any(|(n, _, _)| n == "p"));
        assert_eq!(s.cc_extra["qsccp"][0].0, "ef_limit_bps");
        // Computed routes when the file gives none.
        let mut all = s.routes_for(&s.flows[0]);
        all.sort();
        let mut computed = r.clone();
        computed.sort();
        assert_eq!(all, computed);
    }

    #[test]
    fn routes_in_the_file_replace_the_computed_ones_at_their_node() {
        let text =
            format!("{DIAMOND}\n[[route]]\nnode = \"r\"\nflow = \"f1\"\nvia = \"y\"\ncost = 5\n");
        let s = Scenario::parse(&text).unwrap();
        let r = s.routes_for(&s.flows[0]);
        // r now uses y only; c still routes to r as computed.
        assert!(r.contains(&("r".into(), "y".into(), 5)));
        assert!(!r.iter().any(|(n, v, _)| n == "r" && v == "x"));
        assert!(r.contains(&("c".into(), "r".into(), 30)));
        let bad = text.replace("via = \"y\"", "via = \"p\"");
        assert!(Scenario::parse(&bad).unwrap_err().contains("no link"));
        let bad = text.replace("flow = \"f1\"", "flow = \"f9\"");
        assert!(Scenario::parse(&bad).unwrap_err().contains("no flow"));
    }

    #[test]
    fn bad_files_are_rejected() {
        let bad = DIAMOND.replace("schemes = [\"none\", \"mircc\"]", "schemes = [\"tcp\"]");
        assert!(Scenario::parse(&bad)
            .unwrap_err()
            .contains("unknown scheme"));
        let bad = DIAMOND.replace("[[flow]]", "[[flow]]\nbogus = 1");
        assert!(Scenario::parse(&bad).unwrap_err().contains("bogus"));
        let bad = DIAMOND.replace("measure = [[\"x\", \"r\"]]", "measure = [[\"c\", \"p\"]]");
        assert!(Scenario::parse(&bad).unwrap_err().contains("not a link"));
        let bad = DIAMOND.replace("consumer = \"c\"", "consumer = \"zz\"");
        assert!(Scenario::parse(&bad).is_err());
    }

    #[test]
    fn segment_bytes_are_per_scheme_with_icnput_default() {
        let s = Scenario::parse(DIAMOND).unwrap();
        assert_eq!(s.segment_bytes_for("wincm"), 8000);
        let t = DIAMOND.replace("[cc_qsccp]", "[segment_bytes]\nwincm = 1024\n[cc_qsccp]");
        let s = Scenario::parse(&t).unwrap();
        assert_eq!(s.segment_bytes_for("wincm"), 1024);
        assert_eq!(s.segment_bytes_for("mircc"), 8000);
        let bad = DIAMOND.replace("[cc_qsccp]", "[segment_bytes]\ntcp = 1024\n[cc_qsccp]");
        assert!(Scenario::parse(&bad).unwrap_err().contains("tcp"));
        let bad = DIAMOND.replace("[cc_qsccp]", "[segment_bytes]\nwincm = 10\n[cc_qsccp]");
        assert!(Scenario::parse(&bad).is_err());
    }

    #[test]
    fn ci_duration_is_per_scheme_within_the_full_length() {
        let s = Scenario::parse(DIAMOND).unwrap();
        assert_eq!(s.ci_duration_for("wincm"), s.ci_duration_s);
        let t = DIAMOND.replace(
            "[cc_qsccp]",
            "[ci_duration_s_by_scheme]\nwincm = 20\n[cc_qsccp]",
        );
        let s = Scenario::parse(&t).unwrap();
        assert_eq!(s.ci_duration_for("wincm"), 20.0);
        assert_eq!(s.ci_duration_for("mircc"), s.ci_duration_s);
        let t = DIAMOND.replace(
            "[cc_qsccp]",
            "[ci_duration_s_by_scheme]\nwincm = 999\n[cc_qsccp]",
        );
        assert!(Scenario::parse(&t)
            .unwrap_err()
            .contains("ci_duration_s_by_scheme.wincm"));
    }
}
