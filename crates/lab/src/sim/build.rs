//! The scenario as a virtual-time network: one real engine per node,
//! configured from the same `[cc]` table the namespace runner gives icnfwd,
//! one link per `[[link]]`, the routes the namespace runner installs, a
//! producer and an icncat fetch per flow.

use std::collections::BTreeMap;

use bytes::Bytes;
use cc_core::{Duration, LawKind, Timestamp};
use icn_consumer::scheme::parse_service_class;
use icn_consumer::{RateSpec, SchemeOptions};
use icn_forwarder::config::Config;
use icn_forwarder::engine::FaceId;
use icn_forwarder::router::RouterConfig;
use icn_sim::net::{reply_frame, LinkParams, Network, NodeId, Responder, Wire};
use icn_tlv::{Component, Data, Name};

use super::consumer::FetchFlow;
use super::mcast::McastGroup;
use crate::real::topo::{cc_section, Caps};
use crate::scenario::{Flow, Scenario};
use crate::LabError;

/// The built network and where everything sits in it.
pub(super) struct Built {
    pub net: Network,
    pub nodes: BTreeMap<String, NodeId>,
    /// (node, neighbour) -> the node's face towards the neighbour.
    pub faces: BTreeMap<(String, String), FaceId>,
    pub flows: Vec<FetchFlow>,
    /// Per flow: its consumer's node and application face.
    pub app_faces: Vec<(NodeId, FaceId)>,
    /// Per `[[group]]`: its source and receivers.
    pub groups: Vec<McastGroup>,
}

/// The engine icnfwd would run for `scheme` on this scenario: the daemon's
/// own config parser reads the `[cc]` table the namespace runner writes.
pub(super) fn engine_config(sc: &Scenario, scheme: &str) -> Result<RouterConfig, LabError> {
    let caps = Caps {
        emulation: true,
        cc_period: true,
    };
    let text = cc_section(sc, scheme, caps);
    let cfg = Config::from_toml_str(&text)
        .map_err(|e| LabError::Unsupported(format!("[cc] for {scheme}: {e}")))?;
    Ok(cfg.router_config())
}

/// icncat's options for `f` under `scheme`, as the namespace runner's
/// command line gives them (`none` runs `fixed` with the scenario's window).
pub(crate) fn consumer_options(
    sc: &Scenario,
    scheme: &str,
    f: &Flow,
) -> Result<SchemeOptions, LabError> {
    let cc = f.cc.clone().unwrap_or_else(|| match scheme {
        "none" => "fixed".to_string(),
        s => s.to_string(),
    });
    let kind: LawKind = cc
        .parse()
        .map_err(|_| LabError::Unsupported(format!("flow {}: unknown law {cc:?}", f.name)))?;
    let class = parse_service_class(&f.class)
        .map_err(|e| LabError::Unsupported(format!("flow {}: {e}", f.name)))?;
    Ok(SchemeOptions {
        kind,
        rate: f.rate_bps.map(RateSpec::BitsPerSec),
        init_cwnd: (kind == LawKind::Fixed && f.rate_bps.is_none())
            .then_some(f64::from(sc.none_window)),
        objective: (kind == LawKind::Ccc)
            .then(|| RateSpec::BitsPerSec(f.objective_bps.unwrap_or(1e9))),
        class,
        profile: sc.profile,
        ccc_initial_window: sc.consumer.ccc_initial_window,
        ccc_min_pace_ips: sc.consumer.ccc_min_pace_ips,
        wincm_hold_after_cut: sc.consumer.wincm_hold_after_cut,
        wincm_queue_growth_limit: sc.consumer.wincm_queue_growth_limit,
        wincm_growth_limit_in_congestion: sc.consumer.wincm_growth_limit_in_congestion,
        wincm_bandwidth_floor: sc.consumer.wincm_bandwidth_floor,
        ..SchemeOptions::default()
    })
}

/// A producer of a `len`-byte object in `segment_bytes` segments, as icnput
/// serves a file: every Data carries the FinalBlockId (so the fetch knows
/// where to stop), and Interests past the end get no answer.
fn sized_producer(len: u64, segment_bytes: usize) -> Responder {
    let seg = segment_bytes.max(1) as u64;
    let last = len.saturating_sub(1) / seg;
    let content = Bytes::from(vec![0x5a; segment_bytes]);
    Box::new(move |_, i, lp| {
        let n = i.name.last()?.as_segment()?;
        if n > last {
            return None;
        }
        let size = if n == last { len - last * seg } else { seg };
        let mut d = Data::new(i.name.clone(), content.slice(..size as usize));
        d.meta.final_block_id = Some(Component::segment(last));
        Some(reply_frame(lp, d.encode_signed_digest_sha256()))
    })
}

/// A scenario link as the namespace runner builds it: faces paced at the
/// link's capacity over a veth under tc's tbf above that rate, so a frame
/// the face released takes no serialisation time (a virtual wire at the
/// capacity added one Data time to every minimum RTT: one 4400 B flow on
/// 2 Mbit/s at 50 ms read 69.0 ms virtual against 55.1 ms on namespaces).
fn link_params(capacity_bps: u64, delay_ms: f64, loss: f64) -> LinkParams {
    LinkParams {
        delay: Duration::from_nanos((delay_ms * 1e6).round() as u64),
        capacity_bps: Some(capacity_bps),
        loss,
        wire: Wire::testbed(capacity_bps),
        ..LinkParams::default()
    }
}

/// Builds `sc` for `scheme`; flow times are scaled by `scale` as the
/// namespace runner scales them to the run's length.
pub(super) fn build(sc: &Scenario, scheme: &str, seed: u64, scale: f64) -> Result<Built, LabError> {
    let mut cfg = engine_config(sc, scheme)?;
    if let Some(q) = sc.queue_packets {
        cfg.engine.queue.max_packets = q;
    }
    let mut net = Network::new(seed);
    let nodes: BTreeMap<String, NodeId> = sc
        .nodes
        .iter()
        .map(|n| (n.name.clone(), net.add_node(cfg.clone())))
        .collect();
    let mut faces = BTreeMap::new();
    for l in &sc.links {
        let (fa, fb) = net.connect(
            nodes[&l.a],
            nodes[&l.b],
            link_params(l.capacity_bps, l.delay_ms, l.loss),
        );
        faces.insert((l.a.clone(), l.b.clone()), fa);
        faces.insert((l.b.clone(), l.a.clone()), fb);
    }
    let segment_bytes = sc.segment_bytes as usize;
    let (mut flows, mut app_faces) = (Vec::new(), Vec::new());
    for (i, f) in sc.flows.iter().enumerate() {
        let prefix = format!("/{}", f.name);
        let name: Name = prefix
            .parse()
            .map_err(|_| LabError::Unsupported(format!("flow name {:?}", f.name)))?;
        match f.size_bytes {
            None => {
                net.add_producer(nodes[&f.producer], &prefix, segment_bytes, None);
            }
            Some(len) => {
                let responder = sized_producer(len, segment_bytes);
                let (_, face) = net.add_app(nodes[&f.producer], Some(responder));
                net.node_mut(nodes[&f.producer])
                    .fib_add_nexthop(&name, face, 0)
                    .map_err(|e| LabError::Unsupported(format!("producer route: {e:?}")))?;
            }
        }
        for (node, via, cost) in sc.routes_for(f) {
            let face = faces[&(node.clone(), via)];
            net.node_mut(nodes[&node])
                .fib_add_nexthop(&name, face, cost)
                .map_err(|e| LabError::Unsupported(format!("route at {node}: {e:?}")))?;
        }
        let app = net.add_consumer(nodes[&f.consumer]);
        app_faces.push((nodes[&f.consumer], net.app_face(app)));
        let at = |s: f64| Timestamp::ZERO + Duration::from_nanos((s * scale * 1e9) as u64);
        let opts = consumer_options(sc, scheme, f)?;
        let flow_seed = seed ^ (0x9e37_79b9 * (i as u64 + 1));
        flows.push(FetchFlow::new(
            app,
            name,
            &opts,
            flow_seed,
            at(f.start_s),
            at(f.stop_s),
        ));
    }
    let mut groups = Vec::new();
    for g in &sc.groups {
        let name: Name = g
            .prefix()
            .parse()
            .map_err(|_| LabError::Unsupported(format!("group name {:?}", g.name)))?;
        let (src_app, src_face) = net.add_app(nodes[&g.source], None);
        let mut routes = vec![(nodes[&g.source], src_face)];
        for (node, via) in sc.group_routes(g) {
            routes.push((nodes[&node], faces[&(node.clone(), via)]));
        }
        for (n, face) in routes {
            net.node_mut(n)
                .fib_add_nexthop(&name, face, 0)
                .map_err(|e| LabError::Unsupported(format!("group route: {e:?}")))?;
        }
        let receivers = g
            .receivers
            .iter()
            .map(|r| (r.clone(), net.add_consumer(nodes[r]), sc.access_bps(g, r)))
            .collect();
        let at = |s: f64| Timestamp::ZERO + Duration::from_nanos((s * scale * 1e9) as u64);
        groups.push(McastGroup::new(
            &mut net,
            g,
            src_app,
            receivers,
            at(g.start_s),
            at(g.stop_s),
        ));
    }
    Ok(Built {
        net,
        nodes,
        faces,
        flows,
        app_faces,
        groups,
    })
}
