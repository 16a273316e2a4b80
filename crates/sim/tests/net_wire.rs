//! The wire under a link's faces: a frame the face released either takes
//! its serialisation time at the link's capacity, or passes a token bucket
//! over a fast wire (the namespace testbed's veth under tc's tbf).

use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::EngineConfig;
use icn_sim::net::{interest, LinkParams, Network, Wire};
use icn_tlv::Name;

fn name(s: &str) -> Name {
    s.parse().expect("valid name")
}

/// One consumer on `a`, a producer of `content` bytes on `b`, one link.
/// Returns each Data's arrival time and its wire size, in arrival order.
fn fetch(link: LinkParams, content: usize, names: &[&str]) -> Vec<(Timestamp, usize)> {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let b = net.add_node(EngineConfig::default());
    let (ab, _) = net.connect(a, b, link);
    net.node_mut(a).fib_add_nexthop(&name("/p"), ab, 1).unwrap();
    let c = net.add_consumer(a);
    net.add_producer(b, "/p", content, None);
    for (i, n) in names.iter().enumerate() {
        net.send(c, interest(n, i as u32 + 1));
    }
    net.run_for(Duration::from_millis(500));
    net.inbox(c)
        .iter()
        .map(|r| {
            let d = r.data().expect("a Data");
            (r.at, d.wire().expect("received Data keep their wire").len())
        })
        .collect()
}

fn tx_ns(bytes: usize, bps: u64) -> u64 {
    (bytes as u64 * 8) * 1_000_000_000 / bps
}

/// At the capacity the Data's round trip holds its serialisation (and the
/// Interest's); over a fast wire under a deep bucket it holds neither, as
/// a shaped face over a faster NIC.
#[test]
fn a_lone_frame_takes_its_serialisation_time_only_on_a_wire_at_the_capacity() {
    let slow = LinkParams {
        delay: Duration::from_millis(10),
        capacity_bps: Some(2_000_000),
        ..LinkParams::default()
    };
    let fast = LinkParams {
        wire: Wire::TokenBucket {
            rate_bps: 5_000_000,
            burst_bytes: 64 * 1024,
        },
        ..slow
    };
    let at_capacity = fetch(slow, 4000, &["/p/a"]);
    let over_bucket = fetch(fast, 4000, &["/p/a"]);
    assert_eq!(over_bucket.len(), 1);
    assert_eq!(over_bucket[0].0, Timestamp::from_millis(20));
    let (at, data_bytes) = at_capacity[0];
    let extra = at.as_nanos() - Timestamp::from_millis(20).as_nanos();
    // The Data's own serialisation at 2 Mbit/s, and an Interest's (< 1 ms).
    let data_ns = tx_ns(data_bytes, 2_000_000);
    assert!(extra > data_ns && extra < data_ns + 1_000_000, "{extra} ns");
}

/// A shallow bucket holds back the frames behind the one it had room for,
/// each until the bucket has refilled its bytes.
#[test]
fn a_token_bucket_wire_releases_a_burst_at_its_rate() {
    let rate_bps = 4_000_000;
    let burst_bytes = 5_000;
    let link = LinkParams {
        delay: Duration::from_millis(10),
        wire: Wire::TokenBucket {
            rate_bps,
            burst_bytes,
        },
        ..LinkParams::default()
    };
    let got = fetch(link, 4000, &["/p/a", "/p/b", "/p/c"]);
    assert_eq!(got.len(), 3);
    let (t0, l0) = got[0];
    let (t1, l1) = got[1];
    let (t2, l2) = got[2];
    assert_eq!(t0, Timestamp::from_millis(20));
    // The second waits for the bits the first left missing, the third for
    // all of its own.
    let missing = l1 - (burst_bytes as usize - l0);
    let want1 = t0.as_nanos() + tx_ns(missing, rate_bps);
    let want2 = want1 + tx_ns(l2, rate_bps);
    for (got, want) in [(t1.as_nanos(), want1), (t2.as_nanos(), want2)] {
        assert!(got.abs_diff(want) <= 2, "{got} against {want}");
    }
}
