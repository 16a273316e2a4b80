//! The management dispatcher: commands, datasets, the RIB and pending face
//! creations. Answers go out through [`FwdOps::send_reply`].

use std::collections::VecDeque;

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use hashbrown::HashMap;
use icn_tlv::{Component, Data, Interest, Name};

use super::command::{classify, Request};
use super::dataset::{
    self, FaceStatus, FibEntry, ForwarderStatus, PacketCounters, RibEntryStatus, RouteRecord,
    StrategyChoiceStatus,
};
use super::face_uri::FaceUri;
use super::params::{ControlParameters, ControlResponse};
use super::rib::{FibUpdate, Rib, RibError, Route, CHILD_INHERIT, MAX_NAME_DEPTH};
use super::status;

/// What the manager needs from the forwarding engine. Implemented for the
/// engine in `node.rs`; a fake implements it in the manager's tests.
pub trait FwdOps {
    fn face_exists(&self, face: u64) -> bool;
    /// (remote URI, local URI) of a face.
    fn face_uris(&self, face: u64) -> Option<(String, String)>;
    fn face_statuses(&self) -> Vec<FaceStatus>;
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
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            unix_epoch_offset_ms: 0,
            version: concat!("icnfwd-", env!("CARGO_PKG_VERSION")).to_owned(),
            max_routes: 100_000,
            face_create_timeout: Duration::from_millis(900),
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
}

impl Manager {
    pub fn new(cfg: ManagerConfig) -> Self {
        Manager {
            rib: Rib::new(cfg.max_routes),
            cfg,
            pending: HashMap::new(),
            next_token: 1,
            datasets: VecDeque::new(),
            last_version: 0,
            events: VecDeque::new(),
        }
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

    /// Adds a route (from the config or the shell); returns the RIB error if refused.
    pub fn add_route(
        &mut self,
        ops: &mut dyn FwdOps,
        prefix: Name,
        route: Route,
    ) -> Result<(), RibError> {
        let ups = self.rib.insert(prefix, route)?;
        apply(ops, ups);
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
    }

    /// Handles one management Interest received on `face`.
    pub fn handle_interest(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        face: u64,
        interest: &Interest,
    ) {
        match classify(interest) {
            Ok(Request::Command {
                module,
                verb,
                params,
                ..
            }) => {
                let name = interest.name.clone();
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

    #[allow(clippy::too_many_arguments)]
    fn command(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        face: u64,
        name: &Name,
        module: &str,
        verb: &str,
        p: ControlParameters,
    ) -> Option<ControlResponse> {
        let target = p.face_id.filter(|f| *f != 0).unwrap_or(face);
        let too_deep = p.name.as_ref().is_some_and(|n| n.len() > MAX_NAME_DEPTH);
        let bad = |text: &str, body: ControlParameters| {
            Some(ControlResponse::new(status::BAD_REQUEST, text, body))
        };
        if too_deep {
            return Some(ControlResponse::new(
                status::NAME_TOO_LONG,
                "Prefix has too many components",
                p,
            ));
        }
        match (module, verb) {
            ("rib", "register") => {
                let Some(prefix) = p.name.clone() else {
                    return bad("Name is required", p);
                };
                if !ops.face_exists(target) {
                    return Some(ControlResponse::new(status::GONE, "Face not found", p));
                }
                let body = ControlParameters {
                    name: Some(prefix.clone()),
                    face_id: Some(target),
                    origin: Some(p.origin.unwrap_or(0)),
                    cost: Some(p.cost.unwrap_or(0)),
                    flags: Some(p.flags.unwrap_or(CHILD_INHERIT)),
                    expiration_period_ms: p.expiration_period_ms,
                    ..Default::default()
                };
                let route = Route {
                    face: target,
                    origin: body.origin.unwrap_or(0),
                    cost: body.cost.unwrap_or(0),
                    flags: body.flags.unwrap_or(CHILD_INHERIT),
                    expires: p
                        .expiration_period_ms
                        .map(|ms| now + Duration::from_millis(ms)),
                };
                Some(match self.add_route(ops, prefix, route) {
                    Ok(()) => ControlResponse::new(status::OK, "OK", body),
                    Err(RibError::TooDeep) => ControlResponse::new(
                        status::NAME_TOO_LONG,
                        "Prefix has too many components",
                        body,
                    ),
                    Err(e @ RibError::Full(_)) => {
                        ControlResponse::new(status::INTERNAL, e.to_string(), body)
                    }
                })
            }
            ("rib", "unregister") => {
                let Some(prefix) = p.name.clone() else {
                    return bad("Name is required", p);
                };
                let origin = p.origin.unwrap_or(0);
                let ups = self.rib.remove(&prefix, target, origin);
                apply(ops, ups);
                let body = ControlParameters {
                    name: Some(prefix),
                    face_id: Some(target),
                    origin: Some(origin),
                    ..Default::default()
                };
                Some(ControlResponse::new(status::OK, "OK", body))
            }
            ("fib", "add-nexthop") => {
                let Some(prefix) = p.name.clone() else {
                    return bad("Name is required", p);
                };
                let cost = p.cost.unwrap_or(0);
                let body = ControlParameters {
                    name: Some(prefix.clone()),
                    face_id: Some(target),
                    cost: Some(cost),
                    ..Default::default()
                };
                if !ops.face_exists(target) || !ops.fib_add_nexthop(&prefix, target, cost) {
                    return Some(ControlResponse::new(status::GONE, "Face not found", body));
                }
                Some(ControlResponse::new(status::OK, "OK", body))
            }
            ("fib", "remove-nexthop") => {
                let Some(prefix) = p.name.clone() else {
                    return bad("Name is required", p);
                };
                ops.fib_remove_nexthop(&prefix, target);
                let body = ControlParameters {
                    name: Some(prefix),
                    face_id: Some(target),
                    ..Default::default()
                };
                Some(ControlResponse::new(status::OK, "OK", body))
            }
            ("strategy-choice", "set") => {
                let (Some(prefix), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
                    return bad("Name and Strategy are required", p);
                };
                match ops.set_strategy(&prefix, &strategy) {
                    Some(instance) => {
                        let body = ControlParameters {
                            name: Some(prefix),
                            strategy: Some(instance),
                            ..Default::default()
                        };
                        Some(ControlResponse::new(status::OK, "OK", body))
                    }
                    None => Some(ControlResponse::new(
                        status::NOT_FOUND,
                        "Strategy not registered",
                        p,
                    )),
                }
            }
            ("strategy-choice", "unset") => {
                let Some(prefix) = p.name.clone() else {
                    return bad("Name is required", p);
                };
                if prefix.is_empty() {
                    return bad("Cannot unset the root prefix", p);
                }
                ops.unset_strategy(&prefix);
                let body = ControlParameters {
                    name: Some(prefix),
                    ..Default::default()
                };
                Some(ControlResponse::new(status::OK, "OK", body))
            }
            ("faces", "create") => self.faces_create(now, ops, face, name, p),
            ("faces", "destroy") => {
                let Some(id) = p.face_id else {
                    return bad("FaceId is required", p);
                };
                if ops.face_exists(id) {
                    ops.remove_face(now, id);
                    self.face_removed(ops, id);
                    self.events.push_back(MgmtEvent::DestroyFace { face: id });
                }
                let body = ControlParameters {
                    face_id: Some(id),
                    ..Default::default()
                };
                Some(ControlResponse::new(status::OK, "OK", body))
            }
            _ => Some(ControlResponse::new(
                status::NOT_IMPLEMENTED,
                "Unsupported command",
                p,
            )),
        }
    }

    fn faces_create(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        face: u64,
        name: &Name,
        p: ControlParameters,
    ) -> Option<ControlResponse> {
        let Some(uri_s) = p.uri.clone() else {
            return Some(ControlResponse::new(
                status::BAD_REQUEST,
                "Uri is required",
                p,
            ));
        };
        let uri = match FaceUri::parse(&uri_s) {
            Ok(u @ (FaceUri::Udp(_) | FaceUri::Tcp(_))) => u,
            Ok(_) | Err(super::FaceUriError::UnsupportedScheme(_)) => {
                return Some(ControlResponse::new(
                    status::NOT_ACCEPTABLE,
                    "Unsupported protocol",
                    p,
                ));
            }
            Err(e) => return Some(ControlResponse::new(status::BAD_REQUEST, e.to_string(), p)),
        };
        let local_uri = match p.local_uri.as_deref().map(FaceUri::parse) {
            Some(Ok(u)) => Some(u),
            Some(Err(e)) => {
                return Some(ControlResponse::new(status::BAD_REQUEST, e.to_string(), p))
            }
            None => None,
        };
        let canonical = uri.to_string();
        if let Some(existing) = ops.face_statuses().into_iter().find(|f| f.uri == canonical) {
            let body = face_body(
                existing.face_id,
                &existing.uri,
                &existing.local_uri,
                existing.face_persistency,
            );
            return Some(ControlResponse::new(
                status::CONFLICT,
                "Face with remote URI already exists",
                body,
            ));
        }
        let token = self.next_token;
        self.next_token += 1;
        let persistency = p.face_persistency.unwrap_or(0);
        self.pending.insert(
            token,
            PendingCreate {
                reply_face: face,
                name: name.clone(),
                params: p.clone(),
                deadline: now + self.cfg.face_create_timeout,
            },
        );
        self.events
            .push_back(MgmtEvent::CreateFace(FaceCreateRequest {
                token,
                uri,
                local_uri,
                persistency,
                mtu: p.mtu,
            }));
        None
    }

    /// The shell opened (or failed to open) the face of a faces/create.
    pub fn complete_create_face(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        token: u64,
        result: Result<u64, String>,
    ) {
        let Some(pc) = self.pending.remove(&token) else {
            return;
        };
        let persistency = pc.params.face_persistency.unwrap_or(0);
        let resp = match result {
            Ok(id) => {
                let (uri, local) = ops.face_uris(id).unwrap_or_default();
                ControlResponse::new(status::OK, "OK", face_body(id, &uri, &local, persistency))
            }
            Err(e) => ControlResponse::new(
                status::FACE_CREATE_FAILED,
                format!("Face creation failed: {e}"),
                pc.params,
            ),
        };
        reply(now, ops, pc.reply_face, &pc.name, &resp);
    }

    #[allow(clippy::too_many_arguments)]
    fn dataset(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        face: u64,
        interest: &Interest,
        module: &str,
        dataset: &str,
        base_len: usize,
    ) {
        let name = &interest.name;
        if name.len() > base_len {
            // A follow-up segment: /<request>/v=<n>/seg=<i>.
            let seg = name.get(base_len + 1).and_then(|c| c.as_segment());
            let versioned = name.prefix(base_len + 1);
            if let (Some(seg), Some(cached)) =
                (seg, self.datasets.iter().find(|d| d.prefix == versioned))
            {
                if let Some(data) = usize::try_from(seg)
                    .ok()
                    .and_then(|i| cached.segments.get(i))
                {
                    ops.send_reply(now, face, data.clone());
                }
            }
            return;
        }
        let payload = self.build_dataset(now, ops, module, dataset);
        let wall_ms = self.cfg.unix_epoch_offset_ms + now.as_nanos() / 1_000_000;
        let version = wall_ms.max(self.last_version + 1);
        self.last_version = version;
        let prefix = name.append(Component::version(version));
        let chunks = dataset::segment_payload(&payload, dataset::MAX_SEGMENT_CONTENT);
        let last = chunks.len() as u64 - 1;
        let segments: Vec<Bytes> = chunks
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let mut d = Data::new(prefix.append(Component::segment(i as u64)), c);
                d.meta.freshness_period = Some(REPLY_FRESHNESS);
                d.meta.final_block_id = Some(Component::segment(last));
                d.encode_signed_digest_sha256()
            })
            .collect();
        ops.send_reply(now, face, segments[0].clone());
        if segments.len() > 1 {
            if self.datasets.len() >= DATASET_CACHE {
                self.datasets.pop_front();
            }
            self.datasets.push_back(CachedDataset {
                prefix,
                segments,
                expires: now + DATASET_TTL,
            });
        }
    }

    fn build_dataset(
        &self,
        now: Timestamp,
        ops: &dyn FwdOps,
        module: &str,
        dataset: &str,
    ) -> Bytes {
        match (module, dataset) {
            ("faces", "list") => {
                dataset::encode_list(&ops.face_statuses(), FaceStatus::encode_into)
            }
            ("fib", "list") => dataset::encode_list(&ops.fib_entries(), FibEntry::encode_into),
            ("strategy-choice", "list") => {
                dataset::encode_list(&ops.strategy_choices(), StrategyChoiceStatus::encode_into)
            }
            ("rib", "list") => {
                let entries: Vec<RibEntryStatus> = self
                    .rib
                    .entries()
                    .map(|(n, routes)| RibEntryStatus {
                        name: n.clone(),
                        routes: routes
                            .iter()
                            .map(|r| RouteRecord {
                                face_id: r.face,
                                origin: r.origin,
                                cost: r.cost,
                                flags: r.flags,
                                expiration_period_ms: r
                                    .expires
                                    .map(|t| (t - now).as_millis() as u64),
                            })
                            .collect(),
                    })
                    .collect();
                dataset::encode_list(&entries, RibEntryStatus::encode_into)
            }
            _ => {
                let g = ops.general_counters();
                let s = ForwarderStatus {
                    nfd_version: self.cfg.version.clone(),
                    start_timestamp_ms: self.cfg.unix_epoch_offset_ms,
                    current_timestamp_ms: self.cfg.unix_epoch_offset_ms
                        + now.as_nanos() / 1_000_000,
                    n_name_tree_entries: g.n_name_tree_entries,
                    n_fib_entries: g.n_fib_entries,
                    n_pit_entries: g.n_pit_entries,
                    n_measurements_entries: g.n_measurements_entries,
                    n_cs_entries: g.n_cs_entries,
                    counters: g.packets,
                    n_satisfied_interests: g.n_satisfied_interests,
                    n_unsatisfied_interests: g.n_unsatisfied_interests,
                };
                let mut b = bytes::BytesMut::with_capacity(128);
                s.encode_into(&mut b);
                b.freeze()
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
#[path = "manager_tests.rs"]
mod tests;
