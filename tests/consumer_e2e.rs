//! End to end over real processes on loopback: icnfwd, icnput, icncat.

mod common;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{
    binary, cc_pair, content, forwarder, publish, udp_pair, wait_at_most, wait_published, Proc,
    UdpPairExtra,
};

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
    let (_a, _b, sock_a, sock_b) =
        udp_pair(dir.path(), "/e2e/two", |b| b, &UdpPairExtra::default());
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
    let mut stop = None;
    let (_a, _b, sock_a, sock_b) = udp_pair(
        dir.path(),
        "/e2e/lossy",
        |port_b| {
            let (relay_port, s) = lossy_relay(format!("127.0.0.1:{port_b}").parse().unwrap(), 20);
            stop = Some(s);
            relay_port
        },
        &UdpPairExtra::default(),
    );
    let stop = stop.expect("relay started");
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

/// A rate scheme without `--rate`/`--objective` follows what icnfwd stamps
/// (RCP/MIRCC rates, CCC constraint, QSCCP TargetRate): the fetch completes
/// and its goodput sits near the link capacity instead of the paper's
/// initial rate (80-100 kbit/s) or the unlimited objective.
fn rate_scheme_converges_without_rate(scheme: &str) {
    const CAPACITY_BPS: u64 = 20_000_000;
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("/e2e/cc/{scheme}");
    let (_a, _b, sock_a, sock_b) = cc_pair(dir.path(), scheme, &prefix, CAPACITY_BPS);
    let input = dir.path().join("in.bin");
    // About 2 s at the capacity.
    let body = content(5_000_000);
    std::fs::write(&input, &body).unwrap();
    let _put = publish(&sock_b, &prefix, &input);
    let out = dir.path().join("out.bin");
    let json = dir.path().join("stats.json");
    let json_s = json.display().to_string();
    let summary = fetch(
        &sock_a,
        &prefix,
        &out,
        &["--cc", scheme, "--stats-json", &json_s, "--retries", "-1"],
    );
    assert!(
        std::fs::read(&out).unwrap() == body,
        "{scheme}: content differs"
    );
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let goodput = st["goodput_bps"].as_f64().unwrap();
    let c = CAPACITY_BPS as f64;
    eprintln!(
        "{scheme}: goodput {:.2} Mbit/s over a {:.0} Mbit/s link\n{summary}",
        goodput / 1e6,
        c / 1e6
    );
    assert!(
        goodput > 0.4 * c && goodput < 1.05 * c,
        "{scheme}: goodput {goodput} bit/s, capacity {c} bit/s\n{summary}"
    );
    // The law followed the network: in the second half of the fetch its
    // rate, in bit/s of Data, is near the link, not at the paper's initial
    // rate nor at an unconstrained objective.
    let size =
        st["wire_bytes_received"].as_f64().unwrap() / st["segments_received"].as_f64().unwrap();
    let series = st["series"].as_array().unwrap();
    let mut rates: Vec<f64> = series[series.len() / 2..]
        .iter()
        .filter_map(|x| x["rate_ips"].as_f64())
        .map(|ips| ips * 8.0 * size)
        .collect();
    rates.sort_by(f64::total_cmp);
    assert!(!rates.is_empty(), "{scheme}: no rate samples");
    let median = rates[rates.len() / 2];
    assert!(
        median > 0.3 * c && median < 1.5 * c,
        "{scheme}: the law's rate {median} bit/s did not follow the network (capacity {c} bit/s)"
    );
}

#[test]
fn rcp_converges_to_the_link_without_rate() {
    rate_scheme_converges_without_rate("rcp");
}

#[test]
fn mircc_converges_to_the_link_without_rate() {
    rate_scheme_converges_without_rate("mircc");
}

/// CCC without `--objective` asks for 10 Gbit/s; B supervises its Data
/// queue towards A (a loopback peer, so a local-scope face, but with a
/// capacity) and its constraint reaches icncat through A. Measured (5
/// runs): 17.9-18.3 Mbit/s goodput, no retransmission.
#[test]
fn ccc_converges_to_the_link_without_objective() {
    rate_scheme_converges_without_rate("ccc");
}

#[test]
fn qsccp_converges_to_the_link_without_rate() {
    rate_scheme_converges_without_rate("qsccp");
}

#[test]
fn icnput_streams_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "a", "[udp]\nenabled = false\n");
    let input = dir.path().join("in.bin");
    let body = content(3_000_000);
    std::fs::write(&input, &body).unwrap();
    // A pipe (not a file redirect), so icnput spools it.
    let mut child = Command::new(binary("icnput"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            "/e2e/stdin",
        ])
        .arg("--spool-dir")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = {
        let body = body.clone();
        std::thread::spawn(move || {
            for chunk in body.chunks(65_536) {
                std::io::Write::write_all(&mut stdin, chunk).unwrap();
            }
        })
    };
    let mut put = Proc(child);
    wait_published(&mut put.0);
    feed.join().unwrap();
    let out = dir.path().join("out.bin");
    fetch(&sock, "/e2e/stdin", &out, &["--cc", "cubic"]);
    assert!(std::fs::read(&out).unwrap() == body, "content differs");
}

/// `--cc rate --rate 8Mbps` through a 50 Mbit/s face: the Data rate over
/// about 10 s is 8 Mbit/s ± 5 %.
#[test]
fn fixed_rate_is_honoured_through_a_faster_face() {
    let dir = tempfile::tempdir().unwrap();
    let (_a, _b, sock_a, sock_b) = cc_pair(dir.path(), "none", "/e2e/rate", 50_000_000);
    let input = dir.path().join("in.bin");
    let body = content(9_900_000);
    std::fs::write(&input, &body).unwrap();
    let _put = publish(&sock_b, "/e2e/rate", &input);
    let out = dir.path().join("out.bin");
    let json = dir.path().join("stats.json");
    let json_s = json.display().to_string();
    let summary = fetch(
        &sock_a,
        "/e2e/rate",
        &out,
        &["--cc", "rate", "--rate", "8Mbps", "--stats-json", &json_s],
    );
    assert!(std::fs::read(&out).unwrap() == body, "content differs");
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let elapsed = st["elapsed_s"].as_f64().unwrap();
    let data_bps = st["wire_bytes_received"].as_f64().unwrap() * 8.0 / elapsed;
    assert!(
        (data_bps - 8e6).abs() < 0.05 * 8e6,
        "Data rate {data_bps} bit/s over {elapsed} s\n{summary}"
    );
}

/// A fetch held at 2 Mbit/s that cannot finish before it is stopped: a
/// 4 MB object (16 s at that rate) on one forwarder. Returns the icncat
/// child, its output, stats and RTT-log paths, and the content.
fn start_slow_fetch(
    dir: &Path,
    sock: &Path,
    name: &str,
    extra: &[&str],
) -> (std::process::Child, [PathBuf; 3], Vec<u8>, Proc) {
    let input = dir.join("in.bin");
    let body = content(4_000_000);
    std::fs::write(&input, &body).unwrap();
    let put = publish(sock, name, &input);
    let paths = ["out.bin", "stats.json", "rtt.tsv"].map(|f| dir.join(f));
    let child = Command::new(binary("icncat"))
        .args(["--transport", &format!("unix://{}", sock.display()), name])
        .args(["--cc", "rate", "--rate", "2Mbps", "-o"])
        .arg(&paths[0])
        .arg("--stats-json")
        .arg(&paths[1])
        .arg("--log-rtt")
        .arg(&paths[2])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, paths, body, put)
}

/// Waits at most `limit` for the child; kills it and fails otherwise.
fn wait_bounded(
    mut child: std::process::Child,
    limit: Duration,
) -> (std::process::ExitStatus, String) {
    let st = wait_at_most(&mut child, limit)
        .unwrap_or_else(|| panic!("icncat still running after {limit:?}"));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (st, err)
}

/// What a stopped fetch must leave behind: the exit status of its reason,
/// a summary that says it stopped, a complete stats JSON with
/// `completed: false`, an RTT log with one line per first-transmission
/// segment, and the content received so far as a prefix of the object.
fn assert_clean_stop(
    status: std::process::ExitStatus,
    summary: &str,
    paths: &[PathBuf; 3],
    body: &[u8],
    reason: &str,
    code: i32,
) -> serde_json::Value {
    assert_eq!(status.code(), Some(code), "{summary}");
    assert!(
        summary.contains("Transfer stopped by") && summary.contains("not completed"),
        "{summary}"
    );
    assert!(
        !summary.contains("All segments have been received"),
        "{summary}"
    );
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(&paths[1]).unwrap())
        .expect("stats JSON must be complete and valid");
    assert_eq!(st["completed"], false, "{st}");
    assert_eq!(st["stopped_by"], reason, "{st}");
    let segs = st["segments_received"].as_u64().unwrap();
    let last = st["final_segment"].as_u64().expect("FinalBlockId seen");
    assert!(segs > 10 && segs < last + 1, "{segs} of {}", last + 1);
    assert!(
        !st["series"].as_array().unwrap().is_empty(),
        "time series missing"
    );
    let rtt_lines = std::fs::read_to_string(&paths[2])
        .unwrap()
        .lines()
        .skip(1)
        .count() as u64;
    // Karn's rule: retransmitted segments give no sample, nor does one
    // that a version-discovery probe may also have fetched.
    let retx = st["retransmissions"].as_u64().unwrap();
    let ambiguous = st["ambiguous_rtt_samples"].as_u64().unwrap();
    assert!(ambiguous <= 1, "{st}");
    assert!(
        rtt_lines + retx + ambiguous >= segs && rtt_lines <= segs,
        "RTT log has {rtt_lines} samples for {segs} segments ({retx} retransmissions, {ambiguous} ambiguous)"
    );
    let out = std::fs::read(&paths[0]).unwrap();
    assert!(!out.is_empty() && out.len() < body.len());
    assert!(body.starts_with(&out), "partial output is not a prefix");
    st
}

/// `--duration 1.5` stops a fetch that needs ~16 s: exit status 3 after
/// about 1.5 s, with everything flushed.
#[test]
fn duration_stops_the_fetch_and_flushes_stats_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "a", "[udp]\nenabled = false\n");
    let t0 = std::time::Instant::now();
    let (child, paths, body, _put) = start_slow_fetch(
        dir.path(),
        &sock,
        "/e2e/stop/duration",
        &["--duration", "1.5"],
    );
    let (status, summary) = wait_bounded(child, Duration::from_secs(10));
    let wall = t0.elapsed().as_secs_f64();
    let st = assert_clean_stop(status, &summary, &paths, &body, "duration", 3);
    let elapsed = st["elapsed_s"].as_f64().unwrap();
    // The timer covers connection and discovery too; the elapsed figure
    // starts at the first segment Interest (10 ms allowed for the wake-up).
    assert!(
        elapsed > 1.0 && elapsed <= 1.51 && wall < 4.0,
        "elapsed {elapsed} s, wall {wall} s"
    );
    // 2 Mbit/s ± 20 % over the stopped window (a fixed rate is paced exactly;
    // the slack covers the per-packet overhead counted in the rate).
    let goodput = st["goodput_bps"].as_f64().unwrap();
    assert!(
        (1.6e6..2.4e6).contains(&goodput),
        "goodput {goodput} bit/s\n{summary}"
    );
}

/// SIGINT in the middle of a fetch: the same clean stop, exit status 130.
#[test]
fn sigint_stops_the_fetch_and_flushes_stats_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "a", "[udp]\nenabled = false\n");
    let (child, paths, body, _put) = start_slow_fetch(dir.path(), &sock, "/e2e/stop/sigint", &[]);
    // A head start of ~45 segments at 2 Mbit/s. Progress cannot be polled
    // (content and logs are buffered until the stop); `assert_clean_stop`
    // fails if fewer than 10 segments arrived, so the wait is checked.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on a child we spawned and have not reaped.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let (status, summary) = wait_bounded(child, Duration::from_secs(5));
    let st = assert_clean_stop(status, &summary, &paths, &body, "sigint", 130);
    assert!(st["elapsed_s"].as_f64().unwrap() > 0.5, "{st}");
}

/// A rate scheme behind a forwarder that stamps no rate (scheme `none`)
/// falls back to AIMD after a few unstamped Data and says so once: 4 MB
/// complete within the bound, where the paper's initial rate (80 kbit/s)
/// would need ~400 s.
#[test]
fn rate_scheme_without_stamps_falls_back_to_aimd() {
    let dir = tempfile::tempdir().unwrap();
    let (_fwd, sock) = forwarder(dir.path(), "a", "[udp]\nenabled = false\n");
    let input = dir.path().join("in.bin");
    let body = content(4_000_000);
    std::fs::write(&input, &body).unwrap();
    for cc in ["rcp", "mircc", "qsccp"] {
        let name = format!("/e2e/fallback/{cc}");
        let _put = publish(&sock, &name, &input);
        let out = dir.path().join(format!("out-{cc}.bin"));
        // A file, not a pipe: `-v` logs more than a pipe buffer holds.
        let log = dir.path().join(format!("icncat-{cc}.log"));
        let mut child = Command::new(binary("icncat"))
            .args(["--transport", &format!("unix://{}", sock.display()), &name])
            .args(["--cc", cc, "-v", "-o"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let status = wait_at_most(&mut child, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{cc}: 4 MB not fetched within 60 s behind scheme none"));
        let err = std::fs::read_to_string(&log).unwrap();
        assert!(status.success(), "{cc}: {err}");
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{cc}: content differs"
        );
        let said = err.matches("falling back to AIMD").count();
        assert_eq!(said, 1, "{cc}: fallback announced {said} times\n{err}");
        eprintln!(
            "{cc}: 4 MB in {:.1} s behind scheme none",
            t0.elapsed().as_secs_f64()
        );
    }
}
