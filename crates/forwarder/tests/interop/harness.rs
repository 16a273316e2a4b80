//! Process helpers shared by the daemon and interop tests: temp configs,
//! free loopback ports, child processes killed on drop, bounded waits.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const ICNFWD: &str = env!("CARGO_BIN_EXE_icnfwd");

/// A child process killed (SIGKILL) when dropped.
pub struct Proc {
    pub child: Child,
    pub name: String,
    lines: Option<mpsc::Receiver<String>>,
}

impl Proc {
    pub fn spawn(name: &str, cmd: &mut Command) -> Proc {
        cmd.stdin(Stdio::null());
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {name}: {e}"));
        Proc {
            child,
            name: name.to_owned(),
            lines: None,
        }
    }

    /// Spawns with stdout captured line by line.
    pub fn spawn_lines(name: &str, cmd: &mut Command) -> Proc {
        cmd.stdout(Stdio::piped());
        let mut p = Proc::spawn(name, cmd);
        let out = p.child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        p.lines = Some(rx);
        p
    }

    /// Waits for a stdout line satisfying `pred`; panics with what was seen.
    pub fn wait_line(&mut self, pred: impl Fn(&str) -> bool, timeout: Duration) -> String {
        let rx = self.lines.as_ref().expect("spawn_lines");
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) if pred(&l) => return l,
                Ok(l) => seen.push(l),
                Err(_) => panic!(
                    "{}: no expected line within {timeout:?}; saw {seen:?}",
                    self.name
                ),
            }
        }
    }

    /// Sends a signal (for SIGHUP / SIGTERM tests).
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        let rc = unsafe { libc::kill(self.child.id() as i32, sig) };
        assert_eq!(rc, 0, "kill {sig}");
    }

    /// Waits for exit within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {timeout:?}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a command to completion within `timeout` (killed otherwise).
pub fn run_bounded(cmd: &mut Command, timeout: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn");
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill(2) on a child we spawned.
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
            panic!("command {cmd:?} exceeded {timeout:?}");
        }
    }
}

/// A UDP port on 127.0.0.1 that was free a moment ago.
pub fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `path` exists (the daemon's Unix socket).
pub fn wait_for_path(path: &Path, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} did not appear",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

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

/// `icnfwd status` against a socket; returns stdout.
pub fn status(socket: &Path) -> String {
    let out = run_bounded(
        Command::new(ICNFWD)
            .arg("status")
            .arg("--socket")
            .arg(socket),
        Duration::from_secs(10),
    );
    assert!(
        out.status.success(),
        "status failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
