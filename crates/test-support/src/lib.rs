//! Helpers shared by the process-level tests of `icn-forwarder`
//! (`crates/forwarder/tests/interop/harness.rs`) and of the workspace
//! package (`tests/common`): child processes killed and reaped on drop,
//! commands run to completion within a bound, waits for a stdout line or a
//! path with a bound, and free loopback ports. Every wait returns as soon
//! as its event happens; the timeout only bounds a failure.
//! [`openmetrics`] scrapes and strictly parses icnfwd's metrics endpoint.
//!
//! Dev-only (`publish = false`); panics are the point here: they are test
//! failures that say what was seen.

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub mod openmetrics;

/// A child process killed (SIGKILL) and reaped when dropped.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A named child killed on drop, optionally with its stdout read line by
/// line on a thread (so it never blocks on a full pipe).
pub struct Proc {
    pub child: Child,
    pub name: String,
    lines: Option<mpsc::Receiver<String>>,
}

impl Proc {
    /// Spawns `cmd` with stdin from /dev/null.
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
        p.lines = Some(line_channel(out));
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
                Err(e) => panic!(
                    "{}: no expected line within {timeout:?} ({e}); saw {seen:?}",
                    self.name
                ),
            }
        }
    }

    /// The stdout lines printed so far and not yet consumed.
    pub fn drain_lines(&mut self) -> Vec<String> {
        let rx = self.lines.as_ref().expect("spawn_lines");
        rx.try_iter().collect()
    }

    /// Sends a signal (for SIGHUP / SIGTERM tests).
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        let rc = unsafe { libc::kill(self.child.id() as i32, sig) };
        assert_eq!(rc, 0, "kill {sig}");
    }

    /// Waits for exit within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
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

/// Reads `pipe` line by line on a thread into a channel.
pub fn line_channel(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Reads `pipe` on a thread until a line contains `needle` (`""` takes the
/// first line), for at most `timeout`; returns that line. Later lines are
/// copied to this process's stderr so the child never blocks on a full pipe.
pub fn wait_for_line(pipe: impl Read + Send + 'static, needle: &str, timeout: Duration) -> String {
    let (tx, rx) = mpsc::channel();
    let want = needle.to_owned();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(pipe).lines();
        let mut seen = Vec::new();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if line.contains(&want) {
                let _ = tx.send(Ok(line));
                for rest in lines.map_while(Result::ok) {
                    eprintln!("{rest}");
                }
                return;
            }
            seen.push(line);
        }
        let _ = tx.send(Err(seen.join("\n")));
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(line)) => line,
        Ok(Err(seen)) => panic!("pipe closed before {needle:?}; it said:\n{seen}"),
        Err(_) => panic!("no {needle:?} within {timeout:?}"),
    }
}

/// Runs a command to completion within `timeout` (killed otherwise), with
/// stdout and stderr captured.
pub fn run_bounded(cmd: &mut Command, timeout: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
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
        .and_then(|s| s.local_addr())
        .expect("binding 127.0.0.1:0/udp")
        .port()
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("binding 127.0.0.1:0/tcp")
        .port()
}

/// Waits until `path` exists (a daemon's Unix socket).
pub fn wait_for_path(path: &Path, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} did not appear within {timeout:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_run_and_lines() {
        let out = run_bounded(
            Command::new("sh").args(["-c", "echo a; echo b >&2"]),
            Duration::from_secs(10),
        );
        assert!(out.status.success());
        assert_eq!(out.stdout, b"a\n");
        let mut p = Proc::spawn_lines(
            "sh",
            Command::new("sh").args(["-c", "echo one; echo two; echo three"]),
        );
        assert_eq!(p.wait_line(|l| l == "two", Duration::from_secs(10)), "two");
        assert!(p.wait_exit(Duration::from_secs(10)).success());
        // The reader thread may still be delivering "three".
        let rest = p.wait_line(|l| l == "three", Duration::from_secs(10));
        assert_eq!(rest, "three");
        assert!(p.drain_lines().is_empty());
    }

    #[test]
    #[should_panic(expected = "exceeded")]
    fn bounded_run_kills_on_timeout() {
        run_bounded(Command::new("sleep").arg("5"), Duration::from_millis(100));
    }

    /// The helpers promise a port that was free a moment ago: any process
    /// on the host may take it before the caller binds it (a local CI run
    /// failed once on this check with the port taken). So a taken port is
    /// asked for again, at most three times, and the last error is shown.
    #[test]
    fn ports_are_bindable() {
        let mut udp = Err(std::io::Error::other("not tried"));
        let mut tcp = Err(std::io::Error::other("not tried"));
        for _ in 0..3 {
            if udp.is_err() {
                udp = UdpSocket::bind(("127.0.0.1", free_udp_port()));
            }
            if tcp.is_err() {
                tcp = TcpListener::bind(("127.0.0.1", free_tcp_port()));
            }
        }
        udp.expect("a free UDP port, three tries");
        tcp.expect("a free TCP port, three tries");
    }

    #[test]
    fn first_line_with_needle() {
        let child = Command::new("sh")
            .args(["-c", "echo x; echo Published y; echo z"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut k = KillOnDrop(child);
        let out = k.0.stdout.take().unwrap();
        assert_eq!(
            wait_for_line(out, "Published", Duration::from_secs(10)),
            "Published y"
        );
    }
}
