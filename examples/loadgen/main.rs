//! Side-by-side UDP load test: a bare UDP relay, `icnfwd` with
//! `[cc] scheme = "none"` and `icnfwd` with each congestion-control scheme,
//! under the same load in one run.
//!
//! The load: unique names (every exchange crosses PIT, FIB and CS), a fixed
//! window of Interests in flight, Data of a fixed size answered by a
//! separate producer process, UDP on loopback. The bare relay is a process
//! of this example that does no NDN work (receive a batch, send it on) with
//! the same socket code as icnfwd (`icn_forwarder::daemon::mmsg`): the limit
//! for a forwarder process on this machine. Targets run in interleaved
//! rounds (relay, none, pcon, ... then again), each on a fresh process;
//! the table gives the median exchanges/s over rounds, the spread, and the
//! median of each round's ratio to that round's relay.
//!
//! ```text
//! cargo build --release -p icn-forwarder --bin icnfwd && cargo build --release --example loadgen
//! target/release/examples/loadgen                     # relay, none, all six schemes, 3 rounds
//! target/release/examples/loadgen --targets relay,none,qsccp --rounds 5 --exchanges 300000
//! target/release/examples/loadgen --targets relay,none,shard1,shard2 --rounds 5
//! target/release/examples/loadgen --targets relay,none,rcp --routes 100000   # or --faces 10000: daemon table sizes
//! ```
//!
//! `shard1`/`shard2` run icnfwd's sharded engine prototype (`[engine]
//! threads = N`, `sharded = true`, scheme none; `docs/multicore.md`).

mod consumer;
mod net;
mod roles;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use icnfwd_workspace::tlv::Name;

use net::Port;

/// Every target, in the order of a round.
const ALL_TARGETS: &[&str] = &[
    "relay", "none", "pcon", "rcp", "mircc", "ccc", "wincm", "qsccp", "shard1", "shard2",
];
/// The default run: relay, none and the six schemes (the shard targets
/// are asked for with `--targets`).
const DEFAULT_TARGETS: usize = 8;
/// Targets that run the sharded engine prototype (`[engine] threads`,
/// `daemon::shard`) with this many engine threads, scheme none.
fn shard_threads(target: &str) -> Option<usize> {
    target.strip_prefix("shard").and_then(|n| n.parse().ok())
}
/// Capacity given to both faces when a scheme is on: far above what
/// loopback carries here, so the schemes run their per-packet work without
/// ever throttling the load (the measurement is of forwarding cost).
const CAPACITY_BPS: u64 = 10_000_000_000;
/// Flows the window is spread over by default. QSCCP queues at most
/// `flow_queue_capacity` (20) Interests per flow (name minus last
/// component) and Nacks the rest; a whole window of one flow lands in one
/// engine turn before any is dequeued, so with one flow every window over
/// 20 was Nacked in part (measured: 0 Nacks at window 20, 3 567 of 100 000
/// at 21, 22 824 at 32). Eight flows keep 8 of a 64 window per flow;
/// `--flows 1` gives the former load.
const DEFAULT_FLOWS: u64 = 8;

struct Args {
    exchanges: u64,
    window: usize,
    payload_bytes: usize,
    rounds: usize,
    targets: Vec<String>,
    /// Flows the window is spread over (see `consumer::run`).
    flows: u64,
    /// icnfwd's `[tables] cs_max_packets` (its default when absent); 0
    /// turns the Content Store off, to see what storing costs.
    cs_packets: Option<usize>,
    /// Extra static routes (`/fill/<i>` to the producer face) in icnfwd's
    /// configuration: the RIB and FIB sizes the forwarding runs against.
    routes: usize,
    /// Extra idle UDP faces (to unused loopback ports) in icnfwd's
    /// configuration: the face count the forwarding runs against.
    faces: usize,
}

fn usage() -> ! {
    eprintln!(
        "usage: loadgen [--exchanges N] [--window N] [--payload BYTES] [--rounds N] \
         [--flows N] [--cs-packets N] [--routes N] [--faces N] [--targets relay,none,pcon,rcp,mircc,ccc,wincm,qsccp,shard1,shard2]\n       \
         loadgen --role producer PAYLOAD | --role relay UPSTREAM"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut a = Args {
        exchanges: 200_000,
        window: 64,
        payload_bytes: 1024,
        rounds: 3,
        targets: ALL_TARGETS[..DEFAULT_TARGETS]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        flows: DEFAULT_FLOWS,
        cs_packets: None,
        routes: 0,
        faces: 0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
        match k.as_str() {
            "--role" => {
                let arg = it.next().unwrap_or_else(|| usage());
                match v.as_str() {
                    "producer" => roles::producer(arg.parse().unwrap_or_else(|_| usage())),
                    "relay" => roles::relay(arg.parse().unwrap_or_else(|_| usage())),
                    _ => usage(),
                }
                std::process::exit(0);
            }
            "--exchanges" => a.exchanges = v.parse().unwrap_or_else(|_| usage()),
            "--window" => a.window = v.parse().unwrap_or_else(|_| usage()),
            "--payload" => a.payload_bytes = v.parse().unwrap_or_else(|_| usage()),
            "--rounds" => a.rounds = v.parse().unwrap_or_else(|_| usage()),
            "--flows" => a.flows = v.parse().unwrap_or_else(|_| usage()),
            "--cs-packets" => a.cs_packets = Some(v.parse().unwrap_or_else(|_| usage())),
            "--routes" => a.routes = v.parse().unwrap_or_else(|_| usage()),
            "--faces" => a.faces = v.parse().unwrap_or_else(|_| usage()),
            "--targets" => {
                a.targets = v.split(',').map(str::to_string).collect();
                if a.targets.iter().any(|t| !ALL_TARGETS.contains(&t.as_str())) {
                    usage();
                }
            }
            _ => usage(),
        }
    }
    a
}

/// A child process, killed when dropped.
struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts this example in `role` and reads the address it bound.
fn spawn_role(role: &str, arg: &str) -> (Proc, SocketAddr) {
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args(["--role", role, arg])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn helper process");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("helper address");
    let addr = line.trim().parse().expect("helper prints its address");
    (Proc(child), addr)
}

/// `$ICNFWD` if set (to compare two builds), else the `icnfwd` built
/// next to this example.
fn icnfwd_path() -> PathBuf {
    if let Some(p) = std::env::var_os("ICNFWD") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/examples/loadgen -> target/<profile>/icnfwd
    let dir = exe.parent().and_then(|p| p.parent()).expect("target dir");
    dir.join("icnfwd")
}

/// Starts icnfwd for `target`: a scheme (capacities on both faces unless
/// "none") or `shardN` (the sharded engine with N threads, scheme none);
/// returns it with the address consumers talk to.
fn spawn_icnfwd(
    dir: &Path,
    target: &str,
    producer: SocketAddr,
    cs_packets: Option<usize>,
    routes: usize,
    faces: usize,
) -> (Proc, SocketAddr) {
    let (scheme, engine) = match shard_threads(target) {
        Some(n) => ("none", format!("[engine]\nthreads = {n}\nsharded = true\n")),
        None => (target, String::new()),
    };
    let fwd: SocketAddr = {
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").expect("probe port");
        probe.local_addr().expect("addr")
    };
    let cap = |key: &str| {
        if scheme == "none" {
            String::new()
        } else {
            format!("{key} = {CAPACITY_BPS}\n")
        }
    };
    let sock = dir.join(format!("{target}.sock"));
    let cfg = format!(
        "log_level = \"warn\"\n[unix]\npath = \"{sock}\"\n[udp]\nlisten = [\"{fwd}\"]\n{dcap}\
         [tcp]\nenabled = false\n[cc]\nscheme = \"{scheme}\"\n\
         [[face]]\nuri = \"udp4://{producer}\"\n{fcap}\
         [[route]]\nprefix = \"/load\"\nface = \"udp4://{producer}\"\ncost = 0\n{engine}",
        sock = sock.display(),
        dcap = cap("default_capacity_bps"),
        fcap = cap("capacity_bps"),
    );
    let mut cfg = cfg + "[tables]\n";
    if let Some(n) = cs_packets {
        cfg += &format!("cs_max_packets = {n}\n");
    }
    if routes > 0 {
        cfg += &format!("rib_max_routes = {}\n", routes + 16);
    }
    for i in 0..faces {
        // Nothing listens there: the faces exist and stay idle.
        cfg += &format!("[[face]]\nuri = \"udp4://127.0.0.1:{}\"\n", 20_000 + i);
    }
    for i in 0..routes {
        cfg +=
            &format!("[[route]]\nprefix = \"/fill/{i}\"\nface = \"udp4://{producer}\"\ncost = 0\n");
    }
    let cfg_path = dir.join(format!("{target}.toml"));
    std::fs::write(&cfg_path, cfg).expect("write config");
    let _ = std::fs::remove_file(&sock);
    let bin = icnfwd_path();
    let child = Command::new(&bin)
        .arg("--config")
        .arg(&cfg_path)
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "start {}: {e} (cargo build --release --bin icnfwd)",
                bin.display()
            )
        });
    let proc = Proc(child);
    // The Unix socket appears once faces and routes are in place.
    let t0 = Instant::now();
    while !sock.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "icnfwd did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    (proc, fwd)
}

fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // After the command: state is index 0; utime is 11, stime is 12.
    let ticks: f64 = f.get(11).and_then(|s| s.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz.max(1.0)
}

/// One target's figures in one round.
#[derive(Clone, Copy)]
struct Sample {
    rate: f64,
    us_cpu: f64,
    lost: u64,
    nacked: u64,
    drops: u32,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args = parse_args();
    let dir = tempfile::tempdir().expect("tempdir");
    let (_producer, producer) = spawn_role("producer", &args.payload_bytes.to_string());
    let mut port = Port::bind("127.0.0.1:0").expect("bind consumer");
    let run = std::process::id();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); args.targets.len()];
    println!(
        "loadgen: {} exchanges x {} rounds, window {} over {} flows, {} B Data, producer {producer}",
        args.exchanges, args.rounds, args.window, args.flows, args.payload_bytes
    );
    for round in 0..args.rounds {
        for (t, target) in args.targets.iter().enumerate() {
            let (proc, addr) = if target == "relay" {
                spawn_role("relay", &producer.to_string())
            } else {
                spawn_icnfwd(
                    dir.path(),
                    target,
                    producer,
                    args.cs_packets,
                    args.routes,
                    args.faces,
                )
            };
            let prefix: Name = format!("/load/r{run}/{round}/{target}")
                .parse()
                .expect("prefix");
            // A short warm-up: faces created, tables and caches touched.
            let warm: Name = format!("/load/r{run}/{round}/{target}-warm")
                .parse()
                .expect("prefix");
            consumer::run(
                &mut port,
                addr,
                &warm,
                (args.exchanges / 20).max(1000),
                args.window,
                args.flows,
            );
            let cpu0 = cpu_seconds(proc.0.id());
            let r = consumer::run(
                &mut port,
                addr,
                &prefix,
                args.exchanges,
                args.window,
                args.flows,
            );
            let cpu = cpu_seconds(proc.0.id()) - cpu0;
            drop(proc);
            let s = Sample {
                rate: r.received as f64 / r.elapsed.as_secs_f64(),
                us_cpu: 1e6 * cpu / r.received.max(1) as f64,
                lost: r.lost,
                nacked: r.nacked,
                drops: r.kernel_drops,
            };
            println!(
                "round {round} {target:>6}: {:>8.0} exchanges/s, {:.2} us CPU/exchange, {} lost, {} Nacked, {} consumer drops",
                s.rate, s.us_cpu, s.lost, s.nacked, s.drops
            );
            samples[t].push(s);
        }
    }
    let relay = args.targets.iter().position(|t| t == "relay");
    println!();
    println!("| target | exchanges/s (median) | min-max | x relay (median of rounds) | forwarder CPU us/exchange | lost/Nacked |");
    println!("|---|---|---|---|---|---|");
    for (t, target) in args.targets.iter().enumerate() {
        let s = &samples[t];
        let mut rates: Vec<f64> = s.iter().map(|x| x.rate).collect();
        let (lo, hi) = (
            rates.iter().copied().fold(f64::MAX, f64::min),
            rates.iter().copied().fold(0.0, f64::max),
        );
        let med = median(&mut rates);
        let ratio = relay.map(|r| {
            let mut v: Vec<f64> = s
                .iter()
                .zip(&samples[r])
                .map(|(a, b)| a.rate / b.rate)
                .collect();
            median(&mut v)
        });
        let mut cpu: Vec<f64> = s.iter().map(|x| x.us_cpu).collect();
        let lost: u64 = s.iter().map(|x| x.lost).sum();
        let nacked: u64 = s.iter().map(|x| x.nacked).sum();
        println!(
            "| {target} | {:.0} k | {:.0}-{:.0} k | {} | {:.2} | {lost}/{nacked} |",
            med / 1e3,
            lo / 1e3,
            hi / 1e3,
            ratio.map_or("-".to_string(), |r| format!("{r:.2}")),
            median(&mut cpu),
        );
    }
}
