//! A face whose transport is full: the frame it refused goes back to the
//! engine, which keeps what follows in its own queue (bounded, counted,
//! seen by its markers) and sends it in order once the face is writable.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_forwarder::engine::{EngineConfig, FaceParams};
use icn_forwarder::router::{build, RouterConfig};
use icn_tlv::{Data, Interest, Name};

fn name(s: &str) -> Name {
    s.parse().expect("valid name")
}

#[test]
fn a_blocked_face_keeps_its_frames_in_the_engine_and_in_order() {
    let cfg = RouterConfig::from(EngineConfig::default());
    let mut fwd = build(&cfg, 1);
    let now = Timestamp::from_millis(1);
    let consumer = fwd.add_face(now, FaceParams::local("unix:///bp/consumer"));
    let producer = fwd.add_face(now, FaceParams::local("unix:///bp/producer"));
    fwd.fib_add_nexthop(&name("/p"), producer, 0).unwrap();
    for i in 0..5u32 {
        let mut it = Interest::new(name(&format!("/p/{i}")));
        it.nonce = Some(i);
        fwd.handle_packet(now, consumer, it.encode());
    }
    while fwd.poll_transmit(now).is_some() {}
    for i in 0..5u32 {
        let d = Data::new(name(&format!("/p/{i}")), Bytes::from_static(b"x"));
        fwd.handle_packet(now, producer, d.encode());
    }
    // The consumer's transport takes the first Data, refuses the second.
    let first = fwd.poll_transmit(now).expect("Data 0");
    assert_eq!(first.face, consumer);
    let second = fwd.poll_transmit(now).expect("Data 1");
    let out_before = fwd.face(consumer).unwrap().counters.n_out_frames;
    fwd.face_blocked(consumer, second.bytes.clone());
    assert_eq!(
        fwd.face(consumer).unwrap().counters.n_out_frames,
        out_before - 1,
        "a refused frame is not counted as sent"
    );
    assert!(
        fwd.poll_transmit(now).is_none(),
        "nothing leaves a blocked face"
    );
    assert!(
        fwd.poll_timeout().is_none_or(|t| t > now),
        "a blocked face asks for no wake-up (the shell tells when it can write)"
    );
    // Writable again: the refused frame first, then the rest, in order.
    fwd.face_writable(consumer);
    let mut names = Vec::new();
    while let Some(t) = fwd.poll_transmit(now) {
        assert_eq!(t.face, consumer);
        let (_, pkt) = icn_tlv::decode_packet(t.bytes).unwrap();
        match pkt {
            Some(icn_tlv::NetPacket::Data(d)) => names.push(d.name.to_string()),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(names, ["/p/1", "/p/2", "/p/3", "/p/4"]);
}
