//! The icnfwd process: status over the Unix socket, SIGHUP reload without
//! dropping faces, graceful SIGTERM, config errors naming the bad key.

#[path = "interop/harness.rs"]
mod harness;

use std::process::Command;
use std::time::Duration;

use harness::*;

#[test]
fn status_reload_and_graceful_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let peer = free_udp_port();
    let face = format!("[[face]]\nuri = \"udp4://127.0.0.1:{peer}\"\ncapacity_bps = 10000000\n");
    let route1 =
        format!("[[route]]\nprefix = \"/one\"\nface = \"udp4://127.0.0.1:{peer}\"\ncost = 3\n");
    let (cfg, sock) = write_config(dir.path(), "d", free_udp_port(), &(face.clone() + &route1));
    let mut fwd = start_icnfwd("icnfwd", &cfg, &sock);

    let st = status(&sock);
    assert!(
        st.contains("General:") && st.contains("version=icnfwd"),
        "{st}"
    );
    assert!(
        st.contains(&format!("faceid=256 remote=udp4://127.0.0.1:{peer}")),
        "{st}"
    );
    // The icnfwd-specific state line under the face: its configured capacity.
    assert!(
        st.contains("    capacity=10000000bps queue={0i/0B 0d/0B 0frames}"),
        "{st}"
    );
    assert!(st.contains("/one nexthops={faceid=256 (cost=3)}"), "{st}");
    assert!(
        st.contains("/one routes={faceid=256 origin=255 cost=3 flags=1}"),
        "{st}"
    );
    assert!(
        st.contains("/ strategy=/localhost/nfd/strategy/best-route"),
        "{st}"
    );

    // Replace the route and add a strategy; the face must survive with its id.
    let route2 = format!("[[route]]\nprefix = \"/two\"\nface = \"udp4://127.0.0.1:{peer}\"\n");
    let strat =
        "[[strategy]]\nprefix = \"/two\"\nstrategy = \"/localhost/nfd/strategy/multicast\"\n";
    std::fs::write(
        &cfg,
        std::fs::read_to_string(&cfg)
            .unwrap()
            .replace(&route1, &(route2 + strat)),
    )
    .unwrap();
    fwd.signal(libc::SIGHUP);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let st = loop {
        let st = status(&sock);
        if st.contains("/two nexthops") || std::time::Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(st.contains("/two nexthops={faceid=256 (cost=0)}"), "{st}");
    assert!(!st.contains("/one nexthops"), "{st}");
    assert!(
        st.contains("/two strategy=/localhost/nfd/strategy/multicast"),
        "{st}"
    );
    assert!(
        st.contains(&format!("faceid=256 remote=udp4://127.0.0.1:{peer}")),
        "{st}"
    );

    // A broken file on reload keeps the running configuration.
    std::fs::write(&cfg, "bogus = true\n").unwrap();
    fwd.signal(libc::SIGHUP);
    std::thread::sleep(Duration::from_millis(200));
    assert!(status(&sock).contains("/two nexthops"));

    fwd.signal(libc::SIGTERM);
    let code = fwd.wait_exit(Duration::from_secs(5));
    assert!(code.success(), "{code:?}");
    assert!(!sock.exists(), "socket removed on shutdown");
}

#[test]
fn sighup_reloads_the_log_level() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, sock) = write_config(dir.path(), "l", free_udp_port(), "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("log_level = \"warn\"\n{text}")).unwrap();
    let log = dir.path().join("l.log");
    let mut fwd = Proc::spawn(
        "icnfwd",
        Command::new(ICNFWD)
            .arg("--config")
            .arg(&cfg)
            .env_remove("RUST_LOG")
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap()),
    );
    wait_for_path(&sock, Duration::from_secs(5));
    status(&sock);
    let before = std::fs::read_to_string(&log).unwrap();
    assert!(!before.contains("icnfwd running"), "warn filter: {before}");

    std::fs::write(&cfg, format!("log_level = \"debug\"\n{text}")).unwrap();
    fwd.signal(libc::SIGHUP);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !std::fs::read_to_string(&log)
        .unwrap()
        .contains("log level reloaded")
    {
        assert!(std::time::Instant::now() < deadline, "no reload line");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A new Unix connection is logged at debug level only.
    status(&sock);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let after = std::fs::read_to_string(&log).unwrap();
        if after.contains("Unix face") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "debug not enabled: {after}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    fwd.signal(libc::SIGTERM);
    assert!(fwd.wait_exit(Duration::from_secs(5)).success());
}

#[test]
fn config_errors_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(
        &cfg,
        "[udp]\nlisten = [\"127.0.0.1:1\"]\nidle_timeout = 5\n",
    )
    .unwrap();
    let out = run_bounded(
        Command::new(ICNFWD).arg("--config").arg(&cfg),
        Duration::from_secs(10),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("idle_timeout"), "{err}");

    // Values that parse but would leave the daemon useless (a PIT of 0
    // entries Nacks even `status`; `verbose!!` silences every log line),
    // refused by check-config and at start.
    for (text, key) in [
        (
            "[tables]\npit_max_entries = 0\n",
            "`tables.pit_max_entries`",
        ),
        ("log_level = \"verbose!!\"\n", "`log_level`"),
    ] {
        std::fs::write(&cfg, text).unwrap();
        for args in [&["check-config"][..], &[]] {
            let out = run_bounded(
                Command::new(ICNFWD).arg("--config").arg(&cfg).args(args),
                Duration::from_secs(10),
            );
            assert!(!out.status.success(), "{text} {args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(key), "{args:?}: {err}");
        }
    }

    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/icnfwd.toml");
    let out = run_bounded(
        Command::new(ICNFWD).args(["--config", shipped, "check-config"]),
        Duration::from_secs(10),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn status_without_daemon_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_bounded(
        Command::new(ICNFWD)
            .arg("status")
            .arg("--socket")
            .arg(dir.path().join("none.sock")),
        Duration::from_secs(10),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("none.sock"));
}
