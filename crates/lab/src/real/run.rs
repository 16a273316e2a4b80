//! Runs one scenario under one scheme: producers, then consumers at their
//! start times, a sampler reading every relevant node's face counters every
//! 100 ms, and a final read of every node's drop counters.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::bins::Bins;
use super::derive::derive;
use super::mcast::{self, GroupData};
use super::mgmt::{FaceSnapshot, MgmtConn};
use super::topo::{cc_section, cc_supported, Caps, ChildGuard, Testbed};
use crate::results::RunResult;
use crate::scenario::{Flow, Scenario};
use crate::LabError;

/// Sampling period of the face counters.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(100);

/// How long past a flow's stop time icncat may take to stop itself (its
/// `--duration` timer started when it was spawned) before it gets SIGINT.
pub const STOP_GRACE: Duration = Duration::from_millis(1000);

/// Raw observations of one run, turned into figures by `results::derive`.
pub struct RunData {
    pub duration_s: f64,
    /// Seconds since the run's time zero (first flow may start there).
    pub samples: Vec<(f64, String, FaceSnapshot)>,
    pub first: BTreeMap<String, FaceSnapshot>,
    pub last: BTreeMap<String, FaceSnapshot>,
    /// Flow name -> (consumer node, app face id), once it connected.
    pub flow_faces: BTreeMap<String, (String, u64)>,
    /// Flow name -> actual (start, stop) seconds.
    pub flow_times: BTreeMap<String, (f64, f64)>,
    /// Flow name -> icncat's --stats-json, when it wrote one.
    pub flow_stats: BTreeMap<String, serde_json::Value>,
    /// Flow name -> RTT samples in arrival order, from `--log-rtt`
    /// (complete: icncat stops itself at `--duration` and flushes): the
    /// time since icncat's fetch began (s, when the log has it) and the
    /// RTT (ms).
    pub flow_rtts: BTreeMap<String, Vec<(Option<f64>, f64)>>,
    /// Flow name -> the consumer law's sending rate, (seconds since icncat
    /// started, Interests/s) at each change, from `--log-cwnd`.
    pub flow_send_rates: BTreeMap<String, Vec<(f64, f64)>>,
    /// Flow name -> log tail, for flows that exited with an error.
    pub flow_errors: BTreeMap<String, String>,
    /// Measured link index -> (face id on `from`, reverse face id on `to`).
    pub measured_faces: Vec<(u64, Option<u64>)>,
    pub caps: Caps,
    /// Multicast groups; their receivers sit in the flow maps under
    /// `mcast::key` (group@node).
    pub groups: GroupData,
    /// The run's directory (icnput's logs).
    pub dir: PathBuf,
}

/// Stops the sampler thread when the run ends, also on an early error.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Serialises testbed runs inside one test process: they would compete
/// for the two cores and distort each other's figures.
pub fn lock() -> std::sync::MutexGuard<'static, ()> {
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

fn consumer_args(sc: &Scenario, scheme: &str, f: &Flow) -> Vec<String> {
    let mut a = Vec::new();
    let cc = f.cc.clone().unwrap_or_else(|| match scheme {
        "none" => "fixed".to_string(),
        s => s.to_string(),
    });
    a.extend(["--cc".into(), cc.clone()]);
    if cc == "fixed" && f.rate_bps.is_none() {
        a.extend(["--init-cwnd".into(), sc.none_window.to_string()]);
    }
    if let Some(r) = f.rate_bps {
        a.extend(["--rate".into(), format!("{}bps", r.round())]);
    }
    if cc == "ccc" {
        let o = f.objective_bps.unwrap_or(1e9);
        a.extend(["--objective".into(), format!("{}bps", o.round())]);
        if let Some(w) = sc.consumer.ccc_initial_window {
            a.extend(["--ccc-initial-window".into(), w.to_string()]);
        }
        if let Some(p) = sc.consumer.ccc_min_pace_ips {
            a.extend(["--ccc-min-pace".into(), p.to_string()]);
        }
    }
    if cc == "wincm" {
        if let Some(h) = sc.consumer.wincm_hold_after_cut {
            a.extend(["--wincm-hold-after-cut".into(), h.to_string()]);
        }
        if let Some(g) = sc.consumer.wincm_queue_growth_limit {
            a.extend(["--wincm-queue-growth-limit".into(), g.to_string()]);
        }
        if let Some(g) = sc.consumer.wincm_growth_limit_in_congestion {
            a.extend(["--wincm-growth-limit-in-congestion".into(), g.to_string()]);
        }
        if let Some(g) = sc.consumer.wincm_bandwidth_floor {
            a.extend(["--wincm-bandwidth-floor".into(), g.to_string()]);
        }
    }
    if cc == "qsccp" {
        a.extend(["--class".into(), f.class.clone()]);
    }
    if sc.profile != cc_core::Profile::Tuned {
        a.extend(["--profile".into(), sc.profile.name().into()]);
    }
    a
}

fn sparse_file(path: &PathBuf, len: u64) -> Result<(), String> {
    let f = std::fs::File::create(path).map_err(|e| e.to_string())?;
    f.set_len(len.max(1)).map_err(|e| e.to_string())
}

/// Runs the scenario for `duration_s` (flow times scale with it).
pub fn run(
    sc: &Scenario,
    scheme: &str,
    duration_s: f64,
    bins: &Bins,
) -> Result<RunResult, LabError> {
    if let Some(why) = sc.groups.iter().find_map(mcast::unsupported) {
        return Err(LabError::Unsupported(why));
    }
    if let Some(q) = sc.queue_packets {
        // icnfwd bounds its queues in bytes only ([limits] queue_max_bytes).
        eprintln!(
            "testbed: WARNING: queue_packets = {q} is not applied on namespaces (icnfwd has no per-face packet bound); queues run at icnfwd's defaults"
        );
    }
    run_steps(sc, scheme, duration_s, bins).map_err(LabError::Real)
}

/// [`run`], with each step's error as its message.
fn run_steps(
    sc: &Scenario,
    scheme: &str,
    duration_s: f64,
    bins: &Bins,
) -> Result<RunResult, String> {
    let probe_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let caps = Caps::probe(&bins.icnfwd, probe_dir.path());
    if !caps.emulation {
        eprintln!(
            "testbed: WARNING: this icnfwd has no emulated_delay_ms/emulated_loss; links run without propagation delay"
        );
    }
    cc_supported(
        &bins.icnfwd,
        probe_dir.path(),
        &cc_section(sc, scheme, caps),
    )
    .map_err(|e| format!("icnfwd does not accept [cc] scheme = {scheme:?}: {e}"))?;

    let scale = duration_s / sc.duration_s;
    let mut tb = Testbed::build(sc, scheme, bins, caps)?;
    let dir = tb.dir.path().to_path_buf();

    // Producers first: one icnput per flow, serving a sparse file that
    // lasts until the flow's stop time even at the fastest link on the way.
    let max_cap = sc.links.iter().map(|l| l.capacity_bps).max().unwrap_or(1) as f64;
    for f in &sc.flows {
        let len = f.size_bytes.unwrap_or_else(|| {
            ((f.stop_s - f.start_s) * scale * max_cap / 8.0 * 1.5).min(4e9) as u64
        });
        let file = dir.join(format!("{}.obj", f.name));
        sparse_file(&file, len)?;
        let mut cmd = tb.nodes[&f.producer]
            .ns
            .command(bins.icnput.to_str().ok_or("path")?);
        cmd.arg(format!("/{}", f.name))
            .arg(&file)
            .args(["--transport", &tb.transport(&f.producer)])
            .args(["--segment-size", &sc.segment_bytes.to_string()])
            // The file is sized for the fastest link and a run fetches a
            // sliver of it. Signed whole before publishing, ten 4400 B
            // flows meant hashing 1.5 GB per producer, and a sweep point
            // failed on the 10 s registration deadline below.
            .arg("--sign-per-request");
        let log = dir.join(format!("{}.icnput.log", f.name));
        tb.procs
            .push(ChildGuard::spawn(&format!("icnput {}", f.name), cmd, log)?);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    for p in &mut tb.procs {
        while !std::fs::read_to_string(&p.log)
            .unwrap_or_default()
            .contains("Published")
        {
            if !p.alive() || Instant::now() > deadline {
                return Err(format!("{} did not register:\n{}", p.name, p.log_tail(10)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    // Faces of the measured links.
    let mut conns: BTreeMap<String, MgmtConn> = BTreeMap::new();
    for (name, n) in &tb.nodes {
        let c = MgmtConn::connect(&n.sock, Duration::from_secs(5))
            .map_err(|e| format!("mgmt of {name}: {e}"))?;
        conns.insert(name.clone(), c);
    }
    let mut first = BTreeMap::new();
    for (name, c) in &mut conns {
        first.insert(
            name.clone(),
            c.faces().map_err(|e| format!("faces of {name}: {e}"))?,
        );
    }
    let find_face = |snap: &FaceSnapshot, addr: &str| {
        snap.faces
            .iter()
            .find(|f| f.uri == format!("udp4://{addr}:6363"))
            .map(|f| f.face_id)
    };
    let mut measured_faces = Vec::new();
    for m in &sc.measure {
        let to_addr = tb.addr_of(sc, &m.to, &m.from).expect("validated link");
        let from_addr = tb.addr_of(sc, &m.from, &m.to).expect("validated link");
        let fwd = find_face(&first[&m.from], &to_addr)
            .ok_or_else(|| format!("no face on {} towards {}", m.from, m.to))?;
        measured_faces.push((fwd, find_face(&first[&m.to], &from_addr)));
    }

    // Multicast sources wait for their receivers from here on.
    let source_started = mcast::start_sources(sc, &mut tb, bins, &dir)?;

    // The sampler polls consumer nodes (app faces) and measured-link ends.
    let mut polled: BTreeSet<String> = sc.flows.iter().map(|f| f.consumer.clone()).collect();
    for g in &sc.groups {
        polled.insert(g.source.clone());
        polled.extend(g.receivers.iter().cloned());
    }
    for m in &sc.measure {
        polled.insert(m.from.clone());
        polled.insert(m.to.clone());
    }
    let t0 = Instant::now();
    let groups = GroupData {
        source_start_s: source_started
            .iter()
            .map(|s| -t0.saturating_duration_since(*s).as_secs_f64())
            .collect(),
    };
    let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
    let mut sampler_conns: Vec<(String, MgmtConn)> = polled
        .iter()
        .map(|n| {
            MgmtConn::connect(&tb.nodes[n].sock, Duration::from_secs(5))
                .map(|c| (n.clone(), c))
                .map_err(|e| format!("mgmt of {n}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    // One answer on each connection: the daemon has accepted it and its
    // local face exists, so no sampler face is new when a flow starts
    // (a face the daemon accepted late was taken for the first flow's
    // application face: 0.06 Mbit/s of status Data where icncat counted
    // its share).
    for (n, c) in &mut sampler_conns {
        c.faces().map_err(|e| format!("mgmt of {n}: {e}"))?;
    }
    let stop2 = Arc::clone(&stop.0);
    let sampler = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut next = Instant::now();
        while !stop2.load(Ordering::Relaxed) {
            for (n, c) in &mut sampler_conns {
                match c.faces() {
                    Ok(s) => out.push((t0.elapsed().as_secs_f64(), n.clone(), s)),
                    Err(e) => eprintln!("testbed: sampling {n} failed: {e}"),
                }
            }
            next += SAMPLE_PERIOD;
            if let Some(d) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(d);
            }
        }
        out
    });

    // The timeline: start and stop every flow at its (scaled) time.
    // Indices past the flows are multicast receivers (`rx`).
    let rx = mcast::receivers(sc);
    let mut events: Vec<(f64, bool, usize)> = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        events.push((f.start_s * scale, true, i));
        events.push((f.stop_s * scale, false, i));
    }
    for (k, (g, _)) in rx.iter().enumerate() {
        let g = &sc.groups[*g];
        events.push((g.start_s * scale, true, sc.flows.len() + k));
        events.push((g.stop_s * scale, false, sc.flows.len() + k));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut running: BTreeMap<usize, ChildGuard> = BTreeMap::new();
    let mut flow_faces = BTreeMap::new();
    let mut flow_times = BTreeMap::new();
    let mut flow_errors = BTreeMap::new();
    let mut starts = BTreeMap::new();
    for (t, is_start, i) in events {
        let (key, node) = match sc.flows.get(i) {
            Some(f) => (f.name.clone(), f.consumer.clone()),
            None => {
                let (g, n) = &rx[i - sc.flows.len()];
                (mcast::key(&sc.groups[*g], n), n.clone())
            }
        };
        if let Some(d) = Duration::from_secs_f64(t).checked_sub(t0.elapsed()) {
            std::thread::sleep(d);
        }
        if is_start {
            let conn = conns.get_mut(&node).expect("node conn");
            let before: BTreeSet<u64> = conn
                .faces()
                .map_err(|e| e.to_string())?
                .faces
                .iter()
                .map(|x| x.face_id)
                .collect();
            let mut cmd = tb.nodes[&node]
                .ns
                .command(bins.icncat.to_str().ok_or("path")?);
            cmd.args(["--transport", &tb.transport(&node)]);
            match sc.flows.get(i) {
                Some(f) => {
                    cmd.arg(format!("/{}", f.name))
                        .args(["-o", "/dev/null", "-q", "--retries", "-1"])
                        .arg("--stats-json")
                        .arg(dir.join(format!("{}.stats.json", f.name)))
                        .arg("--log-rtt")
                        .arg(dir.join(format!("{}.rtt.tsv", f.name)))
                        .arg("--log-cwnd")
                        .arg(dir.join(format!("{}.cwnd.tsv", f.name)))
                        // icncat stops itself at the flow's stop time and writes
                        // its stats and logs in full (exit status 3).
                        .arg("--duration")
                        .arg(format!(
                            "{:.3}",
                            ((f.stop_s - f.start_s) * scale).max(0.001)
                        ))
                        .args(consumer_args(sc, scheme, f));
                }
                None => {
                    // A receiver joins now and leaves at its group's stop.
                    let g = &sc.groups[rx[i - sc.flows.len()].0];
                    let secs = (g.stop_s - g.start_s) * scale;
                    cmd.args(mcast::receiver_args(sc, g, &node, &dir, secs));
                }
            }
            let log = dir.join(format!("{key}.icncat.log"));
            let started = t0.elapsed().as_secs_f64();
            running.insert(i, ChildGuard::spawn(&format!("icncat {key}"), cmd, log)?);
            starts.insert(i, started);
            // Its app face: the new local face on the consumer's node.
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until {
                let snap = conn.faces().map_err(|e| e.to_string())?;
                if let Some(face) = snap
                    .faces
                    .iter()
                    .filter(|x| x.face_scope == 1 && !before.contains(&x.face_id))
                    .map(|x| x.face_id)
                    .min()
                {
                    flow_faces.insert(key.clone(), (node.clone(), face));
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            if !flow_faces.contains_key(&key) {
                let g = &running[&i];
                flow_errors.insert(
                    key.clone(),
                    format!(
                        "icncat never connected to its forwarder:\n{}",
                        g.log_tail(5)
                    ),
                );
            }
        } else if let Some(mut g) = running.remove(&i) {
            // It was spawned a little after its start event, so its own
            // --duration ends a little after this stop event: wait for that,
            // and only then stop it the hard way (SIGINT, which icncat also
            // handles cleanly, then SIGKILL).
            let until = Instant::now() + STOP_GRACE;
            while g.alive() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            let by_itself = g.stop(Duration::from_millis(1500));
            let stopped = t0.elapsed().as_secs_f64();
            flow_times.insert(key.clone(), (starts[&i], stopped));
            let status = g.child.wait().ok();
            // 0 completed, 3 stopped by --duration, 130 stopped by SIGINT.
            let clean = by_itself && status.is_some_and(|s| matches!(s.code(), Some(0 | 3 | 130)));
            if !clean {
                flow_errors.insert(
                    key.clone(),
                    format!(
                        "icncat ended with {status:?}{}:\n{}",
                        if by_itself { "" } else { " after SIGKILL" },
                        g.log_tail(5)
                    ),
                );
            }
            tb.procs.push(g);
        }
    }
    drop(stop);
    let samples = sampler.join().map_err(|_| "sampler panicked")?;
    if std::env::var_os("ICN_TESTBED_KEEP").is_some_and(|v| v != "0") {
        // The queues behind the figures, for a kept run's post-mortem.
        let mut tsv = String::from(
            "t_s\tnode\tface\tqueue_interests\tqueue_data\tqueue_data_bytes\tin_bytes\tout_bytes\tprimary_rate_bps\tsecondary_rate_bps\ttarget_rate_bps\n",
        );
        for (t, node, snap) in &samples {
            for st in &snap.states {
                let (in_b, out_b) = snap
                    .face(st.face_id)
                    .map_or((0, 0), |f| (f.n_in_bytes, f.n_out_bytes));
                let rate = |r: Option<u64>| r.map_or_else(|| "-".to_string(), |r| r.to_string());
                tsv.push_str(&format!(
                    "{t:.3}\t{node}\t{}\t{}\t{}\t{}\t{in_b}\t{out_b}\t{}\t{}\t{}\n",
                    st.face_id,
                    st.queue_interests,
                    st.queue_data,
                    st.queue_data_bytes,
                    rate(st.primary_rate_bps),
                    rate(st.secondary_rate_bps),
                    rate(st.target_rate_bps)
                ));
            }
        }
        let _ = std::fs::write(dir.join("queues.tsv"), tsv);
    }
    let mut last = BTreeMap::new();
    for (name, c) in &mut conns {
        last.insert(
            name.clone(),
            c.faces().map_err(|e| format!("faces of {name}: {e}"))?,
        );
    }
    let mut flow_stats = BTreeMap::new();
    let keys = sc
        .flows
        .iter()
        .map(|f| f.name.clone())
        .chain(rx.iter().map(|(g, n)| mcast::key(&sc.groups[*g], n)));
    for name in keys {
        let p = dir.join(format!("{name}.stats.json"));
        if let Some(v) = std::fs::read(&p)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        {
            flow_stats.insert(name.clone(), v);
        }
    }
    let mut flow_rtts = BTreeMap::new();
    for f in &sc.flows {
        let p = dir.join(format!("{}.rtt.tsv", f.name));
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        // segment, rtt, rttvar, srtt, rto (ms), time (s since the fetch
        // began; absent in older logs); a header line first.
        let rtts: Vec<(Option<f64>, f64)> = text
            .lines()
            .skip(1)
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let rtt = cols.nth(1)?.parse().ok()?;
                Some((cols.nth(3).and_then(|t| t.parse().ok()), rtt))
            })
            .collect();
        flow_rtts.insert(f.name.clone(), rtts);
    }
    let mut flow_send_rates = BTreeMap::new();
    for f in &sc.flows {
        let p = dir.join(format!("{}.cwnd.tsv", f.name));
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        // time (s since start), then a window or a rate; a header first.
        // Only rate laws log `rate_ips`; window laws give no series here.
        let mut lines = text.lines();
        let rate_log = lines.next().is_some_and(|h| h.contains("rate_ips"));
        let v: Vec<(f64, f64)> = lines
            .filter(|_| rate_log)
            .filter_map(|l| {
                let mut c = l.split('\t');
                Some((c.next()?.parse().ok()?, c.next()?.parse().ok()?))
            })
            .collect();
        flow_send_rates.insert(f.name.clone(), v);
    }
    let mut dead = String::new();
    for (name, n) in &mut tb.nodes {
        if let Some(g) = n.fwd.as_mut() {
            if !g.alive() {
                dead.push_str(&format!("icnfwd on {name} died:\n{}\n", g.log_tail(20)));
            }
        }
    }
    if !dead.is_empty() {
        return Err(dead);
    }
    let data = RunData {
        duration_s,
        samples,
        first,
        last,
        flow_faces,
        flow_times,
        flow_stats,
        flow_rtts,
        flow_send_rates,
        flow_errors,
        measured_faces,
        caps,
        groups,
        dir: dir.clone(),
    };
    Ok(derive(sc, scheme, &data))
}
