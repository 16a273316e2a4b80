//! A management client on one stream: status datasets, signed control
//! commands, and raw packets for small tools and tests.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _};
use bytes::{Bytes, BytesMut};
use icn_tlv::{Data, Interest, LpPacket, Name};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::status::Snapshot;
use super::stream::{frame, Frame};
use icn_tlv::nfd::command::signed_command;
use icn_tlv::nfd::dataset::{
    items, FaceStatus, FibEntry, ForwarderStatus, RibEntryStatus, StrategyChoiceStatus,
};
use icn_tlv::nfd::face_state::{self, FaceState};
use icn_tlv::nfd::{ControlParameters, ControlResponse};

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

    /// How long `express` and `command` wait for their answer.
    pub fn set_timeout(&mut self, t: Duration) {
        self.timeout = t;
    }

    /// Writes one encoded packet.
    pub async fn send(&mut self, wire: &[u8]) -> anyhow::Result<()> {
        self.stream.write_all(wire).await?;
        Ok(())
    }

    /// The next element the forwarder sends (TLV-TYPE, whole TLV), waiting
    /// until `deadline`.
    pub async fn recv_until(
        &mut self,
        deadline: tokio::time::Instant,
    ) -> anyhow::Result<(u64, Bytes)> {
        loop {
            match frame(&self.buf) {
                Frame::Complete { typ, len } => {
                    return Ok((typ, self.buf.split_to(len).freeze()));
                }
                Frame::TooLarge => bail!("oversized element from the forwarder"),
                Frame::Partial => {}
            }
            let n = tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.buf))
                .await
                .context("timed out waiting for the forwarder")??;
            if n == 0 {
                bail!("forwarder closed the connection");
            }
        }
    }

    /// Sends an Interest and waits for the Data with a matching name;
    /// a Nack for it is an error naming the reason.
    pub async fn express(&mut self, interest: Interest) -> anyhow::Result<Data> {
        self.send(&interest.encode()).await?;
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let (typ, el) = self.recv_until(deadline).await?;
            match typ {
                6 => {
                    let d = Data::decode(el)?;
                    if interest.matches_data(&d) {
                        return Ok(d);
                    }
                }
                100 => {
                    let lp = LpPacket::decode(el)?;
                    let Some(frag) = lp.fragment else { continue };
                    if let Some(nack) = lp.nack {
                        if Interest::decode(frag).is_ok_and(|i| i.name == interest.name) {
                            bail!("Nack {:?} for {}", nack, interest.name);
                        }
                    } else if let Ok(d) = Data::decode(frag) {
                        // Data in an LpPacket: stamped with a congestion
                        // control's fields, or carrying a PitToken.
                        if interest.matches_data(&d) {
                            return Ok(d);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Sends a v0.3 DigestSha256-signed control command and returns the
    /// forwarder's ControlResponse.
    pub async fn command(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> anyhow::Result<ControlResponse> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let nonce = (u64::from(nonce()) << 32) | u64::from(nonce());
        // Decoded back so that the name carries the params-sha256 component
        // the reply is named after.
        let i = Interest::decode(signed_command(module, verb, params, nonce, now_ms).encode())?;
        let d = self.express(i).await?;
        Ok(ControlResponse::decode(d.content.clone())?)
    }

    /// [`Client::command`] for callers that only accept success: any status
    /// other than 200 becomes an error naming the command, the code and the
    /// forwarder's text.
    pub async fn command_ok(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> anyhow::Result<ControlParameters> {
        let r = self.command(module, verb, params).await?;
        if !r.is_ok() {
            bail!("{module}/{verb} refused: {} {}", r.code, r.text);
        }
        Ok(r.body.unwrap_or_default())
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

    /// Fetches a list dataset and decodes each item with `decode`.
    pub async fn list<T>(
        &mut self,
        name: &str,
        decode: fn(Bytes) -> Result<T, icn_tlv::nfd::MgmtError>,
    ) -> anyhow::Result<Vec<T>> {
        let payload = self.dataset(name).await?;
        Ok(items(payload)?
            .into_iter()
            .map(decode)
            .collect::<Result<_, _>>()?)
    }

    /// `status/general`: version, uptime, table sizes, global counters.
    pub async fn general(&mut self) -> anyhow::Result<ForwarderStatus> {
        Ok(ForwarderStatus::decode(
            self.dataset("/localhost/nfd/status/general").await?,
        )?)
    }

    /// The icnfwd-specific per-face state; empty when the forwarder does
    /// not serve it (NFD).
    pub async fn face_states(&mut self) -> anyhow::Result<Vec<FaceState>> {
        let (m, d) = face_state::DATASET;
        match self.dataset(&format!("/localhost/nfd/{m}/{d}")).await {
            Ok(p) => Ok(items(p)?
                .into_iter()
                .map(FaceState::decode_value)
                .collect::<Result<_, _>>()?),
            Err(_) => Ok(Vec::new()),
        }
    }

    /// NFD's `cs/info`: the Content Store's capacity, occupancy and lookups.
    pub async fn cs_info(&mut self) -> anyhow::Result<icn_tlv::nfd::CsInfo> {
        let (m, d) = icn_tlv::nfd::cs_info::DATASET;
        Ok(icn_tlv::nfd::CsInfo::decode(
            self.dataset(&format!("/localhost/nfd/{m}/{d}")).await?,
        )?)
    }

    /// Everything `icnfwd status` shows. The icnfwd-specific face state is
    /// left empty when the forwarder does not serve it (NFD).
    pub async fn snapshot(&mut self) -> anyhow::Result<Snapshot> {
        let general = self.general().await?;
        let faces = self
            .list("/localhost/nfd/faces/list", FaceStatus::decode_value)
            .await?;
        let fib = self
            .list("/localhost/nfd/fib/list", FibEntry::decode_value)
            .await?;
        let rib = self
            .list("/localhost/nfd/rib/list", RibEntryStatus::decode_value)
            .await?;
        let strategies = self
            .list(
                "/localhost/nfd/strategy-choice/list",
                StrategyChoiceStatus::decode_value,
            )
            .await?;
        let states = self.face_states().await?;
        let (m, d) = icn_tlv::nfd::mcast_state::DATASET;
        // Absent from other forwarders (and older icnfwd): no section.
        let mcast = match self.dataset(&format!("/localhost/nfd/{m}/{d}")).await {
            Ok(p) => Some(icn_tlv::nfd::McastState::decode(p)?),
            Err(_) => None,
        };
        let (m, d) = icn_tlv::nfd::limits_state::DATASET;
        let limits = match self.dataset(&format!("/localhost/nfd/{m}/{d}")).await {
            Ok(p) => Some(icn_tlv::nfd::LimitsState::decode(p)?),
            Err(_) => None,
        };
        // Absent from forwarders without cs/info (older icnfwd).
        let cs = self.cs_info().await.ok();
        Ok(Snapshot {
            cs,
            limits,
            general,
            faces,
            states,
            fib,
            rib,
            strategies,
            mcast,
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
