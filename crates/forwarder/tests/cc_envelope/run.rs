//! One sweep point: a topology built from real engines in the virtual-time
//! network, one icncat scheme consumer per flow (icn_consumer::Scheme: the
//! law plus its per-Interest fields, as `icncat --cc <scheme>` runs it), a
//! producer per flow, and the figures the bounds are checked on.

use cc_core::{ConsumerLaw, Duration, Timestamp};
use icn_consumer::{RateSpec, Scheme, SchemeOptions};
use icn_forwarder::cc::CcScheme;
use icn_forwarder::engine::{DropReason, FaceId};
use icn_sim::envelope::{Figures, Topology};
use icn_sim::net::flows::{drive, jain, quantile, LawFlow};
use icn_sim::net::{LinkParams, Network, NodeId, Wire};

use crate::cc_common::{engine, law, link, scheme_flow};

/// What one run measured over the last half: the figures the bounds judge
/// (`icn_sim::envelope::Figures`: flow rates in the bottleneck's frame
/// bytes, its Data backlog plus the Interests held on its reverse face
/// sampled every 10 ms, congestion drops on every node), and the
/// congestion Nacks the consumers received.
#[derive(Debug, Clone)]
pub struct Run {
    pub figures: Figures,
    pub nacks: u64,
}

/// A numeric knob from the environment (`None` if unset or not a number).
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// A link of `capacity_bps` and one-way `delay_ms`; its wire serialises
/// at the capacity, or with `testbed_wire` (`ICN_ENVELOPE_WIRE=testbed`)
/// is the namespace testbed's veth (a fast wire under tc's tbf above the
/// faces' pacing, so a lone frame takes no serialisation time:
/// `icn_sim::net::Wire`).
fn grid_link(capacity_bps: u64, delay_ms: u64, testbed_wire: bool) -> LinkParams {
    let mut p = link(0, delay_ms);
    p.capacity_bps = Some(capacity_bps);
    if testbed_wire {
        p.wire = Wire::testbed(capacity_bps);
    }
    p
}

/// The consumer options icncat would use for `scheme`.
fn consumer(scheme: CcScheme, data_bytes: usize) -> SchemeOptions {
    let kind = law(scheme, 0.0).kind();
    SchemeOptions {
        kind,
        initial_data_size_bytes: data_bytes as f64 + 100.0,
        // A CCC consumer asking for more than any link here carries.
        objective: (scheme == CcScheme::Ccc).then_some(RateSpec::BitsPerSec(1e9)),
        ..SchemeOptions::default()
    }
}

/// How long a point runs: long enough for the slowest RTT to see about
/// sixty round trips in the measured half, and for the slowest flow to
/// bring sixty Data of `content_bytes` at its max-min share before it. A
/// rate law's control step is a round trip only while each flow brings
/// Data faster than that: ten flows of 8000-byte Data on 2 Mbit/s bring
/// 3 Data a second each, QSCCP's period stretches to 1.3 s so that each
/// flow brings four, and its start-up transient (Interests held at the
/// bottleneck, 30 at 2.5 s) had drained only at 6.5 s, inside the 8.8 s
/// the RTT rule gave (the measured half began at 4.4 s). At most 30 s,
/// the issue's own run length.
pub fn run_ms(t: &Topology, content_bytes: usize) -> u64 {
    let rtt = t.flows.iter().map(|f| t.base_rtt_ms(f)).max().unwrap_or(10);
    let slowest_bps = t.max_min_shares().into_iter().fold(f64::INFINITY, f64::min);
    let data_ms = if slowest_bps.is_finite() && slowest_bps > 0.0 {
        (60.0 * content_bytes as f64 * 8.0 / slowest_bps * 1e3) as u64
    } else {
        0
    };
    // `ICN_ENVELOPE_RUN_SCALE=4` runs every point four times longer: a law
    // that drifts with the run's length shows there.
    let scale = env_u64("ICN_ENVELOPE_RUN_SCALE").unwrap_or(1).clamp(1, 16);
    (8_000 + 80 * rtt).max(2 * data_ms).min(30_000) * scale
}

/// Runs `t` under `scheme` with Data of `content_bytes`.
pub fn run(t: &Topology, scheme: CcScheme, content_bytes: usize, seed: u64) -> Run {
    run_traced(t, scheme, content_bytes, seed, 0, false)
}

/// [`run`], printing every 500 ms (`ICN_ENVELOPE_TRACE_MS`) the flows'
/// Data rates, the bottleneck queues and the rates the bottleneck's
/// upstream face computes when `trace` is set (a PCON AIMD window with the marks it received, the cuts
/// they caused and its smoothed RTT). `lag_draw` picks the consumers'
/// pacing lags (`LawFlow::with_lag_draw`; 0 is the grid's).
pub fn run_traced(
    t: &Topology,
    scheme: CcScheme,
    content_bytes: usize,
    seed: u64,
    lag_draw: u64,
    trace: bool,
) -> Run {
    let testbed_wire = std::env::var("ICN_ENVELOPE_WIRE").is_ok_and(|w| w == "testbed");
    let mut net = Network::new(seed);
    let routers: Vec<NodeId> = (0..t.routers)
        .map(|_| net.add_node(engine(scheme)))
        .collect();
    // (face on a towards b, face on b towards a) per link.
    let faces: Vec<(FaceId, FaceId)> = t
        .links
        .iter()
        .map(|l| {
            net.connect(
                routers[l.a],
                routers[l.b],
                grid_link(l.capacity_bps, l.delay_ms, testbed_wire),
            )
        })
        .collect();
    let access_bps = 10 * t.max_capacity_bps();
    let opts_for = consumer(scheme, content_bytes);
    let end_ms = run_ms(t, content_bytes);
    let mut flows: Vec<LawFlow<Scheme>> = Vec::new();
    for (i, f) in t.flows.iter().enumerate() {
        let prefix = format!("/f{i}");
        let name: icn_tlv::Name = prefix.parse().expect("prefix");
        let (first, last) = (f.path[0], *f.path.last().expect("path"));
        // Producer node behind the last router.
        let pn = net.add_node(engine(scheme));
        let (to_p, _) = net.connect(routers[last], pn, grid_link(access_bps, 1, testbed_wire));
        net.add_producer(pn, &prefix, content_bytes, None);
        net.node_mut(routers[last])
            .fib_add_nexthop(&name, to_p, 1)
            .expect("fib");
        // Consumer node in front of the first router.
        let cn = net.add_node(engine(scheme));
        let (to_r, _) = net.connect(
            cn,
            routers[first],
            grid_link(access_bps, 1 + f.access_delay_ms, testbed_wire),
        );
        net.node_mut(cn)
            .fib_add_nexthop(&name, to_r, 1)
            .expect("fib");
        for w in f.path.windows(2) {
            let l = t.link_between(w[0], w[1]).expect("link on path");
            let face = if t.links[l].a == w[0] {
                faces[l].0
            } else {
                faces[l].1
            };
            net.node_mut(routers[w[0]])
                .fib_add_nexthop(&name, face, 1)
                .expect("fib");
        }
        let app = net.add_consumer(cn);
        let start = Timestamp::ZERO + Duration::from_millis(100 * i as u64);
        let stop = Timestamp::ZERO + Duration::from_millis(end_ms);
        flows.push(
            scheme_flow(app, &prefix, &opts_for, start, stop, 7 + i as u64).with_lag_draw(lag_draw),
        );
    }
    let half = Timestamp::ZERO + Duration::from_millis(end_ms / 2);
    let end = Timestamp::ZERO + Duration::from_millis(end_ms);
    let bottlenecks0: Vec<usize> = (0..t.links.len())
        .filter(|&l| t.links[l].bottleneck)
        .collect();
    let print = |net: &Network, flows: &[LawFlow<Scheme>], from: Timestamp| {
        let now = net.now();
        let rates: Vec<String> = flows
            .iter()
            .map(|f| format!("{:.2}", f.stats.goodput_bps(from, now) / 1e6))
            .collect();
        let links: Vec<String> = bottlenecks0
            .iter()
            .map(|&l| {
                let lk = &t.links[l];
                let up = net.node(routers[lk.a]).face(faces[l].0);
                let down = net.node(routers[lk.b]).face(faces[l].1);
                format!(
                    "L{l}: data_q={} marks={} held={} R={:?} Rs={:?} target={:?}",
                    down.map_or(0, |f| f.queue.data_packets),
                    down.map_or(0, |f| f.cc.aqm_marks),
                    up.map_or(0, |f| f.queue.interest_packets + f.queue.cc_held_interests),
                    up.and_then(|f| f.cc.primary_rate_bps),
                    up.and_then(|f| f.cc.secondary_rate_bps),
                    up.and_then(|f| f.cc.target_rate_bps),
                )
            })
            .collect();
        let limits: Vec<String> = flows
            .iter()
            .map(|f| match f.law.limit() {
                cc_core::SendLimit::Rate {
                    interests_per_sec, ..
                } => format!("{interests_per_sec:.1}/s"),
                cc_core::SendLimit::Window { interests } => match f.law.law() {
                    cc_core::AnyConsumerLaw::Pcon(cc_core::pcon::PconConsumer::Aimd(a)) => {
                        let s = a.stats();
                        format!(
                            "w{interests:.1}/m{}/c{}/rtt{:.0}",
                            s.marks,
                            s.mark_decreases,
                            a.rtt().srtt().map_or(0.0, |d| d.as_secs_f64() * 1e3)
                        )
                    }
                    _ => format!("w{interests:.1}"),
                },
            })
            .collect();
        eprintln!(
            "t={:.1}s flows Mbit/s [{}] limits [{}] {}",
            now.as_secs_f64(),
            rates.join(" "),
            limits.join(" "),
            links.join(" | ")
        );
    };
    let step = Duration::from_millis(env_u64("ICN_ENVELOPE_TRACE_MS").unwrap_or(500));
    if trace {
        while net.now() < half {
            let from = net.now();
            drive(
                &mut net,
                &mut flows,
                (from + step).min(half),
                Duration::from_millis(1),
            );
            print(&net, &flows, from);
        }
    } else {
        drive(&mut net, &mut flows, half, Duration::from_millis(1));
    }
    let bottlenecks: Vec<usize> = (0..t.links.len())
        .filter(|&l| t.links[l].bottleneck)
        .collect();
    // Data leaves router b towards a on the link: that face's counters.
    let delivered = |net: &Network, l: usize| {
        net.link_delivered(routers[t.links[l].b], faces[l].1)
            .map_or((0, 0), |(fr, b, _)| (fr, b))
    };
    let at_half: Vec<(u64, u64)> = bottlenecks.iter().map(|&l| delivered(&net, l)).collect();
    let drops_at_half = congestion_drops(&net);
    let nacks_at_half: u64 = flows.iter().map(|f| f.stats.congestion_nacks).sum();
    // (Data bytes queued, Interests held) per sample and bottleneck.
    let mut queue: Vec<Vec<(usize, usize)>> = vec![Vec::new(); bottlenecks.len()];
    let sample = Duration::from_millis(10);
    // The trace's rates in the last half are over the time since its last
    // line, as in the first half (not over the last 10 ms sample).
    let mut printed = net.now();
    while net.now() < end {
        let next = (net.now() + sample).min(end);
        drive(&mut net, &mut flows, next, Duration::from_millis(1));
        if trace && next.saturating_since(printed) >= step {
            print(&net, &flows, printed);
            printed = next;
        }
        for (k, &l) in bottlenecks.iter().enumerate() {
            let lk = &t.links[l];
            let data_q = net
                .node(routers[lk.b])
                .face(faces[l].1)
                .map_or(0, |f| f.queue.data_bytes);
            let held = net
                .node(routers[lk.a])
                .face(faces[l].0)
                .map_or(0, |f| f.queue.interest_packets + f.queue.cc_held_interests);
            queue[k].push((data_q, held));
        }
    }
    let secs = Duration::from_millis(end_ms - end_ms / 2).as_secs_f64();
    let mut utilisation = Vec::new();
    let (mut frames, mut frame_bytes) = (0u64, 0u64);
    for (k, &l) in bottlenecks.iter().enumerate() {
        let (fr, b) = delivered(&net, l);
        let (fr0, b0) = at_half[k];
        frames += fr - fr0;
        frame_bytes += b - b0;
        utilisation.push((b - b0) as f64 * 8.0 / secs / t.links[l].capacity_bps as f64);
    }
    let frame_bytes = frame_bytes as f64 / frames.max(1) as f64;
    let data_rates: Vec<f64> = flows
        .iter()
        .map(|f| f.stats.goodput_bps(half, end))
        .collect();
    let data_bytes: f64 = {
        let (n, b) = flows.iter().fold((0usize, 0usize), |(n, b), f| {
            let d = f.stats.data.iter().filter(|(t, _)| *t >= half);
            let (dn, db) = d.fold((0, 0), |(n, b), (_, s)| (n + 1, b + s));
            (n + dn, b + db)
        });
        b as f64 / n.max(1) as f64
    };
    let scale = if data_bytes > 0.0 {
        frame_bytes / data_bytes
    } else {
        1.0
    };
    let flow_bps: Vec<f64> = data_rates.iter().map(|r| r * scale).collect();
    // Held Interests count at the Data frame size the bottleneck carried,
    // the size the bounds' Data serialisations are computed with.
    let p95 = queue
        .iter()
        .zip(&bottlenecks)
        .map(|(q, &l)| {
            let cap = t.links[l].capacity_bps as f64;
            let d: Vec<Duration> = q
                .iter()
                .map(|&(data, held)| {
                    let bytes = data as f64 + held as f64 * frame_bytes;
                    Duration::from_nanos((bytes * 8.0 / cap * 1e9) as u64)
                })
                .collect();
            quantile(&d, 0.95).as_secs_f64() * 1e3
        })
        .fold(0.0, f64::max);
    let nacks: u64 = flows.iter().map(|f| f.stats.congestion_nacks).sum();
    Run {
        figures: Figures {
            jain: jain(&flow_bps),
            utilisation,
            flow_bps,
            p95_queue_ms: p95,
            drops: congestion_drops(&net) - drops_at_half,
            frame_bytes,
        },
        nacks: nacks - nacks_at_half,
    }
}

/// Congestion drops (queue full, AQM) so far on every node.
fn congestion_drops(net: &Network) -> u64 {
    (0..net.node_count())
        .map(|n| {
            let d = net.node(NodeId(n)).counters().drops;
            d.get(DropReason::QueueFull)
        })
        .sum()
}
