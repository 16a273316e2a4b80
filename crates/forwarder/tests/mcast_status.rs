//! Multicast counters in `icnfwd status` (issue 7): a `Node` (engine and
//! management, as the daemon runs them) with an upstream face towards the
//! group's source and two receivers; the `multicast/icnfwd-groups`
//! dataset is fetched with a management Interest, decoded as `icnfwd
//! status` does and rendered.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::daemon::status::render_mcast;
use icn_forwarder::engine::{FaceId, FaceParams};
use icn_forwarder::mgmt::{McastState, Route};
use icn_forwarder::node::Node;
use icn_forwarder::router::RouterConfig;
use icn_multicast::wire::{self, Subscription};
use icn_multicast::GroupPacket;
use icn_tlv::{Data, Interest, MccFeedback, Name};

fn ms(n: u64) -> Timestamp {
    Timestamp::from_millis(n)
}

fn fetch_state(n: &mut Node, app: FaceId, now: Timestamp) -> McastState {
    let mut i = Interest::new("/localhost/nfd/multicast/icnfwd-groups".parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(now.as_nanos() as u32 ^ 0x55);
    n.handle_packet(now, app, i.encode());
    let reply = std::iter::from_fn(|| n.poll_transmit(now))
        .find(|t| t.face == app)
        .expect("dataset reply");
    let d = Data::decode(reply.bytes).unwrap();
    McastState::decode(d.content.clone()).unwrap()
}

#[test]
fn status_shows_groups_faces_mcc_copies_and_the_announced_rate() {
    let g: Name = "/mc/video".parse().unwrap();
    let mut n = Node::new(RouterConfig::default(), Default::default(), 7);
    let t0 = ms(1);
    let up = n.add_face(t0, FaceParams::non_local("udp4://10.0.0.1:6363"));
    let rx1 = n.add_face(t0, FaceParams::local("fd://5"));
    let rx2 = n.add_face(t0, FaceParams::local("fd://6"));
    let admin = n.add_face(t0, FaceParams::local("fd://7"));
    n.add_route(
        g.clone(),
        Route {
            face: up.0,
            origin: 255,
            cost: 0,
            flags: 1,
            expires: None,
        },
    )
    .unwrap();
    let empty = fetch_state(&mut n, admin, t0);
    assert_eq!(empty.counter("groups"), 0);
    assert!(empty.groups.is_empty());

    for (k, f) in [rx1, rx2].into_iter().enumerate() {
        let join = Subscription::join(g.clone(), Duration::from_secs(3)).encode(k as u32 + 1);
        n.handle_packet(ms(2), f, join);
        let fb = MccFeedback {
            group: g.clone(),
            max_occupancy_ppm: 0,
            min_occupancy_ppm: 1_000_000,
            min_fair_share_bps: 1_500_000,
        };
        n.handle_packet(ms(3), f, wire::encode_feedback(&fb));
    }
    for seq in 0..5 {
        let p = GroupPacket {
            group: g.clone(),
            seq,
            rate_bps: 800_000,
            payload: Bytes::from_static(&[1; 100]),
            end: false,
        };
        n.handle_packet(ms(4 + seq), up, p.encode(None));
    }
    // One feedback period later the node has sent one MCC message upstream.
    n.handle_timeout(ms(500));
    let _ = std::iter::from_fn(|| n.poll_transmit(ms(500))).count();
    let st = fetch_state(&mut n, admin, ms(500));
    let text = render_mcast(&st);
    eprintln!("{text}");
    assert_eq!(st.counter("groups"), 1);
    assert_eq!(st.counter("mcc-in"), 2);
    assert_eq!(st.counter("mcc-out"), 1);
    assert_eq!(st.counter("data-in"), 5);
    assert_eq!(st.counter("copies-out"), 10);
    let gs = &st.groups[0];
    assert_eq!(gs.name, g);
    assert_eq!(gs.upstream, Some(up.0));
    assert_eq!(gs.downstream, vec![rx1.0, rx2.0]);
    assert_eq!(
        (gs.copies_sent, gs.announced_rate_bps, gs.last_seq),
        (10, Some(800_000), Some(4))
    );
    assert_eq!(gs.fair_share_bps, None, "the upstream face has no capacity");
    assert!(text.contains("fair-share=- (N=1)"), "{text}");
    assert!(text.contains("groups=1 "), "{text}");
    assert!(text.contains("mcc-in=2 mcc-out=1"), "{text}");
    assert!(text.contains("copies-out=10"), "{text}");
    assert!(
        text.contains(&format!(
            "/mc/video upstream={} downstream={{{},{}}} copies=10 announced=800000bps seq=4",
            up.0, rx1.0, rx2.0
        )),
        "{text}"
    );
}
