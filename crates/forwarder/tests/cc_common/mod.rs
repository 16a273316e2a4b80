//! Shared set-up of the congestion-control virtual-time tests.
#![allow(dead_code)]

use cc_core::{AnyConsumerLaw, ConsumerLaw, ConsumerLawConfig, Duration, LawKind, Timestamp};
use icn_consumer::{Scheme, SchemeOptions};
use icn_forwarder::cc::{CcConfig, CcScheme};
use icn_forwarder::engine::{DropReason, EngineConfig, QueueLimits};
pub use icn_forwarder::router::RouterConfig;
use icn_sim::net::flows::{jain, quantile, LawFlow};
use icn_sim::net::{AppId, LinkParams, Network, NodeId};
use rand::rngs::SmallRng;
use rand::SeedableRng;

pub const MBPS: u64 = 1_000_000;

pub fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

pub fn at(x_ms: u64) -> Timestamp {
    Timestamp::ZERO + ms(x_ms)
}

/// Router configuration of a node running `scheme` with DropTail-100 queues.
///
/// CCC nodes run without a Content Store: an Interest answered from the CS
/// bypasses the strategy, so CCC would not count it into the flow's pace
/// (a retransmission after a drop would then look like an idle flow).
pub fn engine(scheme: CcScheme) -> RouterConfig {
    let cs_max_packets = if scheme == CcScheme::Ccc {
        0
    } else {
        EngineConfig::default().cs_max_packets
    };
    RouterConfig {
        engine: EngineConfig {
            cs_max_packets,
            queue: QueueLimits {
                max_packets: 100,
                max_bytes: 8 << 20,
            },
            ..EngineConfig::default()
        },
        cc: CcConfig {
            scheme,
            ..CcConfig::default()
        },
        ..RouterConfig::default()
    }
}

/// The consumer law of `scheme` (`none`: a fixed window of `none_window`).
pub fn law(scheme: CcScheme, none_window: f64) -> AnyConsumerLaw {
    let mut cfg = ConsumerLawConfig::default();
    cfg.none.window_interests = none_window;
    let kind = scheme.law_kind();
    AnyConsumerLaw::new(kind, &cfg)
}

/// Measured outcome of one run.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub scheme: CcScheme,
    pub utilisation: f64,
    pub jain: f64,
    pub per_flow_mbps: Vec<f64>,
    pub p95_queueing: Duration,
    pub data_drops: u64,
    pub congestion_nacks: u64,
    pub timeouts: u64,
}

impl Outcome {
    pub fn row(&self) -> String {
        format!(
            "| {:<6} | {:>5.1} % | {:.3} | {:>7.1} ms | {:>5} | {:>6} | {:>4} | {:?}",
            self.scheme.name(),
            self.utilisation * 100.0,
            self.jain,
            self.p95_queueing.as_secs_f64() * 1e3,
            self.data_drops,
            self.congestion_nacks,
            self.timeouts,
            self.per_flow_mbps
                .iter()
                .map(|x| (x * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        )
    }
}

/// Data/Nack drops (queue full or AQM) on every node.
pub fn data_drops(net: &Network, nodes: &[NodeId]) -> u64 {
    nodes
        .iter()
        .map(|n| {
            let d = net.node(*n).counters().drops;
            d.get(DropReason::QueueFull)
        })
        .sum()
}

/// Summarises flows over [from, to) against a bottleneck of `cap_bps`.
pub fn summarise<L: ConsumerLaw>(
    scheme: CcScheme,
    flows: &[LawFlow<L>],
    from: Timestamp,
    to: Timestamp,
    cap_bps: f64,
    drops: u64,
) -> Outcome {
    let per: Vec<f64> = flows
        .iter()
        .map(|f| f.stats.goodput_bps(from, to))
        .collect();
    let min_rtt = flows
        .iter()
        .flat_map(|f| f.stats.rtts.iter().map(|r| r.1))
        .min()
        .unwrap_or(Duration::ZERO);
    let rtts: Vec<Duration> = flows
        .iter()
        .flat_map(|f| f.stats.rtts_between(from, to))
        .map(|r| r.saturating_sub(min_rtt))
        .collect();
    Outcome {
        scheme,
        utilisation: per.iter().sum::<f64>() / cap_bps,
        jain: jain(&per),
        per_flow_mbps: per.iter().map(|x| x / 1e6).collect(),
        p95_queueing: quantile(&rtts, 0.95),
        data_drops: drops,
        congestion_nacks: flows.iter().map(|f| f.stats.congestion_nacks).sum(),
        timeouts: flows.iter().map(|f| f.stats.timeouts).sum(),
    }
}

/// Point-to-point link of `mbps` and one-way `delay_ms`.
pub fn link(mbps: u64, delay_ms: u64) -> LinkParams {
    LinkParams {
        delay: ms(delay_ms),
        capacity_bps: Some(mbps * MBPS),
        ..LinkParams::default()
    }
}

/// A flow driven by icncat's scheme logic (`icn_consumer::Scheme`): the
/// law plus its per-Interest fields (MIRCC class and steering hint, CCC
/// objective, QSCCP class and DownstreamRate).
pub fn scheme_flow(
    app: AppId,
    prefix: &str,
    opts: &SchemeOptions,
    start: Timestamp,
    stop: Timestamp,
    seed: u64,
) -> LawFlow<Scheme> {
    let mut rng = SmallRng::seed_from_u64(seed);
    LawFlow::new(app, prefix, Scheme::new(opts), start, stop).with_tagger(Box::new(
        move |law: &mut Scheme, seg| law.tag(seg, &mut rng),
    ))
}

/// icncat's options for `kind` with Data of `data_bytes`.
pub fn opts(kind: LawKind, data_bytes: f64) -> SchemeOptions {
    SchemeOptions {
        kind,
        initial_data_size_bytes: data_bytes,
        ..SchemeOptions::default()
    }
}
