//! Every python-ndn vector decodes to the meaning in the vectors README and
//! re-encodes byte-identically from the decoded fields.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::vectors::{bytes_of, Vector, BAD, VECTORS};
use icn_tlv::{
    decode_packet, types, Component, Data, Interest, LpPacket, NackReason, Name, NetPacket,
};

fn wire(file: &str) -> Bytes {
    let v: &Vector = VECTORS
        .iter()
        .find(|v| v.file == file)
        .expect("vector listed");
    Bytes::from(bytes_of(v.hex).expect("valid hex"))
}

fn from_hex(h: &str) -> Bytes {
    Bytes::from(hex::decode(h).unwrap())
}

#[test]
fn table_matches_testdata_dir() {
    let mut on_disk: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f.ends_with(".hex"))
            .collect();
    on_disk.sort();
    let mut listed: Vec<String> = VECTORS.iter().map(|v| v.file.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    for v in VECTORS {
        assert!(!v.bad);
        let b = bytes_of(v.hex).unwrap();
        let (e, rest) = icn_tlv::element::Element::parse(&b).unwrap();
        assert!(rest.is_empty(), "{}", v.file);
        assert_eq!(e.typ(), v.typ, "{}", v.file);
    }
}

#[test]
fn interest_plain() {
    let w = wire("interest_plain.hex");
    let i = Interest::decode(w.clone()).unwrap();
    assert_eq!(i.name.to_string(), "/example/test");
    assert!(!i.can_be_prefix);
    assert!(i.must_be_fresh);
    assert_eq!(i.nonce, Some(0x1234_5678));
    assert_eq!(i.lifetime, Some(Duration::from_millis(4000)));
    assert_eq!(i.hop_limit, None);
    assert!(i.forwarding_hint.is_empty() && i.app_params.is_none());
    assert_eq!(i.wire(), Some(&w));
    assert_eq!(i.encode(), w);
    assert_eq!(i.encoded_len(), w.len());
}

#[test]
fn interest_app_params() {
    let w = wire("interest_app_params.hex");
    let i = Interest::decode(w.clone()).unwrap();
    assert_eq!(
        i.name.to_string(),
        "/example/test/params-sha256=d88c6f9963f079128a0f678bd931dc608a9ba26cfdfa486b6f0b4f4887fb6838"
    );
    assert_eq!(i.app_params.as_deref(), Some(&b"hello"[..]));
    assert!(i.params_digest_ok());
    assert_eq!(i.encode(), w);
    // Built from scratch without the digest component, encode appends it.
    let mut fresh = Interest::new("/example/test".parse().unwrap());
    fresh.nonce = Some(0x1234_5678);
    fresh.lifetime = Some(Duration::from_millis(4000));
    fresh.app_params = Some(Bytes::from_static(b"hello"));
    assert_eq!(fresh.encode(), w);
    assert_eq!(fresh.encoded_name(), i.name);
}

#[test]
fn name_v1_seg3() {
    let w = wire("name_v1_seg3.hex");
    let n = Name::decode(w.clone()).unwrap();
    assert_eq!(n.to_string(), "/example/test/v=1/seg=3");
    assert_eq!(n.len(), 4);
    assert_eq!(n.get(2).unwrap().as_version(), Some(1));
    assert_eq!(n.get(3).unwrap().as_segment(), Some(3));
    assert_eq!(n.get(2).unwrap().typ(), 54);
    assert_eq!(n.get(3).unwrap().typ(), 50);
    assert_eq!(n.encode(), w);
    assert_eq!("/example/test/v=1/seg=3".parse::<Name>().unwrap(), n);
}

fn check_data_vector(d: &Data) {
    assert_eq!(d.name.to_string(), "/example/test/v=1/seg=3");
    assert_eq!(d.meta.content_type, Some(0));
    assert_eq!(d.meta.freshness_period, Some(Duration::from_millis(10_000)));
    assert_eq!(d.meta.final_block_id, Some(Component::segment(3)));
    assert_eq!(&d.content[..], b"Hello, NDN!");
    assert_eq!(d.sig_type, Some(0));
    assert_eq!(
        hex::encode(d.sig_value.as_ref().unwrap()),
        "8499511cf3ad7600bc38f0bc90246ffaa1efb248c5b47c86693ed5aa0dc8e6e3"
    );
    assert!(d.verify_digest_sha256());
    assert_eq!(
        hex::encode(d.implicit_digest()),
        "448413593aa7584abbd4bbc2948329986f3ba479ad27d05c3b3661a509f72328"
    );
}

#[test]
fn data_digest_sha256() {
    let w = wire("data_digest_sha256.hex");
    let d = Data::decode(w.clone()).unwrap();
    check_data_vector(&d);
    assert_eq!(d.encode(), w);
    // Re-signing from the fields reproduces python-ndn's signature.
    assert_eq!(d.encode_signed_digest_sha256(), w);
    let mut fresh = Data::new(d.name.clone(), Bytes::from_static(b"Hello, NDN!"));
    fresh.meta = d.meta.clone();
    assert_eq!(fresh.encode(), w);
    assert!(fresh.verify_digest_sha256());
    // Tampering breaks the signature.
    let mut t = w.to_vec();
    let pos = t.windows(5).position(|x| x == b"Hello").unwrap();
    t[pos] = b'J';
    assert!(!Data::decode(Bytes::from(t)).unwrap().verify_digest_sha256());
    // Full name and implicit-digest matching.
    let full = d.full_name();
    assert_eq!(full.len(), 5);
    let i = Interest::new(full);
    assert!(i.matches_data(&d));
}

#[test]
fn lp_nack_congestion() {
    let w = wire("lp_nack_congestion.hex");
    let (lp, net) = decode_packet(w.clone()).unwrap();
    assert_eq!(lp.nack, Some(NackReason::Congestion));
    assert_eq!(lp.fragment.as_ref(), Some(&wire("interest_plain.hex")));
    let Some(NetPacket::Interest(i)) = net else {
        panic!("nack carries an Interest")
    };
    assert_eq!(i.name.to_string(), "/example/test");
    assert_eq!(lp.encode(), w);
    assert_eq!(
        LpPacket::nack(NackReason::Congestion, wire("interest_plain.hex")).encode(),
        w
    );
}

#[test]
fn lp_congestion_mark_data() {
    let w = wire("lp_congestion_mark_data.hex");
    let (lp, net) = decode_packet(w.clone()).unwrap();
    assert_eq!(lp.congestion_mark, Some(1));
    assert_eq!(lp.fragment.as_ref(), Some(&wire("data_digest_sha256.hex")));
    let Some(NetPacket::Data(d)) = net else {
        panic!("data")
    };
    check_data_vector(&d);
    assert_eq!(lp.encode(), w);
}

#[test]
fn lp_pittoken_data() {
    let w = wire("lp_pittoken_data.hex");
    let (lp, net) = decode_packet(w.clone()).unwrap();
    assert_eq!(
        lp.pit_token.as_deref(),
        Some(&hex::decode("a1b2c3d4e5f6").unwrap()[..])
    );
    assert!(matches!(net, Some(NetPacket::Data(_))));
    assert_eq!(lp.encode(), w);
}

#[test]
fn lp_idle() {
    let w = wire("lp_idle.hex");
    let (lp, net) = decode_packet(w.clone()).unwrap();
    assert!(lp.is_idle() && !lp.has_header() && net.is_none());
    assert_eq!(lp, LpPacket::default());
    assert_eq!(lp.encode(), w);
}

#[test]
fn rib_register_appv2() {
    let w = wire("rib_register_appv2.hex");
    let i = Interest::decode(w.clone()).unwrap();
    assert_eq!(i.name.len(), 6);
    assert_eq!(i.name.get(0).unwrap().value().as_ref(), b"localhost");
    let cp = i.name.get(4).unwrap();
    assert_eq!(hex::encode(cp.value()), "680b070908076578616d706c65");
    assert_eq!(
        i.name.get(5).unwrap().typ(),
        types::PARAMETERS_SHA256_DIGEST
    );
    assert_eq!(i.nonce, Some(0x0a0b_0c0d));
    assert_eq!(i.lifetime, Some(Duration::from_millis(1000)));
    assert_eq!(i.app_params.as_deref(), Some(&[][..]));
    assert_eq!(i.sig_type(), Some(0));
    assert!(i.params_digest_ok());
    assert!(i.verify_digest_sha256());
    assert_eq!(i.encode(), w);
    // Corrupting the signature value breaks verification but not the digest
    // check's structure.
    let mut t = w.to_vec();
    let last = t.len() - 1;
    t[last] ^= 1;
    let bad = Interest::decode(Bytes::from(t)).unwrap();
    assert!(!bad.verify_digest_sha256());
    assert!(!bad.params_digest_ok());
}

#[test]
fn rib_register_legacy_app() {
    let w = wire("rib_register_legacy_app.hex");
    let i = Interest::decode(w.clone()).unwrap();
    assert_eq!(i.name.len(), 9);
    assert_eq!(
        hex::encode(i.name.get(5).unwrap().value()),
        "0000018bcfe56800"
    );
    assert_eq!(hex::encode(i.name.get(7).unwrap().value()), "16031b0100");
    assert!(i.app_params.is_none() && i.sig_info.is_none());
    assert_eq!(i.lifetime, Some(Duration::from_millis(1000)));
    assert_eq!(i.encode(), w);
}

#[test]
fn rib_register_response() {
    let w = wire("rib_register_response.hex");
    let d = Data::decode(w.clone()).unwrap();
    let cmd = Interest::decode(wire("rib_register_appv2.hex")).unwrap();
    assert_eq!(d.name, cmd.name);
    assert!(cmd.matches_data(&d));
    assert_eq!(d.meta.freshness_period, Some(Duration::from_millis(1000)));
    assert_eq!(hex::encode(&d.content[..4]), "65216601");
    assert!(d.verify_digest_sha256());
    assert_eq!(d.encode(), w);
}

#[test]
fn bad_inputs_rejected() {
    for (h, why) in BAD {
        let b = from_hex(h);
        assert!(
            decode_packet(b.clone()).is_err(),
            "decode_packet accepted: {why}"
        );
    }
    // Data without signature and an unknown critical element inside MetaInfo.
    assert!(Data::decode(from_hex("06050703080161")).is_err());
    assert_eq!(
        Data::decode(from_hex("06110703080161140313010016031b01001700")),
        Err(icn_tlv::TlvError::UnrecognizedCritical(19))
    );
    // The same packet with a non-critical unknown (even, > 31) in MetaInfo decodes.
    assert!(Data::decode(from_hex("06110703080161140328010016031b01001700")).is_ok());
}

#[test]
fn nonce_and_hop_limit_splice() {
    let w = wire("interest_plain.hex");
    let i = Interest::decode(w.clone()).unwrap();
    let n = Interest::decode(i.with_nonce(0xdead_beef)).unwrap();
    assert_eq!(n.nonce, Some(0xdead_beef));
    assert_eq!(n.lifetime, i.lifetime);
    let h = Interest::decode(n.with_hop_limit(7)).unwrap();
    assert_eq!(h.hop_limit, Some(7));
    assert_eq!(h.nonce, Some(0xdead_beef));
    let h2 = Interest::decode(h.with_hop_limit(6)).unwrap();
    assert_eq!(h2.hop_limit, Some(6));
    assert_eq!(h2.wire().unwrap().len(), h.wire().unwrap().len());
    // Inserting a Nonce into an Interest without one keeps spec order.
    let mut no_nonce = i.clone();
    no_nonce.nonce = None;
    let d = Interest::decode(no_nonce.encode()).unwrap();
    let with = Interest::decode(d.with_nonce(5)).unwrap();
    assert_eq!(with.nonce, Some(5));
    assert_eq!(with.with_nonce(0x1234_5678), w);
    // Signed Interest keeps its signature and digest valid after a nonce change.
    let s = Interest::decode(wire("rib_register_appv2.hex")).unwrap();
    let s2 = Interest::decode(s.with_hop_limit(3)).unwrap();
    assert!(s2.verify_digest_sha256() && s2.params_digest_ok());
    assert_eq!(s2.hop_limit, Some(3));
}
