//! A one-router rig for the schemes' engine tests: a downstream face, an
//! upstream face of a given capacity and a route to it, Interests and Data
//! built by name, and the run a Content Store answer is checked with.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{decode_packet, CcFields, Data, Interest, LpPacket, Name, NetPacket};

use crate::config::Config;
use crate::engine::{FaceId, FaceParams};
use crate::router::{build, Router};

/// A router running `cc_toml` (a `[cc]` section), its downstream face and
/// an upstream face of `up_bps` with the route for `/p`.
pub(crate) fn router(cc_toml: &str, up_bps: u64) -> (Router, FaceId, FaceId) {
    let cfg = Config::from_toml_str(cc_toml).unwrap().router_config();
    let mut f = build(&cfg, 7);
    let t0 = Timestamp::from_millis(1);
    let down = f.add_face(t0, FaceParams::non_local("sim://down"));
    let up = f.add_face(
        t0,
        FaceParams::non_local("sim://up").with_capacity_bps(up_bps),
    );
    f.fib_add_nexthop(&"/p".parse::<Name>().unwrap(), up, 0)
        .unwrap();
    (f, down, up)
}

/// An Interest for `name` with `nonce` and a 10 s lifetime.
pub(crate) fn interest(name: &Name, nonce: u32) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime = Some(core::time::Duration::from_secs(10));
    i.encode()
}

/// A 1000-byte Data for `name` under an LP header carrying `cc`.
pub(crate) fn data(name: &Name, cc: CcFields) -> Bytes {
    let d = Data::new(name.clone(), Bytes::from(vec![0u8; 1000]));
    LpPacket {
        cc,
        fragment: Some(d.encode()),
        ..LpPacket::default()
    }
    .encode()
}

/// What went down in [`store_answer_run`]: the LP fields of each Data
/// that came from upstream, and of the one the Content Store answered.
pub(crate) struct StoreAnswer {
    pub from_upstream: Vec<CcFields>,
    pub from_store: Option<CcFields>,
    pub store_hits: u64,
}

/// `/p/a/seg=N` asked every 10 ms for 1.5 s, each answered at once from
/// upstream with `upstream_cc`; then segment 50 is asked again (a
/// retransmission with a new nonce), which the Content Store answers.
pub(crate) fn store_answer_run(
    f: &mut Router,
    down: FaceId,
    up: FaceId,
    upstream_cc: CcFields,
) -> StoreAnswer {
    let seg = |n: u64| -> Name { format!("/p/a/seg={n}").parse().unwrap() };
    let again = seg(50);
    let mut out = StoreAnswer {
        from_upstream: Vec::new(),
        from_store: None,
        store_hits: 0,
    };
    for ms in 2..2_000u64 {
        let now = Timestamp::from_millis(ms);
        if ms % 10 == 0 && ms <= 1_500 {
            f.handle_packet(now, down, interest(&seg(ms / 10), ms as u32));
        }
        if ms == 1_800 {
            f.handle_packet(now, down, interest(&again, 1));
        }
        if f.poll_timeout().is_some_and(|t| t <= now) {
            f.handle_timeout(now);
        }
        while let Some(tx) = f.poll_transmit(now) {
            let (lp, pkt) = decode_packet(tx.bytes).unwrap();
            match pkt {
                Some(NetPacket::Interest(i)) if tx.face == up => {
                    f.handle_packet(now, up, data(&i.name, upstream_cc));
                }
                Some(NetPacket::Data(d)) if tx.face == down => {
                    if ms >= 1_800 && d.name == again {
                        out.from_store = Some(lp.cc);
                    } else {
                        out.from_upstream.push(lp.cc);
                    }
                }
                _ => {}
            }
        }
    }
    out.store_hits = f.counters().n_cs_hits;
    out
}
