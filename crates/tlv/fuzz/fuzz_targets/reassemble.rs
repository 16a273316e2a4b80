//! Multi-fragment NDNLPv2 sequences through a byte-bounded `Reassembler`:
//! the input is a list of 8-octet fragment records (remote, sequence base,
//! index, count, length, time step), each encoded as an LpPacket on the
//! wire and decoded again, as a face would receive it. Whatever the order,
//! duplicates or lies about FragCount, the reassembler never holds more
//! than its byte budget, never returns a packet over 8800 octets, and its
//! byte count returns to 0 once everything has expired.
//! Run: `scripts/fuzz.sh 60 reassemble` (workspace root), or
//! `cargo fuzz run reassemble fuzz/corpus/reassemble fuzz/seeds/reassemble`
//! from crates/tlv.
#![no_main]

use bytes::Bytes;
use icn_tlv::{LpPacket, Reassembler};
use libfuzzer_sys::fuzz_target;

const MAX_BYTES: usize = 20_000;
const MAX_PACKET: usize = 8800;

fuzz_target!(|input: &[u8]| {
    let mut r = Reassembler::new(8, std::time::Duration::from_millis(500))
        .with_byte_limits(MAX_BYTES, MAX_PACKET);
    let mut now_ns = 0u64;
    for rec in input.chunks_exact(8) {
        let remote = u64::from(rec[0] % 4);
        let base = u64::from(rec[1] % 8) * 1000;
        let count = u64::from(rec[3] % 12) + 1;
        // Mostly valid indices, sometimes FragIndex >= FragCount.
        let index = u64::from(rec[2] % 14);
        let len = usize::from(u16::from_be_bytes([rec[4], rec[5]]) % 3000);
        now_ns += u64::from(u16::from_be_bytes([rec[6], rec[7]])) * 10_000;
        let mut lp = LpPacket::from_fragment(Bytes::from(vec![rec[0]; len]));
        lp.sequence = Some(base + index);
        lp.frag_index = Some(index);
        lp.frag_count = Some(count);
        let Ok(lp) = LpPacket::decode(lp.encode()) else {
            continue;
        };
        if let Ok(Some(whole)) = r.push(now_ns, remote, lp) {
            let len = whole.fragment.as_ref().map_or(0, Bytes::len);
            assert!(len <= MAX_PACKET, "reassembled {len} octets");
        }
        assert!(r.bytes() <= MAX_BYTES, "holding {} octets", r.bytes());
    }
    r.expire(u64::MAX);
    assert_eq!((r.len(), r.bytes()), (0, 0));
});
