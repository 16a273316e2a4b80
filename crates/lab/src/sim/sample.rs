//! What the virtual-time runner samples while it runs: the counters the
//! namespace runner reads from icnfwd's management, read from the engines.

use icn_forwarder::engine::DropReason;
use icn_sim::net::{Network, NodeId};

use super::build::Built;
use crate::scenario::Scenario;

/// One measured link at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LinkSample {
    pub t_s: f64,
    /// Frames and bytes the link carried from `from` to `to` so far.
    pub frames: u64,
    pub bytes: u64,
    /// Data bytes queued on `from`'s face towards `to`.
    pub data_queue_bytes: usize,
    /// Interests held on `to`'s face towards `from` (FIFO, shaper, scheduler).
    pub held_interests: usize,
    /// Rate stamped into Data by `to`'s reverse face (RCP R, MIRCC Rp).
    pub stamped_bps: Option<u64>,
    /// Target rate announced by `to`'s reverse face (QSCCP PECN).
    pub target_bps: Option<u64>,
    pub marks: u64,
    /// Congestion drops (queue full, AQM) on `from` so far.
    pub drops: u64,
}

/// Congestion drops (queue full, AQM) of one node so far.
pub(super) fn congestion_drops(net: &Network, n: NodeId) -> u64 {
    let d = net.node(n).counters().drops;
    d.get(DropReason::QueueFull)
}

/// Samples every measured link of `sc`.
pub(super) fn sample_links(sc: &Scenario, b: &Built) -> Vec<LinkSample> {
    let t_s = b
        .net
        .now()
        .saturating_since(cc_core::Timestamp::ZERO)
        .as_secs_f64();
    sc.measure
        .iter()
        .map(|m| {
            let (from, to) = (b.nodes[&m.from], b.nodes[&m.to]);
            let fwd = b.faces[&(m.from.clone(), m.to.clone())];
            let rev = b.faces[&(m.to.clone(), m.from.clone())];
            let (frames, bytes, _) = b.net.link_delivered(from, fwd).unwrap_or((0, 0, 0));
            let f = b.net.node(from).face(fwd);
            let r = b.net.node(to).face(rev);
            LinkSample {
                t_s,
                frames,
                bytes,
                data_queue_bytes: f.map_or(0, |f| f.queue.data_bytes),
                held_interests: r
                    .map_or(0, |r| r.queue.interest_packets + r.queue.cc_held_interests),
                stamped_bps: r.and_then(|r| r.cc.primary_rate_bps),
                target_bps: r.and_then(|r| r.cc.target_rate_bps),
                marks: f.map_or(0, |f| f.counters.n_out_marked),
                drops: congestion_drops(&b.net, from),
            }
        })
        .collect()
}

/// (Data bytes, Nacks) each flow's application face has received so far.
pub(super) fn sample_apps(b: &Built) -> Vec<(u64, u64)> {
    b.app_faces
        .iter()
        .map(|&(n, face)| {
            b.net
                .node(n)
                .face(face)
                .map_or((0, 0), |f| (f.counters.n_out_bytes, f.counters.n_out_nacks))
        })
        .collect()
}
