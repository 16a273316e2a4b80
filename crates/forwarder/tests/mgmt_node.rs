//! The management module driven through `Node` with the real engine:
//! python-ndn's exact register commands in, the exact accepted reply out,
//! and the registered route used for forwarding.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_forwarder::engine::{FaceId, FaceParams, Transmit};
use icn_forwarder::mgmt::{ControlParameters, ControlResponse, FaceUri};
use icn_forwarder::node::{Node, NodeEvent};
use icn_forwarder::router::RouterConfig;
use icn_tlv::{Component, Data, Interest, Name};

fn vector(name: &str) -> Bytes {
    let path = format!("{}/../tlv/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("vector file");
    Bytes::from(hex::decode(text.trim()).unwrap())
}

fn node() -> Node {
    Node::new(RouterConfig::default(), Default::default(), 7)
}

fn drain(n: &mut Node, now: Timestamp) -> Vec<Transmit> {
    std::iter::from_fn(|| n.poll_transmit(now)).collect()
}

fn reply_of(t: &Transmit) -> (Data, ControlResponse) {
    let d = Data::decode(t.bytes.clone()).expect("reply is a bare Data");
    let r = ControlResponse::decode(d.content.clone()).unwrap();
    (d, r)
}

#[test]
fn appv2_register_through_node_matches_vector_and_routes() {
    let mut n = node();
    let now = Timestamp::from_millis(1);
    let app = n.add_face(now, FaceParams::local("fd://3"));
    assert_eq!(app, FaceId(256));
    let consumer = n.add_face(now, FaceParams::local("fd://4"));
    n.handle_packet(now, app, vector("rib_register_appv2.hex"));
    let out = drain(&mut n, now);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, app);
    assert_eq!(out[0].bytes, vector("rib_register_response.hex"));

    // An Interest under /example from another face now reaches the producer.
    let mut i = Interest::new("/example/data".parse().unwrap());
    i.nonce = Some(0x1234_5678);
    n.handle_packet(now, consumer, i.encode());
    let out = drain(&mut n, now);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].face, app);
}

#[test]
fn legacy_register_and_unregister_through_node() {
    let mut n = node();
    let now = Timestamp::from_millis(1);
    let app = n.add_face(now, FaceParams::local("fd://3"));
    n.handle_packet(now, app, vector("rib_register_legacy_app.hex"));
    let out = drain(&mut n, now);
    let (d, r) = reply_of(&out[0]);
    assert_eq!(
        d.name,
        Interest::decode(vector("rib_register_legacy_app.hex"))
            .unwrap()
            .name
    );
    assert!(d.verify_digest_sha256());
    assert_eq!(r.code, 200);
    assert!(n
        .forwarder()
        .fib_entries()
        .any(|(p, _)| p.to_string() == "/example"));

    let p = ControlParameters {
        name: Some("/example".parse().unwrap()),
        ..Default::default()
    };
    let mut un = Interest::new(
        "/localhost/nfd/rib/unregister"
            .parse::<Name>()
            .unwrap()
            .append(Component::generic(p.encode())),
    );
    un.nonce = Some(9);
    n.handle_packet(now, app, un.encode());
    let out = drain(&mut n, now);
    assert_eq!(reply_of(&out[0]).1.code, 200);
    assert!(!n
        .forwarder()
        .fib_entries()
        .any(|(p, _)| p.to_string() == "/example"));
}

#[test]
fn faces_create_round_trip_through_the_shell_api() {
    let mut n = node();
    let now = Timestamp::from_millis(1);
    let app = n.add_face(now, FaceParams::local("fd://3"));
    let p = ControlParameters {
        uri: Some("udp4://127.0.0.1:7000".into()),
        ..Default::default()
    };
    let mut i = Interest::new(
        "/localhost/nfd/faces/create"
            .parse::<Name>()
            .unwrap()
            .append(Component::generic(p.encode())),
    );
    i.nonce = Some(1);
    n.handle_packet(now, app, i.encode());
    assert!(drain(&mut n, now).is_empty(), "reply waits for the shell");
    let Some(NodeEvent::CreateFace(req)) = n.poll_event() else {
        panic!("expected CreateFace");
    };
    assert_eq!(req.uri, FaceUri::parse("udp4://127.0.0.1:7000").unwrap());
    let id = n.add_face(now, FaceParams::non_local(req.uri.to_string()));
    n.complete_create_face(now, req.token, Ok(id));
    let out = drain(&mut n, now);
    let (_, r) = reply_of(&out[0]);
    assert_eq!(r.code, 200);
    assert_eq!(r.body.unwrap().face_id, Some(id.0));
    // The face shows up in faces/list.
    let mut l = Interest::new("/localhost/nfd/faces/list".parse().unwrap());
    l.can_be_prefix = true;
    l.nonce = Some(2);
    n.handle_packet(now, app, l.encode());
    let out = drain(&mut n, now);
    let d = Data::decode(out[0].bytes.clone()).unwrap();
    let faces = icn_forwarder::mgmt::dataset::items(d.content.clone()).unwrap();
    assert_eq!(faces.len(), 2);
}

#[test]
fn management_from_non_local_face_under_localhost_is_not_served() {
    let mut n = node();
    let now = Timestamp::from_millis(1);
    let remote = n.add_face(now, FaceParams::non_local("udp4://192.0.2.1:6363"));
    n.handle_packet(now, remote, vector("rib_register_appv2.hex"));
    assert!(drain(&mut n, now).is_empty());
    assert!(n.forwarder().fib_entries().next().is_none());
}

/// Sends `/localhost/nfd/<module>/<verb>/<params>` from `face`; returns the reply.
fn command(
    n: &mut Node,
    face: FaceId,
    module: &str,
    verb: &str,
    prefix: &str,
    nonce: u32,
) -> ControlResponse {
    let now = Timestamp::from_millis(1);
    let p = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..Default::default()
    };
    let mut i = Interest::new(
        format!("/localhost/nfd/{module}/{verb}")
            .parse::<Name>()
            .unwrap()
            .append(Component::generic(p.encode())),
    );
    i.nonce = Some(nonce);
    n.handle_packet(now, face, i.encode());
    let out = drain(n, now);
    assert_eq!(out.len(), 1, "one reply");
    assert_eq!(out[0].face, face);
    reply_of(&out[0]).1
}

/// Whether an Interest for `name` from `from` is forwarded to `to`.
fn routed(n: &mut Node, from: FaceId, to: FaceId, name: &str, nonce: u32) -> bool {
    let now = Timestamp::from_millis(1);
    let mut i = Interest::new(name.parse().unwrap());
    i.nonce = Some(nonce);
    n.handle_packet(now, from, i.encode());
    drain(n, now).iter().any(|t| t.face == to)
}

/// A 200 to rib/register is a promise: the FIB has the next hop, even when
/// it had been removed behind the RIB's back (fib/remove-nexthop), which
/// used to leave the RIB believing it installed and the Interest Nacked
/// NoRoute after a successful re-registration.
#[test]
fn register_after_fib_remove_nexthop_restores_the_route() {
    let mut n = node();
    let now = Timestamp::from_millis(1);
    let app = n.add_face(now, FaceParams::local("fd://3"));
    let consumer = n.add_face(now, FaceParams::local("fd://4"));
    assert_eq!(command(&mut n, app, "rib", "register", "/p", 1).code, 200);
    assert!(routed(&mut n, consumer, app, "/p/1", 101));
    assert_eq!(
        command(&mut n, app, "fib", "remove-nexthop", "/p", 2).code,
        200
    );
    assert!(!routed(&mut n, consumer, app, "/p/2", 102));
    assert_eq!(command(&mut n, app, "rib", "register", "/p", 3).code, 200);
    assert!(routed(&mut n, consumer, app, "/p/3", 103));
}

/// When the FIB cannot take the next hop the reply is not 200 and the RIB
/// does not keep a route the FIB lacks.
#[test]
fn register_refused_by_a_full_fib_is_not_a_200() {
    let cfg = icn_forwarder::engine::EngineConfig {
        fib_max_entries: 1,
        ..Default::default()
    };
    let mut n = Node::new(cfg, Default::default(), 7);
    let now = Timestamp::from_millis(1);
    let app = n.add_face(now, FaceParams::local("fd://3"));
    let consumer = n.add_face(now, FaceParams::local("fd://4"));
    assert_eq!(command(&mut n, app, "rib", "register", "/a", 1).code, 200);
    let r = command(&mut n, app, "rib", "register", "/b", 2);
    assert_eq!(r.code, 500, "{}", r.text);
    assert!(n
        .manager()
        .rib()
        .entries()
        .all(|(p, _)| p.to_string() != "/b"));
    assert!(routed(&mut n, consumer, app, "/a/x", 103));
}
