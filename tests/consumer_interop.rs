//! icncat against a python-ndn 0.5.2 producer, and a python-ndn consumer
//! against icnput, through one icnfwd on a temporary Unix socket.
//!
//! The venv is created once under CARGO_TARGET_TMPDIR; when PyPI cannot be
//! reached the tests say so loudly and return.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const PRODUCER_PY: &str = r#"
import sys
from ndn.appv2 import NDNApp, pass_all
from ndn.encoding import Name, Component
from ndn.security.signer.sha256_digest_signer import DigestSha256Signer

prefix, path, seg_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = open(path, 'rb').read()
segs = [body[i:i + seg_size] for i in range(0, len(body), seg_size)] or [b'']
last = len(segs) - 1
app = NDNApp()
signer = DigestSha256Signer()
base = Name.from_str(prefix)
vname = base + [Component.from_version(1)]

def on_interest(name, _param, reply, _ctx):
    if len(name) == len(base) + 2 and Component.get_type(name[-1]) == Component.TYPE_SEGMENT:
        n = Component.to_number(name[-1])
        if n > last:
            return
        data_name = name
    elif len(name) == len(base):
        n, data_name = 0, vname + [Component.from_segment(0)]
    else:
        return  # no RDR metadata: icncat must fall back to CanBePrefix discovery
    reply(app.make_data(data_name, segs[n], signer, freshness_period=10000,
                        final_block_id=Component.from_segment(last)))

app.attach_handler(prefix, on_interest)

async def start():
    ok = await app.register(prefix)
    print('READY' if ok else 'REGISTER-FAILED', flush=True)

app.run_forever(after_start=start())
"#;

const CONSUMER_PY: &str = r#"
import asyncio, sys, time
from ndn.appv2 import NDNApp, pass_all
from ndn.encoding import Name, Component

prefix, out, window = sys.argv[1], sys.argv[2], int(sys.argv[3])
app = NDNApp()

async def fetch_seg(vname, n):
    for _ in range(10):
        try:
            _, content, _ = await app.express(vname + [Component.from_segment(n)], pass_all,
                                              lifetime=4000)
            return bytes(content)
        except Exception:
            await asyncio.sleep(0.05)
    raise RuntimeError(f'segment {n} failed')

async def main():
    try:
        t0 = time.monotonic()
        name, content, ctx = await app.express(prefix, pass_all, can_be_prefix=True,
                                               must_be_fresh=True, lifetime=4000)
        vname = name[:len(Name.from_str(prefix)) + 1]
        meta = ctx['meta_info']
        last = Component.to_number(meta.final_block_id)
        parts = [None] * (last + 1)
        nxt = 0
        async def worker():
            nonlocal nxt
            while nxt <= last:
                n = nxt
                nxt += 1
                parts[n] = await fetch_seg(vname, n)
        await asyncio.gather(*[worker() for _ in range(window)])
        data = b''.join(parts)
        open(out, 'wb').write(data)
        el = time.monotonic() - t0
        print(f'OK {len(data)} bytes {el:.3f} s {len(data) * 8 / el / 1e6:.1f} Mbit/s', flush=True)
    finally:
        app.shutdown()

app.run_forever(after_start=main())
"#;

/// Finds a workspace binary in target/<profile>/, building it first.
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

/// The venv's python with python-ndn 0.5.2, or None when PyPI is unreachable.
fn python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("consumer-python-ndn-0.5.2");
        let py = venv.join("bin/python");
        let ok = |py: &Path| {
            py.exists()
                && Command::new(py)
                    .args(["-c", "import ndn.appv2"])
                    .status()
                    .is_ok_and(|s| s.success())
        };
        if ok(&py) {
            return Some(py);
        }
        let made = Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status();
        let pip = venv.join("bin/pip");
        let installed = made.is_ok_and(|s| s.success())
            && Command::new(&pip)
                .args(["install", "-q", "python-ndn==0.5.2"])
                .status()
                .is_ok_and(|s| s.success());
        if installed && ok(&py) {
            Some(py)
        } else {
            eprintln!(
                "!!! SKIPPING python-ndn interop: could not install python-ndn==0.5.2 from PyPI"
            );
            None
        }
    })
    .clone()
}

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn forwarder(dir: &Path) -> (Proc, PathBuf) {
    let sock = dir.join("fwd.sock");
    let cfg = dir.join("fwd.toml");
    std::fs::write(
        &cfg,
        format!(
            "log_level = \"warn\"\n[unix]\npath = \"{}\"\n[udp]\nenabled = false\n[tcp]\nenabled = false\n",
            sock.display()
        ),
    )
    .unwrap();
    let child = Command::new(binary("icnfwd"))
        .arg("-c")
        .arg(&cfg)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !sock.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "icnfwd socket did not appear"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (Proc(child), sock)
}

fn content(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
        .collect()
}

fn read_line(child: &mut Child) -> String {
    let mut out = child.stdout.take().unwrap();
    let mut s = Vec::new();
    let mut b = [0u8; 1];
    while std::io::Read::read(&mut out, &mut b).unwrap_or(0) == 1 && b[0] != b'\n' {
        s.push(b[0]);
    }
    String::from_utf8_lossy(&s).into_owned()
}

#[test]
fn icncat_fetches_from_a_python_ndn_producer() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path());
    let input = dir.path().join("in.bin");
    let body = content(300_000);
    std::fs::write(&input, &body).unwrap();
    let script = dir.path().join("producer.py");
    std::fs::write(&script, PRODUCER_PY).unwrap();
    let mut child = Command::new(&py)
        .arg(&script)
        .args(["/py/obj"])
        .arg(&input)
        .arg("4000")
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", sock.display()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let line = read_line(&mut child);
    let _producer = Proc(child);
    assert_eq!(line, "READY");
    let out = dir.path().join("out.bin");
    let o = Command::new(binary("icncat"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            "/py/obj",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == body, "content differs");
    assert!(String::from_utf8_lossy(&o.stderr).contains("/py/obj/v=1"));
}

#[test]
fn python_ndn_consumer_fetches_from_icnput() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path());
    let input = dir.path().join("in.bin");
    let body = content(500_000);
    std::fs::write(&input, &body).unwrap();
    let mut put = Command::new(binary("icnput"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            "/rs/obj",
        ])
        .arg(&input)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 256];
    let n = std::io::Read::read(put.stderr.as_mut().unwrap(), &mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).contains("Published"));
    let _put = Proc(put);
    let script = dir.path().join("consumer.py");
    std::fs::write(&script, CONSUMER_PY).unwrap();
    let out = dir.path().join("out.bin");
    let o = Command::new(&py)
        .arg(&script)
        .arg("/rs/obj")
        .arg(&out)
        .arg("16")
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", sock.display()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with("OK"),
        "{stdout} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read(&out).unwrap() == body, "content differs");
}
