//! `icnfwd status`: reads the status datasets of a running daemon over its
//! Unix socket with the management protocol, and prints them.

use std::fmt::Write as _;
use std::path::Path;

pub use super::client::Client;
use crate::mgmt::dataset::{
    FaceStatus, FibEntry, ForwarderStatus, RibEntryStatus, StrategyChoiceStatus,
};
use crate::mgmt::{FaceState, McastState};

/// Everything `icnfwd status` shows.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub general: ForwarderStatus,
    pub faces: Vec<FaceStatus>,
    /// icnfwd-specific per-face state (empty from other forwarders).
    pub states: Vec<FaceState>,
    pub fib: Vec<FibEntry>,
    pub rib: Vec<RibEntryStatus>,
    pub strategies: Vec<StrategyChoiceStatus>,
    /// The multicast tree node (`None` from forwarders without the dataset).
    pub mcast: Option<McastState>,
    /// Budgets and forwarder-wide drops (`None` from other forwarders).
    pub limits: Option<crate::mgmt::LimitsState>,
    /// The Content Store's figures (`None` without `cs/info`).
    pub cs: Option<crate::mgmt::CsInfo>,
}

/// Renders a snapshot as text.
pub fn render(s: &Snapshot) -> String {
    let mut o = String::new();
    let g = &s.general;
    let up_s = g.current_timestamp_ms.saturating_sub(g.start_timestamp_ms) / 1000;
    let _ = writeln!(o, "General:\n  version={} uptime={}s", g.nfd_version, up_s);
    let _ = writeln!(
        o,
        "  fib={} pit={} cs={} nametree={}",
        g.n_fib_entries, g.n_pit_entries, g.n_cs_entries, g.n_name_tree_entries
    );
    let c = &g.counters;
    let _ = writeln!(
        o,
        "  in: {}i {}d {}n  out: {}i {}d {}n  satisfied={} unsatisfied={}",
        c.n_in_interests,
        c.n_in_data,
        c.n_in_nacks,
        c.n_out_interests,
        c.n_out_data,
        c.n_out_nacks,
        g.n_satisfied_interests,
        g.n_unsatisfied_interests
    );
    if let Some(cs) = &s.cs {
        let _ = writeln!(o, "  {}", render_cs(cs));
    }
    let _ = writeln!(o, "Faces:");
    for f in &s.faces {
        let scope = if f.face_scope == 1 {
            "local"
        } else {
            "non-local"
        };
        let pers = persistency_name(f.face_persistency);
        let link = link_type_name(f.link_type);
        let _ = writeln!(
            o,
            "  faceid={} remote={} local={} {scope} {pers} {link}{} {} flags={:#x}",
            f.face_id,
            f.uri,
            f.local_uri,
            f.mtu.map(|m| format!(" mtu={m}")).unwrap_or_default(),
            render_counters(f),
            f.flags
        );
        if let Some(st) = s.states.iter().find(|st| st.face_id == f.face_id) {
            let _ = writeln!(o, "    {}", render_state(st));
        }
    }
    let _ = writeln!(o, "FIB:");
    for e in &s.fib {
        let hops: Vec<String> = e
            .next_hops
            .iter()
            .map(|(f, c)| format!("faceid={f} (cost={c})"))
            .collect();
        let _ = writeln!(o, "  {} nexthops={{{}}}", e.name, hops.join(", "));
    }
    let _ = writeln!(o, "RIB:");
    for e in &s.rib {
        let routes: Vec<String> = e
            .routes
            .iter()
            .map(|r| {
                let exp = r
                    .expiration_period_ms
                    .map(|m| format!(" expires={m}ms"))
                    .unwrap_or_default();
                format!(
                    "faceid={} origin={} cost={} flags={}{exp}",
                    r.face_id, r.origin, r.cost, r.flags
                )
            })
            .collect();
        let _ = writeln!(o, "  {} routes={{{}}}", e.name, routes.join(", "));
    }
    let _ = writeln!(o, "Strategy choices:");
    for sc in &s.strategies {
        let _ = writeln!(o, "  {} strategy={}", sc.name, sc.strategy);
    }
    if let Some(m) = &s.mcast {
        o.push_str(&render_mcast(m));
    }
    if let Some(l) = &s.limits {
        o.push_str(&l.render());
    }
    o
}

/// A FacePersistency code as nfdc names it.
pub fn persistency_name(p: u64) -> &'static str {
    ["persistent", "on-demand", "permanent"]
        .get(p as usize)
        .copied()
        .unwrap_or("?")
}

/// A LinkType code as nfdc names it.
pub fn link_type_name(t: u64) -> &'static str {
    ["point-to-point", "multi-access", "ad-hoc"]
        .get(t as usize)
        .copied()
        .unwrap_or("?")
}

/// A face's packet counters: `in={1i 2d 0n 345B} out={…}`.
pub fn render_counters(f: &FaceStatus) -> String {
    let c = &f.counters;
    format!(
        "in={{{}i {}d {}n {}B}} out={{{}i {}d {}n {}B}}",
        c.n_in_interests,
        c.n_in_data,
        c.n_in_nacks,
        f.n_in_bytes,
        c.n_out_interests,
        c.n_out_data,
        c.n_out_nacks,
        f.n_out_bytes
    )
}

/// The multicast section: the tree node's counters on one line, then one
/// line per group (upstream, downstream faces, copies, the source's
/// announced rate, this node's fair share C/N and occupancy).
pub fn render_mcast(m: &McastState) -> String {
    let mut o = String::from("Multicast groups:\n");
    let counters: Vec<String> = m.counters.iter().map(|(n, c)| format!("{n}={c}")).collect();
    let _ = writeln!(o, "  {}", counters.join(" "));
    for g in &m.groups {
        let down: Vec<String> = g.downstream.iter().map(u64::to_string).collect();
        let opt =
            |v: Option<u64>, unit: &str| v.map_or_else(|| "-".to_owned(), |v| format!("{v}{unit}"));
        let _ = writeln!(
            o,
            "  {} upstream={} downstream={{{}}} copies={} announced={} seq={} fair-share={} (N={}) occupancy={:.3}",
            g.name,
            opt(g.upstream, ""),
            down.join(","),
            g.copies_sent,
            opt(g.announced_rate_bps, "bps"),
            opt(g.last_seq, ""),
            opt(g.fair_share_bps, "bps"),
            opt(g.flow_count, ""),
            g.occupancy_ppm as f64 / 1e6,
        );
    }
    o
}

/// The Content Store line of `icnfwd status`: what `icnfwd cs info` shows.
pub fn render_cs(cs: &crate::mgmt::CsInfo) -> String {
    let mut line = format!(
        "cs: entries={}/{} hits={} misses={} flags={}",
        cs.n_entries,
        cs.capacity,
        cs.n_hits,
        cs.n_misses,
        cs.flag_names()
    );
    if let (Some(b), Some(max)) = (cs.n_bytes, cs.capacity_bytes) {
        line += &format!(" bytes={b}/{max}");
    }
    line
}

/// One line of icnfwd-specific face state: capacity, egress queue and its
/// sojourn times, frames, congestion marks, drops by reason and the
/// congestion control's rates.
pub fn render_state(st: &FaceState) -> String {
    let cap = st
        .capacity_bps
        .map_or_else(|| "unpaced".to_owned(), |c| format!("{c}bps"));
    let drops: Vec<String> = st.drops.iter().map(|(r, c)| format!("{r}={c}")).collect();
    let mut line = format!(
        "capacity={cap} queue={{{}i/{}B {}d/{}B {}frames}} out-frames={} marked={} drops={{{}}}",
        st.queue_interests,
        st.queue_interest_bytes,
        st.queue_data,
        st.queue_data_bytes,
        st.queue_frames,
        st.n_out_frames,
        st.n_out_marked,
        drops.join(", ")
    );
    let ms = |ns: u64| ns as f64 / 1e6;
    if let (Some(last), Some(p95), Some(max)) =
        (st.sojourn_last_ns, st.sojourn_p95_ns, st.sojourn_max_ns)
    {
        line += &format!(
            " sojourn={{last={:.3}ms p95<={:.3}ms max={:.3}ms}}",
            ms(last),
            ms(p95),
            ms(max)
        );
    }
    for (name, rate) in [
        ("primary-rate", st.primary_rate_bps),
        ("secondary-rate", st.secondary_rate_bps),
        ("target-rate", st.target_rate_bps),
    ] {
        if let Some(r) = rate {
            line += &format!(" {name}={r}bps");
        }
    }
    if st.cc_flows > 0 {
        line += &format!(" cc-flows={}", st.cc_flows);
    }
    if st.penalised_flows > 0 {
        line += &format!(" penalised-flows={}", st.penalised_flows);
    }
    if st.aqm_marks > 0 || st.aqm_episodes > 0 || st.aqm_marking {
        line += &format!(
            " aqm={{marks={} episodes={}{}}}",
            st.aqm_marks,
            st.aqm_episodes,
            if st.aqm_marking { " marking" } else { "" }
        );
    }
    if st.cc_evicted_interests > 0 {
        line += &format!(" cc-evicted={}", st.cc_evicted_interests);
    }
    for s in &st.stamps {
        // Paces travel in milli-Interests/s; shown in Interests/s.
        line += &if s.field.starts_with("pace-") {
            format!(
                " sent-{}={:.3}..{:.3}ips",
                s.field,
                s.min as f64 / 1e3,
                s.max as f64 / 1e3
            )
        } else {
            format!(" sent-{}={}..{}bps", s.field, s.min, s.max)
        };
    }
    if !st.class_capacities.is_empty() {
        let classes: Vec<String> = st
            .class_capacities
            .iter()
            .map(|(c, bps)| format!("{}={bps}", class_name(*c)))
            .collect();
        line += &format!(" class-capacity-bps={{{}}}", classes.join(" "));
    }
    if let Some(u) = &st.uiw {
        line += &format!(
            " wincm-entries={} uin={} uiw={:.2}/{:.2}/{:.2}",
            u.entries,
            u.uin,
            u.min_milli as f64 / 1e3,
            u.mean_milli as f64 / 1e3,
            u.max_milli as f64 / 1e3
        );
    }
    line
}

/// A QSCCP service-class code's name (`cs7` .. `be`).
pub fn class_name(code: u64) -> &'static str {
    cc_core::qsccp::ServiceClass::from_code(code).0.name()
}

/// Connects, fetches and prints; the `icnfwd status` entry point.
pub async fn print_status(socket: &Path) -> anyhow::Result<()> {
    let mut c = Client::connect(socket).await?;
    let snap = c.snapshot().await?;
    print!("{}", render(&snap));
    Ok(())
}
