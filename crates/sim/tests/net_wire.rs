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
/// Returns each Data's arrival time and its wire size, in arrival order,
/// and the frames lost on the link from `b` to `a`.
fn fetch(link: LinkParams, content: usize, names: &[&str]) -> (Vec<(Timestamp, usize)>, u64) {
    let mut net = Network::new(1);
    let a = net.add_node(EngineConfig::default());
    let b = net.add_node(EngineConfig::default());
    let (ab, ba) = net.connect(a, b, link);
    net.node_mut(a).fib_add_nexthop(&name("/p"), ab, 1).unwrap();
    let c = net.add_consumer(a);
    net.add_producer(b, "/p", content, None);
    for (i, n) in names.iter().enumerate() {
        net.send(c, interest(n, i as u32 + 1));
    }
    net.run_for(Duration::from_millis(500));
    let got: Vec<(Timestamp, usize)> = net
        .inbox(c)
        .iter()
        .map(|r| {
            let d = r.data().expect("a Data");
            (r.at, d.wire().expect("received Data keep their wire").len())
        })
        .collect();
    let (frames, bytes, lost) = net.link_delivered(b, ba).expect("the link");
    // Two engines without congestion control send each Data bare (no LP
    // header), so the link carried exactly the Data's own bytes: the sizes
    // the expected times below are computed from.
    assert_eq!(frames, got.len() as u64);
    assert_eq!(bytes, got.iter().map(|(_, l)| *l as u64).sum::<u64>());
    (got, lost)
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
    let (at_capacity, _) = fetch(slow, 4000, &["/p/a"]);
    let (over_bucket, _) = fetch(fast, 4000, &["/p/a"]);
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
    let (got, lost) = fetch(link, 4000, &["/p/a", "/p/b", "/p/c"]);
    assert_eq!((got.len(), lost), (3, 0));
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

/// A frame deeper than the bucket can never be paid for: it is lost, as
/// tc's tbf drops it, and the frames after it still pass.
#[test]
fn a_frame_deeper_than_the_bucket_is_lost() {
    let link = LinkParams {
        delay: Duration::from_millis(10),
        wire: Wire::TokenBucket {
            rate_bps: 4_000_000,
            burst_bytes: 1_000,
        },
        ..LinkParams::default()
    };
    let (got, lost) = fetch(link, 4000, &["/p/a", "/p/b"]);
    assert!(got.is_empty());
    assert_eq!(lost, 2);
    let (got, lost) = fetch(link, 500, &["/p/a", "/p/b"]);
    assert_eq!((got.len(), lost), (2, 0));
}

/// The testbed's wire is the namespace runner's tc limit: 1.5 × the
/// capacity + 2 Mbit/s, 64 KiB deep.
#[test]
fn the_testbed_wire_is_the_namespace_runners_tbf() {
    assert_eq!(
        Wire::testbed(2_000_000),
        Wire::TokenBucket {
            rate_bps: 5_000_000,
            burst_bytes: 65_536,
        }
    );
}
