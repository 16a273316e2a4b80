//! NDNts 0.0.20250307 (the `@ndn/*` npm packages) against icnfwd, icnput and
//! icncat, on loopback, with the scripts of `tests/interop/ndnts`:
//!
//! * NDNts producers register prefixes with `@ndn/nfdmgmt` (signed
//!   rib/register) over the Unix socket, UDP (`/localhop/nfd`) and TCP; an
//!   NDNts consumer on each transport gets their Data, a Nack(NoRoute) and a
//!   timeout, with icnfwd echoing NDNts' PIT tokens; a closing producer's
//!   rib/unregister unroutes its prefix; `@ndn/nfdmgmt list()` reads the
//!   status datasets (and faces/query) and sees each route on its face.
//! * `@ndn/segmented-object` fetch (RDR and CanBePrefix discovery) of what
//!   icnput publishes; icncat (RDR and CanBePrefix discovery) of what
//!   `serveVersioned` + `@ndn/rdr` publish; NDNts to NDNts through icnfwd.
//!   Content is compared byte for byte.
//!
//! `npm ci` runs (registry only) when `node_modules` does not hold the
//! pinned packages; `.ci/run` does it before the tests. Without node/npm
//! (a failure under CI, whose `.ci/run` installs them), with a node older
//! than 20, or when npm cannot reach its registry, the tests print a
//! SKIPPED banner and return.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use common::{
    binary, content, forwarder, forwarder_sections, free_tcp_port, free_udp_port, wait_published,
};
use icn_test_support::{run_bounded, KillOnDrop, Proc};

/// The version every `@ndn/*` dependency is pinned to.
const NDNTS_VERSION: &str = "0.0.20250307";
/// Bound on one client script (each also stops itself at `--deadline-ms`).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound on a producer's READY line (registration answered).
const READY_TIMEOUT: Duration = Duration::from_secs(20);

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ndnts")
}

/// Prints the SKIPPED banner; under CI a missing tool is a failure instead
/// (`ci_fatal`), since `.ci/run` installs node and npm.
fn skip_or_fail(why: &str, ci_fatal: bool) -> Option<PathBuf> {
    if ci_fatal && std::env::var_os("CI").is_some() {
        panic!("NDNts interop cannot run under CI: {why}");
    }
    eprintln!(
        "\n!!!!!!!! SKIPPED NDNts interop: {why} !!!!!!!!\n\
         (install Node.js >= 20 and npm, then `npm ci` in tests/interop/ndnts)\n"
    );
    None
}

/// Whether `node_modules` holds every `@ndn/*` dependency at the pin.
fn installed(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
        return false;
    };
    let pkg: serde_json::Value = serde_json::from_str(&text).expect("package.json");
    let deps = pkg["dependencies"].as_object().expect("dependencies");
    deps.iter().all(|(name, want)| {
        assert_eq!(want.as_str(), Some(NDNTS_VERSION), "{name} is not pinned");
        std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v["version"] == NDNTS_VERSION)
    })
}

/// The NDNts project directory, installed; `None` (after the banner) when
/// node/npm or the registry are out of reach.
fn ndnts() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = project();
        let node = Command::new("node").arg("--version").output();
        let Ok(node) = node
            .as_ref()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        else {
            return skip_or_fail("`node` is not installed", true);
        };
        let major: u32 = node
            .trim()
            .trim_start_matches('v')
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        if major < 20 {
            return skip_or_fail(&format!("node {} is older than 20", node.trim()), false);
        }
        if installed(&dir) {
            return Some(dir);
        }
        if Command::new("npm").arg("--version").output().is_err() {
            return skip_or_fail("`npm` is not installed", true);
        }
        let out = run_bounded(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir),
            Duration::from_secs(300),
        );
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let offline = [
                "ENOTFOUND",
                "EAI_AGAIN",
                "ECONNREFUSED",
                "ETIMEDOUT",
                "ENETUNREACH",
            ]
            .iter()
            .any(|m| err.contains(m));
            if offline {
                return skip_or_fail(&format!("npm cannot reach its registry:\n{err}"), false);
            }
            panic!("npm ci failed: {err}");
        }
        assert!(
            installed(&dir),
            "npm ci did not install @ndn/* {NDNTS_VERSION}"
        );
        Some(dir)
    })
    .clone()
}

/// Runs a client script to completion; returns its stdout lines, failing
/// with its output when it exits non-zero.
fn run_node(dir: &Path, script: &str, args: &[&str]) -> Vec<String> {
    let out: Output = run_bounded(
        Command::new("node")
            .arg(dir.join(script))
            .args(args)
            .args(["--deadline-ms", "45000"])
            .current_dir(dir),
        CLIENT_TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_owned).collect()
}

/// Starts a serving script and waits for its `READY ...` line.
fn start_node(dir: &Path, script: &str, args: &[&str]) -> (Proc, String) {
    let mut p = Proc::spawn_lines(
        script,
        Command::new("node")
            .arg(dir.join(script))
            .args(args)
            .current_dir(dir),
    );
    let line = p.wait_line(
        |l| l.starts_with("READY") || l.starts_with("ERROR"),
        READY_TIMEOUT,
    );
    assert!(line.starts_with("READY"), "{script} {args:?}: {line}");
    (p, line)
}

/// A serving script must not have reported LP packets it could not decode.
fn assert_no_rx_errors(p: &mut Proc) {
    let bad: Vec<String> = p
        .drain_lines()
        .into_iter()
        .filter(|l| l.starts_with("RXERROR") || l.starts_with("ERROR"))
        .collect();
    assert!(bad.is_empty(), "{}: {bad:?}", p.name);
}

/// Parses fetch.mjs' `OK <name> <bytes> <segments> rxerrors=0 notoken=0/<n>`
/// and checks everything but the name; returns the name.
fn check_fetch(lines: &[String], bytes: usize, segments: usize) -> String {
    assert_eq!(lines.len(), 1, "{lines:?}");
    let f: Vec<&str> = lines[0].split(' ').collect();
    assert_eq!(f.len(), 6, "{lines:?}");
    assert_eq!(f[0], "OK");
    assert_eq!(f[2], bytes.to_string(), "{lines:?}");
    assert_eq!(f[3], segments.to_string(), "{lines:?}");
    assert_eq!(f[4], "rxerrors=0", "{lines:?}");
    assert!(
        f[5].starts_with("notoken=0/"),
        "PIT token not echoed: {lines:?}"
    );
    f[1].to_owned()
}

#[test]
fn ndnts_producers_register_over_unix_udp_and_tcp() {
    let Some(js) = ndnts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (udp, tcp) = (free_udp_port(), free_tcp_port());
    let (_fwd, sock) = forwarder_sections(
        dir.path(),
        "fwd",
        &format!("[udp]\nlisten = [\"127.0.0.1:{udp}\"]\n[tcp]\nlisten = [\"127.0.0.1:{tcp}\"]\n"),
    );
    let unix_t = format!("unix://{}", sock.display());
    let udp_t = format!("udp://127.0.0.1:{udp}");
    let tcp_t = format!("tcp://127.0.0.1:{tcp}");
    let transports = [&unix_t, &udp_t, &tcp_t];
    let producer = |t: &str, prefix: &str, body: &str, silent: Option<&str>| {
        let mut args = vec!["--transport", t, "--prefix", prefix, "--content", body];
        if let Some(s) = silent {
            args.extend(["--silent", s]);
        }
        start_node(&js, "produce.mjs", &args).0
    };
    let mut producers = [
        producer(&unix_t, "/nd/unix", "over-unix", Some("/nd/silent")),
        producer(&udp_t, "/nd/udp", "over-udp", None),
        producer(&tcp_t, "/nd/tcp", "over-tcp", None),
    ];
    // A producer that closes: NDNts sends rib/unregister, icnfwd says 200
    // and the prefix is unrouted again (NoRoute below, no ROUTE in rib/list).
    let lines = run_node(
        &js,
        "produce.mjs",
        &[
            "--transport",
            &tcp_t,
            "--prefix",
            "/nd/gone",
            "--content",
            "x",
            "--withdraw-after-ms",
            "0",
        ],
    );
    assert_eq!(lines, ["READY tcp /nd/gone", "WITHDRAWN /nd/gone"]);
    for t in transports {
        let lines = run_node(
            &js,
            "consume.mjs",
            &[
                "--transport",
                t,
                "--lifetime-ms",
                "1000",
                "/nd/unix/a/1",
                "/nd/udp/b",
                "/nd/tcp/c",
                "/no/route/x",
                "/nd/silent/z",
                "/nd/gone/1",
            ],
        );
        assert_eq!(
            lines,
            [
                "DATA /nd/unix/a/1 over-unix",
                "DATA /nd/udp/b over-udp",
                "DATA /nd/tcp/c over-tcp",
                "NACK /no/route/x 150",
                "TIMEOUT /nd/silent/z",
                "NACK /nd/gone/1 150",
                // Three Data and two Nacks, each with NDNts' PIT token back.
                "END rxerrors=0 notoken=0/5",
            ],
            "consumer over {t}"
        );
    }
    for p in &mut producers {
        assert_no_rx_errors(p);
    }

    // @ndn/nfdmgmt's dataset client (over UDP): each route sits on the face
    // its rib/register came in on (FaceId 0 = the requesting face); the
    // faces/query for scheme tcp4 lists exactly the tcp4 faces.
    let lines = run_node(
        &js,
        "status.mjs",
        &["--transport", &udp_t, "--query-scheme", "tcp4"],
    );
    assert!(lines[0].starts_with("GENERAL icnfwd"), "{lines:?}");
    let faces: Vec<Vec<&str>> = lines
        .iter()
        .filter(|l| l.starts_with("FACE "))
        .map(|l| l.split(' ').collect())
        .collect();
    let route_face = |prefix: &str| -> (String, String) {
        let want = format!("ROUTE {prefix} face=");
        let l = lines
            .iter()
            .find(|l| l.starts_with(&want))
            .unwrap_or_else(|| panic!("no route {prefix}: {lines:?}"));
        assert!(l.ends_with("origin=65 cost=0"), "{l}");
        let id = l[want.len()..].split(' ').next().unwrap();
        let f = faces
            .iter()
            .find(|f| f[1] == id)
            .unwrap_or_else(|| panic!("route on unknown face {id}: {lines:?}"));
        (f[2].to_owned(), f[3].to_owned())
    };
    let (remote, local) = route_face("/nd/udp");
    assert!(remote.starts_with("udp4://127.0.0.1:"), "{remote}");
    assert_eq!(local, format!("udp4://127.0.0.1:{udp}"));
    let (remote, local) = route_face("/nd/tcp");
    assert!(remote.starts_with("tcp4://127.0.0.1:"), "{remote}");
    assert_eq!(local, format!("tcp4://127.0.0.1:{tcp}"));
    let (_, local) = route_face("/nd/unix");
    assert_eq!(local, unix_t);
    assert_eq!(route_face("/nd/silent"), route_face("/nd/unix"));
    assert!(
        lines.contains(&"STRATEGY / /localhost/nfd/strategy/best-route/v=5".to_owned()),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("ROUTE /nd/gone")),
        "{lines:?}"
    );
    let tcp_faces: Vec<String> = faces
        .iter()
        .filter(|f| f[2].starts_with("tcp4://"))
        .map(|f| format!("QUERY {} {}", f[1], f[2]))
        .collect();
    let queried: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("QUERY "))
        .cloned()
        .collect();
    // The TCP producer's face at least (the closed one may linger).
    assert!(!tcp_faces.is_empty(), "{lines:?}");
    assert_eq!(queried, tcp_faces);
}

#[test]
fn ndnts_fetches_what_icnput_publishes() {
    let Some(js) = ndnts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let udp = free_udp_port();
    let (_fwd, sock) = forwarder(
        dir.path(),
        "fwd",
        &format!("[udp]\nlisten = [\"127.0.0.1:{udp}\"]\n"),
    );
    // Not a multiple of icnput's 8000-octet segments.
    let body = content(300_001);
    let input = dir.path().join("in.bin");
    std::fs::write(&input, &body).unwrap();
    let put = Command::new(binary("icnput"))
        .args([
            "--transport",
            &format!("unix://{}", sock.display()),
            "/rs/obj",
        ])
        .arg(&input)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut put = KillOnDrop(put);
    // "Published /rs/obj/v=<ms> (38 segments); serving."
    let published = wait_published(&mut put.0);
    let versioned = published.split(' ').nth(1).unwrap().to_owned();
    let cases = [
        ("rdr", format!("unix://{}", sock.display())),
        ("cbp", format!("udp://127.0.0.1:{udp}")),
    ];
    for (discovery, transport) in &cases {
        let out = dir.path().join(format!("out-{discovery}.bin"));
        let lines = run_node(
            &js,
            "fetch.mjs",
            &[
                "--transport",
                transport,
                "--name",
                "/rs/obj",
                "--discovery",
                discovery,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(
            check_fetch(&lines, body.len(), 38),
            versioned,
            "{discovery}"
        );
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{discovery}: content differs"
        );
    }
}

#[test]
fn icncat_fetches_what_ndnts_serves() {
    let Some(js) = ndnts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let udp = free_udp_port();
    let (_fwd, sock) = forwarder(
        dir.path(),
        "fwd",
        &format!("[udp]\nlisten = [\"127.0.0.1:{udp}\"]\n"),
    );
    let unix_t = format!("unix://{}", sock.display());
    let body = content(200_003);
    let input = dir.path().join("in.bin");
    std::fs::write(&input, &body).unwrap();
    let (mut server, ready) = start_node(
        &js,
        "serve.mjs",
        &[
            "--transport",
            &unix_t,
            "--prefix",
            "/nd/obj",
            "--file",
            input.to_str().unwrap(),
            "--version",
            "42",
        ],
    );
    assert_eq!(ready, "READY /nd/obj/v=42");
    // RDR (NDNts' metadata packet is unsigned) over the Unix socket, then
    // CanBePrefix discovery over UDP.
    for (discovery, transport) in [
        ("rdr", unix_t.clone()),
        ("latest", format!("udp://127.0.0.1:{udp}")),
    ] {
        let out = dir.path().join(format!("out-{discovery}.bin"));
        let o = run_bounded(
            Command::new(binary("icncat"))
                .args([
                    "--transport",
                    &transport,
                    "--discovery",
                    discovery,
                    "/nd/obj",
                    "-o",
                ])
                .arg(&out),
            CLIENT_TIMEOUT,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "icncat --discovery {discovery}: {err}");
        assert!(err.contains("Name: /nd/obj/v=42"), "{err}");
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{discovery}: content differs"
        );
    }
    assert_no_rx_errors(&mut server);
}

#[test]
fn ndnts_fetches_from_ndnts_through_icnfwd() {
    let Some(js) = ndnts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (udp, tcp) = (free_udp_port(), free_tcp_port());
    let (_fwd, sock) = forwarder_sections(
        dir.path(),
        "fwd",
        &format!("[udp]\nlisten = [\"127.0.0.1:{udp}\"]\n[tcp]\nlisten = [\"127.0.0.1:{tcp}\"]\n"),
    );
    let body = content(150_007);
    let input = dir.path().join("in.bin");
    std::fs::write(&input, &body).unwrap();
    // Producer over TCP, version from NDNts' clock.
    let (mut server, ready) = start_node(
        &js,
        "serve.mjs",
        &[
            "--transport",
            &format!("tcp://127.0.0.1:{tcp}"),
            "--prefix",
            "/nd/pair",
            "--file",
            input.to_str().unwrap(),
        ],
    );
    let versioned = ready.strip_prefix("READY ").unwrap().to_owned();
    assert!(versioned.starts_with("/nd/pair/v="), "{ready}");
    let cases = [
        ("rdr", format!("udp://127.0.0.1:{udp}")),
        ("cbp", format!("unix://{}", sock.display())),
    ];
    for (discovery, transport) in &cases {
        let out = dir.path().join(format!("out-{discovery}.bin"));
        let lines = run_node(
            &js,
            "fetch.mjs",
            &[
                "--transport",
                transport,
                "--name",
                "/nd/pair",
                "--discovery",
                discovery,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        // 150 007 octets in NDNts' default 4000-octet chunks (serve.mjs).
        assert_eq!(
            check_fetch(&lines, body.len(), 38),
            versioned,
            "{discovery}"
        );
        assert!(
            std::fs::read(&out).unwrap() == body,
            "{discovery}: content differs"
        );
    }
    assert_no_rx_errors(&mut server);
}
