//! Publisher tests: segmentation, signatures, discovery answers.

use super::*;
use std::sync::Arc;

fn publisher(len: usize, seg: usize) -> (Publisher, Bytes) {
    let body: Bytes = (0..len)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<u8>>()
        .into();
    let cfg = PublisherConfig {
        segment_size: seg,
        version: 7,
        ..PublisherConfig::default()
    };
    (
        Publisher::new("/a/b".parse().unwrap(), Content::Memory(body.clone()), cfg),
        body,
    )
}

fn interest(name: &str, cbp: bool) -> Interest {
    let mut i = Interest::new(name.parse().unwrap());
    i.can_be_prefix = cbp;
    i.must_be_fresh = cbp;
    i
}

#[test]
fn segments_carry_content_final_block_and_digest() {
    let (mut p, body) = publisher(2500, 1000);
    assert_eq!(p.segment_count(), 3);
    let mut got = Vec::new();
    for n in 0..3u64 {
        let wire = p
            .handle_interest(&interest(&format!("/a/b/v=7/seg={n}"), false))
            .unwrap();
        let d = Data::decode(wire).unwrap();
        assert!(d.verify_digest_sha256());
        assert_eq!(d.meta.final_block_id, Some(Component::segment(2)));
        got.extend_from_slice(&d.content);
    }
    assert_eq!(got, body.to_vec());
    assert!(p
        .handle_interest(&interest("/a/b/v=7/seg=3", false))
        .is_none());
    assert!(p
        .handle_interest(&interest("/a/b/v=8/seg=0", false))
        .is_none());
    assert!(p.handle_interest(&interest("/other", true)).is_none());
    assert_eq!(p.stats().data_sent, 3);
}

#[test]
fn empty_content_is_one_empty_segment() {
    let (mut p, _) = publisher(0, 1000);
    assert_eq!(p.segment_count(), 1);
    let d = Data::decode(
        p.handle_interest(&interest("/a/b/v=7/seg=0", false))
            .unwrap(),
    )
    .unwrap();
    assert!(d.content.is_empty());
}

#[test]
fn answers_rdr_metadata_and_can_be_prefix_discovery() {
    let (mut p, _) = publisher(10, 1000);
    let md = Data::decode(
        p.handle_interest(&interest("/a/b/32=metadata", true))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        Name::decode(md.content.clone()).unwrap(),
        *p.versioned_name()
    );
    assert!(p
        .handle_interest(&interest("/a/b/32=metadata", false))
        .is_none());
    let d = Data::decode(p.handle_interest(&interest("/a/b", true)).unwrap()).unwrap();
    assert_eq!(d.name.to_string(), "/a/b/v=7/seg=0");
    assert!(p.handle_interest(&interest("/a/b", false)).is_none());
}

#[test]
fn mapped_file_serves_the_same_bytes() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let body: Vec<u8> = (0..20_000u32).map(|i| (i * 7) as u8).collect();
    std::io::Write::write_all(&mut f, &body).unwrap();
    // SAFETY: the temp file is private to this test and not modified while mapped.
    let m = unsafe { memmap2::Mmap::map(f.as_file()) }.unwrap();
    let cfg = PublisherConfig {
        version: 1,
        ..PublisherConfig::default()
    };
    let mut p = Publisher::new("/m".parse().unwrap(), Content::Mapped(Arc::new(m)), cfg);
    assert_eq!(p.segment_count(), 3);
    let d = Data::decode(p.handle_interest(&interest("/m/v=1/seg=2", false)).unwrap()).unwrap();
    assert_eq!(&d.content[..], &body[16_000..]);
}

/// Signing at publish time changes no byte: every segment (the short last
/// one included) and every way of answering, pieces or one buffer, is the
/// Data signed when asked for, and a presigned segment carries a valid
/// digest.
#[test]
fn presigned_segments_are_the_signed_encoding() {
    let (mut p, body) = publisher(25_001, 1000);
    let on_demand: Vec<Bytes> = (0..p.segment_count())
        .map(|n| p.segment(n).unwrap())
        .collect();
    assert!(p.presign());
    for (n, want) in on_demand.iter().enumerate() {
        let n = n as u64;
        assert_eq!(&p.segment(n).unwrap(), want);
        let name = format!("/a/b/v=7/seg={n}");
        let reply = p.reply(&interest(&name, false), &CcFields::default());
        let Some(Reply::Segment(wire)) = reply else {
            panic!("segment {n} not answered in pieces: {reply:?}");
        };
        assert_eq!(&wire.to_bytes(), want);
        let d = Data::decode(wire.to_bytes()).unwrap();
        assert!(d.verify_digest_sha256());
        let start = n as usize * 1000;
        assert_eq!(&d.content[..], &body[start..(start + 1000).min(body.len())]);
    }
    assert!(p.segment(p.segment_count()).is_none());
}

#[test]
fn producer_claims_no_rate_and_echoes_only_facts() {
    let (mut p, _) = publisher(10, 1000);
    let i = interest("/a/b/v=7/seg=0", false);
    // RCP/MIRCC and CCC Interests: bare Data, nothing stamped.
    for cc in [
        CcFields {
            traffic_class: Some(icn_tlv::TrafficClass::Primary),
            steering_hint: Some(12345),
            ..CcFields::default()
        },
        CcFields {
            pace_objective_milli_ips: Some(5_000_000),
            ..CcFields::default()
        },
    ] {
        let wire = p.handle_interest_cc(&i, &cc).unwrap();
        let lp = LpPacket::decode(wire.clone()).unwrap();
        assert!(lp.cc.is_empty(), "{:?}", lp.cc);
        assert!(Data::decode(wire).is_ok(), "bare Data");
    }
    // QSCCP: class and Data size echoed, TargetRate left to the forwarders.
    let cc = CcFields {
        service_class: Some(icn_tlv::ServiceClass::Ef),
        downstream_rate_bps: Some(u64::MAX),
        flow_data_size_bytes: Some(8100),
        ..CcFields::default()
    };
    let wire = p.handle_interest_cc(&i, &cc).unwrap();
    let lp = LpPacket::decode(wire).unwrap();
    let data_len = lp.fragment.as_ref().unwrap().len() as u64;
    assert_eq!(lp.cc.service_class, Some(icn_tlv::ServiceClass::Ef));
    assert_eq!(lp.cc.flow_data_size_bytes, Some(data_len));
    assert_eq!(lp.cc.target_rate_bps, None);
    assert_eq!(lp.cc.primary_rate_bps, None);
    assert_eq!(lp.cc.pace_constraint_milli_ips, None);
    let plain = p.handle_interest_cc(&i, &CcFields::default()).unwrap();
    assert!(Data::decode(plain).is_ok());
}
