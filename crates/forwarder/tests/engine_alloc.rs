//! Zero heap allocations per forwarded packet on the engine's steady path
//! (issue 21): Interest in → forwarded upstream, Data back → returned
//! downstream and inserted into the Content Store, with `none` and with each
//! scheme on the faces.
//!
//! A counting global allocator counts, per thread, the allocations made while
//! a thread is "armed". Each scheme runs a warm-up (tables reach their caps:
//! CS and Dead Nonce List evict, PIT/CS/DNL slabs and scratch vectors reach
//! their high-water marks, periodic timers have fired) and is then armed for
//! [`MEASURED`] exchanges. Packets arrive the way the daemon hands them over:
//! a batch of wires in one receive buffer, each packet a `Bytes` slice of it
//! (building the batch is not counted, like the socket read it stands for).
//!
//! The CS copy: a CS entry must not pin the receive batch buffer, so copying
//! a Data's wire once into its own buffer on CS insert is a legitimate cost.
//! Allocations of exactly the Data wire size are therefore tallied apart as
//! `cs_copy` and allowed up to one per exchange. Everything else must not
//! happen per exchange (see `assert_no_allocation_per_exchange` for the
//! amortised remainder). Today the engine keeps the received slice (the
//! daemon hands each datagram over in its own buffer), so `cs_copy` reads 0.
//!
//! `ICN_ALLOC_TRACE=1 cargo test -p icn-forwarder --test engine_alloc -- --nocapture`
//! prints a backtrace of the first few counted allocations of each scheme
//! (`ICN_ALLOC_SKIP=<bytes>` leaves allocations of that size out).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::cc::{CcConfig, CcScheme};
use icn_forwarder::engine::{EngineConfig, FaceId, FaceParams};
use icn_forwarder::router::{build, Router, RouterConfig};
use icn_tlv::{Component, Data, Interest, Name};

/// Exchanges measured per scheme.
const MEASURED: u64 = 100_000;
/// Exchanges run before measuring: several times every table cap below,
/// and longer than an Interest lifetime (5 s of virtual time > 4 s), so the
/// PIT's expiry queue has reached its steady length too.
const WARMUP: u64 = 50_000;
/// Exchanges per receive batch buffer.
const BATCH: u64 = 1_000;
/// Content bytes per Data (the 1 KiB load).
const CONTENT_BYTES: usize = 1024;
/// Distinct flow prefixes (QSCCP/CCC/WinCM keep per-prefix state).
const FLOWS: u64 = 64;
/// Time between exchanges (10 000 exchanges/s): 1 KiB Data at 10 Gbit/s
/// take 0.8 µs, so no shaper or scheduler holds a packet back, and every
/// 100 ms control period ends in the measured window a thousand times.
const STEP_NS: u64 = 100_000;
/// Backtraces printed per scheme under `ICN_ALLOC_TRACE`.
const TRACE_MAX: u64 = 24;

struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static IN_TRACE: Cell<bool> = const { Cell::new(false) };
    static OTHER: Cell<u64> = const { Cell::new(0) };
    static OTHER_BYTES: Cell<u64> = const { Cell::new(0) };
    static CS_COPY: Cell<u64> = const { Cell::new(0) };
    static CS_COPY_SIZE: Cell<usize> = const { Cell::new(usize::MAX) };
    static TRACED: Cell<u64> = const { Cell::new(0) };
}
static TRACE: AtomicBool = AtomicBool::new(false);
/// A size left out of the traces (`ICN_ALLOC_SKIP`), to see past a known site.
static SKIP_SIZE: AtomicUsize = AtomicUsize::new(usize::MAX);

impl Counting {
    fn note(size: usize) {
        // `try_with`: thread-locals may be gone while a thread exits.
        if !ARMED.try_with(Cell::get).unwrap_or(false) {
            return;
        }
        if IN_TRACE.with(Cell::get) {
            return;
        }
        if size == CS_COPY_SIZE.with(Cell::get) {
            CS_COPY.with(|c| c.set(c.get() + 1));
            return;
        }
        OTHER.with(|c| c.set(c.get() + 1));
        OTHER_BYTES.with(|c| c.set(c.get() + size as u64));
        if TRACE.load(Ordering::Relaxed)
            && size != SKIP_SIZE.load(Ordering::Relaxed)
            && TRACED.with(Cell::get) < TRACE_MAX
        {
            IN_TRACE.with(|t| t.set(true));
            TRACED.with(|c| c.set(c.get() + 1));
            let bt = std::backtrace::Backtrace::force_capture();
            eprintln!("--- counted allocation of {size} bytes:\n{bt}");
            IN_TRACE.with(|t| t.set(false));
        }
    }
}

// SAFETY: every call forwards to `System` unchanged; the bookkeeping only
// touches const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::note(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::note(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::note(new_size);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counted allocations of one measured run.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    other: u64,
    other_bytes: u64,
    cs_copy: u64,
}

fn arm(on: bool) {
    ARMED.with(|a| a.set(on));
}

fn take_tally() -> Tally {
    Tally {
        other: OTHER.with(|c| c.replace(0)),
        other_bytes: OTHER_BYTES.with(|c| c.replace(0)),
        cs_copy: CS_COPY.with(|c| c.replace(0)),
    }
}

fn name_of(k: u64) -> Name {
    Name::root()
        .append(Component::generic(Bytes::from_static(b"icn")))
        .append(Component::generic(Bytes::from(format!("obj{}", k % FLOWS))))
        .append(Component::segment(k))
}

/// One receive buffer holding the Interest and Data wires of exchanges
/// `first..first + BATCH`, and the slices of it the engine is handed.
fn batch(first: u64, content: &Bytes) -> Vec<(Bytes, Bytes)> {
    let mut buf = Vec::new();
    let mut spans = Vec::new();
    for k in first..first + BATCH {
        let name = name_of(k);
        let mut i = Interest::new(name.clone());
        i.nonce = Some(k as u32 ^ 0x5a5a_0000);
        i.lifetime = Some(Duration::from_secs(4));
        let mut d = Data::new(name, content.clone());
        d.meta.freshness_period = Some(Duration::from_secs(10));
        let (i, d) = (i.encode(), d.encode_signed_digest_sha256());
        let at = buf.len();
        buf.extend_from_slice(&i);
        buf.extend_from_slice(&d);
        spans.push((at, i.len(), d.len()));
    }
    let buf = Bytes::from(buf);
    spans
        .into_iter()
        .map(|(at, il, dl)| (buf.slice(at..at + il), buf.slice(at + il..at + il + dl)))
        .collect()
}

/// The Data wire length every exchange uses (all names encode alike).
fn data_wire_len(content: &Bytes) -> usize {
    let mut d = Data::new(name_of(0), content.clone());
    d.meta.freshness_period = Some(Duration::from_secs(10));
    d.encode_signed_digest_sha256().len()
}

struct Rig {
    fwd: Router,
    consumer: FaceId,
    producer: FaceId,
    now: Timestamp,
    forwarded: u64,
    returned: u64,
}

impl Rig {
    fn new(scheme: CcScheme) -> Rig {
        let cfg = RouterConfig {
            engine: EngineConfig {
                // Small caps, so the warm-up runs every table at its cap.
                cs_max_packets: 4096,
                dead_nonce_max: 4096,
                ..EngineConfig::default()
            },
            cc: CcConfig {
                scheme,
                ..CcConfig::default()
            },
            ..RouterConfig::default()
        };
        let mut fwd = build(&cfg, 21);
        let now = Timestamp::from_secs_f64(1.0);
        let cap = 10_000_000_000;
        let consumer = fwd.add_face(
            now,
            FaceParams::local("unix:///alloc/consumer").with_capacity_bps(cap),
        );
        let producer = fwd.add_face(
            now,
            FaceParams::non_local("udp4://192.0.2.1:6363").with_capacity_bps(cap),
        );
        let prefix = Name::root().append(Component::generic(Bytes::from_static(b"icn")));
        fwd.fib_add_nexthop(&prefix, producer, 10)
            .expect("one FIB entry fits");
        Rig {
            fwd,
            consumer,
            producer,
            now,
            forwarded: 0,
            returned: 0,
        }
    }

    /// Everything the engine has to send now, tallied by face.
    fn drain(&mut self) {
        while let Some(tx) = self.fwd.poll_transmit(self.now) {
            if tx.face == self.producer {
                self.forwarded += 1;
            } else if tx.face == self.consumer {
                self.returned += 1;
            }
        }
    }

    fn exchange(&mut self, interest: Bytes, data: Bytes) {
        self.now += Duration::from_nanos(STEP_NS);
        if self.fwd.poll_timeout().is_some_and(|t| t <= self.now) {
            self.fwd.handle_timeout(self.now);
        }
        self.fwd.handle_packet(self.now, self.consumer, interest);
        self.drain();
        self.fwd.handle_packet(self.now, self.producer, data);
        self.drain();
    }

    /// Runs `n` exchanges from `first`; only the engine calls are counted
    /// when `counted`.
    fn run(&mut self, first: u64, n: u64, content: &Bytes, counted: bool) {
        let mut k = first;
        while k < first + n {
            let wires = batch(k, content);
            arm(counted);
            for (i, d) in wires.iter() {
                self.exchange(i.clone(), d.clone());
            }
            arm(false);
            drop(wires);
            k += BATCH;
        }
    }
}

/// Runs the warm-up and the measured exchanges of `scheme`; returns the
/// measured tally after checking every exchange went through.
fn measure(scheme: CcScheme) -> Tally {
    TRACE.store(
        std::env::var_os("ICN_ALLOC_TRACE").is_some(),
        Ordering::Relaxed,
    );
    if let Some(n) = std::env::var("ICN_ALLOC_SKIP")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        SKIP_SIZE.store(n, Ordering::Relaxed);
    }
    let content = Bytes::from(vec![0xab; CONTENT_BYTES]);
    CS_COPY_SIZE.with(|s| s.set(data_wire_len(&content)));
    let mut rig = Rig::new(scheme);
    rig.run(0, WARMUP, &content, false);
    let (fwd0, ret0) = (rig.forwarded, rig.returned);
    take_tally();
    rig.run(WARMUP, MEASURED, &content, true);
    let t = take_tally();
    let c = rig.fwd.counters();
    println!(
        "{}: {} exchanges, other allocations {} ({} bytes, {:.4}/exchange), CS copies {}, PIT {}",
        scheme.name(),
        MEASURED,
        t.other,
        t.other_bytes,
        t.other as f64 / MEASURED as f64,
        t.cs_copy,
        c.n_pit_entries,
    );
    assert_eq!(rig.forwarded - fwd0, MEASURED, "every Interest forwarded");
    assert_eq!(rig.returned - ret0, MEASURED, "every Data returned");
    assert!(
        c.n_cs_entries > 0,
        "the CS took the Data (else CS insert is not exercised)"
    );
    t
}

/// Nothing on the path allocates per exchange: a per-packet allocation
/// anywhere shows as at least one per exchange (100 000 here). What stays
/// is amortised, not per packet, and is bounded here at one per 50
/// exchanges: the Content Store's ordered name index splits a B-tree node
/// about once per 390 inserts (259 in 100 000), CCC's supervisor builds its
/// per-face flow lists once per period, and per-flow markers come and go
/// with the periodic prune (measured: ccc 1 259, pcon/wincm 1 009, the
/// others 259).
fn assert_no_allocation_per_exchange(scheme: CcScheme) {
    let t = measure(scheme);
    assert!(
        t.other * 50 <= MEASURED,
        "{}: {} allocations ({} bytes) in {MEASURED} exchanges; rerun with ICN_ALLOC_TRACE=1",
        scheme.name(),
        t.other,
        t.other_bytes
    );
    assert!(t.cs_copy <= MEASURED, "at most one CS copy per exchange");
}

#[test]
fn none_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::None);
}

#[test]
fn pcon_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::Pcon);
}

#[test]
fn rcp_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::Rcp);
}

#[test]
fn mircc_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::Mircc);
}

#[test]
fn ccc_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::Ccc);
}

#[test]
fn wincm_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::Wincm);
}

#[test]
fn qsccp_allocates_nothing_per_exchange() {
    assert_no_allocation_per_exchange(CcScheme::Qsccp);
}

/// The counter itself: an allocation inside the armed window is seen.
#[test]
fn the_counter_sees_an_allocation() {
    take_tally();
    arm(true);
    let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(3));
    arm(false);
    drop(v);
    assert_eq!(take_tally().other, 1);
}
