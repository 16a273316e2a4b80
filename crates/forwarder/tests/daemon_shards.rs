//! icnfwd with two engine threads (`[engine] threads = 2`, the sharded
//! prototype of issue 21) on loopback: many distinct names fetched through
//! it from a UDP producer all come back, both shards forward, two
//! consumers' Interests for one name are aggregated on the shard that owns
//! the name, and a CanBePrefix Interest is answered by a longer Data that
//! hashes to the other shard.

#[path = "interop/harness.rs"]
mod harness;

use std::collections::HashSet;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use harness::*;
use icn_forwarder::daemon::shard::dispatch;
use icn_tlv::{decode_packet, Data, Interest, Name, NetPacket};

const SHARDS: usize = 2;
/// Bounds every wait on a socket (a hang fails the test, it never passes it).
const WAIT: Duration = Duration::from_secs(10);

fn socket() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s
}

/// icnfwd with 2 engine threads, a producer face and `/p` routed to it.
fn start(dir: &Path, producer: SocketAddr) -> (Proc, SocketAddr, std::path::PathBuf) {
    let port = free_udp_port();
    let extra = format!(
        "[engine]\nthreads = {SHARDS}\n[[face]]\nuri = \"udp4://{producer}\"\n\
         [[route]]\nprefix = \"/p\"\nface = \"udp4://{producer}\"\n"
    );
    let (cfg, sock) = write_config(dir, "shards", port, &extra);
    let p = start_icnfwd("icnfwd", &cfg, &sock);
    (p, format!("127.0.0.1:{port}").parse().unwrap(), sock)
}

fn interest(name: &Name, nonce: u32, can_be_prefix: bool) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.can_be_prefix = can_be_prefix;
    i.lifetime = Some(Duration::from_secs(8));
    i.encode()
}

fn data(name: Name) -> Bytes {
    Data::new(name, Bytes::from_static(&[7u8; 100])).encode_signed_digest_sha256()
}

/// Next Interest or Data on `s` and its sender.
fn recv(s: &UdpSocket) -> (NetPacket, SocketAddr) {
    let mut buf = vec![0u8; 9000];
    loop {
        let (n, from) = s
            .recv_from(&mut buf)
            .expect("nothing arrived within the bound");
        if let Ok((_, Some(p))) = decode_packet(Bytes::copy_from_slice(&buf[..n])) {
            return (p, from);
        }
    }
}

fn shard_of(name: &Name) -> usize {
    dispatch::dest(&data(name.clone()), SHARDS).shard
}

/// The status line "in: <i>i <d>d <n>n ..." of shard 0: Data received.
fn shard0_in_data(sock: &Path) -> u64 {
    let st = status(sock);
    let line = st.lines().find(|l| l.contains("in: ")).expect(&st);
    let d = line
        .split_whitespace()
        .find(|w| w.ends_with('d') && w[..w.len() - 1].parse::<u64>().is_ok());
    d.expect(line).trim_end_matches('d').parse().unwrap()
}

#[test]
fn every_distinct_name_comes_back_and_both_shards_forward() {
    let dir = tempfile::tempdir().unwrap();
    let producer = socket();
    let prod_addr = producer.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let answered = {
        let stop = stop.clone();
        producer
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        std::thread::spawn(move || {
            let mut n = 0u64;
            let mut buf = vec![0u8; 9000];
            while !stop.load(Ordering::Relaxed) {
                let Ok((len, from)) = producer.recv_from(&mut buf) else {
                    continue;
                };
                if let Ok((_, Some(NetPacket::Interest(i)))) =
                    decode_packet(Bytes::copy_from_slice(&buf[..len]))
                {
                    producer.send_to(&data(i.name), from).unwrap();
                    n += 1;
                }
            }
            n
        })
    };
    let (_fwd, fwd, sock) = start(dir.path(), prod_addr);

    const NAMES: u32 = 3000;
    const WINDOW: u32 = 32;
    let names: Vec<Name> = (0..NAMES)
        .map(|k| format!("/p/f{}/{k}", k % 8).parse().unwrap())
        .collect();
    let consumer = socket();
    let mut want: HashSet<Name> = names.iter().cloned().collect();
    let mut sent = 0u32;
    while sent < WINDOW {
        consumer
            .send_to(&interest(&names[sent as usize], sent + 1, false), fwd)
            .unwrap();
        sent += 1;
    }
    while !want.is_empty() {
        let (p, _) = recv(&consumer);
        let NetPacket::Data(d) = p else {
            panic!("not Data: {p:?}")
        };
        assert!(
            want.remove(&d.name),
            "unexpected or repeated Data {}",
            d.name
        );
        if sent < NAMES {
            consumer
                .send_to(&interest(&names[sent as usize], sent + 1, false), fwd)
                .unwrap();
            sent += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    assert_eq!(
        answered.join().unwrap(),
        u64::from(NAMES),
        "one Interest upstream per name"
    );

    // Shard 0 saw exactly the Data of the names that hash to it: the rest
    // went through shard 1.
    let on_shard0 = names.iter().filter(|n| shard_of(n) == 0).count() as u64;
    assert!(on_shard0 > 0 && on_shard0 < u64::from(NAMES), "{on_shard0}");
    assert_eq!(shard0_in_data(&sock), on_shard0);
}

/// A name under `/p/agg` that the rule gives to `shard`.
fn name_on(shard: usize, tag: &str) -> Name {
    (0..)
        .map(|k| format!("/p/agg/{tag}{k}").parse::<Name>().unwrap())
        .find(|n| shard_of(n) == shard)
        .unwrap()
}

#[test]
fn two_consumers_interests_for_one_name_are_aggregated_on_its_shard() {
    let dir = tempfile::tempdir().unwrap();
    let producer = socket();
    let (_fwd, fwd, _sock) = start(dir.path(), producer.local_addr().unwrap());
    for shard in 0..SHARDS {
        let name = name_on(shard, &format!("s{shard}-"));
        let probe = name_on(shard, &format!("probe{shard}-"));
        let (a, b) = (socket(), socket());
        a.send_to(&interest(&name, 1, false), fwd).unwrap();
        let (p, from) = recv(&producer);
        assert!(
            matches!(&p, NetPacket::Interest(i) if i.name == name),
            "{p:?}"
        );
        // B's Interest for the same name, then a probe of the same shard
        // from B: the shard handles B's packets in order, so once the probe
        // reaches the producer, B's Interest has met the PIT entry.
        b.send_to(&interest(&name, 2, false), fwd).unwrap();
        b.send_to(&interest(&probe, 3, false), fwd).unwrap();
        let (p, _) = recv(&producer);
        match &p {
            NetPacket::Interest(i) => assert_eq!(i.name, probe, "B's Interest was not aggregated"),
            other => panic!("{other:?}"),
        }
        producer.send_to(&data(name.clone()), from).unwrap();
        for c in [&a, &b] {
            let (p, _) = recv(c);
            assert!(matches!(&p, NetPacket::Data(d) if d.name == name), "{p:?}");
        }
        producer.send_to(&data(probe.clone()), from).unwrap();
        let (p, _) = recv(&b);
        assert!(matches!(&p, NetPacket::Data(d) if d.name == probe), "{p:?}");
    }
}

#[test]
fn a_can_be_prefix_interest_is_answered_by_a_data_of_the_other_shard() {
    let dir = tempfile::tempdir().unwrap();
    let producer = socket();
    let (_fwd, fwd, _sock) = start(dir.path(), producer.local_addr().unwrap());
    // CanBePrefix Interests live on shard 0; the Data's own name hashes to
    // shard 1, which finds no PIT entry and hands it to shard 0.
    let (prefix, long) = (0..)
        .map(|k| {
            let p: Name = format!("/p/obj{k}").parse().unwrap();
            let l: Name = format!("/p/obj{k}/v=1/seg=0").parse().unwrap();
            (p, l)
        })
        .find(|(_, l)| shard_of(l) == 1)
        .unwrap();
    let consumer = socket();
    consumer.send_to(&interest(&prefix, 9, true), fwd).unwrap();
    let (p, from) = recv(&producer);
    assert!(
        matches!(&p, NetPacket::Interest(i) if i.name == prefix && i.can_be_prefix),
        "{p:?}"
    );
    producer.send_to(&data(long.clone()), from).unwrap();
    let (p, _) = recv(&consumer);
    assert!(matches!(&p, NetPacket::Data(d) if d.name == long), "{p:?}");
}
