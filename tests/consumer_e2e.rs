//! End to end over real processes on loopback: icnfwd, icnput, icncat.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Finds a workspace binary next to the test executable (target/<profile>/),
/// running `cargo build` for it (a no-op when up to date) with $CARGO.
fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    // Build (or confirm up to date) the three binaries once per test process,
    // with the profile of this test, so that a stale binary is never used.
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "-p",
            "icn-forwarder",
            "--bin",
            "icnfwd",
            "-p",
            "icn-consumer",
            "--bin",
            "icncat",
            "--bin",
            "icnput",
        ]);
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

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{} did not appear",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn forwarder(dir: &Path, tag: &str, extra: &str) -> (Proc, PathBuf) {
    let sock = dir.join(format!("{tag}.sock"));
    let cfg = dir.join(format!("{tag}.toml"));
    let text = format!(
        "log_level = \"warn\"\n[unix]\npath = \"{}\"\n[tcp]\nenabled = false\n{extra}",
        sock.display()
    );
    std::fs::write(&cfg, text).unwrap();
    let child = Command::new(binary("icnfwd"))
        .arg("-c")
        .arg(&cfg)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&sock);
    (Proc(child), sock)
}

fn publish(sock: &Path, name: &str, file: &Path) -> Proc {
    let mut child = Command::new(binary("icnput"))
        .args(["--transport", &format!("unix://{}", sock.display()), name])
        .arg(file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // icnput prints "Published ..." once the prefix is registered.
    let mut err = child.stderr.take().unwrap();
    let mut buf = [0u8; 256];
    let n = std::io::Read::read(&mut err, &mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).contains("Published"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    // The forwarder may answer rib/register a moment before the FIB entry
    // is usable (NoRoute seen otherwise); give it that moment.
    std::thread::sleep(Duration::from_millis(300));
    Proc(child)
}

fn fetch(sock: &Path, name: &str, out: &Path, extra: &[&str]) -> String {
    let o = Command::new(binary("icncat"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            name,
            "-o",
        ])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "icncat {extra:?} failed: {err}");
    err
}

fn content(len: usize) -> Vec<u8> {
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

const SIZE: usize = if cfg!(debug_assertions) {
    2_000_000
} else {
    50_000_000
};

/// Extra flags so that rate schemes do not crawl at their paper initial rate
/// when no forwarder on the path stamps rates.
fn flags(cc: &str) -> Vec<&str> {
    let mut v = vec!["--cc", cc];
    if matches!(cc, "rcp" | "mircc" | "qsccp") {
        v.extend(["--rate", "400Mbps"]);
    }
    if cc == "ccc" {
        v.extend(["--objective", "400Mbps"]);
    }
    v
}

const SCHEMES: [&str; 10] = [
    "none", "fixed", "aimd", "cubic", "pcon", "rcp", "mircc", "ccc", "wincm", "qsccp",
];

#[test]
fn one_forwarder_every_scheme_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "a", "[udp]\nenabled = false\n");
    let input = dir.path().join("in.bin");
    let body = content(SIZE);
    std::fs::write(&input, &body).unwrap();
    for cc in SCHEMES {
        // One object per scheme, so that no fetch is served by the Content Store.
        let name = format!("/e2e/one/{cc}");
        let _put = publish(&sock, &name, &input);
        let out = dir.path().join(format!("out-{cc}.bin"));
        let summary = fetch(&sock, &name, &out, &flags(cc));
        assert!(
            summary.contains("All segments have been received."),
            "{summary}"
        );
        assert!(
            summary.contains(&format!("Congestion control: {cc}")),
            "{summary}"
        );
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{cc}: content differs"
        );
    }
}

#[test]
fn two_forwarders_over_udp_every_scheme_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let port_b = free_udp_port();
    let port_a = free_udp_port();
    let (_b, sock_b) = forwarder(
        dir.path(),
        "b",
        &format!("[udp]\nlisten = [\"127.0.0.1:{port_b}\"]\n"),
    );
    let extra_a = format!(
        "[udp]\nlisten = [\"127.0.0.1:{port_a}\"]\n[[face]]\nuri = \"udp4://127.0.0.1:{port_b}\"\n[[route]]\nprefix = \"/e2e/two\"\nface = \"udp4://127.0.0.1:{port_b}\"\ncost = 1\n"
    );
    let (_a, sock_a) = forwarder(dir.path(), "a", &extra_a);
    // Static faces and routes come up just after the socket does.
    std::thread::sleep(Duration::from_millis(1000));
    let input = dir.path().join("in.bin");
    let body = content(SIZE / 2);
    std::fs::write(&input, &body).unwrap();
    for cc in SCHEMES {
        let name = format!("/e2e/two/{cc}");
        let _put = publish(&sock_b, &name, &input);
        let out = dir.path().join(format!("out-{cc}.bin"));
        fetch(&sock_a, &name, &out, &flags(cc));
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{cc}: content differs"
        );
    }
}

/// Relays UDP between two forwarders and drops every `drop_every`-th
/// datagram in each direction (the daemon has no loss-emulation option).
fn lossy_relay(upstream: std::net::SocketAddr, drop_every: u64) -> (u16, Arc<AtomicBool>) {
    let front = UdpSocket::bind("127.0.0.1:0").unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
    back.connect(upstream).unwrap();
    front
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    back.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let port = front.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let downstream: Arc<Mutex<Option<std::net::SocketAddr>>> = Arc::default();
    for towards_upstream in [true, false] {
        let (front, back) = (front.try_clone().unwrap(), back.try_clone().unwrap());
        let (stop, downstream) = (stop.clone(), downstream.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if towards_upstream {
                    if let Ok((len, from)) = front.recv_from(&mut buf) {
                        *downstream.lock().unwrap() = Some(from);
                        n += 1;
                        if n % drop_every != 0 {
                            let _ = back.send(&buf[..len]);
                        }
                    }
                } else if let Ok(len) = back.recv(&mut buf) {
                    n += 1;
                    let to = *downstream.lock().unwrap();
                    if let (Some(to), true) = (to, n % drop_every != 0) {
                        let _ = front.send_to(&buf[..len], to);
                    }
                }
            }
        });
    }
    (port, stop)
}

#[test]
fn lossy_link_still_gives_identical_content_and_counts_retransmissions() {
    let dir = tempfile::tempdir().unwrap();
    let port_b = free_udp_port();
    let port_a = free_udp_port();
    let (_b, sock_b) = forwarder(
        dir.path(),
        "b",
        &format!("[udp]\nlisten = [\"127.0.0.1:{port_b}\"]\n"),
    );
    let (relay_port, stop) = lossy_relay(format!("127.0.0.1:{port_b}").parse().unwrap(), 20);
    let extra_a = format!(
        "[udp]\nlisten = [\"127.0.0.1:{port_a}\"]\n[[face]]\nuri = \"udp4://127.0.0.1:{relay_port}\"\n[[route]]\nprefix = \"/e2e/lossy\"\nface = \"udp4://127.0.0.1:{relay_port}\"\ncost = 1\n"
    );
    let (_a, sock_a) = forwarder(dir.path(), "a", &extra_a);
    std::thread::sleep(Duration::from_millis(1000));
    let input = dir.path().join("in.bin");
    let body = content(SIZE / 4);
    std::fs::write(&input, &body).unwrap();
    for cc in ["cubic", "aimd", "fixed"] {
        let name = format!("/e2e/lossy/{cc}");
        let _put = publish(&sock_b, &name, &input);
        let out = dir.path().join(format!("out-{cc}.bin"));
        let json = dir.path().join(format!("{cc}.json"));
        let mut f = flags(cc);
        let json_s = json.display().to_string();
        f.extend([
            "--min-rto",
            "50",
            "--retries",
            "-1",
            "--stats-json",
            &json_s,
        ]);
        if cc == "fixed" {
            f.extend(["--pipeline-size", "16"]);
        }
        let summary = fetch(&sock_a, &name, &out, &f);
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{cc}: content differs"
        );
        let st: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let retx = st["retransmissions"].as_u64().unwrap();
        assert!(retx > 0, "{cc}: 5% loss but no retransmission: {summary}");
        assert!(
            summary.contains(&format!("Retransmitted segments: {retx} (")),
            "{summary}"
        );
    }
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn icncat_reports_a_missing_name_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "a", "[udp]\nenabled = false\n");
    let o = Command::new(binary("icncat"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            "/no/such/thing",
            "-r",
            "1",
            "-l",
            "300",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ERROR:"), "{err}");
}
