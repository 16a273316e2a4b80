//! `[[group]]`: an SRMCC multicast group (source, receivers and the knobs
//! the SRMCC paper varies), checked against the nodes and the run's length.

use serde::Serialize;

use super::raw::RawGroup;
use super::{non_negative, Scenario};

/// One multicast group: a source streaming to receivers over the tree the
/// group's routes (towards the source) make.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// Group name; the stream is `/<name>/seq=<n>`.
    pub name: String,
    /// Node of the source application (`icnput --multicast`).
    pub source: String,
    /// Nodes of the receiver applications (`icncat --subscribe`), one each.
    pub receivers: Vec<String>,
    /// Seconds from the run's start, before time scaling.
    pub start_s: f64,
    pub stop_s: f64,
    /// Payload bytes per group Data (the paper: 1000).
    pub payload_bytes: u32,
    /// Access capacity each receiver reports (SRMCC's C_access); `None`:
    /// the smallest link of the receiver's node.
    pub access_bps: Option<u64>,
    /// Rate selection factor γ of eq. 10 (the paper's Fig. 5 sweeps it).
    pub gamma: f64,
    /// Occupancy thresholds Oth1, Oth2.
    pub oth1: f64,
    pub oth2: f64,
    /// Initial multicast rate, bit/s (the paper: 50 kb/s).
    pub initial_rate_bps: f64,
    /// RTT that sets the adaptation cycle (4 × RTT); `None`: the source's default.
    pub rtt_ms: Option<f64>,
}

impl Group {
    /// The group's name prefix.
    pub fn prefix(&self) -> String {
        format!("/{}", self.name)
    }
}

impl Scenario {
    /// The access capacity `receiver` reports for `g`: the file's, else the
    /// smallest capacity among the receiver node's links.
    pub fn access_bps(&self, g: &Group, receiver: &str) -> u64 {
        g.access_bps.unwrap_or_else(|| {
            self.links
                .iter()
                .filter(|l| l.a == receiver || l.b == receiver)
                .map(|l| l.capacity_bps)
                .min()
                .unwrap_or(100_000_000)
        })
    }

    /// The multicast tree's routes of `g`: at every node, one next hop
    /// towards the source (the first computed one: a tree needs exactly
    /// one upstream per node).
    pub fn group_routes(&self, g: &Group) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (n, via, _) in self.routes_towards(&g.source) {
            if !out.iter().any(|(m, _)| *m == n) {
                out.push((n, via));
            }
        }
        out
    }
}

/// One `[[group]]`.
pub(super) fn group(
    g: &RawGroup,
    ctx: &str,
    duration_s: f64,
    has: &dyn Fn(&str) -> bool,
) -> Result<Group, String> {
    let d = cc_core::srmcc::SrmccConfig::default();
    if g.name.is_empty() || !g.name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("{ctx}: name must be ASCII letters/digits"));
    }
    if !has(&g.source) {
        return Err(format!("{ctx}: source `{}` is not a node", g.source));
    }
    if g.receivers.is_empty() {
        return Err(format!("{ctx}: at least one receiver"));
    }
    for (i, r) in g.receivers.iter().enumerate() {
        if !has(r) {
            return Err(format!("{ctx}: receiver `{r}` is not a node"));
        }
        if r == &g.source || g.receivers[..i].contains(r) {
            return Err(format!(
                "{ctx}: receiver `{r}` repeated or on the source's node"
            ));
        }
    }
    let start_s = non_negative(g.start_s, "start_s", ctx)?.unwrap_or(0.0);
    let stop_s = non_negative(g.stop_s, "stop_s", ctx)?.unwrap_or(duration_s);
    if start_s >= stop_s || stop_s > duration_s {
        return Err(format!("{ctx}: need start_s < stop_s <= duration_s"));
    }
    let payload_bytes = match non_negative(g.payload_bytes, "payload_bytes", ctx)? {
        None => 1000,
        Some(b) if (1.0..=8000.0).contains(&b) && b.fract() == 0.0 => b as u32,
        Some(b) => return Err(format!("{ctx}: payload_bytes = {b}: whole, 1..=8000")),
    };
    let gamma = non_negative(g.gamma, "gamma", ctx)?.unwrap_or(d.gamma);
    if gamma > 1.0 {
        return Err(format!("{ctx}: gamma must be within 0..=1"));
    }
    let oth1 = non_negative(g.oth1, "oth1", ctx)?.unwrap_or(d.oth1);
    let oth2 = non_negative(g.oth2, "oth2", ctx)?.unwrap_or(d.oth2);
    if !(0.0 < oth1 && oth1 < oth2 && oth2 <= 1.0) {
        return Err(format!("{ctx}: need 0 < oth1 < oth2 <= 1"));
    }
    let initial_rate_bps = non_negative(g.initial_rate_kbps, "initial_rate_kbps", ctx)?
        .map_or(d.initial_rate_bps, |k| k * 1e3);
    if initial_rate_bps <= 0.0 {
        return Err(format!("{ctx}: initial_rate_kbps must be > 0"));
    }
    let rtt_ms = non_negative(g.rtt_ms, "rtt_ms", ctx)?;
    if rtt_ms.is_some_and(|r| r <= 0.0) {
        return Err(format!("{ctx}: rtt_ms must be > 0"));
    }
    let access_bps = non_negative(g.access_mbps, "access_mbps", ctx)?
        .filter(|m| *m > 0.0)
        .map(|m| (m * 1e6) as u64);
    Ok(Group {
        name: g.name.clone(),
        source: g.source.clone(),
        receivers: g.receivers.clone(),
        start_s,
        stop_s,
        payload_bytes,
        access_bps,
        gamma,
        oth1,
        oth2,
        initial_rate_bps,
        rtt_ms,
    })
}
