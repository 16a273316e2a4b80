//! The management dispatcher: the RIB, pending face creations and the
//! dispatch of management Interests to [`commands`] and [`datasets`].
//! Answers go out through [`FwdOps::send_reply`].

mod commands;
mod datasets;

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use hashbrown::HashMap;
use icn_tlv::{Data, Interest, Name};

use crate::mgmt::command::{classify, verify, Request};
use crate::mgmt::dataset::{FaceStatus, FibEntry, PacketCounters, StrategyChoiceStatus};
use crate::mgmt::face_state::FaceState;
use crate::mgmt::face_uri::FaceUri;
use crate::mgmt::params::{ControlParameters, ControlResponse};
use crate::mgmt::rib::{FibUpdate, Rib, RibError, Route};
use crate::mgmt::scope::{ScopeGuard, ScopePolicy};
use crate::mgmt::status;

/// What the manager needs from the forwarding engine. Implemented for the
/// engine in `node.rs`; a fake implements it in the manager's tests.
pub trait FwdOps {
    fn face_exists(&self, face: u64) -> bool;
    /// Whether the face is local (an application on this host).
    fn face_is_local(&self, face: u64) -> bool;
    /// (remote URI, local URI) of a face.
    fn face_uris(&self, face: u64) -> Option<(String, String)>;
    fn face_statuses(&self) -> Vec<FaceStatus>;
    /// icnfwd-specific per-face state (queues, capacity, drops).
    fn face_states(&self) -> Vec<FaceState>;
    fn fib_entries(&self) -> Vec<FibEntry>;
    fn strategy_choices(&self) -> Vec<StrategyChoiceStatus>;
    fn general_counters(&self) -> GeneralCounters;
    fn fib_add_nexthop(&mut self, prefix: &Name, face: u64, cost: u64) -> bool;
    fn fib_remove_nexthop(&mut self, prefix: &Name, face: u64);
    /// Sets a strategy; returns the instance name it runs, `None` if unknown.
    fn set_strategy(&mut self, prefix: &Name, strategy: &Name) -> Option<Name>;
    fn unset_strategy(&mut self, prefix: &Name);
    fn remove_face(&mut self, now: Timestamp, face: u64);
    fn send_reply(&mut self, now: Timestamp, face: u64, data: Bytes);
    /// The multicast tree node's state (empty without multicast groups).
    fn mcast_state(&self) -> crate::mgmt::McastState {
        crate::mgmt::McastState::default()
    }
    /// Memory budgets and forwarder-wide drops.
    fn limits_state(&self) -> crate::mgmt::LimitsState {
        crate::mgmt::LimitsState::default()
    }
    /// The Content Store's figures (`cs/info`).
    fn cs_info(&self) -> crate::mgmt::CsInfo {
        crate::mgmt::CsInfo::default()
    }
}

/// Table sizes and counters for `status/general`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GeneralCounters {
    pub n_name_tree_entries: u64,
    pub n_fib_entries: u64,
    pub n_pit_entries: u64,
    pub n_measurements_entries: u64,
    pub n_cs_entries: u64,
    pub packets: PacketCounters,
    pub n_satisfied_interests: u64,
    pub n_unsatisfied_interests: u64,
}

#[derive(Debug, Clone)]
pub struct ManagerConfig {
    /// Unix time in ms at `Timestamp::ZERO` (dataset versions, status/general).
    pub unix_epoch_offset_ms: u64,
    pub version: String,
    pub max_routes: usize,
    /// How long the shell has to open a socket for faces/create (python-ndn
    /// waits 1000 ms for a reply).
    pub face_create_timeout: Duration,
    /// What non-local faces may do (`[mgmt]`); default: nothing.
    pub scope: ScopePolicy,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            unix_epoch_offset_ms: 0,
            version: concat!("icnfwd-", env!("CARGO_PKG_VERSION")).to_owned(),
            max_routes: 100_000,
            face_create_timeout: Duration::from_millis(900),
            scope: ScopePolicy {
                refusal_log_interval: Duration::from_secs(60),
                ..Default::default()
            },
        }
    }
}

/// A faces/create the shell must carry out (open a socket, add the face)
/// and then report with [`Manager::complete_create_face`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceCreateRequest {
    pub token: u64,
    pub uri: FaceUri,
    pub local_uri: Option<FaceUri>,
    /// 0 persistent, 1 on-demand, 2 permanent.
    pub persistency: u64,
    pub mtu: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MgmtEvent {
    CreateFace(FaceCreateRequest),
    /// faces/destroy removed this face from the engine; close its socket.
    DestroyFace {
        face: u64,
    },
}

struct PendingCreate {
    reply_face: u64,
    name: Name,
    params: ControlParameters,
    deadline: Timestamp,
}

struct CachedDataset {
    /// Request name + version component.
    prefix: Name,
    segments: Vec<Bytes>,
    expires: Timestamp,
}

const DATASET_CACHE: usize = 8;
const DATASET_TTL: Duration = Duration::from_secs(5);
const REPLY_FRESHNESS: Duration = Duration::from_millis(1000);

pub struct Manager {
    cfg: ManagerConfig,
    rib: Rib,
    pending: HashMap<u64, PendingCreate>,
    next_token: u64,
    datasets: VecDeque<CachedDataset>,
    last_version: u64,
    events: VecDeque<MgmtEvent>,
    scope: ScopeGuard,
}

impl Manager {
    pub fn new(cfg: ManagerConfig) -> Self {
        Manager {
            rib: Rib::new(cfg.max_routes),
            scope: ScopeGuard::new(cfg.scope.clone()),
            cfg,
            pending: HashMap::new(),
            next_token: 1,
            datasets: VecDeque::new(),
            last_version: 0,
            events: VecDeque::new(),
        }
    }

    /// Applies a new `[mgmt]` policy to non-local faces (a reload);
    /// refusal counters and replay protection are kept.
    pub fn set_scope_policy(&mut self, policy: ScopePolicy) {
        self.cfg.scope = policy.clone();
        self.scope.set_policy(policy);
    }

    pub fn rib(&self) -> &Rib {
        &self.rib
    }

    #[must_use]
    pub fn poll_event(&mut self) -> Option<MgmtEvent> {
        self.events.pop_front()
    }

    /// Earliest route expiry or face-creation deadline.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let p = self.pending.values().map(|p| p.deadline).min();
        match (p, self.rib.next_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Timestamp, ops: &mut dyn FwdOps) {
        let ups = self.rib.expire(now);
        apply(ops, ups);
        let late: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(t, _)| *t)
            .collect();
        for t in late {
            self.complete_create_face(now, ops, t, Err("timed out opening the face".into()));
        }
        self.datasets.retain(|d| d.expires > now);
    }

    /// Adds a route (from the config, the shell or rib/register); returns
    /// the RIB error if refused.
    ///
    /// On `Ok` the route's own next hop is in the FIB, so a 200 reply is a
    /// promise that the next Interest is routed. The next hop is written
    /// again even when the RIB's diff has nothing to add, because the FIB
    /// can lose it behind the RIB's back (fib/remove-nexthop, an earlier
    /// refusal); a refusal withdraws the route instead of answering 200.
    pub fn add_route(
        &mut self,
        ops: &mut dyn FwdOps,
        prefix: Name,
        route: Route,
    ) -> Result<(), RibError> {
        let ups = self.rib.insert(prefix.clone(), route)?;
        apply(ops, ups);
        let cost = self
            .rib
            .installed_cost(&prefix, route.face)
            .unwrap_or(route.cost);
        if !ops.fib_add_nexthop(&prefix, route.face, cost) {
            let ups = self.rib.remove(&prefix, route.face, route.origin);
            apply(ops, ups);
            return Err(RibError::FibRefused);
        }
        Ok(())
    }

    /// Removes every route of one origin (static routes on config reload).
    pub fn remove_routes_of_origin(&mut self, ops: &mut dyn FwdOps, origin: u64) {
        let ups = self.rib.remove_origin(origin);
        apply(ops, ups);
    }

    /// The shell saw a face go away (connection closed, idle timeout).
    pub fn face_removed(&mut self, ops: &mut dyn FwdOps, face: u64) {
        let ups = self.rib.remove_face(face);
        apply(ops, ups);
        self.scope.face_removed(face);
    }

    /// Management refusals of a non-local face, as (counter name, count).
    pub fn refusals(&self, face: u64) -> Vec<(String, u64)> {
        self.scope.face_counts(face)
    }

    /// Handles one management Interest received on `face`.
    pub fn handle_interest(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        face: u64,
        interest: &Interest,
    ) {
        let request = classify(interest);
        if !ops.face_is_local(face) {
            let unix_ms = self.cfg.unix_epoch_offset_ms + now.as_nanos() / 1_000_000;
            if let Err(why) =
                self.scope
                    .check_non_local(face, interest, request.as_ref().ok(), unix_ms)
            {
                self.scope.refused(now, face, why, &interest.name);
                let params = match &request {
                    Ok(Request::Command { params, .. }) => (**params).clone(),
                    _ => ControlParameters::default(),
                };
                let resp = ControlResponse::new(status::FORBIDDEN, why.as_str(), params);
                reply(now, ops, face, &interest.name, &resp);
                return;
            }
        }
        match request {
            Ok(Request::Command {
                module,
                verb,
                params,
                signing,
            }) => {
                let name = interest.name.clone();
                if let Err(e) = verify(interest, signing) {
                    // NFD answers a command its validator rejects with 403;
                    // the body echoes the request for python-ndn's sake.
                    tracing::debug!(%name, error = %e, "rejecting command");
                    let resp = ControlResponse::new(status::FORBIDDEN, e.to_string(), *params);
                    reply(now, ops, face, &name, &resp);
                    return;
                }
                if let Some(resp) = self.command(now, ops, face, &name, &module, &verb, *params) {
                    reply(now, ops, face, &name, &resp);
                }
            }
            Ok(Request::Dataset {
                module,
                dataset,
                base_len,
            }) => self.dataset(now, ops, face, interest, &module, &dataset, base_len),
            // Like NFD: undecodable parameters get no reply.
            Err(e) => {
                tracing::debug!(name = %interest.name, error = %e, "dropping management Interest")
            }
        }
    }
}

fn face_body(id: u64, uri: &str, local: &str, persistency: u64) -> ControlParameters {
    ControlParameters {
        face_id: Some(id),
        uri: Some(uri.to_owned()),
        local_uri: Some(local.to_owned()),
        flags: Some(0),
        face_persistency: Some(persistency),
        ..Default::default()
    }
}

fn apply(ops: &mut dyn FwdOps, ups: Vec<FibUpdate>) {
    for u in ups {
        match u {
            FibUpdate::Add { prefix, face, cost } => {
                if !ops.fib_add_nexthop(&prefix, face, cost) {
                    tracing::warn!(%prefix, face, "RIB route refused by the FIB");
                }
            }
            FibUpdate::Remove { prefix, face } => ops.fib_remove_nexthop(&prefix, face),
        }
    }
}

/// Sends a command reply: Data named exactly as the command, FreshnessPeriod
/// 1000 ms, Content = ControlResponse, DigestSha256.
fn reply(now: Timestamp, ops: &mut dyn FwdOps, face: u64, name: &Name, resp: &ControlResponse) {
    let mut d = Data::new(name.clone(), resp.encode());
    // ContentType 0 written explicitly, as python-ndn and NFD do.
    d.meta.content_type = Some(0);
    d.meta.freshness_period = Some(REPLY_FRESHNESS);
    ops.send_reply(now, face, d.encode_signed_digest_sha256());
}

#[cfg(test)]
mod tests;
