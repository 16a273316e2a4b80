//! Drops the shell makes are counted and warned about at a bounded rate:
//! datagrams over 8800 octets, and new peers refused because the face
//! table (`[limits] max_faces`) is full. Real UDP on loopback.

#[path = "interop/harness.rs"]
mod harness;

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::*;

/// Polls `icnfwd status` until `pred` holds (the daemon reads UDP and the
/// Unix socket independently), failing after 5 s.
fn status_until(sock: &std::path::Path, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let st = status(sock);
        if pred(&st) {
            return st;
        }
        assert!(Instant::now() < deadline, "condition never held: {st}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running icnfwd with a UDP listener and `extra` config, logging at
/// info to `log`.
struct Daemon {
    fwd: Proc,
    cfg: std::path::PathBuf,
    sock: std::path::PathBuf,
    log: std::path::PathBuf,
    port: u16,
}

fn start(dir: &std::path::Path, name: &str, extra: &str) -> Daemon {
    let port = free_udp_port();
    let (cfg, sock) = write_config(dir, name, port, extra);
    let log = dir.join(format!("{name}.log"));
    let fwd = Proc::spawn(
        "icnfwd",
        Command::new(ICNFWD)
            .arg("--config")
            .arg(&cfg)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap()),
    );
    wait_for_path(&sock, Duration::from_secs(5));
    Daemon {
        fwd,
        cfg,
        sock,
        log,
        port,
    }
}

#[test]
fn oversized_datagrams_and_face_table_refusals_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let d = start(dir.path(), "d", "[limits]\nmax_faces = 3\n");
    let (sock, log, to) = (d.sock.clone(), d.log.clone(), ("127.0.0.1", d.port));

    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.send_to(&[0x05; 9000], to).unwrap(); // no face yet: forwarder-wide
    a.send_to(&[0x00], to).unwrap(); // opens A's on-demand face
    let st = status_until(&sock, |s| s.matches("  faceid=").count() >= 2);
    assert!(st.contains("oversized=1"), "{st}");
    a.send_to(&[0x05; 8801], to).unwrap(); // on A's face now
    status_until(&sock, |s| s.contains("oversized=2"));

    // A has one of the three on-demand faces; two more peers fit, the
    // next three are refused.
    let peers: Vec<UdpSocket> = (0..5)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for p in &peers {
        p.send_to(&[0x00], to).unwrap();
    }
    let st = status_until(&sock, |s| s.contains("face-table-full=3"));
    let udp_faces = st
        .lines()
        .filter(|l| l.starts_with("  faceid=") && l.contains("remote=udp4://"))
        .count();
    assert_eq!(udp_faces, 3, "{st}");
    // Every budget is shown as used/max.
    for b in [
        "pit-entries=",
        "pit-bytes=",
        "cs-bytes=",
        "reassembly-bytes=0/33554432",
    ] {
        assert!(st.contains(b), "{b}: {st}");
    }
    // The oversized datagram on A's face is also on that face's drops.
    assert!(st.contains("drops={malformed=1, oversized=1}"), "{st}");

    // Two oversized datagrams from 127.0.0.1 and three refusals of it:
    // one warning each.
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("reason=\"oversized\"").count(), 1, "{text}");
    assert_eq!(
        text.matches("reason=\"face-table-full\"").count(),
        1,
        "{text}"
    );
}

/// UDP faces listed by `icnfwd status`, by remote address.
fn udp_remotes(st: &str) -> Vec<String> {
    st.lines()
        .filter(|l| l.starts_with("  faceid="))
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|r| r.strip_prefix("remote=udp4://"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn one_address_gets_its_share_and_a_full_table_evicts_the_longest_idle_face() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_udp_port();
    // 8 faces, 50 % (4) per source address, eviction after 300 ms of silence;
    // loopback peers non-local, so the per-address share applies to them.
    let (cfg, sock) = write_config(
        dir.path(),
        "e",
        port,
        "[limits]\nmax_faces = 8\nface_share_percent = 50\nevict_idle_ms = 300\n",
    );
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[udp]\n", "[udp]\nloopback_is_local = false\n");
    std::fs::write(&cfg, text).unwrap();
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);
    let to = ("127.0.0.1", port);
    let peer = |ip: &str| UdpSocket::bind((ip, 0)).unwrap();

    let first = peer("127.0.0.1");
    first.send_to(&[0x00], to).unwrap();
    status_until(&sock, |s| udp_remotes(s).len() == 1);
    let mut keep = Vec::new();
    for ip in ["127.0.0.1"; 4].into_iter().chain(["127.0.0.2"; 4]) {
        let p = peer(ip);
        p.send_to(&[0x00], to).unwrap();
        keep.push(p);
    }
    // 127.0.0.1 had its 4; its fifth peer is refused, 127.0.0.2 gets 4.
    let st = status_until(&sock, |s| {
        s.contains("face-table-full=1") && udp_remotes(s).len() == 8
    });
    let remotes = udp_remotes(&st);
    assert_eq!(
        remotes
            .iter()
            .filter(|r| r.starts_with("127.0.0.2:"))
            .count(),
        4,
        "{st}"
    );
    // The table is full and nobody has been silent for 300 ms: refused.
    let newcomer = peer("127.0.0.3");
    newcomer.send_to(&[0x00], to).unwrap();
    status_until(&sock, |s| s.contains("face-table-full=2"));
    // Once the faces have been silent long enough, a new peer evicts the
    // one silent the longest (the first), and the table stays at 8.
    std::thread::sleep(Duration::from_millis(400));
    let later = peer("127.0.0.3");
    later.send_to(&[0x00], to).unwrap();
    let first_addr = first.local_addr().unwrap().to_string();
    let st = status_until(&sock, |s| {
        udp_remotes(s).iter().any(|r| r.starts_with("127.0.0.3:"))
    });
    let remotes = udp_remotes(&st);
    assert_eq!(remotes.len(), 8, "{st}");
    assert!(!remotes.contains(&first_addr), "{first_addr} evicted: {st}");
}

#[test]
fn a_reassembled_packet_over_8800_octets_is_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_udp_port();
    let (cfg, sock) = write_config(dir.path(), "r", port, "");
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);
    // Two 8000-octet fragments of one 16 000-octet packet (the issue's
    // probe reassembled a 3 MB Interest from 376 of them).
    let p = UdpSocket::bind("127.0.0.1:0").unwrap();
    for index in 0..2u64 {
        let mut lp = icn_tlv::LpPacket::from_fragment(bytes::Bytes::from(vec![5u8; 8000]));
        lp.sequence = Some(1000 + index);
        lp.frag_index = Some(index);
        lp.frag_count = Some(2);
        p.send_to(&lp.encode(), ("127.0.0.1", port)).unwrap();
    }
    let st = status_until(&sock, |s| s.contains("oversized=1"));
    assert!(st.contains("reassembly-bytes=0/"), "{st}");
    let udp = st
        .lines()
        .find(|l| l.starts_with("  faceid=") && l.contains("remote=udp4://"))
        .unwrap();
    assert!(udp.contains("in={0i 0d 0n"), "nothing was decoded: {st}");
}

#[test]
fn sighup_applies_limits_and_names_what_waits_for_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let d = start(dir.path(), "h", "[limits]\nmax_faces = 2\n");
    let (cfg, sock, log) = (d.cfg.clone(), d.sock.clone(), d.log.clone());
    let to = ("127.0.0.1", d.port);
    let fwd = &d.fwd;
    let peers: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for p in &peers {
        p.send_to(&[0x00], to).unwrap();
    }
    let st = status_until(&sock, |s| s.contains("face-table-full=1"));
    assert_eq!(udp_remotes(&st).len(), 2, "{st}");

    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "[limits]\nmax_faces = 2\n",
        "[limits]\nmax_faces = 3\npit_max_bytes = 20000\nface_share_percent = 50\n[tables]\ncs_max_packets = 100\n",
    );
    std::fs::write(&cfg, text).unwrap();
    fwd.signal(libc::SIGHUP);
    // The engine's budget shows in status once the reload ran.
    status_until(&sock, |s| {
        s.split_whitespace()
            .any(|w| w.starts_with("pit-bytes=") && w.ends_with("/20000"))
    });
    peers[2].send_to(&[0x00], to).unwrap();
    let st = status_until(&sock, |s| udp_remotes(s).len() == 3);
    assert!(st.contains("face-table-full=1"), "no new refusal: {st}");
    let text = std::fs::read_to_string(&log).unwrap();
    for k in [
        "key=\"limits.max_faces\" old=2 new=3",
        "key=\"limits.pit_max_bytes\" old=67108864 new=20000",
        "key=\"limits.face_share_percent\" old=25 new=50",
        "key=\"tables\"",
    ] {
        assert!(text.contains(k), "{k}: {text}");
    }
    assert!(
        text.contains("section read at start only"),
        "[tables] waits for a restart: {text}"
    );
}
