//! A running testbed: one namespace and one icnfwd per scenario node, veth
//! links with a tbf limit above the forwarders' own capacity, and the
//! consumer/producer processes. Everything is torn down on drop (processes
//! first, then namespaces), also when a test panics.

use cc_core::Profile;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::bins::Bins;
use super::netns::{self, Netns, VethLink};
use crate::scenario::Scenario;

/// The tc limit on a veth: above the forwarder's shaping rate so the queue
/// stays inside icnfwd, where the congestion-control laws can see it (the
/// virtual network's `Wire::testbed` models it).
pub use icn_sim::net::testbed_tbf_rate_bps as tbf_rate_bps;

/// The depth of that limit in tc's units (`kb`: KiB), the
/// `icn_sim::net::TESTBED_TBF_BURST_BYTES` the virtual network models.
pub const TBF_BURST_TC: &str = "64kb";

/// A child process killed (SIGKILL) and reaped on drop.
pub struct ChildGuard {
    pub name: String,
    pub child: Child,
    pub log: PathBuf,
}

impl ChildGuard {
    pub fn spawn(name: &str, mut cmd: Command, log: PathBuf) -> Result<ChildGuard, String> {
        let f = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(f));
        let child = cmd.spawn().map_err(|e| format!("spawning {name}: {e}"))?;
        Ok(ChildGuard {
            name: name.to_string(),
            child,
            log,
        })
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGINT, then SIGKILL after `grace`. Returns whether it exited by itself.
    pub fn stop(&mut self, grace: Duration) -> bool {
        if !self.alive() {
            return true;
        }
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on a child we spawned and have not reaped.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if !self.alive() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }

    /// The last `n` lines of its stderr.
    pub fn log_tail(&self, n: usize) -> String {
        log_tail(&self.log, n)
    }
}

pub fn log_tail(path: &Path, n: usize) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the icnfwd binary accepts, probed with `icnfwd check-config`.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// `emulated_delay_ms` / `emulated_loss` on `[[face]]`.
    pub emulation: bool,
    /// `period_ms` in `[cc]`.
    pub cc_period: bool,
}

fn check_config(icnfwd: &Path, dir: &Path, text: &str) -> Result<(), String> {
    let p = dir.join("probe.toml");
    std::fs::write(&p, text).map_err(|e| e.to_string())?;
    let out = Command::new(icnfwd)
        .arg("--config")
        .arg(&p)
        .arg("check-config")
        .output()
        .map_err(|e| format!("running icnfwd: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

impl Caps {
    pub fn probe(icnfwd: &Path, dir: &Path) -> Caps {
        let face = "[[face]]\nuri = \"udp4://127.0.0.1:6363\"\ncapacity_bps = 1000000\n";
        Caps {
            emulation: check_config(
                icnfwd,
                dir,
                &format!("{face}emulated_delay_ms = 1\nemulated_loss = 0.0\n"),
            )
            .is_ok(),
            cc_period: check_config(icnfwd, dir, "[cc]\nscheme = \"none\"\nperiod_ms = 100\n")
                .is_ok(),
        }
    }
}

/// Whether icnfwd accepts this `[cc]` table.
pub fn cc_supported(icnfwd: &Path, dir: &Path, cc: &str) -> Result<(), String> {
    check_config(icnfwd, dir, cc)
}

/// The `[cc]` table of a node: the scheme (which also makes its strategy
/// the strategy of `/`), the control period and the scenario's
/// `[cc_<scheme>]` parameters as `[cc.<scheme>]`.
pub fn cc_section(sc: &Scenario, scheme: &str, caps: Caps) -> String {
    let mut c = format!("[cc]\nscheme = \"{scheme}\"\n");
    if caps.cc_period {
        let _ = writeln!(c, "period_ms = {}", sc.cc_period_ms);
    }
    let extra = sc.cc_extra.get(scheme);
    // `none` has no table; `tuned` is icnfwd's default and not written, so
    // the tuned table is the one icnfwd ran before profiles existed.
    let paper = sc.profile == Profile::Paper && scheme != "none";
    if extra.is_some() || paper {
        let _ = writeln!(c, "[cc.{scheme}]");
    }
    if paper {
        let _ = writeln!(c, "profile = \"{}\"", sc.profile.name());
    }
    for (k, v) in extra.into_iter().flatten() {
        let _ = writeln!(c, "{k} = {}", toml_value(v));
    }
    if !sc.multicast_groups.is_empty() {
        c.push_str("[multicast_groups]\n");
        for (k, v) in &sc.multicast_groups {
            let _ = writeln!(c, "{k} = {}", toml_value(v));
        }
    }
    c
}

/// `key = value` lines for a JSON value from a scenario's `[cc_<scheme>]`.
pub fn toml_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

pub struct NodeRt {
    pub ns: Netns,
    pub sock: PathBuf,
    pub fwd: Option<ChildGuard>,
}

/// One live testbed.
pub struct Testbed {
    /// Declared first so processes die before their namespaces go.
    pub procs: Vec<ChildGuard>,
    pub nodes: BTreeMap<String, NodeRt>,
    /// Scenario link index -> veth (a end = scenario `a`).
    pub veths: Vec<VethLink>,
    pub dir: tempfile::TempDir,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
        for n in self.nodes.values_mut() {
            if let Some(f) = n.fwd.as_mut() {
                let _ = f.child.kill();
                let _ = f.child.wait();
            }
        }
        // Netns drop kills anything left inside and deletes the namespace.
        if std::env::var_os("ICN_TESTBED_KEEP").is_some_and(|v| v != "0") {
            self.dir.disable_cleanup(true);
            eprintln!(
                "testbed: kept configs and logs in {}",
                self.dir.path().display()
            );
        }
    }
}

impl Testbed {
    /// Creates namespaces and links, writes configs and starts every icnfwd.
    pub fn build(sc: &Scenario, scheme: &str, bins: &Bins, caps: Caps) -> Result<Testbed, String> {
        netns::remove_stale();
        let dir = tempfile::Builder::new()
            .prefix("icn-testbed-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let mut tb = Testbed {
            procs: Vec::new(),
            nodes: BTreeMap::new(),
            veths: Vec::new(),
            dir,
        };
        for n in &sc.nodes {
            let ns = Netns::create().map_err(|e| format!("netns for {}: {e}", n.name))?;
            let sock = tb.dir.path().join(format!("{}.sock", n.name));
            tb.nodes.insert(
                n.name.clone(),
                NodeRt {
                    ns,
                    sock,
                    fwd: None,
                },
            );
        }
        for l in &sc.links {
            let v = netns::connect(
                &tb.nodes[&l.a].ns,
                &tb.nodes[&l.b].ns,
                Some(tbf_rate_bps(l.capacity_bps)),
            )
            .map_err(|e| format!("link {}-{}: {e}", l.a, l.b))?;
            tb.veths.push(v);
        }
        for n in &sc.nodes {
            let cfg = tb.node_config(sc, scheme, &n.name, caps);
            let path = tb.dir.path().join(format!("{}.toml", n.name));
            std::fs::write(&path, &cfg).map_err(|e| e.to_string())?;
            let node = &tb.nodes[&n.name];
            let mut cmd = node
                .ns
                .link_emulator_command(bins.icnfwd.to_str().ok_or("non-UTF-8 path")?);
            cmd.arg("--config").arg(&path);
            let log = tb.dir.path().join(format!("{}.icnfwd.log", n.name));
            let g = ChildGuard::spawn(&format!("icnfwd@{}", n.name), cmd, log)?;
            tb.nodes.get_mut(&n.name).expect("inserted").fwd = Some(g);
        }
        // Ready when the socket accepts; an early exit is a config problem.
        let deadline = Instant::now() + Duration::from_secs(10);
        for (name, n) in &mut tb.nodes {
            loop {
                let f = n.fwd.as_mut().expect("started");
                if !f.alive() {
                    return Err(format!(
                        "icnfwd on {name} exited at start:\n{}",
                        f.log_tail(20)
                    ));
                }
                if std::os::unix::net::UnixStream::connect(&n.sock).is_ok() {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "icnfwd on {name} did not open {}",
                        n.sock.display()
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(tb)
    }

    /// The address of `node`'s end of the link to `peer`.
    pub fn addr_of(&self, sc: &Scenario, node: &str, peer: &str) -> Option<String> {
        sc.links.iter().zip(&self.veths).find_map(|(l, v)| {
            if l.a == node && l.b == peer {
                Some(v.a.addr.clone())
            } else if l.b == node && l.a == peer {
                Some(v.b.addr.clone())
            } else {
                None
            }
        })
    }

    /// The URI of `node`'s face towards `peer`.
    pub fn face_uri(&self, sc: &Scenario, node: &str, peer: &str) -> String {
        format!(
            "udp4://{}:6363",
            self.addr_of(sc, peer, node).expect("link exists")
        )
    }

    /// icnfwd's TOML for one node.
    pub fn node_config(&self, sc: &Scenario, scheme: &str, node: &str, caps: Caps) -> String {
        let sock = &self.nodes[node].sock;
        let mut c = String::new();
        let _ = writeln!(
            c,
            "# generated by the icnfwd testbed: scenario {}, scheme {scheme}",
            sc.name
        );
        // ICN_TESTBED_LOG overrides the daemons' filter for a post-mortem
        // (e.g. `icn_forwarder::cc=trace`; logs land in the kept run dir).
        let level = std::env::var("ICN_TESTBED_LOG").unwrap_or_else(|_| "warn".into());
        let _ = writeln!(c, "log_level = {level:?}");
        // A small Content Store: every flow has its own name, so caching
        // only costs memory here.
        let _ = writeln!(c, "[tables]\ncs_max_packets = 256\ncs_max_bytes = 4194304");
        let _ = writeln!(
            c,
            "[unix]\nenabled = true\npath = {:?}",
            sock.display().to_string()
        );
        let _ = writeln!(c, "[udp]\nenabled = true\nlisten = [\"0.0.0.0:6363\"]");
        let _ = writeln!(c, "[tcp]\nenabled = false");
        c.push_str(&cc_section(sc, scheme, caps));
        for peer in sc.neighbours(node) {
            let l = sc.link(node, peer).expect("neighbour has a link");
            let _ = writeln!(c, "[[face]]\nuri = \"{}\"", self.face_uri(sc, node, peer));
            let _ = writeln!(c, "capacity_bps = {}", l.capacity_bps);
            if caps.emulation {
                let _ = writeln!(c, "emulated_delay_ms = {}", l.delay_ms.round() as u64);
                let _ = writeln!(c, "emulated_loss = {:?}", l.loss);
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for f in &sc.flows {
            for (n, via, cost) in sc.routes_for(f) {
                if n == node && seen.insert((f.name.clone(), via.clone())) {
                    let _ = writeln!(
                        c,
                        "[[route]]\nprefix = \"/{}\"\nface = \"{}\"\ncost = {cost}",
                        f.name,
                        self.face_uri(sc, node, &via)
                    );
                }
            }
        }
        // A multicast group's tree: one upstream per node, towards the source.
        for g in &sc.groups {
            for (n, via) in sc.group_routes(g) {
                if n == node {
                    let _ = writeln!(
                        c,
                        "[[route]]\nprefix = \"{}\"\nface = \"{}\"\ncost = 10",
                        g.prefix(),
                        self.face_uri(sc, node, &via)
                    );
                }
            }
        }
        c
    }

    /// `unix:///path` of a node's socket.
    pub fn transport(&self, node: &str) -> String {
        format!("unix://{}", self.nodes[node].sock.display())
    }

    /// Logs of every forwarder (tail), for failure messages.
    pub fn forwarder_logs(&self, n: usize) -> String {
        let mut s = String::new();
        for (name, node) in &self.nodes {
            if let Some(f) = &node.fwd {
                let t = f.log_tail(n);
                if !t.is_empty() {
                    let _ = writeln!(s, "--- icnfwd@{name}:\n{t}");
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The depth tc is given is the one the virtual network models.
    #[test]
    fn the_tc_burst_is_the_modelled_one() {
        let kib: u64 = TBF_BURST_TC
            .strip_suffix("kb")
            .and_then(|n| n.parse().ok())
            .expect("a size in KiB");
        assert_eq!(kib * 1024, icn_sim::net::TESTBED_TBF_BURST_BYTES);
    }
}
