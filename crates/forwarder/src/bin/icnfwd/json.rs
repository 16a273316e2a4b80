//! `--json` renderings of the management datasets: one stable shape per
//! listing, field names in snake_case with units, for scripts and tests.

use icn_forwarder::daemon::status::Snapshot;
use icn_tlv::nfd::cs_info::{ENABLE_ADMIT, ENABLE_SERVE};
use icn_tlv::nfd::dataset::{
    FaceStatus, FibEntry, ForwarderStatus, RibEntryStatus, StrategyChoiceStatus,
};
use icn_tlv::nfd::{CsInfo, FaceState};
use serde_json::{json, Value};

use icn_forwarder::daemon::status::{class_name, link_type_name, persistency_name};

use crate::ctl::route_flags;

fn face(f: &FaceStatus, st: Option<&FaceState>) -> Value {
    let c = &f.counters;
    json!({
        "face_id": f.face_id,
        "remote_uri": f.uri,
        "local_uri": f.local_uri,
        "scope": if f.face_scope == 1 { "local" } else { "non-local" },
        "persistency": persistency_name(f.face_persistency),
        "link_type": link_type_name(f.link_type),
        "mtu_bytes": f.mtu,
        "flags": f.flags,
        "in": { "interests": c.n_in_interests, "data": c.n_in_data,
                "nacks": c.n_in_nacks, "bytes": f.n_in_bytes },
        "out": { "interests": c.n_out_interests, "data": c.n_out_data,
                 "nacks": c.n_out_nacks, "bytes": f.n_out_bytes },
        "state": st.map(state),
    })
}

fn state(s: &FaceState) -> Value {
    let drops: serde_json::Map<String, Value> =
        s.drops.iter().map(|(r, n)| (r.clone(), json!(n))).collect();
    // What the face sent in the last second, min/max over its flows:
    // `pace_constraint_ips`, `pace_objective_ips` (Interests/s),
    // `target_rate_bps`, `downstream_rate_bps`.
    let stamps: serde_json::Map<String, Value> = s
        .stamps
        .iter()
        .map(|st| {
            let key = st.field.replace('-', "_");
            if st.field.starts_with("pace-") {
                let ips = |m: u64| m as f64 / 1e3;
                (
                    format!("{key}_ips"),
                    json!({ "min": ips(st.min), "max": ips(st.max) }),
                )
            } else {
                (
                    format!("{key}_bps"),
                    json!({ "min": st.min, "max": st.max }),
                )
            }
        })
        .collect();
    let classes: serde_json::Map<String, Value> = s
        .class_capacities
        .iter()
        .map(|(c, bps)| (class_name(*c).to_owned(), json!(bps)))
        .collect();
    json!({
        "capacity_bps": s.capacity_bps,
        "queue_interests": s.queue_interests,
        "queue_interest_bytes": s.queue_interest_bytes,
        "queue_data": s.queue_data,
        "queue_data_bytes": s.queue_data_bytes,
        "queue_frames": s.queue_frames,
        "out_frames": s.n_out_frames,
        "out_marked": s.n_out_marked,
        "drops": drops,
        "primary_rate_bps": s.primary_rate_bps,
        "secondary_rate_bps": s.secondary_rate_bps,
        "target_rate_bps": s.target_rate_bps,
        "sojourn_last_ns": s.sojourn_last_ns,
        "sojourn_p95_ns": s.sojourn_p95_ns,
        "sojourn_max_ns": s.sojourn_max_ns,
        "cc_flows": s.cc_flows,
        "penalised_flows": s.penalised_flows,
        "aqm_marks": s.aqm_marks,
        "aqm_episodes": s.aqm_episodes,
        "aqm_marking": s.aqm_marking,
        "cc_evicted_interests": s.cc_evicted_interests,
        "sent": stamps,
        "class_capacity_bps": classes,
        "wincm_uiw": s.uiw.map(|u| json!({
            "entries": u.entries,
            "uin": u.uin,
            "min": u.min_milli as f64 / 1e3,
            "mean": u.mean_milli as f64 / 1e3,
            "max": u.max_milli as f64 / 1e3,
        })),
    })
}

/// `face list --json`: faces with counters and icnfwd's state (or null).
pub fn faces(faces: &[FaceStatus], states: &[FaceState]) -> Value {
    faces
        .iter()
        .map(|f| face(f, states.iter().find(|s| s.face_id == f.face_id)))
        .collect()
}

/// `route list --json`: one object per (prefix, route).
pub fn routes(rib: &[RibEntryStatus]) -> Value {
    rib.iter()
        .flat_map(|e| {
            e.routes.iter().map(move |r| {
                json!({
                    "prefix": e.name.to_string(),
                    "face_id": r.face_id,
                    "origin": r.origin,
                    "cost": r.cost,
                    "flags": route_flags(r.flags),
                    "expires_ms": r.expiration_period_ms,
                })
            })
        })
        .collect()
}

/// `strategy list --json`.
pub fn strategies(list: &[StrategyChoiceStatus]) -> Value {
    list.iter()
        .map(|s| json!({ "prefix": s.name.to_string(), "strategy": s.strategy.to_string() }))
        .collect()
}

fn fib(list: &[FibEntry]) -> Value {
    list.iter()
        .map(|e| {
            let hops: Vec<Value> = e
                .next_hops
                .iter()
                .map(|(f, c)| json!({ "face_id": f, "cost": c }))
                .collect();
            json!({ "prefix": e.name.to_string(), "nexthops": hops })
        })
        .collect()
}

fn general(g: &ForwarderStatus) -> Value {
    let c = &g.counters;
    json!({
        "version": g.nfd_version,
        "uptime_s": g.current_timestamp_ms.saturating_sub(g.start_timestamp_ms) / 1000,
        "fib_entries": g.n_fib_entries,
        "pit_entries": g.n_pit_entries,
        "cs_entries": g.n_cs_entries,
        "name_tree_entries": g.n_name_tree_entries,
        "in": { "interests": c.n_in_interests, "data": c.n_in_data, "nacks": c.n_in_nacks },
        "out": { "interests": c.n_out_interests, "data": c.n_out_data, "nacks": c.n_out_nacks },
        "satisfied_interests": g.n_satisfied_interests,
        "unsatisfied_interests": g.n_unsatisfied_interests,
    })
}

/// `cs info --json`.
pub fn cs(cs: &CsInfo) -> Value {
    json!({
        "capacity_entries": cs.capacity,
        "capacity_bytes": cs.capacity_bytes,
        "entries": cs.n_entries,
        "bytes": cs.n_bytes,
        "hits": cs.n_hits,
        "misses": cs.n_misses,
        "admit": cs.flags & ENABLE_ADMIT != 0,
        "serve": cs.flags & ENABLE_SERVE != 0,
    })
}

/// `status --json`: everything `icnfwd status` prints.
pub fn snapshot(s: &Snapshot) -> Value {
    let mcast = s.mcast.as_ref().map(|m| {
        let counters: serde_json::Map<String, Value> = m
            .counters
            .iter()
            .map(|(n, c)| (n.clone(), json!(c)))
            .collect();
        json!({ "counters": counters, "groups": m.groups.len() })
    });
    json!({
        "general": general(&s.general),
        "faces": faces(&s.faces, &s.states),
        "fib": fib(&s.fib),
        "routes": routes(&s.rib),
        "strategies": strategies(&s.strategies),
        "multicast": mcast,
        "cs": s.cs.as_ref().map(cs),
    })
}
