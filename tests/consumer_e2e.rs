//! End to end over real processes on loopback: icnfwd, icnput, icncat.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Finds a workspace binary next to the test executable (target/<profile>/),
/// building it with `cargo build --bin` when missing.
fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    let path = dir.join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--bin", name]);
        if dir.file_name().is_some_and(|p| p == "release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("cargo build");
        assert!(st.success(), "building {name} failed");
    }
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
    std::net::UdpSocket::bind("127.0.0.1:0")
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
    let _put = publish(&sock, "/e2e/one", &input);
    for cc in SCHEMES {
        let out = dir.path().join(format!("out-{cc}.bin"));
        let summary = fetch(&sock, "/e2e/one", &out, &flags(cc));
        assert!(
            summary.contains("All segments have been received."),
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
    let _put = publish(&sock_b, "/e2e/two", &input);
    for cc in SCHEMES {
        let out = dir.path().join(format!("out-{cc}.bin"));
        fetch(&sock_a, "/e2e/two", &out, &flags(cc));
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{cc}: content differs"
        );
    }
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
