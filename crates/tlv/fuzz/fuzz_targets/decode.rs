//! Arbitrary bytes through every decoder; whatever decodes must re-encode to
//! something that decodes to the same value. Seeds: `seeds/decode` (the
//! python-ndn vectors of crates/tlv/testdata, as binary). Run from
//! crates/tlv: `cargo fuzz run decode fuzz/corpus/decode fuzz/seeds/decode`
//! (the first directory collects new inputs and is git-ignored).
#![no_main]

use bytes::Bytes;
use icn_tlv::{decode_packet, Data, Interest, LpPacket, Name, Reassembler};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let wire = Bytes::copy_from_slice(input);
    if let Ok(n) = Name::decode(wire.clone()) {
        assert_eq!(n.to_string().parse::<Name>().ok(), Some(n.clone()));
        assert_eq!(Name::decode(n.encode()).ok(), Some(n));
    }
    if let Ok(i) = Interest::decode(wire.clone()) {
        let again = Interest::decode(i.encode()).expect("re-encoded Interest decodes");
        let mut expect = i.clone();
        expect.name = i.encoded_name();
        assert_eq!(again, expect);
        let _ = Interest::decode(i.with_nonce(1)).expect("nonce splice decodes");
        let _ = i.verify_digest_sha256();
    }
    if let Ok(d) = Data::decode(wire.clone()) {
        let again = Data::decode(d.encode()).expect("re-encoded Data decodes");
        assert_eq!(again, d);
        let _ = d.verify_digest_sha256();
    }
    if let Ok((lp, _net)) = decode_packet(wire.clone()) {
        let again = LpPacket::decode(lp.encode()).expect("re-encoded LpPacket decodes");
        assert_eq!(again, lp);
        let mut r = Reassembler::new(4, std::time::Duration::from_millis(500));
        let _ = r.push(0, 1, lp.clone());
        let _ = icn_tlv::fragment(&lp, 100, &mut 0);
    }
});
