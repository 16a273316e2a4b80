//! A multicast tree node (MTN): MNFT, data-plane cloning and the SRMCC
//! feedback aggregation of one forwarder, sans-IO.
//!
//! The host (the engine, or a test simulator) drives it:
//!
//! 1. `handle_subscription` for every join/leave Interest
//!    ([`Subscription::from_interest`]), with the FIB next hop of the group;
//! 2. `handle_feedback` for every LpPacket carrying an MCC header;
//! 3. `handle_group_data` for every Data, before the PIT: `Forward` means
//!    "clone to these faces and stop", `WrongFace` means drop, `NotGroup`
//!    means run the normal pipeline (unsolicited Data is still dropped);
//! 4. `observe_unicast` for (some) ordinary Data arriving on a face;
//! 5. `handle_timeout(now, sampler)` when `poll_timeout` is reached;
//! 6. `poll_output` / `poll_transmit` until empty after each call.

use std::collections::VecDeque;

use cc_core::srmcc::{FairShareEstimator, MccMessage, MccTable, OccupancyAverage};
use cc_core::{Duration, Timestamp};
use hashbrown::HashMap;
use icn_tlv::{MccFeedback, Name};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use crate::error::McastError;
use crate::mnft::{GroupEntry, JoinOutcome, LeaveOutcome, Mnft};
use crate::wire::{self, Subscription, SubscriptionKind, UNLIMITED_BPS};

pub use crate::node_api::{
    DataVerdict, FaceSample, FaceSampler, McTransmit, NodeConfig, NodeOutput, NodeStats,
};

struct FairEntry {
    capacity_bps: Option<u64>,
    groups: usize,
    est: FairShareEstimator,
    /// Distinct flows sampled in the previous window: the estimate uses the
    /// larger of the two windows, so a window reset (or an unlucky window
    /// in which a slow flow was not sampled) does not make `N_i` collapse
    /// to the group count for a whole window.
    prev_flows: usize,
}

impl FairEntry {
    fn flows(&self) -> usize {
        // `flow_count` is groups + sampled flows, at least 1.
        self.est.flow_count().saturating_sub(self.groups)
    }

    /// `C_i / N_i(t)` with `N_i = groups + max(flows of this window, of the last)`.
    fn estimate_bps(&self) -> f64 {
        let n = (self.groups + self.flows().max(self.prev_flows)).max(1);
        self.capacity_bps.unwrap_or(UNLIMITED_BPS) as f64 / n as f64
    }
}

/// The multicast tree node.
pub struct MulticastNode {
    cfg: NodeConfig,
    mnft: Mnft,
    table: MccTable<Name>,
    occupancy: HashMap<u64, OccupancyAverage>,
    /// Capacity of each downstream face, from the latest sample: it caps
    /// the fair share a child reports through that face (the receiver's
    /// access link, when the child is the receiver itself).
    down_capacity: HashMap<u64, u64>,
    fair: HashMap<u64, FairEntry>,
    rng: SmallRng,
    pending: VecDeque<NodeOutput>,
    next_sample: Timestamp,
    next_feedback: Timestamp,
    next_refresh: Timestamp,
    next_flow_reset: Timestamp,
    stats: NodeStats,
    scratch: Vec<(Name, Option<u64>)>,
}

impl core::fmt::Debug for MulticastNode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MulticastNode")
            .field("groups", &self.mnft.len())
            .field("pending", &self.pending.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl MulticastNode {
    /// A node with no groups; its periodic timers start at `now`.
    pub fn new(cfg: NodeConfig, now: Timestamp) -> Self {
        MulticastNode {
            mnft: Mnft::new(cfg.limits),
            table: MccTable::new(cfg.limits.max_groups),
            occupancy: HashMap::new(),
            down_capacity: HashMap::new(),
            fair: HashMap::new(),
            rng: SmallRng::seed_from_u64(cfg.rng_seed),
            pending: VecDeque::new(),
            next_sample: now + cfg.sample_interval,
            next_feedback: now + cfg.feedback_period,
            next_refresh: now + cfg.refresh_period,
            next_flow_reset: now + cfg.flow_window,
            stats: NodeStats::default(),
            scratch: Vec::new(),
            cfg,
        }
    }

    /// Handles a join or leave received on `face`. `upstream` is the FIB
    /// next hop of the group (the face towards the source) at this node.
    ///
    /// # Errors
    /// Bounds, a join from the upstream face, or a leave of a non-member.
    pub fn handle_subscription(
        &mut self,
        now: Timestamp,
        face: u64,
        sub: &Subscription,
        upstream: Option<u64>,
    ) -> Result<(), McastError> {
        let res = match sub.kind {
            SubscriptionKind::Join => self.join(now, face, sub, upstream),
            SubscriptionKind::Leave => self.leave(face, &sub.group),
        };
        if res.is_err() {
            self.stats.subscriptions_rejected += 1;
        }
        res
    }

    fn join(
        &mut self,
        now: Timestamp,
        face: u64,
        sub: &Subscription,
        upstream: Option<u64>,
    ) -> Result<(), McastError> {
        if let Some(up) = upstream {
            self.reroute(&sub.group, up);
        }
        let outcome = match self
            .mnft
            .join(now, &sub.group, face, sub.lifetime, upstream)
        {
            Ok(o) => o,
            Err(e) => {
                self.drop_if_empty(&sub.group);
                return Err(e);
            }
        };
        self.stats.joins_in += 1;
        self.occupancy
            .entry(face)
            .or_insert_with(|| OccupancyAverage::new(self.cfg.srmcc.occupancy_alpha));
        if let (JoinOutcome::NewGroup, Some(up)) = (outcome, upstream) {
            let join = Subscription::join(sub.group.clone(), self.cfg.membership_lifetime);
            self.push(NodeOutput::Subscription {
                face: up,
                sub: join,
            });
            self.stats.joins_out += 1;
        }
        Ok(())
    }

    /// The route towards the source moved to `up`: leave the old upstream,
    /// join the new one, and stop treating `up` as a downstream member.
    fn reroute(&mut self, group: &Name, up: u64) {
        let Some(entry) = self.mnft.get_mut(group) else {
            return;
        };
        if entry.upstream == Some(up) {
            return;
        }
        let old = entry.upstream.replace(up);
        entry.downstream.retain(|d| d.face != up);
        if let Some(old) = old {
            self.push(NodeOutput::Subscription {
                face: old,
                sub: Subscription::leave(group.clone()),
            });
            self.stats.leaves_out += 1;
        }
        let join = Subscription::join(group.clone(), self.cfg.membership_lifetime);
        self.push(NodeOutput::Subscription {
            face: up,
            sub: join,
        });
        self.stats.joins_out += 1;
    }

    fn drop_if_empty(&mut self, group: &Name) {
        if self
            .mnft
            .get(group)
            .is_some_and(|e| e.downstream.is_empty())
        {
            if let Some(e) = self.mnft.remove(group) {
                self.prune(group.clone(), e.upstream);
            }
        }
    }

    fn leave(&mut self, face: u64, group: &Name) -> Result<(), McastError> {
        match self.mnft.leave(group, face) {
            LeaveOutcome::NotMember => Err(McastError::UnknownGroup),
            LeaveOutcome::Removed => {
                self.stats.leaves_in += 1;
                Ok(())
            }
            LeaveOutcome::GroupEmpty { upstream } => {
                self.stats.leaves_in += 1;
                self.prune(group.clone(), upstream);
                Ok(())
            }
        }
    }

    fn prune(&mut self, group: Name, upstream: Option<u64>) {
        let _ = self.table.emit(&group, MccMessage::receiver_initial(0.0));
        if let Some(up) = upstream {
            self.push(NodeOutput::Subscription {
                face: up,
                sub: Subscription::leave(group),
            });
            self.stats.leaves_out += 1;
        }
    }

    /// Handles an MCC message received on `face`: folded into the MCC table
    /// (min fair share, max of max, min of min) until the period ends.
    ///
    /// # Errors
    /// Unknown group, or `face` is not a downstream member of it.
    pub fn handle_feedback(
        &mut self,
        now: Timestamp,
        face: u64,
        fb: &MccFeedback,
    ) -> Result<(), McastError> {
        let res = self.feedback(now, face, fb);
        match res {
            Ok(()) => self.stats.feedback_in += 1,
            Err(_) => self.stats.feedback_rejected += 1,
        }
        res
    }

    fn feedback(&mut self, now: Timestamp, face: u64, fb: &MccFeedback) -> Result<(), McastError> {
        let entry = self
            .mnft
            .get_mut(&fb.group)
            .ok_or(McastError::UnknownGroup)?;
        let d = entry
            .downstream
            .iter_mut()
            .find(|d| d.face == face)
            .ok_or(McastError::NotDownstream)?;
        let mut msg = wire::to_message(fb);
        if let Some(cap) = self.down_capacity.get(&face) {
            msg.min_fair_share_bps = msg.min_fair_share_bps.min(*cap as f64);
        }
        d.last_report = Some((now, msg));
        d.reported_this_period = true;
        self.table
            .aggregate(fb.group.clone(), &msg)
            .map_err(|_| McastError::TooManyGroups(self.cfg.limits.max_groups))
    }

    /// Data-plane decision for a Data named `name` received on `from`.
    /// On `Forward`, the downstream faces (each once, never `from`) are
    /// appended to `out`.
    pub fn handle_group_data(
        &mut self,
        now: Timestamp,
        from: u64,
        name: &Name,
        out: &mut Vec<u64>,
    ) -> DataVerdict {
        let Some((group, entry)) = self.mnft.longest_match(name) else {
            return DataVerdict::NotGroup;
        };
        if entry.upstream != Some(from) {
            self.stats.data_wrong_face += 1;
            return DataVerdict::WrongFace;
        }
        let before = out.len();
        out.extend(
            entry
                .downstream
                .iter()
                .filter(|d| d.face != from && d.expires > now)
                .map(|d| d.face),
        );
        let n = (out.len() - before) as u64;
        if let Some(e) = self.mnft.get_mut(&group) {
            e.copies_sent += n;
        }
        self.stats.data_in += 1;
        self.stats.copies_out += n;
        DataVerdict::Forward
    }

    /// Records what a cloned group packet announced (status output).
    pub fn note_group_packet(&mut self, group: &Name, seq: u64, rate_bps: u64) {
        if let Some(e) = self.mnft.get_mut(group) {
            e.announced_rate_bps = Some(rate_bps);
            e.last_seq = Some(e.last_seq.map_or(seq, |s| s.max(seq)));
        }
    }

    /// The largest occupancy EWMA over the downstream faces of `group`.
    pub fn group_occupancy(&self, group: &Name) -> f64 {
        self.mnft.get(group).map_or(0.0, |e| self.own_occupancy(e))
    }

    /// A unicast packet arrived on `face`; `flow_key` identifies its flow
    /// (e.g. a hash of the name's first components). Sampled for `N_i(t)`
    /// when `face` is some group's upstream.
    pub fn observe_unicast(&mut self, face: u64, flow_key: u64) {
        if let Some(f) = self.fair.get_mut(&face) {
            f.est.observe_packet(flow_key, &mut self.rng);
        }
    }

    /// A face went down: removed from every group; emptied groups are pruned.
    pub fn remove_face(&mut self, face: u64) {
        let mut emptied = core::mem::take(&mut self.scratch);
        self.mnft.remove_face(face, &mut emptied);
        for (g, up) in emptied.drain(..) {
            self.prune(g, up);
        }
        self.scratch = emptied;
        self.occupancy.remove(&face);
        self.down_capacity.remove(&face);
        self.fair.remove(&face);
    }

    /// When `handle_timeout` must next be called; `None` when the node has
    /// no group (nothing to sample, refresh or report).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        if self.mnft.is_empty() {
            return None;
        }
        let timers = [
            self.next_sample,
            self.next_feedback,
            self.next_refresh,
            self.next_flow_reset,
        ];
        let t = timers.into_iter().min().unwrap_or(Timestamp::MAX);
        Some(self.mnft.next_expiry().map_or(t, |e| e.min(t)))
    }

    /// Runs the timers due at `now`: membership expiry (prune), queue
    /// sampling, the feedback period, upstream refreshes, flow windows.
    pub fn handle_timeout(&mut self, now: Timestamp, sampler: &impl FaceSampler) {
        let mut emptied = core::mem::take(&mut self.scratch);
        let before: usize = self.mnft.iter().map(|(_, e)| e.downstream.len()).sum();
        self.mnft.expire(now, &mut emptied);
        let after: usize = self.mnft.iter().map(|(_, e)| e.downstream.len()).sum();
        self.stats.expirations += (before - after) as u64;
        for (g, up) in emptied.drain(..) {
            self.prune(g, up);
        }
        self.scratch = emptied;
        if now >= self.next_sample {
            self.next_sample = advance(self.next_sample, self.cfg.sample_interval, now);
            self.sample_queues(sampler);
        }
        if now >= self.next_feedback {
            self.next_feedback = advance(self.next_feedback, self.cfg.feedback_period, now);
            self.emit_feedback(now, sampler);
        }
        if now >= self.next_refresh {
            self.next_refresh = advance(self.next_refresh, self.cfg.refresh_period, now);
            self.refresh_upstream();
        }
        if now >= self.next_flow_reset {
            self.next_flow_reset = advance(self.next_flow_reset, self.cfg.flow_window, now);
            for f in self.fair.values_mut() {
                f.prev_flows = f.flows();
                f.est.reset_window();
            }
        }
    }

    fn sample_queues(&mut self, sampler: &impl FaceSampler) {
        for (face, avg) in &mut self.occupancy {
            if let Some(s) = sampler.face_sample(*face) {
                avg.sample(s.queue_packets, s.queue_max_packets);
                match s.capacity_bps {
                    Some(c) => self.down_capacity.insert(*face, c),
                    None => self.down_capacity.remove(face),
                };
            }
        }
    }

    /// Own occupancy of a group: the largest EWMA over its downstream faces
    /// (docs/algorithms.md §4.4 item 4).
    fn own_occupancy(&self, entry: &GroupEntry) -> f64 {
        entry
            .downstream
            .iter()
            .filter_map(|d| self.occupancy.get(&d.face))
            .map(OccupancyAverage::value)
            .fold(0.0, f64::max)
    }

    fn refresh_fair_estimators(&mut self, sampler: &impl FaceSampler) {
        let mut counts: HashMap<u64, usize> = HashMap::new();
        for (_, e) in self.mnft.iter() {
            if let Some(up) = e.upstream {
                *counts.entry(up).or_default() += 1;
            }
        }
        self.fair.retain(|f, _| counts.contains_key(f));
        for (face, n) in counts {
            let cap = sampler.face_sample(face).and_then(|s| s.capacity_bps);
            let srmcc = &self.cfg.srmcc;
            let make = || FairEntry {
                capacity_bps: cap,
                groups: n,
                est: FairShareEstimator::new(srmcc, cap.unwrap_or(UNLIMITED_BPS) as f64),
                prev_flows: 0,
            };
            let f = self.fair.entry(face).or_insert_with(make);
            if f.capacity_bps != cap {
                let prev = f.prev_flows.max(f.flows());
                *f = make();
                f.prev_flows = prev;
            }
            f.groups = n;
            f.est.set_group_count(n);
        }
        // Forget EWMAs of faces that are no longer downstream of any group.
        let live: hashbrown::HashSet<u64> = self
            .mnft
            .iter()
            .flat_map(|(_, e)| e.downstream.iter().map(|d| d.face))
            .collect();
        self.occupancy.retain(|face, _| live.contains(face));
        self.down_capacity.retain(|face, _| live.contains(face));
    }

    fn emit_feedback(&mut self, now: Timestamp, sampler: &impl FaceSampler) {
        self.refresh_fair_estimators(sampler);
        let hold = self.cfg.feedback_hold;
        let mut outs = Vec::new();
        for (group, entry) in self.mnft.iter() {
            let mut any_fresh = false;
            for d in &entry.downstream {
                let Some((at, msg)) = d.last_report else {
                    continue;
                };
                if now.saturating_since(at) > hold {
                    continue;
                }
                any_fresh = true;
                if !d.reported_this_period {
                    let _ = self.table.aggregate(group.clone(), &msg);
                }
            }
            let fair_bps = entry
                .upstream
                .and_then(|up| self.fair.get(&up))
                .map_or(UNLIMITED_BPS as f64, FairEntry::estimate_bps);
            let own = MccMessage::node_own(self.own_occupancy(entry), fair_bps);
            let msg = self.table.emit(group, own);
            if let (true, Some(up)) = (any_fresh, entry.upstream) {
                outs.push(NodeOutput::Feedback {
                    face: up,
                    feedback: wire::to_feedback(group.clone(), &msg),
                });
            }
        }
        for (_, e) in self.mnft.iter_mut() {
            for d in &mut e.downstream {
                d.reported_this_period = false;
            }
        }
        for o in outs {
            self.stats.feedback_out += 1;
            self.push(o);
        }
    }

    fn refresh_upstream(&mut self) {
        let lifetime = self.cfg.membership_lifetime;
        let joins: Vec<_> = self
            .mnft
            .iter()
            .filter_map(|(g, e)| {
                e.upstream.map(|face| NodeOutput::Subscription {
                    face,
                    sub: Subscription::join(g.clone(), lifetime),
                })
            })
            .collect();
        for j in joins {
            self.stats.joins_out += 1;
            self.push(j);
        }
    }

    fn push(&mut self, o: NodeOutput) {
        if self.pending.len() >= self.cfg.max_pending {
            self.stats.outputs_dropped += 1;
        } else {
            self.pending.push_back(o);
        }
    }

    /// The next message to send, typed.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<NodeOutput> {
        self.pending.pop_front()
    }

    /// The next message to send, encoded (fresh nonce for Interests).
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<McTransmit> {
        let o = self.pending.pop_front()?;
        let nonce = self.rng.next_u32();
        Some(McTransmit {
            face: o.face(),
            bytes: o.encode(nonce),
        })
    }

    /// The MNFT, for datasets and tests.
    pub fn mnft(&self) -> &Mnft {
        &self.mnft
    }

    /// The downstream faces of `group` (empty if unknown).
    pub fn downstream_faces(&self, group: &Name) -> Vec<u64> {
        self.mnft
            .get(group)
            .map(|e| e.downstream.iter().map(|d| d.face).collect())
            .unwrap_or_default()
    }

    /// The current fair-share estimate `C_i / N_i(t)` of an upstream face;
    /// `None` when the face is no group's upstream or its capacity is
    /// unknown (the node then reports no limit).
    pub fn fair_share_bps(&self, upstream: u64) -> Option<f64> {
        self.fair
            .get(&upstream)
            .filter(|f| f.capacity_bps.is_some())
            .map(FairEntry::estimate_bps)
    }

    /// `N_i(t)` of an upstream face: groups using it plus the unicast flows
    /// sampled on it (larger of this and the previous window).
    pub fn flow_count(&self, upstream: u64) -> Option<usize> {
        self.fair
            .get(&upstream)
            .map(|f| f.groups + f.flows().max(f.prev_flows))
    }

    /// The EWMA occupancy of a downstream face.
    pub fn occupancy(&self, face: u64) -> Option<f64> {
        self.occupancy.get(&face).map(OccupancyAverage::value)
    }

    /// Counters.
    pub fn stats(&self) -> &NodeStats {
        &self.stats
    }

    /// Outputs waiting.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The configuration.
    pub fn config(&self) -> &NodeConfig {
        &self.cfg
    }
}

/// The next deadline of a periodic timer that fired at or after `t`:
/// keeps the phase, skipping periods missed while idle.
fn advance(t: Timestamp, period: Duration, now: Timestamp) -> Timestamp {
    if t > now {
        return t;
    }
    let p = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1);
    let k = (now.as_nanos() - t.as_nanos()) / p + 1;
    Timestamp::from_nanos(t.as_nanos().saturating_add(p.saturating_mul(k)))
}

#[cfg(test)]
#[path = "node_tests.rs"]
mod tests;
