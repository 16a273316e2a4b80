//! icnfwd helpers shared by the daemon and interop tests: temp configs,
//! starting icnfwd, `icnfwd status`; plus the generic process helpers of
//! icn-test-support.

#![allow(dead_code, unused_imports)] // each test crate uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use icn_forwarder::daemon::client::Client;
use icn_forwarder::mgmt::ControlParameters;
use icn_tlv::{Data, Interest, LpPacket};

// The process guard, bounded runs and waits, and free ports are shared
// with the workspace tests (tests/common) through icn-test-support.
pub use icn_test_support::{
    free_tcp_port, free_udp_port, run_bounded, wait_for_path, KillOnDrop, Proc,
};

pub const ICNFWD: &str = env!("CARGO_BIN_EXE_icnfwd");

/// Starts icnfwd on `config`, waiting for its Unix socket.
pub fn start_icnfwd(name: &str, config: &Path, socket: &Path) -> Proc {
    let p = Proc::spawn(
        name,
        Command::new(ICNFWD)
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null()),
    );
    wait_for_path(socket, Duration::from_secs(5));
    p
}

/// Writes a config for one test forwarder: Unix socket in `dir`, UDP on a
/// loopback port, TCP off, plus `extra` TOML.
pub fn write_config(dir: &Path, name: &str, udp_port: u16, extra: &str) -> (PathBuf, PathBuf) {
    let sock = dir.join(format!("{name}.sock"));
    let cfg = dir.join(format!("{name}.toml"));
    let text = format!(
        "[unix]\npath = \"{}\"\n[udp]\nlisten = [\"127.0.0.1:{udp_port}\"]\n[tcp]\nenabled = false\n{extra}",
        sock.display()
    );
    std::fs::write(&cfg, text).unwrap();
    (cfg, sock)
}

/// `icnfwd --socket <socket> <args>` (a control verb), which must succeed
/// within 15 s; returns stdout.
pub fn ctl_ok(socket: &Path, args: &[&str]) -> String {
    let out = run_bounded(
        Command::new(ICNFWD).arg("--socket").arg(socket).args(args),
        Duration::from_secs(15),
    );
    assert!(
        out.status.success(),
        "icnfwd {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `icnfwd status` against a socket; returns stdout.
pub fn status(socket: &Path) -> String {
    ctl_ok(socket, &["status"])
}

/// Registers `prefix` at the forwarder on `sock` and answers every
/// Interest under it with `size` bytes, until the task is dropped.
pub async fn producer(sock: &Path, prefix: &str, size: usize) -> tokio::task::JoinHandle<()> {
    let mut c = Client::connect(sock).await.unwrap();
    let p = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..Default::default()
    };
    c.command_ok("rib", "register", &p).await.unwrap();
    tokio::spawn(async move {
        loop {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            let Ok((typ, el)) = c.recv_until(deadline).await else {
                return;
            };
            // Under a CC scheme the Interest may come in an LpPacket
            // carrying CC fields; the Data goes back bare.
            let wire = match typ {
                5 => el,
                100 => match LpPacket::decode(el).ok().and_then(|lp| lp.fragment) {
                    Some(f) => f,
                    None => continue,
                },
                _ => continue,
            };
            let Ok(i) = Interest::decode(wire) else {
                continue;
            };
            let d = Data::new(i.name, Bytes::from(vec![7u8; size]));
            c.send(&d.encode_signed_digest_sha256()).await.unwrap();
        }
    })
}
