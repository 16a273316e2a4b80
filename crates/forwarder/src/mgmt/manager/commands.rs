//! Control commands: rib/*, fib/*, strategy-choice/*, faces/*.

use cc_core::{Duration, Timestamp};
use icn_tlv::Name;

use super::{
    apply, face_body, reply, FaceCreateRequest, FwdOps, Manager, MgmtEvent, PendingCreate,
};
use crate::mgmt::face_uri::FaceUri;
use crate::mgmt::params::{ControlParameters, ControlResponse};
use crate::mgmt::rib::{RibError, Route, CHILD_INHERIT, MAX_NAME_DEPTH};
use crate::mgmt::status;

impl Manager {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn command(
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
                    Err(e @ (RibError::Full(_) | RibError::FibRefused)) => {
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

    pub(super) fn faces_create(
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
            Ok(u @ (FaceUri::Udp(_) | FaceUri::Tcp(_) | FaceUri::Ether(_))) => u,
            Ok(_) | Err(crate::mgmt::FaceUriError::UnsupportedScheme(_)) => {
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
}
