//! icncat against a python-ndn 0.5.2 producer, and a python-ndn consumer
//! against icnput, through one icnfwd on a temporary Unix socket.
//!
//! The venv is created once under CARGO_TARGET_TMPDIR; when PyPI cannot be
//! reached the tests say so loudly and return.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use common::{binary, content, forwarder, wait_for_line, wait_published, Proc};

/// icnfwd with UDP off (the tests speak over its Unix socket only).
const FWD_EXTRA: &str = "[udp]\nenabled = false\n";

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

#[test]
fn icncat_fetches_from_a_python_ndn_producer() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "fwd", FWD_EXTRA);
    let input = dir.path().join("in.bin");
    let body = content(300_000);
    std::fs::write(&input, &body).unwrap();
    let script = dir.path().join("producer.py");
    std::fs::write(&script, PRODUCER_PY).unwrap();
    let child = Command::new(&py)
        .arg(&script)
        .args(["/py/obj"])
        .arg(&input)
        .arg("4000")
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", sock.display()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut producer = Proc(child);
    let out = producer.0.stdout.take().unwrap();
    // The script's first line: READY or REGISTER-FAILED once rib/register
    // answered.
    let line = wait_for_line(out, "");
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
    let (_fwd, sock) = forwarder(dir.path(), "fwd", FWD_EXTRA);
    let input = dir.path().join("in.bin");
    let body = content(500_000);
    std::fs::write(&input, &body).unwrap();
    let put = Command::new(binary("icnput"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            "/rs/obj",
        ])
        .arg(&input)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut put = Proc(put);
    wait_published(&mut put.0);
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
