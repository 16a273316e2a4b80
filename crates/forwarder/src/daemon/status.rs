//! `icnfwd status`: reads the status datasets of a running daemon over its
//! Unix socket with the management protocol, and prints them.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _};
use bytes::{Bytes, BytesMut};
use icn_tlv::{Data, Interest, Name};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::stream::{frame, Frame};
use crate::mgmt::dataset::{
    items, FaceStatus, FibEntry, ForwarderStatus, RibEntryStatus, StrategyChoiceStatus,
};

/// Everything `icnfwd status` shows.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub general: ForwarderStatus,
    pub faces: Vec<FaceStatus>,
    pub fib: Vec<FibEntry>,
    pub rib: Vec<RibEntryStatus>,
    pub strategies: Vec<StrategyChoiceStatus>,
}

/// A management client on one stream.
pub struct Client {
    stream: UnixStream,
    buf: BytesMut,
    timeout: Duration,
}

impl Client {
    pub async fn connect(path: &Path) -> anyhow::Result<Client> {
        let stream = UnixStream::connect(path)
            .await
            .with_context(|| format!("connecting to {}", path.display()))?;
        Ok(Client {
            stream,
            buf: BytesMut::with_capacity(16 * 1024),
            timeout: Duration::from_secs(2),
        })
    }

    /// Sends an Interest and waits for the Data with a matching name.
    pub async fn express(&mut self, interest: Interest) -> anyhow::Result<Data> {
        self.stream.write_all(&interest.encode()).await?;
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            while let Frame::Complete { typ, len } = frame(&self.buf) {
                let el = self.buf.split_to(len).freeze();
                if typ == 6 {
                    let d = Data::decode(el)?;
                    if interest.matches_data(&d) {
                        return Ok(d);
                    }
                }
            }
            let n = tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.buf))
                .await
                .context("timed out waiting for the forwarder")??;
            if n == 0 {
                bail!("forwarder closed the connection");
            }
        }
    }

    /// Fetches a whole status dataset (all segments) and returns its payload.
    pub async fn dataset(&mut self, name: &str) -> anyhow::Result<Bytes> {
        let base: Name = name.parse().map_err(|e| anyhow::anyhow!("{name}: {e:?}"))?;
        let first = self.express(request(base.clone(), true)).await?;
        let mut payload = BytesMut::from(&first.content[..]);
        let Some(seg0) = first
            .name
            .get(first.name.len() - 1)
            .and_then(|c| c.as_segment())
        else {
            return Ok(payload.freeze());
        };
        let versioned = first.name.prefix(first.name.len() - 1);
        let last = first
            .meta
            .final_block_id
            .as_ref()
            .and_then(|c| c.as_segment())
            .unwrap_or(seg0);
        for s in seg0 + 1..=last {
            let d = self
                .express(request(
                    versioned.append(icn_tlv::Component::segment(s)),
                    false,
                ))
                .await?;
            payload.extend_from_slice(&d.content);
        }
        Ok(payload.freeze())
    }

    pub async fn snapshot(&mut self) -> anyhow::Result<Snapshot> {
        let general =
            ForwarderStatus::decode(self.dataset("/localhost/nfd/status/general").await?)?;
        let faces = items(self.dataset("/localhost/nfd/faces/list").await?)?
            .into_iter()
            .map(FaceStatus::decode_value)
            .collect::<Result<_, _>>()?;
        let fib = items(self.dataset("/localhost/nfd/fib/list").await?)?
            .into_iter()
            .map(FibEntry::decode_value)
            .collect::<Result<_, _>>()?;
        let rib = items(self.dataset("/localhost/nfd/rib/list").await?)?
            .into_iter()
            .map(RibEntryStatus::decode_value)
            .collect::<Result<_, _>>()?;
        let strategies = items(self.dataset("/localhost/nfd/strategy-choice/list").await?)?
            .into_iter()
            .map(StrategyChoiceStatus::decode_value)
            .collect::<Result<_, _>>()?;
        Ok(Snapshot {
            general,
            faces,
            fib,
            rib,
            strategies,
        })
    }
}

fn request(name: Name, can_be_prefix: bool) -> Interest {
    let mut i = Interest::new(name);
    i.can_be_prefix = can_be_prefix;
    i.must_be_fresh = true;
    i.nonce = Some(nonce());
    i.lifetime = Some(Duration::from_millis(1000));
    i
}

/// A nonce that differs between requests and runs (no RNG needed for it).
fn nonce() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    t ^ std::process::id().rotate_left(16) ^ NEXT.fetch_add(0x9E37_79B9, Ordering::Relaxed)
}

/// Renders a snapshot as text.
pub fn render(s: &Snapshot) -> String {
    let mut o = String::new();
    let g = &s.general;
    let up_s = g.current_timestamp_ms.saturating_sub(g.start_timestamp_ms) / 1000;
    let _ = writeln!(o, "General:\n  version={} uptime={}s", g.nfd_version, up_s);
    let _ = writeln!(
        o,
        "  fib={} pit={} cs={} nametree={}",
        g.n_fib_entries, g.n_pit_entries, g.n_cs_entries, g.n_name_tree_entries
    );
    let c = &g.counters;
    let _ = writeln!(
        o,
        "  in: {}i {}d {}n  out: {}i {}d {}n  satisfied={} unsatisfied={}",
        c.n_in_interests,
        c.n_in_data,
        c.n_in_nacks,
        c.n_out_interests,
        c.n_out_data,
        c.n_out_nacks,
        g.n_satisfied_interests,
        g.n_unsatisfied_interests
    );
    let _ = writeln!(o, "Faces:");
    for f in &s.faces {
        let scope = if f.face_scope == 1 {
            "local"
        } else {
            "non-local"
        };
        let pers = ["persistent", "on-demand", "permanent"]
            .get(f.face_persistency as usize)
            .copied()
            .unwrap_or("?");
        let link = ["point-to-point", "multi-access", "ad-hoc"]
            .get(f.link_type as usize)
            .copied()
            .unwrap_or("?");
        let c = &f.counters;
        let _ = writeln!(
            o,
            "  faceid={} remote={} local={} {scope} {pers} {link}{} in={{{}i {}d {}n {}B}} out={{{}i {}d {}n {}B}} flags={:#x}",
            f.face_id,
            f.uri,
            f.local_uri,
            f.mtu.map(|m| format!(" mtu={m}")).unwrap_or_default(),
            c.n_in_interests,
            c.n_in_data,
            c.n_in_nacks,
            f.n_in_bytes,
            c.n_out_interests,
            c.n_out_data,
            c.n_out_nacks,
            f.n_out_bytes,
            f.flags
        );
    }
    let _ = writeln!(o, "FIB:");
    for e in &s.fib {
        let hops: Vec<String> = e
            .next_hops
            .iter()
            .map(|(f, c)| format!("faceid={f} (cost={c})"))
            .collect();
        let _ = writeln!(o, "  {} nexthops={{{}}}", e.name, hops.join(", "));
    }
    let _ = writeln!(o, "RIB:");
    for e in &s.rib {
        let routes: Vec<String> = e
            .routes
            .iter()
            .map(|r| {
                let exp = r
                    .expiration_period_ms
                    .map(|m| format!(" expires={m}ms"))
                    .unwrap_or_default();
                format!(
                    "faceid={} origin={} cost={} flags={}{exp}",
                    r.face_id, r.origin, r.cost, r.flags
                )
            })
            .collect();
        let _ = writeln!(o, "  {} routes={{{}}}", e.name, routes.join(", "));
    }
    let _ = writeln!(o, "Strategy choices:");
    for sc in &s.strategies {
        let _ = writeln!(o, "  {} strategy={}", sc.name, sc.strategy);
    }
    o
}

/// Connects, fetches and prints; the `icnfwd status` entry point.
pub async fn print_status(socket: &Path) -> anyhow::Result<()> {
    let mut c = Client::connect(socket).await?;
    let snap = c.snapshot().await?;
    print!("{}", render(&snap));
    Ok(())
}
