use super::*;
use crate::mgmt::dataset::{items, ForwarderStatus};
use crate::mgmt::FaceState;
use icn_tlv::Component;

/// A table-only stand-in for the engine.
#[derive(Default)]
struct Fake {
    faces: Vec<u64>,
    fib: Vec<(Name, u64, u64)>,
    strategies: Vec<(Name, Name)>,
    sent: Vec<(u64, Bytes)>,
}

impl FwdOps for Fake {
    fn face_exists(&self, face: u64) -> bool {
        self.faces.contains(&face)
    }
    fn face_is_local(&self, _face: u64) -> bool {
        true
    }
    fn face_uris(&self, face: u64) -> Option<(String, String)> {
        self.face_exists(face).then(|| {
            (
                format!("udp4://127.0.0.1:{face}"),
                "udp4://127.0.0.1:6363".into(),
            )
        })
    }
    fn face_statuses(&self) -> Vec<FaceStatus> {
        self.faces
            .iter()
            .map(|&f| {
                let (uri, local_uri) = self.face_uris(f).unwrap();
                FaceStatus {
                    face_id: f,
                    uri,
                    local_uri,
                    ..Default::default()
                }
            })
            .collect()
    }
    fn face_states(&self) -> Vec<FaceState> {
        self.faces
            .iter()
            .map(|&f| FaceState {
                face_id: f,
                queue_data: f - 255,
                drops: vec![("queue-full".into(), f)],
                ..Default::default()
            })
            .collect()
    }
    fn fib_entries(&self) -> Vec<FibEntry> {
        self.fib
            .iter()
            .map(|(n, f, c)| FibEntry {
                name: n.clone(),
                next_hops: vec![(*f, *c)],
            })
            .collect()
    }
    fn strategy_choices(&self) -> Vec<StrategyChoiceStatus> {
        self.strategies
            .iter()
            .map(|(n, s)| StrategyChoiceStatus {
                name: n.clone(),
                strategy: s.clone(),
            })
            .collect()
    }
    fn general_counters(&self) -> GeneralCounters {
        GeneralCounters {
            n_fib_entries: self.fib.len() as u64,
            ..Default::default()
        }
    }
    fn fib_add_nexthop(&mut self, prefix: &Name, face: u64, cost: u64) -> bool {
        self.fib.retain(|(n, f, _)| !(n == prefix && *f == face));
        self.fib.push((prefix.clone(), face, cost));
        true
    }
    fn fib_remove_nexthop(&mut self, prefix: &Name, face: u64) {
        self.fib.retain(|(n, f, _)| !(n == prefix && *f == face));
    }
    fn set_strategy(&mut self, prefix: &Name, strategy: &Name) -> Option<Name> {
        let s = strategy.to_string();
        if !s.starts_with("/localhost/nfd/strategy/best-route") {
            return None;
        }
        self.strategies.push((prefix.clone(), strategy.clone()));
        Some(strategy.clone())
    }
    fn unset_strategy(&mut self, prefix: &Name) {
        self.strategies.retain(|(n, _)| n != prefix);
    }
    fn remove_face(&mut self, _now: Timestamp, face: u64) {
        self.faces.retain(|f| *f != face);
    }
    fn send_reply(&mut self, _now: Timestamp, face: u64, data: Bytes) {
        self.sent.push((face, data));
    }
}

fn vector(name: &str) -> Bytes {
    let text = std::fs::read_to_string(format!(
        "{}/../tlv/testdata/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("vector");
    Bytes::from(hex::decode(text.trim()).unwrap())
}

fn setup() -> (Manager, Fake) {
    let fake = Fake {
        faces: vec![256, 257],
        ..Default::default()
    };
    (Manager::new(ManagerConfig::default()), fake)
}

fn response(fake: &Fake, i: usize) -> (Data, ControlResponse) {
    let d = Data::decode(fake.sent[i].1.clone()).unwrap();
    let r = ControlResponse::decode(d.content.clone()).unwrap();
    (d, r)
}

fn command(name: &str, p: &ControlParameters) -> Interest {
    let base: Name = name.parse().unwrap();
    Interest::new(base.append(Component::generic(p.encode())))
}

#[test]
fn appv2_register_reply_is_the_python_ndn_vector() {
    let (mut m, mut f) = setup();
    let i = Interest::decode(vector("rib_register_appv2.hex")).unwrap();
    m.handle_interest(Timestamp::ZERO, &mut f, 256, &i);
    assert_eq!(f.sent.len(), 1);
    assert_eq!(f.sent[0].0, 256);
    assert_eq!(f.sent[0].1, vector("rib_register_response.hex"));
    assert_eq!(f.fib, vec![("/example".parse().unwrap(), 256, 0)]);
}

#[test]
fn bad_digest_signature_is_forbidden_and_not_applied() {
    let (mut m, mut f) = setup();
    let mut w = vector("rib_register_appv2.hex").to_vec();
    *w.last_mut().unwrap() ^= 0x80;
    let i = Interest::decode(Bytes::from(w)).unwrap();
    m.handle_interest(Timestamp::ZERO, &mut f, 256, &i);
    let (d, r) = response(&f, 0);
    assert_eq!(d.name, i.name);
    assert_eq!(r.code, status::FORBIDDEN);
    assert_eq!(r.body.unwrap().name.unwrap().to_string(), "/example");
    assert!(f.fib.is_empty());
    assert_eq!(m.rib().entries().count(), 0);
}

#[test]
fn other_signature_types_are_accepted_unverified() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        name: Some("/other".parse().unwrap()),
        ..Default::default()
    };
    // An ECDSA-typed (3) signature with a value nobody can check here.
    let mut i = crate::mgmt::command::signed_command("rib", "register", &p, 1, 2);
    i.sig_info = Some(Bytes::from_static(&[0x1b, 0x01, 0x03]));
    i.sig_value = Some(Bytes::from(vec![0x55; 64]));
    let i = Interest::decode(i.encode()).unwrap();
    m.handle_interest(Timestamp::ZERO, &mut f, 257, &i);
    assert_eq!(response(&f, 0).1.code, 200);
    assert_eq!(f.fib, vec![("/other".parse().unwrap(), 257, 0)]);
}

#[test]
fn signed_command_helper_is_accepted() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        name: Some("/signed".parse().unwrap()),
        ..Default::default()
    };
    let wire =
        crate::mgmt::command::signed_command("rib", "register", &p, 9, 1_700_000_000_000).encode();
    let i = Interest::decode(wire).unwrap();
    m.handle_interest(Timestamp::ZERO, &mut f, 256, &i);
    assert_eq!(response(&f, 0).1.code, 200);
}

#[test]
fn legacy_register_reply_named_as_command() {
    let (mut m, mut f) = setup();
    let i = Interest::decode(vector("rib_register_legacy_app.hex")).unwrap();
    m.handle_interest(Timestamp::ZERO, &mut f, 257, &i);
    let (d, r) = response(&f, 0);
    assert_eq!(d.name, i.name);
    assert!(d.verify_digest_sha256());
    assert_eq!(r.code, 200);
    assert_eq!(r.body.unwrap().face_id, Some(257));
}

#[test]
fn register_errors_carry_a_body() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        name: Some("/x".parse().unwrap()),
        face_id: Some(999),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/rib/register", &p),
    );
    let (_, r) = response(&f, 0);
    assert_eq!(r.code, 410);
    assert!(r.body.is_some());
    // Missing Name: 400, still with a body.
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhop/nfd/rib/register", &ControlParameters::default()),
    );
    let (_, r) = response(&f, 1);
    assert_eq!(r.code, 400);
    assert!(r.body.is_some());
}

#[test]
fn route_expiry_and_unregister() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        name: Some("/t".parse().unwrap()),
        expiration_period_ms: Some(100),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/rib/register", &p),
    );
    assert_eq!(f.fib.len(), 1);
    assert_eq!(m.poll_timeout(), Some(Timestamp::from_millis(100)));
    m.handle_timeout(Timestamp::from_millis(100), &mut f);
    assert!(f.fib.is_empty());
    let p = ControlParameters {
        name: Some("/u".parse().unwrap()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        257,
        &command("/localhost/nfd/rib/register", &p),
    );
    assert_eq!(f.fib.len(), 1);
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        257,
        &command("/localhost/nfd/rib/unregister", &p),
    );
    assert!(f.fib.is_empty());
    let (_, r) = response(&f, 2);
    assert_eq!(r.body.unwrap().origin, Some(0));
}

#[test]
fn faces_create_goes_through_the_shell() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        uri: Some("udp4://127.0.0.1:7000".into()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/faces/create", &p),
    );
    assert!(f.sent.is_empty());
    let Some(MgmtEvent::CreateFace(req)) = m.poll_event() else {
        panic!("no create event");
    };
    assert_eq!(req.uri.to_string(), "udp4://127.0.0.1:7000");
    f.faces.push(300);
    m.complete_create_face(Timestamp::from_millis(5), &mut f, req.token, Ok(300));
    let (_, r) = response(&f, 0);
    assert_eq!(r.code, 200);
    let body = r.body.unwrap();
    assert_eq!(body.face_id, Some(300));
    assert_eq!(body.mtu, None);
    // Same URI again: 409 with the existing face.
    let p2 = ControlParameters {
        uri: Some("udp4://127.0.0.1:300".into()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/faces/create", &p2),
    );
    let (_, r) = response(&f, 1);
    assert_eq!((r.code, r.body.unwrap().face_id), (409, Some(300)));
    // Unsupported scheme, and a timeout of the shell.
    let p3 = ControlParameters {
        uri: Some("ws://127.0.0.1:9696".into()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/faces/create", &p3),
    );
    assert_eq!(response(&f, 2).1.code, 406);
    let p4 = ControlParameters {
        uri: Some("tcp4://127.0.0.1:9".into()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/faces/create", &p4),
    );
    assert!(m.poll_event().is_some());
    let t = m.poll_timeout().unwrap();
    m.handle_timeout(t, &mut f);
    assert_eq!(response(&f, 3).1.code, 504);
}

#[test]
fn faces_destroy_removes_routes() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        name: Some("/d".parse().unwrap()),
        face_id: Some(257),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/rib/register", &p),
    );
    let d = ControlParameters {
        face_id: Some(257),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/faces/destroy", &d),
    );
    assert_eq!(m.poll_event(), Some(MgmtEvent::DestroyFace { face: 257 }));
    assert!(f.fib.is_empty());
    assert!(m.rib().is_empty());
    assert_eq!(response(&f, 1).1.code, 200);
}

#[test]
fn fib_and_strategy_commands() {
    let (mut m, mut f) = setup();
    let p = ControlParameters {
        name: Some("/f".parse().unwrap()),
        cost: Some(7),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/fib/add-nexthop", &p),
    );
    assert_eq!(f.fib, vec![("/f".parse().unwrap(), 256, 7)]);
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/fib/remove-nexthop", &p),
    );
    assert!(f.fib.is_empty());
    let s = ControlParameters {
        name: Some("/s".parse().unwrap()),
        strategy: Some("/localhost/nfd/strategy/best-route".parse().unwrap()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/strategy-choice/set", &s),
    );
    assert_eq!(response(&f, 2).1.code, 200);
    let bad = ControlParameters {
        strategy: Some("/localhost/nfd/strategy/nope".parse().unwrap()),
        ..s.clone()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/strategy-choice/set", &bad),
    );
    assert_eq!(response(&f, 3).1.code, 404);
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/strategy-choice/unset", &s),
    );
    assert!(f.strategies.is_empty());
    let deep: String = (0..33).map(|i| format!("/{i}")).collect();
    let p = ControlParameters {
        name: Some(deep.parse().unwrap()),
        ..Default::default()
    };
    m.handle_interest(
        Timestamp::ZERO,
        &mut f,
        256,
        &command("/localhost/nfd/fib/add-nexthop", &p),
    );
    assert_eq!(response(&f, 5).1.code, 414);
}

#[test]
fn datasets_are_segmented_and_versioned() {
    let (mut m, mut f) = setup();
    f.faces = (256..700).collect();
    let mut i = Interest::new("/localhost/nfd/faces/list".parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    m.handle_interest(Timestamp::from_millis(7), &mut f, 256, &i);
    let d0 = Data::decode(f.sent[0].1.clone()).unwrap();
    assert_eq!(d0.name.len(), 6);
    assert_eq!(d0.name.get(4).unwrap().as_version(), Some(7));
    assert_eq!(d0.name.get(5).unwrap().as_segment(), Some(0));
    let last = d0
        .meta
        .final_block_id
        .clone()
        .unwrap()
        .as_segment()
        .unwrap();
    assert!(last >= 1, "444 faces need more than one 8000-octet segment");
    let mut payload = d0.content.to_vec();
    for s in 1..=last {
        let next = Interest::new(d0.name.prefix(5).append(Component::segment(s)));
        m.handle_interest(Timestamp::from_millis(8), &mut f, 256, &next);
        let d = Data::decode(f.sent.last().unwrap().1.clone()).unwrap();
        assert_eq!(d.name.get(5).unwrap().as_segment(), Some(s));
        assert!(d.content.len() <= 8000);
        payload.extend_from_slice(&d.content);
    }
    let its = items(Bytes::from(payload)).unwrap();
    assert_eq!(its.len(), 444);
    assert_eq!(
        FaceStatus::decode_value(its[443].clone()).unwrap().face_id,
        699
    );

    // status/general is flat and carries the version string.
    let g = Interest::new("/localhost/nfd/status/general".parse().unwrap());
    m.handle_interest(Timestamp::from_millis(9), &mut f, 256, &g);
    let d = Data::decode(f.sent.last().unwrap().1.clone()).unwrap();
    let s = ForwarderStatus::decode(d.content.clone()).unwrap();
    assert!(s.nfd_version.starts_with("icnfwd"));
    assert_eq!(s.current_timestamp_ms, 9);
}

#[test]
fn single_segment_dataset_is_served_again_by_exact_name() {
    // NDNts (@ndn/nfdmgmt list) re-requests segment 0 of the discovered
    // version without CanBePrefix; found by tests/interop/ndnts.
    let (mut m, mut f) = setup();
    let mut i = Interest::new("/localhost/nfd/rib/list".parse().unwrap());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    m.handle_interest(Timestamp::from_millis(7), &mut f, 256, &i);
    let d0 = Data::decode(f.sent[0].1.clone()).unwrap();
    assert_eq!(
        d0.meta.final_block_id.clone().unwrap().as_segment(),
        Some(0)
    );
    m.handle_interest(
        Timestamp::from_millis(8),
        &mut f,
        256,
        &Interest::new(d0.name.clone()),
    );
    assert_eq!(f.sent.len(), 2, "segment 0 asked again by exact name");
    assert_eq!(Data::decode(f.sent[1].1.clone()).unwrap().name, d0.name);
    // Past the TTL the version is gone, as in NFD: no reply.
    m.handle_timeout(Timestamp::from_millis(8) + DATASET_TTL, &mut f);
    m.handle_interest(
        Timestamp::from_millis(9) + DATASET_TTL,
        &mut f,
        256,
        &Interest::new(d0.name.clone()),
    );
    assert_eq!(f.sent.len(), 2);
}

#[test]
fn faces_query_filters_the_face_list() {
    let (mut m, mut f) = setup();
    f.faces = vec![256, 257, 258];
    let filter = crate::mgmt::FaceQueryFilter {
        uri: Some("udp4://127.0.0.1:257".into()),
        ..Default::default()
    };
    let name: Name = "/localhost/nfd/faces/query".parse().unwrap();
    let mut i = Interest::new(name.append(Component::generic(filter.encode())));
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    m.handle_interest(Timestamp::from_millis(7), &mut f, 256, &i);
    let d = Data::decode(f.sent[0].1.clone()).unwrap();
    // <request incl. filter>/v=<ms>/seg=0, as NDNts' discoverVersion wants.
    assert_eq!(d.name.len(), i.name.len() + 2);
    assert!(i.name.is_prefix_of(&d.name));
    let ids: Vec<u64> = items(d.content.clone())
        .unwrap()
        .into_iter()
        .map(|v| FaceStatus::decode_value(v).unwrap().face_id)
        .collect();
    assert_eq!(ids, [257]);
    // Segment 0 again by exact name.
    m.handle_interest(
        Timestamp::from_millis(8),
        &mut f,
        256,
        &Interest::new(d.name.clone()),
    );
    assert_eq!(f.sent.len(), 2);
    // No filter, or one that does not decode: no reply.
    m.handle_interest(
        Timestamp::from_millis(9),
        &mut f,
        256,
        &Interest::new(name.clone()),
    );
    let bad = name.append(Component::generic(Bytes::from_static(&[0x96, 0x02, 0x69])));
    m.handle_interest(Timestamp::from_millis(9), &mut f, 256, &Interest::new(bad));
    assert_eq!(f.sent.len(), 2);
}

#[test]
fn undecodable_command_gets_no_reply() {
    let (mut m, mut f) = setup();
    let i = Interest::new(
        "/localhost/nfd/rib/register"
            .parse::<Name>()
            .unwrap()
            .append(Component::generic(Bytes::from_static(&[0x68, 0x05, 0x07]))),
    );
    m.handle_interest(Timestamp::ZERO, &mut f, 256, &i);
    assert!(f.sent.is_empty());
}

#[test]
fn icnfwd_state_dataset_lists_every_face() {
    let (mut m, mut f) = setup();
    let mut i = Interest::new("/localhost/nfd/faces/icnfwd-state".parse().unwrap());
    i.can_be_prefix = true;
    m.handle_interest(Timestamp::from_millis(3), &mut f, 256, &i);
    let d = Data::decode(f.sent[0].1.clone()).unwrap();
    assert!(i.name.is_prefix_of(&d.name));
    let states: Vec<FaceState> = items(d.content.clone())
        .unwrap()
        .into_iter()
        .map(|v| FaceState::decode_value(v).unwrap())
        .collect();
    assert_eq!(states.len(), 2);
    assert_eq!(states[1].face_id, 257);
    assert_eq!(states[1].queue_data, 2);
    assert_eq!(states[1].drops, vec![("queue-full".to_string(), 257)]);
}
