//! A status [`Snapshot`] (what `icnfwd status` shows) as OpenMetrics text,
//! through `prometheus-client`. The values are read, never recomputed: a
//! fresh registry is filled from each snapshot, so counters carry the
//! forwarder's own totals.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::config::Tables;
use crate::daemon::status::class_name;
use crate::daemon::status::{persistency_name, Snapshot};
use crate::mgmt::{CsInfo, FaceState, FaceStatus};

type Labels = Vec<(String, String)>;
type U64Gauge = Gauge<u64, AtomicU64>;
type F64Gauge = Gauge<f64, AtomicU64>;

/// The registry being filled, with typed helpers that register a family
/// and hand it back for setting.
struct Exporter(Registry);

impl Exporter {
    fn counter(&mut self, name: &str, help: &str) -> Family<Labels, Counter> {
        let f = Family::<Labels, Counter>::default();
        self.0.register(name, help, f.clone());
        f
    }

    fn gauge(&mut self, name: &str, help: &str) -> Family<Labels, U64Gauge> {
        let f = Family::<Labels, U64Gauge>::default();
        self.0.register(name, help, f.clone());
        f
    }

    fn gauge_f64(&mut self, name: &str, help: &str) -> Family<Labels, F64Gauge> {
        let f = Family::<Labels, F64Gauge>::default();
        self.0.register(name, help, f.clone());
        f
    }
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The OpenMetrics exposition of `s`; `tables` gives the configured table
/// bounds (the memory budgets).
pub fn exposition(s: &Snapshot, tables: &Tables) -> Result<String, std::fmt::Error> {
    let mut e = Exporter(Registry::default());
    forwarder(&mut e, s, tables);
    if let Some(cs) = &s.cs {
        content_store(&mut e, cs);
    }
    faces(&mut e, &s.faces);
    states(&mut e, &s.states);
    cc_states(&mut e, &s.states);
    let mut out = String::with_capacity(16 * 1024);
    encode(&mut out, &e.0)?;
    Ok(out)
}

fn forwarder(e: &mut Exporter, s: &Snapshot, tables: &Tables) {
    let g = &s.general;
    let uptime = e.gauge(
        "icnfwd_uptime_seconds",
        "Seconds since the forwarder started",
    );
    uptime
        .get_or_create(&labels(&[("version", &g.nfd_version)]))
        .set(g.current_timestamp_ms.saturating_sub(g.start_timestamp_ms) / 1000);
    let entries = e.gauge("icnfwd_table_entries", "Entries in a forwarding table");
    for (table, n) in [
        ("pit", g.n_pit_entries),
        ("cs", g.n_cs_entries),
        ("fib", g.n_fib_entries),
        ("name_tree", g.n_name_tree_entries),
        ("measurements", g.n_measurements_entries),
    ] {
        entries.get_or_create(&labels(&[("table", table)])).set(n);
    }
    let bound = e.gauge(
        "icnfwd_table_capacity",
        "Configured bound of a table ([tables]); a full table drops, never grows",
    );
    for (table, unit, n) in [
        ("pit", "entries", tables.pit_max_entries),
        ("cs", "packets", tables.cs_max_packets),
        ("cs", "bytes", tables.cs_max_bytes),
        ("dead_nonce", "entries", tables.dead_nonce_max),
        ("rib", "routes", tables.rib_max_routes),
    ] {
        bound
            .get_or_create(&labels(&[("table", table), ("unit", unit)]))
            .set(n as u64);
    }
    let interests = e.counter(
        "icnfwd_interests_resolved",
        "Interests whose PIT entry was satisfied or expired unsatisfied",
    );
    for (outcome, n) in [
        ("satisfied", g.n_satisfied_interests),
        ("unsatisfied", g.n_unsatisfied_interests),
    ] {
        interests
            .get_or_create(&labels(&[("outcome", outcome)]))
            .inc_by(n);
    }
}

fn faces(e: &mut Exporter, faces: &[FaceStatus]) {
    let info = e.gauge(
        "icnfwd_face_info",
        "One per face: its URIs and persistency (value always 1)",
    );
    let packets = e.counter("icnfwd_face_packets", "Packets a face received or sent");
    let bytes = e.counter("icnfwd_face_bytes", "Bytes a face received or sent");
    for f in faces {
        let id = f.face_id.to_string();
        let pers = persistency_name(f.face_persistency);
        info.get_or_create(&labels(&[
            ("face", &id),
            ("remote", &f.uri),
            ("local", &f.local_uri),
            ("persistency", pers),
        ]))
        .set(1);
        let c = &f.counters;
        for (dir, typ, n) in [
            ("in", "interest", c.n_in_interests),
            ("in", "data", c.n_in_data),
            ("in", "nack", c.n_in_nacks),
            ("out", "interest", c.n_out_interests),
            ("out", "data", c.n_out_data),
            ("out", "nack", c.n_out_nacks),
        ] {
            packets
                .get_or_create(&labels(&[("face", &id), ("direction", dir), ("type", typ)]))
                .inc_by(n);
        }
        for (dir, n) in [("in", f.n_in_bytes), ("out", f.n_out_bytes)] {
            bytes
                .get_or_create(&labels(&[("face", &id), ("direction", dir)]))
                .inc_by(n);
        }
    }
}

fn states(e: &mut Exporter, states: &[FaceState]) {
    let capacity = e.gauge(
        "icnfwd_face_capacity_bps",
        "Configured link capacity the face is paced at, bit/s (absent: unpaced)",
    );
    let queue_packets = e.gauge(
        "icnfwd_face_queue_packets",
        "Packets waiting on the face (interest: FIFO plus those held by the CC shaper/scheduler)",
    );
    let queue_bytes = e.gauge(
        "icnfwd_face_queue_bytes",
        "Bytes waiting in the face's FIFOs",
    );
    let frames = e.gauge(
        "icnfwd_face_queue_frames",
        "Encoded fragments awaiting release",
    );
    let sojourn = e.gauge_f64(
        "icnfwd_face_sojourn_seconds",
        "Queueing delay of packets that left the face: last, p95 (log2 bucket edge) and max since creation",
    );
    let out_frames = e.counter("icnfwd_face_out_frames", "Frames the face sent");
    let marked = e.counter(
        "icnfwd_face_congestion_marks",
        "Packets the face sent with a congestion mark",
    );
    let drops = e.counter("icnfwd_face_drops", "Packets the face dropped, by reason");
    let rate = e.gauge(
        "icnfwd_face_cc_rate_bps",
        "Congestion-control rate on the face, bit/s: primary = stamped RCP R / MIRCC Rp, secondary = MIRCC Rs, target = QSCCP best-effort class capacity / CCC used bandwidth (eq. 12 estimate)",
    );
    let flows = e.gauge(
        "icnfwd_face_cc_flows",
        "Flows the face's scheme tracks (tracked: QSCCP scheduler or CCC; penalised: QSCCP greedy flows so far)",
    );
    for st in states {
        let id = st.face_id.to_string();
        let face = labels(&[("face", &id)]);
        if let Some(c) = st.capacity_bps {
            capacity.get_or_create(&face).set(c);
        }
        for (q, n, b) in [
            ("interest", st.queue_interests, st.queue_interest_bytes),
            ("data", st.queue_data, st.queue_data_bytes),
        ] {
            let l = labels(&[("face", &id), ("queue", q)]);
            queue_packets.get_or_create(&l).set(n);
            queue_bytes.get_or_create(&l).set(b);
        }
        frames.get_or_create(&face).set(st.queue_frames);
        for (stat, ns) in [
            ("last", st.sojourn_last_ns),
            ("p95", st.sojourn_p95_ns),
            ("max", st.sojourn_max_ns),
        ] {
            if let Some(ns) = ns {
                sojourn
                    .get_or_create(&labels(&[("face", &id), ("stat", stat)]))
                    .set(ns as f64 / 1e9);
            }
        }
        out_frames.get_or_create(&face).inc_by(st.n_out_frames);
        marked.get_or_create(&face).inc_by(st.n_out_marked);
        for (reason, n) in &st.drops {
            drops
                .get_or_create(&labels(&[("face", &id), ("reason", reason)]))
                .inc_by(*n);
        }
        for (which, r) in [
            ("primary", st.primary_rate_bps),
            ("secondary", st.secondary_rate_bps),
            ("target", st.target_rate_bps),
        ] {
            if let Some(r) = r {
                rate.get_or_create(&labels(&[("face", &id), ("rate", which)]))
                    .set(r);
            }
        }
        for (kind, n) in [("tracked", st.cc_flows), ("penalised", st.penalised_flows)] {
            flows
                .get_or_create(&labels(&[("face", &id), ("kind", kind)]))
                .set(n);
        }
    }
}

fn content_store(e: &mut Exporter, cs: &CsInfo) {
    if let Some(b) = cs.n_bytes {
        e.gauge(
            "icnfwd_cs_bytes",
            "Wire bytes of the Data in the Content Store",
        )
        .get_or_create(&Vec::new())
        .set(b);
    }
    let lookups = e.counter(
        "icnfwd_cs_lookups",
        "Content Store lookups of incoming Interests, by result (hit: answered from the store)",
    );
    for (result, n) in [("hit", cs.n_hits), ("miss", cs.n_misses)] {
        lookups
            .get_or_create(&labels(&[("result", result)]))
            .inc_by(n);
    }
}

/// Per-face congestion-control state beyond the rates: the AQM's marks,
/// what the face told its neighbours in the last second, QSCCP's classes.
fn cc_states(e: &mut Exporter, states: &[FaceState]) {
    let aqm_marks = e.counter(
        "icnfwd_face_aqm_marks",
        "Data the face's AQM marked (PCON CoDel, WinCM multi-marking); marks from upstream excluded",
    );
    let aqm_episodes = e.counter(
        "icnfwd_face_aqm_episodes",
        "Congestion episodes the face's AQM entered",
    );
    let aqm_marking = e.gauge(
        "icnfwd_face_aqm_marking",
        "1 while the face's AQM is in its marking state",
    );
    let evicted = e.counter(
        "icnfwd_face_cc_evicted_interests",
        "Interests the MIRCC shaper evicted (and Nacked) for primary-class ones",
    );
    let pace = e.gauge_f64(
        "icnfwd_face_cc_sent_pace_ips",
        "CCC pace the face sent in the last second, Interests/s, range over flows: constraint on Data (eq. 9), objective on Interests",
    );
    let rate = e.gauge(
        "icnfwd_face_cc_sent_rate_bps",
        "QSCCP rate the face sent in the last second, bit/s, range over flows: target = PECN R on Data, downstream = DownstreamRate on Interests",
    );
    let class_cap = e.gauge(
        "icnfwd_face_qsccp_class_capacity_bps",
        "QSCCP PECN capacity B_c of each service class on the face in the last period, bit/s",
    );
    let uiw = e.gauge_f64(
        "icnfwd_face_wincm_uiw",
        "WinCM unsatisfied-Interest window over the face's (content, face) entries: min, mean, max",
    );
    let uiw_entries = e.gauge(
        "icnfwd_face_wincm_entries",
        "WinCM (content, face) entries naming the face",
    );
    let uin = e.gauge(
        "icnfwd_face_wincm_uin",
        "WinCM unsatisfied Interests on the face, summed over its entries",
    );
    for st in states {
        let id = st.face_id.to_string();
        let face = labels(&[("face", &id)]);
        if let Some(u) = &st.uiw {
            uiw_entries.get_or_create(&face).set(u.entries);
            uin.get_or_create(&face).set(u.uin);
            for (stat, v) in [
                ("min", u.min_milli),
                ("mean", u.mean_milli),
                ("max", u.max_milli),
            ] {
                uiw.get_or_create(&labels(&[("face", &id), ("stat", stat)]))
                    .set(v as f64 / 1000.0);
            }
        }
        aqm_marks.get_or_create(&face).inc_by(st.aqm_marks);
        aqm_episodes.get_or_create(&face).inc_by(st.aqm_episodes);
        aqm_marking
            .get_or_create(&face)
            .set(u64::from(st.aqm_marking));
        evicted.get_or_create(&face).inc_by(st.cc_evicted_interests);
        for s in &st.stamps {
            let (field, milli) = match s.field.as_str() {
                "pace-constraint" => ("constraint", true),
                "pace-objective" => ("objective", true),
                "target-rate" => ("target", false),
                "downstream-rate" => ("downstream", false),
                _ => continue,
            };
            for (stat, v) in [("min", s.min), ("max", s.max)] {
                let l = labels(&[("face", &id), ("field", field), ("stat", stat)]);
                if milli {
                    pace.get_or_create(&l).set(v as f64 / 1000.0);
                } else {
                    rate.get_or_create(&l).set(v);
                }
            }
        }
        for (code, bps) in &st.class_capacities {
            class_cap
                .get_or_create(&labels(&[("face", &id), ("class", class_name(*code))]))
                .set(*bps);
        }
    }
}
