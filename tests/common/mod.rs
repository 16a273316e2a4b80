//! Helpers shared by the process-level tests (consumer_e2e, consumer_mixing,
//! consumer_interop):
//! finding the workspace binaries, killing children on drop, and starting
//! icnfwd / icnput with bounded waits for the events that say they are ready
//! (icnfwd's `READY=1` on `$NOTIFY_SOCKET`, icnput's "Published" line).
#![allow(dead_code, unused_imports)] // each test crate uses its own subset

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

// The process guard and free ports are shared with the forwarder's tests
// (crates/forwarder/tests/interop/harness.rs) through icn-test-support.
// `Proc(child)` is the guard: the child is killed and reaped on drop.
pub use icn_test_support::{free_tcp_port, free_udp_port, KillOnDrop as Proc};

/// How long a child may take to say it is ready (a bound on a failure, not
/// a delay: the waits return as soon as the event arrives).
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Finds a workspace binary next to the test executable (target/<profile>/),
/// running `cargo build` for it (a no-op when up to date) with $CARGO.
///
/// The build selects what `cargo test --workspace` builds (every member's
/// binaries and tests), so that it resolves the same features and finds
/// that run's units up to date. Built with `-p icn-forwarder -p
/// icn-consumer` instead, the dev-dependencies' features dropped out,
/// icnfwd and five libraries were compiled again in the middle of the
/// test step (70 s of CI on 2 cores, measured), and the icnfwd the other
/// tests had used was replaced by another build.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    // Build (or confirm up to date) the binaries once per test process,
    // with the profile of this test, so that a stale binary is never used.
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--workspace", "--bins", "--tests"]);
        if dir.file_name().is_some_and(|p| p == "release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("running cargo build");
        assert!(st.success(), "building the binaries failed");
    });
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} missing after cargo build",
        path.display()
    );
    path
}

/// Starts icnfwd with `log_level = "warn"`, a Unix socket `<tag>.sock` in
/// `dir`, TCP off and `extra` appended to the config; returns once icnfwd
/// has sent `READY=1` (faces, routes and the socket are up).
pub fn forwarder(dir: &Path, tag: &str, extra: &str) -> (Proc, PathBuf) {
    forwarder_sections(dir, tag, &format!("[tcp]\nenabled = false\n{extra}"))
}

/// [`forwarder`] with every section but `log_level` and `[unix]` from
/// `sections` (for tests that want TCP on).
pub fn forwarder_sections(dir: &Path, tag: &str, sections: &str) -> (Proc, PathBuf) {
    let sock = dir.join(format!("{tag}.sock"));
    let cfg = dir.join(format!("{tag}.toml"));
    let text = format!(
        "log_level = \"warn\"\n[unix]\npath = \"{}\"\n{sections}",
        sock.display()
    );
    std::fs::write(&cfg, text).unwrap();
    let notify_path = dir.join(format!("{tag}.notify"));
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify.set_read_timeout(Some(READY_TIMEOUT)).unwrap();
    let child = Command::new(binary("icnfwd"))
        .arg("-c")
        .arg(&cfg)
        .env("NOTIFY_SOCKET", &notify_path)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let fwd = Proc(child);
    let mut buf = [0u8; 256];
    let n = notify
        .recv(&mut buf)
        .unwrap_or_else(|e| panic!("icnfwd {tag}: no READY=1 within {READY_TIMEOUT:?}: {e}"));
    let state = String::from_utf8_lossy(&buf[..n]);
    assert!(
        state.lines().any(|l| l == "READY=1"),
        "icnfwd {tag}: {state}"
    );
    assert!(sock.exists(), "icnfwd {tag} ready without its socket");
    (fwd, sock)
}

/// Reads `pipe` line by line on a thread until a line contains `needle`
/// (`""` takes the first line), for at most [`READY_TIMEOUT`]; returns that
/// line. Later lines are copied to this process's stderr so the child never
/// blocks on a full pipe.
pub fn wait_for_line(pipe: impl std::io::Read + Send + 'static, needle: &str) -> String {
    icn_test_support::wait_for_line(pipe, needle, READY_TIMEOUT)
}

/// Waits for icnput's "Published ..." line, printed once rib/register got
/// its 200 (from then on the forwarder routes the prefix to it).
pub fn wait_published(child: &mut Child) -> String {
    let err = child.stderr.take().expect("icnput stderr piped");
    wait_for_line(err, "Published")
}

/// Starts icnput serving `file` under `name` through the forwarder at
/// `sock`; returns once the prefix is registered.
pub fn publish(sock: &Path, name: &str, file: &Path) -> Proc {
    let child = Command::new(binary("icnput"))
        .args(["--transport", &format!("unix://{}", sock.display()), name])
        .arg(file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut put = Proc(child);
    wait_published(&mut put.0);
    put
}

/// Config lines [`udp_pair`] adds: `b` after B's `[udp] listen`, `face`
/// inside A's `[[face]]`, `a` at the end of A's config.
#[derive(Default)]
pub struct UdpPairExtra {
    pub b: String,
    pub face: String,
    pub a: String,
}

/// Forwarder B listening on UDP, then forwarder A with a UDP face towards
/// `via(B's port)` (B itself, or a relay in front of it) and a route for
/// `prefix` over it. Returns (A, B, A's socket, B's socket).
pub fn udp_pair(
    dir: &Path,
    prefix: &str,
    via: impl FnOnce(u16) -> u16,
    extra: &UdpPairExtra,
) -> (Proc, Proc, PathBuf, PathBuf) {
    let port_b = free_udp_port();
    let port_a = free_udp_port();
    let (b, sock_b) = forwarder(
        dir,
        "b",
        &format!("[udp]\nlisten = [\"127.0.0.1:{port_b}\"]\n{}", extra.b),
    );
    let up = via(port_b);
    let extra_a = format!(
        "[udp]\nlisten = [\"127.0.0.1:{port_a}\"]\n[[face]]\nuri = \"udp4://127.0.0.1:{up}\"\n{}[[route]]\nprefix = \"{prefix}\"\nface = \"udp4://127.0.0.1:{up}\"\ncost = 1\n{}",
        extra.face, extra.a
    );
    let (a, sock_a) = forwarder(dir, "a", &extra_a);
    (a, b, sock_a, sock_b)
}

/// Two forwarders both running `[cc] scheme`, A's face to B and B's
/// on-demand face to A both at `capacity_bps` (A stamps and shapes on its
/// face, B paces the Data it sends back). Returns (A, B, A's socket, B's socket).
pub fn cc_pair(
    dir: &Path,
    scheme: &str,
    prefix: &str,
    capacity_bps: u64,
) -> (Proc, Proc, PathBuf, PathBuf) {
    let cc = format!("[cc]\nscheme = \"{scheme}\"\n");
    let extra = UdpPairExtra {
        b: format!("default_capacity_bps = {capacity_bps}\n{cc}"),
        face: format!("capacity_bps = {capacity_bps}\n"),
        a: cc,
    };
    udp_pair(dir, prefix, |b| b, &extra)
}

/// Test content of `len` bytes (xorshift, so that a misplaced segment
/// shows as a difference).
pub fn content(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Waits at most `limit` for `child` to exit; past it, kills and reaps the
/// child and returns `None` (a bound on a failure, polled every 20 ms).
pub fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let until = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(st),
            Ok(None) if std::time::Instant::now() <= until => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}
