//! A driver for instruction-count profiling of one engine exchange, with the
//! setup of `benches/engine.rs` (10 000 FIB prefixes, 100 000 pending PIT
//! entries, unique names, a full CS evicting LRU).
//!
//! ```sh
//! cargo build --release -p icn-forwarder --example engine_profile
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     target/release/examples/engine_profile 100000 20000
//! ```
//!
//! The first argument is the warm-up (exchanges before the measured ones;
//! 70 000 or more fills the CS, so inserts evict), the second the number
//! measured. Instructions per exchange = the collected total / measured.

use std::hint::black_box;

use bytes::Bytes;
use cc_core::Timestamp;
use icn_forwarder::engine::{FaceId, Forwarder};

#[path = "../benches/common/engine_setup.rs"]
mod engine_setup;
use engine_setup::{exchange_pair, loaded_forwarder, PIT_PENDING};

#[inline(never)]
fn exchange(fwd: &mut Forwarder, t: Timestamp, faces: (FaceId, FaceId), i: Bytes, d: Bytes) {
    fwd.handle_packet(t, faces.0, i);
    black_box(fwd.poll_transmit(t));
    fwd.handle_packet(t, faces.1, d);
    black_box(fwd.poll_transmit(t));
}

#[inline(never)]
fn measured(fwd: &mut Forwarder, t: Timestamp, faces: (FaceId, FaceId), pairs: &[(Bytes, Bytes)]) {
    for (i, d) in pairs {
        exchange(fwd, t, faces, i.clone(), d.clone());
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let warm: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let t0 = Timestamp::from_secs_f64(1.0);
    let (mut fwd, consumer, producer) = loaded_forwarder(t0);
    let faces = (consumer, producer);
    for k in 0..warm {
        let (i, d) = exchange_pair(k);
        exchange(&mut fwd, t0, faces, i, d);
    }
    let pairs: Vec<(Bytes, Bytes)> = (warm..warm + n).map(exchange_pair).collect();
    measured(&mut fwd, t0, faces, &pairs);
    assert_eq!(fwd.counters().n_pit_entries as usize, PIT_PENDING);
    println!(
        "{} exchanges measured after {} warm-up; CS {} entries",
        n,
        warm,
        fwd.counters().n_cs_entries
    );
}
