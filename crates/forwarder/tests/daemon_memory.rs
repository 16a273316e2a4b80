//! Memory the forwarder keeps is bounded in bytes: a stored Interest holds
//! its own bytes, not the receive batch it arrived in. Real UDP on
//! loopback, RSS read from /proc.

#[path = "interop/harness.rs"]
mod harness;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use harness::*;

fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// `pit=N` from `icnfwd status`.
fn pit_entries(st: &str) -> u64 {
    st.split_whitespace()
        .find_map(|w| w.strip_prefix("pit="))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// An Interest for `/silent/<i>` with a 120 s lifetime.
fn interest(i: u32) -> Vec<u8> {
    interest_living(i, Duration::from_secs(120))
}

fn interest_living(i: u32, lifetime: Duration) -> Vec<u8> {
    let mut it = icn_tlv::Interest::new(format!("/silent/{i}").parse().unwrap());
    it.nonce = Some(i + 1);
    it.lifetime = Some(lifetime);
    it.encode().to_vec()
}

/// A forwarder with `/silent` routed to a face that never answers.
fn start_silent(dir: &std::path::Path, tables: &str) -> (Proc, std::path::PathBuf, u16) {
    let port = free_udp_port();
    let silent = free_udp_port();
    let extra = format!(
        "[[face]]\nuri = \"udp4://127.0.0.1:{silent}\"\n[[route]]\nprefix = \"/silent\"\nface = \"udp4://127.0.0.1:{silent}\"\n"
    );
    let (cfg, sock) = write_config(dir, "m", port, &(extra + tables));
    (start_icnfwd("icnfwd", &cfg, &sock), sock, port)
}

#[test]
fn a_pending_interest_does_not_pin_its_receive_batch() {
    let dir = tempfile::tempdir().unwrap();
    let (fwd, sock, port) = start_silent(dir.path(), "");
    let pid = fwd.child.id();
    let before = rss_kb(pid);
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let junk = [0x05u8; 8800];
    for i in 0..500 {
        for _ in 0..31 {
            s.send_to(&junk, ("127.0.0.1", port)).unwrap();
        }
        s.send_to(&interest(i), ("127.0.0.1", port)).unwrap();
        if i % 25 == 0 {
            // Let the forwarder drain its socket (the kernel drops, not it).
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Wait until the PIT stops growing.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = 0;
    let entries = loop {
        std::thread::sleep(Duration::from_millis(100));
        let n = pit_entries(&status(&sock));
        if (n == last && n > 0) || Instant::now() > deadline {
            break n;
        }
        last = n;
    };
    let grown_kb = rss_kb(pid).saturating_sub(before);
    assert!(entries >= 100, "too few Interests arrived: {entries}");
    // One receive buffer per batch pinned ~217 KB per entry; a copy per
    // datagram keeps about 2 KB (measured with scripts/mem_probe.py).
    let per_entry_kb = grown_kb / entries;
    assert!(
        per_entry_kb < 20,
        "{grown_kb} kB for {entries} PIT entries ({per_entry_kb} kB each)"
    );
}

#[test]
fn memory_returns_after_a_pit_flood_drains() {
    let dir = tempfile::tempdir().unwrap();
    let (fwd, sock, port) = start_silent(dir.path(), "[tables]\npit_max_entries = 250000\n");
    let pid = fwd.child.id();
    status(&sock);
    let before = rss_kb(pid);
    // The PIT holds all of the flood (loopback faces are local, so a full
    // PIT would refuse `icnfwd status` too). 200 000 unique Interests living 10 s, from 4 source ports, sent in
    // steps of 4000 that the forwarder is given time to take in. Sent
    // blindly, the kernel dropped 6-70 % of them at the socket (the debug
    // daemon takes in ~50 k Interests/s) and, with a 1 s lifetime, entries
    // expired while later ones arrived: the peak was 42-69 MB, from
    // how fast this thread ran.
    let socks: Vec<UdpSocket> = (0..4)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let mut peak = before;
    for i in 0..200_000u32 {
        socks[i as usize % 4]
            .send_to(
                &interest_living(i, Duration::from_secs(10)),
                ("127.0.0.1", port),
            )
            .unwrap();
        if i % 4000 == 3999 {
            let step_deadline = Instant::now() + Duration::from_millis(500);
            while pit_entries(&status(&sock)) < u64::from(i) * 9 / 10
                && Instant::now() < step_deadline
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            peak = peak.max(rss_kb(pid));
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    peak = peak.max(rss_kb(pid));
    let peak_entries = pit_entries(&status(&sock));
    // The kernel may still drop part of a step at a full receive queue;
    // what reaches the PIT must still be a flood.
    assert!(
        peak_entries >= 100_000,
        "only {peak_entries} Interests reached the PIT"
    );
    assert!(
        peak > before + 30_000,
        "{peak_entries} PIT entries grew RSS only {before} -> {peak} kB"
    );
    // Entries expire after 10 s, dead nonces after 6 s; tables are shrunk
    // and the heap trimmed every 5 s. The flood's memory must go back: at
    // most a tenth of its rise may stay. (Not "twice the idle RSS": with
    // mimalloc, icnfwd's allocator, what stays after this flood is about
    // 9 MB, pages that still hold a live block, whatever the idle RSS;
    // measured after 60 s, release: 7.7 -> 196 -> 16.9 MB; 17.2 -> 212 ->
    // 28.8 MB while huge pages were on; glibc with `fix_malloc_thresholds`
    // 7.0 -> 185 -> 12.5 MB. A daemon that keeps its flood peak, the
    // defect this test was written for, kept 150 MB. glibc's raised trim
    // threshold, which the old bound caught (6.9 -> 15.8 MB, about 6 % of
    // its rise), would pass this one: `fix_malloc_thresholds` now serves
    // only a program that embeds the shell without mimalloc.)
    let kept_max = before + (peak - before) / 10;
    let deadline = Instant::now() + Duration::from_secs(60);
    let after = loop {
        let now = rss_kb(pid);
        if now <= kept_max || Instant::now() > deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        after <= kept_max,
        "RSS {before} kB before, {peak} kB at the peak, {after} kB 60 s later (at most {kept_max})"
    );
    eprintln!("RSS {before} kB before, {peak} kB peak, {after} kB after");
}
