//! The management decoders on arbitrary input: ControlParameters and
//! ControlResponse must round-trip what they decode, and a command built
//! around arbitrary parameter bytes goes through the engine and the
//! manager (`Node`) from a local and from a non-local face without a panic;
//! the non-local face never gets anything but a refusal.
//! Run: `scripts/fuzz.sh 60 mgmt` (workspace root), or
//! `cargo fuzz run mgmt fuzz/corpus/mgmt fuzz/seeds/mgmt` from crates/forwarder.
#![no_main]

use bytes::Bytes;
use cc_core::Timestamp;
use icn_forwarder::engine::{EngineConfig, FaceParams};
use icn_forwarder::mgmt::{classify, ControlParameters, ControlResponse, ManagerConfig};
use icn_forwarder::node::Node;
use icn_tlv::{Component, Interest, Name};
use libfuzzer_sys::fuzz_target;

const MODULES: [(&str, &str); 12] = [
    ("rib", "register"),
    ("rib", "unregister"),
    ("faces", "create"),
    ("faces", "destroy"),
    ("faces", "update"),
    ("fib", "add-nexthop"),
    ("fib", "remove-nexthop"),
    ("strategy-choice", "set"),
    ("strategy-choice", "unset"),
    ("faces", "list"),
    ("faces", "query"),
    ("status", "general"),
];

fuzz_target!(|input: &[u8]| {
    let Some((&sel, rest)) = input.split_first() else {
        return;
    };
    let bytes = Bytes::copy_from_slice(rest);
    if let Ok(p) = ControlParameters::decode(bytes.clone()) {
        assert_eq!(ControlParameters::decode(p.encode()).ok(), Some(p));
    }
    if let Ok(r) = ControlResponse::decode(bytes.clone()) {
        assert_eq!(ControlResponse::decode(r.encode()).ok(), Some(r));
    }
    let (module, verb) = MODULES[usize::from(sel) % MODULES.len()];
    let scope = if sel & 0x80 == 0 {
        "localhost"
    } else {
        "localhop"
    };
    let name = Name::from_components([
        Component::generic(scope),
        Component::generic("nfd"),
        Component::generic(module),
        Component::generic(verb),
        Component::generic(bytes),
    ]);
    let mut i = Interest::new(name);
    i.nonce = Some(u32::from(sel));
    if sel & 0x40 != 0 {
        i.app_params = Some(Bytes::copy_from_slice(rest));
    }
    let wire = i.encode();
    if let Ok(decoded) = Interest::decode(wire.clone()) {
        let _ = classify(&decoded);
    }
    let mut node = Node::new(EngineConfig::default(), ManagerConfig::default(), 1);
    let t = Timestamp::ZERO;
    let local = node.add_face(t, FaceParams::local("fd://3"));
    let remote = node.add_face(t, FaceParams::non_local("udp4://192.0.2.1:6363"));
    node.handle_packet(t, local, wire.clone());
    node.handle_packet(t, remote, wire);
    node.handle_timeout(Timestamp::from_millis(2000));
    while let Some(tx) = node.poll_transmit(Timestamp::from_millis(2000)) {
        if tx.face != remote {
            continue;
        }
        // Whatever reaches the non-local face is a 403 refusal.
        let Ok((_, Some(icn_tlv::NetPacket::Data(d)))) = icn_tlv::decode_packet(tx.bytes) else {
            continue;
        };
        let r = ControlResponse::decode(d.content.clone()).expect("a ControlResponse");
        assert_eq!(r.code, 403, "{r:?}");
    }
    while node.poll_event().is_some() {}
});
