//! The control verbs (`face`, `route`, `strategy`, `cs`) with nfdc's names
//! and argument order, sent as signed commands over the daemon's Unix socket.
//!
//! Output lines follow nfdc's (`face-created id=… remote=…`,
//! `prefix=/x nexthop=256 origin=255 …`) so operators' habits and scripts
//! carry over; every listing also has `--json`.

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand, ValueEnum};
use icn_forwarder::daemon::client::Client;
use icn_forwarder::daemon::status::persistency_name;
use icn_tlv::nfd::cs_info::{ENABLE_ADMIT, ENABLE_SERVE};
use icn_tlv::nfd::dataset::{FaceStatus, RibEntryStatus, StrategyChoiceStatus};
use icn_tlv::nfd::{status as code, ControlParameters};
use icn_tlv::Name;

use crate::json;

/// NFD's route origin for routes set by an operator (nfdc's default).
const ORIGIN_STATIC: u64 = 255;
/// Route flags (NFD management protocol, RIB management).
const CHILD_INHERIT: u64 = 1;
const CAPTURE: u64 = 2;

#[derive(Subcommand, Debug)]
pub enum FaceCmd {
    /// Create a face to a remote FaceUri (udp4://, udp6://, tcp4://, tcp6://, ether://).
    Create {
        /// Remote FaceUri, e.g. udp4://192.0.2.1:6363.
        remote: String,
        /// persistent (default) or permanent (reconnected, never idle-closed).
        #[arg(long, value_enum, default_value_t = Persistency::Persistent)]
        persistency: Persistency,
        /// Local FaceUri to bind (optional).
        #[arg(long)]
        local: Option<String>,
        /// Face MTU in bytes (optional).
        #[arg(long)]
        mtu: Option<u64>,
    },
    /// Destroy a face given its FaceId or its remote FaceUri.
    Destroy {
        /// FaceId or remote FaceUri.
        face: String,
    },
    /// List faces with their counters and icnfwd's per-face state.
    List(ListArgs),
}

#[derive(Subcommand, Debug)]
pub enum RouteCmd {
    /// Add a route: PREFIX toward NEXTHOP (a FaceId or an existing face's remote FaceUri).
    Add {
        prefix: String,
        nexthop: String,
        /// Route origin (nfdc default: 255, static).
        #[arg(long, default_value_t = ORIGIN_STATIC)]
        origin: u64,
        /// Route cost.
        #[arg(long, default_value_t = 0)]
        cost: u64,
        /// Do not let longer prefixes inherit this route.
        #[arg(long)]
        no_inherit: bool,
        /// Hide routes of shorter prefixes below this one.
        #[arg(long)]
        capture: bool,
        /// Remove the route after this many milliseconds (default: never).
        #[arg(long = "expires")]
        expires_ms: Option<u64>,
    },
    /// Remove the route PREFIX toward NEXTHOP of one origin.
    Remove {
        prefix: String,
        nexthop: String,
        #[arg(long, default_value_t = ORIGIN_STATIC)]
        origin: u64,
    },
    /// List RIB routes.
    List(ListArgs),
}

#[derive(Subcommand, Debug)]
pub enum StrategyCmd {
    /// Choose the forwarding strategy for a prefix.
    Set { prefix: String, strategy: String },
    /// Return a prefix to its parent's strategy.
    Unset { prefix: String },
    /// List strategy choices.
    List(ListArgs),
}

#[derive(Subcommand, Debug)]
pub enum CsCmd {
    /// Content Store occupancy.
    Info(ListArgs),
}

#[derive(Args, Debug, Clone, Copy)]
pub struct ListArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistency {
    Persistent,
    Permanent,
}

impl Persistency {
    fn code(self) -> u64 {
        match self {
            Persistency::Persistent => 0,
            Persistency::Permanent => 2,
        }
    }
}

fn parse_name(s: &str) -> anyhow::Result<Name> {
    s.parse()
        .map_err(|e| anyhow::anyhow!("invalid name {s:?}: {e:?}"))
}

/// A FaceId, or the id of the face whose remote URI is `face`.
async fn resolve_face(c: &mut Client, face: &str) -> anyhow::Result<u64> {
    if let Ok(id) = face.parse::<u64>() {
        return Ok(id);
    }
    let faces = c
        .list("/localhost/nfd/faces/list", FaceStatus::decode_value)
        .await?;
    faces
        .iter()
        .find(|f| f.uri == face)
        .map(|f| f.face_id)
        .with_context(|| format!("no face with remote URI {face} (see `icnfwd face list`)"))
}

fn face_line(f: &ControlParameters) -> String {
    format!(
        "id={} local={} remote={} persistency={}",
        f.face_id.unwrap_or(0),
        f.local_uri.as_deref().unwrap_or(""),
        f.uri.as_deref().unwrap_or(""),
        persistency_name(f.face_persistency.unwrap_or(0))
    )
}

pub async fn face(c: &mut Client, cmd: FaceCmd) -> anyhow::Result<()> {
    match cmd {
        FaceCmd::Create {
            remote,
            persistency,
            local,
            mtu,
        } => {
            // Face creation waits for a socket or a TCP connect.
            c.set_timeout(std::time::Duration::from_secs(10));
            let p = ControlParameters {
                uri: Some(remote),
                local_uri: local,
                face_persistency: Some(persistency.code()),
                mtu,
                ..Default::default()
            };
            let r = c.command("faces", "create", &p).await?;
            let body = r.body.clone().unwrap_or_default();
            match r.code {
                code::OK => println!("face-created {}", face_line(&body)),
                // nfdc: an existing face is not an error.
                code::CONFLICT => println!("face-exists {}", face_line(&body)),
                _ => bail!("faces/create refused: {} {}", r.code, r.text),
            }
        }
        FaceCmd::Destroy { face } => {
            let id = resolve_face(c, &face).await?;
            let faces = c
                .list("/localhost/nfd/faces/list", FaceStatus::decode_value)
                .await?;
            let Some(f) = faces.into_iter().find(|f| f.face_id == id) else {
                // NFD answers 200 for an unknown face; nfdc reports it.
                bail!("face-not-found id={id}");
            };
            let p = ControlParameters {
                face_id: Some(id),
                ..Default::default()
            };
            c.command_ok("faces", "destroy", &p).await?;
            println!(
                "face-destroyed id={id} local={} remote={}",
                f.local_uri, f.uri
            );
        }
        FaceCmd::List(a) => {
            let faces = c
                .list("/localhost/nfd/faces/list", FaceStatus::decode_value)
                .await?;
            let states = c.face_states().await?;
            if a.json {
                println!("{}", json::faces(&faces, &states));
            } else {
                for f in &faces {
                    println!("{}", face_list_line(f));
                    if let Some(st) = states.iter().find(|s| s.face_id == f.face_id) {
                        println!("  {}", icn_forwarder::daemon::status::render_state(st));
                    }
                }
            }
        }
    }
    Ok(())
}

fn face_list_line(f: &FaceStatus) -> String {
    format!(
        "faceid={} remote={} local={} persistency={} counters={{{}}}",
        f.face_id,
        f.uri,
        f.local_uri,
        persistency_name(f.face_persistency),
        icn_forwarder::daemon::status::render_counters(f)
    )
}

/// Route flags as nfdc prints them.
pub fn route_flags(flags: u64) -> String {
    let mut v = Vec::new();
    if flags & CHILD_INHERIT != 0 {
        v.push("child-inherit");
    }
    if flags & CAPTURE != 0 {
        v.push("capture");
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

fn expires(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |m| format!("{m}ms"))
}

pub async fn route(c: &mut Client, cmd: RouteCmd) -> anyhow::Result<()> {
    match cmd {
        RouteCmd::Add {
            prefix,
            nexthop,
            origin,
            cost,
            no_inherit,
            capture,
            expires_ms,
        } => {
            let face = resolve_face(c, &nexthop).await?;
            let flags =
                if no_inherit { 0 } else { CHILD_INHERIT } | if capture { CAPTURE } else { 0 };
            let p = ControlParameters {
                name: Some(parse_name(&prefix)?),
                face_id: Some(face),
                origin: Some(origin),
                cost: Some(cost),
                flags: Some(flags),
                expiration_period_ms: expires_ms,
                ..Default::default()
            };
            let b = c.command_ok("rib", "register", &p).await?;
            println!(
                "route-add-accepted prefix={} nexthop={} origin={} cost={} flags={} expires={}",
                b.name.unwrap_or_default(),
                b.face_id.unwrap_or(face),
                b.origin.unwrap_or(origin),
                b.cost.unwrap_or(cost),
                route_flags(b.flags.unwrap_or(flags)),
                expires(b.expiration_period_ms)
            );
        }
        RouteCmd::Remove {
            prefix,
            nexthop,
            origin,
        } => {
            let face = resolve_face(c, &nexthop).await?;
            let name = parse_name(&prefix)?;
            let rib = c
                .list("/localhost/nfd/rib/list", RibEntryStatus::decode_value)
                .await?;
            let exists = rib.iter().any(|e| {
                e.name == name
                    && e.routes
                        .iter()
                        .any(|r| r.face_id == face && r.origin == origin)
            });
            if !exists {
                // NFD answers 200 for a missing route; nfdc reports it.
                bail!("route-not-found prefix={name} nexthop={face} origin={origin}");
            }
            let p = ControlParameters {
                name: Some(name.clone()),
                face_id: Some(face),
                origin: Some(origin),
                ..Default::default()
            };
            c.command_ok("rib", "unregister", &p).await?;
            println!("route-removed prefix={name} nexthop={face} origin={origin}");
        }
        RouteCmd::List(a) => {
            let rib = c
                .list("/localhost/nfd/rib/list", RibEntryStatus::decode_value)
                .await?;
            if a.json {
                println!("{}", json::routes(&rib));
            } else {
                for e in &rib {
                    for r in &e.routes {
                        println!(
                            "prefix={} nexthop={} origin={} cost={} flags={} expires={}",
                            e.name,
                            r.face_id,
                            r.origin,
                            r.cost,
                            route_flags(r.flags),
                            expires(r.expiration_period_ms)
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

pub async fn strategy(c: &mut Client, cmd: StrategyCmd) -> anyhow::Result<()> {
    match cmd {
        StrategyCmd::Set { prefix, strategy } => {
            let p = ControlParameters {
                name: Some(parse_name(&prefix)?),
                strategy: Some(parse_name(&strategy)?),
                ..Default::default()
            };
            let b = c.command_ok("strategy-choice", "set", &p).await?;
            println!(
                "strategy-set prefix={} strategy={}",
                b.name.unwrap_or_default(),
                b.strategy.unwrap_or_default()
            );
        }
        StrategyCmd::Unset { prefix } => {
            let p = ControlParameters {
                name: Some(parse_name(&prefix)?),
                ..Default::default()
            };
            let b = c.command_ok("strategy-choice", "unset", &p).await?;
            println!("strategy-unset prefix={}", b.name.unwrap_or_default());
        }
        StrategyCmd::List(a) => {
            let list = c
                .list(
                    "/localhost/nfd/strategy-choice/list",
                    StrategyChoiceStatus::decode_value,
                )
                .await?;
            if a.json {
                println!("{}", json::strategies(&list));
            } else {
                for s in &list {
                    println!("prefix={} strategy={}", s.name, s.strategy);
                }
            }
        }
    }
    Ok(())
}

/// `cs info`: NFD's `cs/info` dataset, printed as nfdc prints it, plus the
/// byte bound and the bytes held.
pub async fn cs(c: &mut Client, cmd: CsCmd) -> anyhow::Result<()> {
    let CsCmd::Info(a) = cmd;
    let cs = c.cs_info().await.context("reading cs/info")?;
    if a.json {
        println!("{}", json::cs(&cs));
        return Ok(());
    }
    let on = |bit: u64| if cs.flags & bit != 0 { "on" } else { "off" };
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    println!("CS information:");
    println!("       capacity={}", cs.capacity);
    println!("  capacityBytes={}", opt(cs.capacity_bytes));
    println!("          admit={}", on(ENABLE_ADMIT));
    println!("          serve={}", on(ENABLE_SERVE));
    println!("       nEntries={}", cs.n_entries);
    println!("         nBytes={}", opt(cs.n_bytes));
    println!("          nHits={}", cs.n_hits);
    println!("        nMisses={}", cs.n_misses);
    Ok(())
}
