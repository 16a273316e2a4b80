//! The issue-17 flood test on real sockets: a consumer fetches through
//! icnfwd over UDP at a fixed rate, once alone and once while another UDP
//! peer floods Interests to a silent prefix as fast as one thread can send
//! them; the transfer keeps at least 90 % of its goodput. Both peers are
//! non-local faces (`[udp] loopback_is_local = false`, as LAN hosts are),
//! each with its own share of the PIT; the producer is a local application
//! on the Unix socket. (`engine_flood.rs` is the same question in virtual
//! time.)
//!
//! Why the numbers are what they are: the transfer asks 250 segments of
//! 4000 octets per second (8 Mbit/s of content, 500 packets/s through
//! icnfwd), a few per cent of one core even for a debug build, so that
//! alone it is limited by its own pacing and not by the CPU; what the flood
//! can take from it is then what icnfwd's fairness lets it take, not the
//! machine. The flooder is one thread calling send() in a loop (90-300 k
//! Interests/s here, several times what a debug icnfwd can process), so
//! the kernel queue it fills overflows for the whole run. What keeps the
//! transfer whole: its own PIT share (the flood is refused at 25 %), the
//! flooder's datagrams in a socket of their own (`shell/isolate.rs`; on
//! the shared socket the transfer got 0.6 Mbit/s), and the engine loop
//! letting the producer's Unix face run between turns (without it its
//! Data waited up to 0.8 s behind the coop budget: 1.4-4.6 Mbit/s), and
//! each turn serving every source, not only the select branch that fired
//! (with the engine's timer due at nearly every turn, the producer's Data
//! waited 15-300 ms in the inbound queue: RTT avg 15-160 ms, 0-195
//! timeouts, 6.0-7.98 Mbit/s, one CI failure). 90 % is the bound;
//! measured 7.93-7.95 of 8.0 Mbit/s (RTT max 25-36 ms, no timeout) in 5 of
//! 5 runs, and 7.86-7.98 (RTT max 46-67 ms, no timeout) in 10 of 10 with
//! a busy loop on the other core.

#[path = "interop/harness.rs"]
mod harness;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use harness::*;
use icn_consumer::run::{self, RunError};
use icn_consumer::scheme::{Scheme, SchemeOptions};
use icn_consumer::transport::{Endpoint, Face};
use icn_consumer::{
    Content, Discovery, FetchConfig, FetchStats, Fetcher, PipelineConfig, Publisher,
    PublisherConfig, RateSpec,
};
use icn_tlv::{Interest, Name};

/// Segments of the transfer and their content size: 2.4 MB, 2.4 s at the
/// rate below.
const SEGMENTS: usize = 600;
const SEGMENT_BYTES: usize = 4000;
/// The consumer's fixed Interest rate (8 Mbit/s of content).
const RATE_PPS: f64 = 250.0;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A producer of `prefix` on icnfwd's Unix socket, serving on its own
/// thread until the process ends; returns the versioned name.
fn publish(sock: &std::path::Path, prefix: &str) -> Name {
    let content = Content::Memory(Bytes::from(vec![7u8; SEGMENTS * SEGMENT_BYTES]));
    let cfg = PublisherConfig {
        segment_size: SEGMENT_BYTES,
        version: 1,
        ..PublisherConfig::default()
    };
    let mut publisher = Publisher::new(prefix.parse().unwrap(), content, cfg);
    let name = publisher.versioned_name().clone();
    let ep = Endpoint::Unix(sock.to_owned());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        rt().block_on(async {
            let mut face = Face::connect(&ep).await.unwrap();
            let r = run::register(&mut face, publisher.prefix()).await.unwrap();
            ready_tx.send(r.code).unwrap();
            let _ = run::serve(&mut face, &mut publisher).await;
        })
    });
    let code = ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(code, 200, "registration of {prefix}");
    name
}

/// Fetches `name` over UDP at [`RATE_PPS`], bounded at 30 s.
fn fetch(port: u16, name: Name) -> FetchStats {
    let opts = SchemeOptions {
        kind: cc_core::LawKind::Fixed,
        rate: Some(RateSpec::InterestsPerSec(RATE_PPS)),
        ..SchemeOptions::default()
    };
    let cfg = FetchConfig {
        pipeline: PipelineConfig {
            max_outstanding: opts.max_outstanding_for_law(),
            ..PipelineConfig::default()
        },
        discovery: Discovery::None,
        ..FetchConfig::default()
    };
    let mut fetcher = Fetcher::new(name, cfg, Scheme::new(&opts));
    rt().block_on(async {
        let ep = Endpoint::Udp(format!("127.0.0.1:{port}"));
        let mut face = Face::connect(&ep).await.unwrap();
        let mut logs = icn_consumer::logs::FetchLogs::new(None, None).unwrap();
        let stop = tokio::time::sleep(Duration::from_secs(30));
        let r: Result<FetchStats, RunError> = run::fetch_until(
            &mut face,
            &mut fetcher,
            &mut std::io::sink(),
            None,
            &mut logs,
            async {
                stop.await;
                icn_consumer::stats::StopReason::Duration
            },
        )
        .await;
        r.unwrap()
    })
}

/// Floods unique Interests to `/silent` from its own UDP socket as fast as
/// one thread sends them, until `stop`; counts what it sent.
fn flood(port: u16, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) -> std::thread::JoinHandle<()> {
    // One encoded Interest with an 8-octet name component and a nonce,
    // rewritten in place for each datagram (encoding costs nothing then).
    let mut i = Interest::new("/silent/AAAAAAAA".parse().unwrap());
    i.nonce = Some(0x5a5a_5a5a);
    i.lifetime = Some(Duration::from_secs(10));
    let mut wire = i.encode().to_vec();
    let at = |pat: &[u8]| wire.windows(pat.len()).position(|w| w == pat).unwrap();
    let (name_at, nonce_at) = (at(b"AAAAAAAA"), at(&[0x5a; 4]));
    std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.connect(("127.0.0.1", port)).unwrap();
        let mut n: u64 = 0;
        while !stop.load(Ordering::Relaxed) {
            for _ in 0..256 {
                n += 1;
                wire[name_at..name_at + 8].copy_from_slice(&n.to_be_bytes());
                wire[nonce_at..nonce_at + 4].copy_from_slice(&(n as u32).to_be_bytes());
                let _ = s.send(&wire);
            }
            sent.store(n, Ordering::Relaxed);
        }
    })
}

#[test]
fn a_transfer_keeps_its_goodput_while_another_peer_floods_the_pit() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_udp_port();
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap(); // never read
    let silent_uri = format!("udp4://{}", silent.local_addr().unwrap());
    let extra = format!(
        "[[face]]\nuri = \"{silent_uri}\"\n[[route]]\nprefix = \"/silent\"\nface = \"{silent_uri}\"\n"
    );
    let (cfg, sock) = write_config(dir.path(), "f", port, &extra);
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[udp]\n", "[udp]\nloopback_is_local = false\n");
    std::fs::write(&cfg, text).unwrap();
    let _fwd = start_icnfwd("icnfwd", &cfg, &sock);
    // Two objects, so the second transfer is not served by the CS.
    let alone_name = publish(&sock, "/alone");
    let flooded_name = publish(&sock, "/flooded");

    let alone = fetch(port, alone_name);
    assert!(
        alone.completed,
        "transfer alone incomplete: {} of {SEGMENTS} segments",
        alone.segments_received
    );

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let flooder = flood(port, stop.clone(), sent.clone());
    // The flood is on: its share of the PIT is full and refused.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = status(&sock);
        if st.contains("face-share=") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the flood never filled its share: {st}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (t0, sent0) = (Instant::now(), sent.load(Ordering::Relaxed));
    let flooded = fetch(port, flooded_name);
    let flood_rate = (sent.load(Ordering::Relaxed) - sent0) as f64 / t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    let st = status(&sock);
    let drops = st.lines().skip_while(|l| !l.starts_with("Drops:")).nth(1);
    eprintln!(
        "goodput alone {:.2} Mbit/s (RTT avg {:.1} ms), with the flood {:.2} Mbit/s (RTT avg {:.1} ms, max {:.1} ms, {} timeouts); \
         the flooder sent {:.0} Interests/s meanwhile; icnfwd drops: {}",
        alone.goodput_bps / 1e6,
        alone.rtt_avg_ms.unwrap_or(f64::NAN),
        flooded.goodput_bps / 1e6,
        flooded.rtt_avg_ms.unwrap_or(f64::NAN),
        flooded.rtt_max_ms.unwrap_or(f64::NAN),
        flooded.timeouts,
        flood_rate,
        drops.unwrap_or("none"),
    );
    assert!(
        flooded.completed,
        "flooded transfer incomplete: {} of {SEGMENTS} segments",
        flooded.segments_received
    );
    assert!(
        flooded.goodput_bps >= 0.9 * alone.goodput_bps,
        "goodput {:.0} bit/s under the flood, {:.0} alone",
        flooded.goodput_bps,
        alone.goodput_bps
    );
}
