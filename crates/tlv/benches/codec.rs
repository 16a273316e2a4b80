//! Codec hot paths: decode an Interest, decode a 1 KiB Data, rewrite one LP
//! header field around an unchanged Data, encode an Interest.

#[path = "../tests/common/vectors.rs"]
mod vectors;

use std::hint::black_box;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icn_tlv::{decode_packet, Data, Interest, LpPacket, Name};
use vectors::{bytes_of, VECTORS};

fn vector(file: &str) -> Bytes {
    let v = VECTORS.iter().find(|v| v.file == file).expect("vector");
    Bytes::from(bytes_of(v.hex).expect("hex"))
}

fn data_1k() -> Bytes {
    let name: Name = "/example/video/v=1/seg=42".parse().expect("name");
    let mut d = Data::new(name, Bytes::from(vec![0xA5u8; 1024]));
    d.meta.freshness_period = Some(Duration::from_secs(10));
    d.encode()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("tlv");
    g.throughput(Throughput::Elements(1));

    let interest = vector("interest_plain.hex");
    g.bench_function("decode_interest", |b| {
        b.iter(|| Interest::decode(black_box(interest.clone())).expect("decode"))
    });
    g.bench_function("decode_packet_interest", |b| {
        b.iter(|| decode_packet(black_box(interest.clone())).expect("decode"))
    });

    let data = data_1k();
    g.bench_function("decode_data_1k", |b| {
        b.iter(|| Data::decode(black_box(data.clone())).expect("decode"))
    });

    // LpPacket{PitToken, Fragment=<1 KiB Data>}: decode, set CongestionMark, encode.
    let lp_wire = LpPacket {
        pit_token: Some(Bytes::from_static(&[1, 2, 3, 4, 5, 6])),
        fragment: Some(data.clone()),
        ..Default::default()
    }
    .encode();
    let mut out = BytesMut::with_capacity(2048);
    g.bench_function("rewrite_lp_congestion_mark", |b| {
        b.iter(|| {
            let mut lp = LpPacket::decode(black_box(lp_wire.clone())).expect("decode");
            lp.congestion_mark = Some(1);
            out.clear();
            lp.encode_into(&mut out);
            black_box(out.len())
        })
    });

    let mut i = Interest::new("/example/video/v=1/seg=42".parse().expect("name"));
    i.must_be_fresh = true;
    i.nonce = Some(0x1234_5678);
    i.lifetime = Some(Duration::from_millis(4000));
    i.hop_limit = Some(64);
    g.bench_function("encode_interest", |b| {
        b.iter(|| {
            out.clear();
            black_box(&i).encode_into(&mut out);
            black_box(out.len())
        })
    });
    g.bench_function("splice_nonce", |b| {
        let d = Interest::decode(interest.clone()).expect("decode");
        b.iter(|| black_box(&d).with_nonce(black_box(7)))
    });
    g.finish();
}

criterion_group!(tlv, benches);
criterion_main!(tlv);
