//! Linux network namespaces joined by veth pairs, for end-to-end testbeds.
//!
//! Every namespace and veth this module creates is named with the prefix
//! `icnt<pid>x` so that a later run can remove what a crashed run left
//! behind, and everything is removed on drop, also when a test panics.
//! Addresses come from 10.211.0.0/16 and exist only inside these namespaces:
//! no packet of a testbed ever leaves the machine.

#![allow(dead_code)]

use std::io;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// The scheduling of a testbed's forwarders: round-robin real-time
/// priority [`LINK_EMULATOR_RT_PRIORITY`] (`chrt -r`), or niceness
/// [`LINK_EMULATOR_NICE`] where the kernel refuses a real-time policy.
///
/// Every icnfwd of a testbed emulates its links: it paces each face at the
/// link's capacity and holds frames in a delay line. A real link's timing
/// does not depend on how busy the hosts' CPUs are, so the emulators run
/// ahead of the endpoint applications (icncat, icnput, anything else on
/// the machine). Measured on 2 cores with ten 1200-byte RCP flows on a
/// 50 Mbit/s, 150 ms dumbbell (33 processes, about 50 000 context switches
/// per second): at niceness 0 the bottleneck face sent 33-40 Mbit/s while
/// its queue held 20-50 Data, and five runs ended at 80-94 % utilisation
/// with a 19-35 ms p95 queue; with every icnfwd at -10, four runs gave
/// 94-95 % and 2.0, 2.9, 3.7 and 11.6 ms (virtual time: 95 %, 0.6 ms).
/// Niceness only weighs the emulators' share: with a busy loop on the
/// other core (a host running other work) the queue at that point rose in
/// 15-35 ms spikes each time the bottleneck's emulator waited for a core.
/// A real-time policy preempts every ordinary task at once, as the
/// kernel's own link emulation (softirq) would. Three alternating rounds
/// of rcp, mircc, ccc and qsccp there (16 s runs): beside the busy loop,
/// within the 10 ms bound 11 of 12 runs at real-time priority against 4
/// of 12 at -10 (rcp 3.3-20.6 against 15.7-20.3 ms); quiet, 12 of 12
/// against 10 of 12. The kernel's real-time throttling
/// (`sched_rt_runtime_us`, 95 % of each second by default) still leaves
/// the other tasks a share should an emulator spin.
pub const LINK_EMULATOR_RT_PRIORITY: u32 = 1;

/// The niceness of the forwarders where a real-time policy is refused
/// (no `CAP_SYS_NICE`, or a cgroup with no real-time budget). Without
/// root, `nice` warns and runs the forwarder at 0.
pub const LINK_EMULATOR_NICE: i32 = -10;

/// Whether `chrt` can give a process round-robin real-time priority here
/// (asked once, by running `chrt -r N true`).
fn realtime_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| {
        run(&["chrt", "-r", &LINK_EMULATOR_RT_PRIORITY.to_string(), "true"]).is_ok()
    })
}

/// Whether this process can build namespaces (root and a working `ip netns`).
pub fn available() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    root && Command::new("ip")
        .args(["netns", "list"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn run(args: &[&str]) -> io::Result<Output> {
    let out = Command::new(args[0]).args(&args[1..]).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out)
}

/// Removes namespaces left by earlier runs whose process is gone.
pub fn remove_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix("icnt") else {
            continue;
        };
        let pid: u32 = rest
            .split('x')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if pid != 0 && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            kill_all_in(name);
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

fn kill_all_in(ns: &str) {
    if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            let _ = Command::new("kill").args(["-9", pid]).status();
        }
    }
}

/// One network namespace (a testbed node).
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates a namespace with its loopback up.
    pub fn create() -> io::Result<Netns> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let name = format!("icnt{}x{}", std::process::id(), id);
        run(&["ip", "netns", "add", &name])?;
        let ns = Netns { name };
        run(&["ip", "-n", &ns.name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A command that runs `program` inside this namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// A command that runs the link-emulating `icnfwd` at `program` inside
    /// this namespace, at real-time priority [`LINK_EMULATOR_RT_PRIORITY`]
    /// or, where that is refused, at [`LINK_EMULATOR_NICE`].
    pub fn link_emulator_command(&self, program: &str) -> Command {
        if realtime_allowed() {
            let mut c = self.command("chrt");
            c.args(["-r", &LINK_EMULATOR_RT_PRIORITY.to_string(), program]);
            return c;
        }
        let mut c = self.command("nice");
        c.args(["-n", &LINK_EMULATOR_NICE.to_string(), program]);
        c
    }

    /// Runs `ip` or `tc` arguments inside the namespace.
    pub fn ip(&self, args: &[&str]) -> io::Result<Output> {
        let mut full = vec!["ip", "-n", &self.name];
        full.extend_from_slice(args);
        run(&full)
    }

    fn tc(&self, args: &[&str]) -> io::Result<Output> {
        let mut full = vec!["ip", "netns", "exec", &self.name, "tc"];
        full.extend_from_slice(args);
        run(&full)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        kill_all_in(&self.name);
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// One end of a veth link: its interface name and IPv4 address.
#[derive(Debug, Clone)]
pub struct LinkEnd {
    pub ifname: String,
    pub addr: String,
}

/// A veth pair joining two namespaces with a /30 subnet.
#[derive(Debug, Clone)]
pub struct VethLink {
    pub a: LinkEnd,
    pub b: LinkEnd,
}

static NEXT_SUBNET: AtomicU32 = AtomicU32::new(0);

/// Joins `a` and `b` with a veth pair, addresses both ends, brings them up and,
/// when `tbf_rate_bps` is given, puts a token-bucket limit on both ends (set it
/// above the forwarder's own shaping rate so the queue stays in the forwarder).
pub fn connect(a: &Netns, b: &Netns, tbf_rate_bps: Option<u64>) -> io::Result<VethLink> {
    let n = NEXT_SUBNET.fetch_add(1, Ordering::Relaxed);
    let (hi, lo) = ((n * 4) / 256, (n * 4) % 256);
    let end_a = LinkEnd {
        ifname: format!("v{}a{}", std::process::id() % 100_000, n),
        addr: format!("10.211.{hi}.{}", lo + 1),
    };
    let end_b = LinkEnd {
        ifname: format!("v{}b{}", std::process::id() % 100_000, n),
        addr: format!("10.211.{hi}.{}", lo + 2),
    };
    run(&[
        "ip",
        "link",
        "add",
        &end_a.ifname,
        "netns",
        a.name(),
        "type",
        "veth",
        "peer",
        "name",
        &end_b.ifname,
        "netns",
        b.name(),
    ])?;
    for (ns, end) in [(a, &end_a), (b, &end_b)] {
        ns.ip(&[
            "addr",
            "add",
            &format!("{}/30", end.addr),
            "dev",
            &end.ifname,
        ])?;
        ns.ip(&["link", "set", &end.ifname, "up"])?;
        if let Some(rate) = tbf_rate_bps {
            ns.tc(&[
                "qdisc",
                "add",
                "dev",
                &end.ifname,
                "root",
                "tbf",
                "rate",
                &format!("{rate}bit"),
                "burst",
                super::topo::TBF_BURST_TC,
                "latency",
                "100ms",
            ])?;
        }
    }
    Ok(VethLink { a: end_a, b: end_b })
}
