//! A whole fetch, sans-IO: version discovery, then the segment pipeline,
//! turned into packets.
//!
//! `poll_transmit` yields wire bytes (a bare Interest, or an LpPacket when
//! the scheme adds header fields), `handle_packet` takes whatever came back.

use crate::feedback::{data_feedback, nack_feedback, nack_kind};
use crate::pipeline::{Pipeline, PipelineConfig, PipelineError};
use crate::publisher::METADATA_KEYWORD;
use crate::scheme::Scheme;
use crate::stats::FetchStats;
use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_tlv::{decode_packet, Component, Data, Interest, LpPacket, NackReason, Name, NetPacket};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How the version of an unversioned name is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// RDR metadata and CanBePrefix+MustBeFresh in parallel; first answer wins.
    Auto,
    /// RDR only (`/<name>/32=metadata`), as ndnget.
    Rdr,
    /// CanBePrefix+MustBeFresh Interest for the name itself.
    Latest,
    /// Fetch `/<name>/seg=<n>` directly.
    None,
}

/// Fetch configuration.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    pub pipeline: PipelineConfig,
    pub discovery: Discovery,
    /// MustBeFresh on segment Interests.
    pub must_be_fresh: bool,
    /// Seed of the Nonce generator (tests pin it).
    pub seed: Option<u64>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            pipeline: PipelineConfig::default(),
            discovery: Discovery::Auto,
            must_be_fresh: false,
            seed: None,
        }
    }
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("version discovery failed for {name}: {reason}")]
    Discovery { name: String, reason: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Rdr,
    Latest,
}

#[derive(Debug, Clone)]
struct ProbeState {
    kind: Probe,
    name: Name,
    deadline: Timestamp,
    tries: u32,
    dead: bool,
    due: bool,
    /// Nacked for congestion: `deadline` is the end of its back-off, not a
    /// timeout.
    backing_off: bool,
}

/// Back-off of a discovery probe Nacked for congestion, per Nack so far:
/// congestion on the path is transient (a shaper full for a moment), so
/// the probe is sent again after a pause instead of failing the fetch.
const PROBE_CONGESTION_BACKOFF: Duration = Duration::from_millis(50);

/// A fetch in progress.
pub struct Fetcher {
    name: Name,
    cfg: FetchConfig,
    probes: Vec<ProbeState>,
    versioned: Option<Name>,
    pipeline: Pipeline<Scheme>,
    rng: StdRng,
    error: Option<FetchError>,
    packets_ignored: u64,
}

impl Fetcher {
    /// Starts fetching `name` with the consumer side of `scheme`.
    pub fn new(name: Name, cfg: FetchConfig, scheme: Scheme) -> Self {
        let mut rng = match cfg.seed {
            Some(s) => StdRng::seed_from_u64(s),
            None => StdRng::from_os_rng(),
        };
        // Each fetch draws its pacer's lags from its own seed, so consumers
        // on one link never share a sequence.
        let mut pipeline_cfg = cfg.pipeline.clone();
        pipeline_cfg.pace_seed = rng.random();
        let ends_with_version = name.last().is_some_and(|c| c.as_version().is_some());
        let mut probes = Vec::new();
        let mut versioned = None;
        if ends_with_version || cfg.discovery == Discovery::None {
            versioned = Some(name.clone());
        } else {
            if matches!(cfg.discovery, Discovery::Auto | Discovery::Rdr) {
                let n = name.append(Component::keyword(Bytes::from_static(METADATA_KEYWORD)));
                probes.push(Probe::Rdr.state(n));
            }
            if matches!(cfg.discovery, Discovery::Auto | Discovery::Latest) {
                probes.push(Probe::Latest.state(name.clone()));
            }
        }
        Fetcher {
            pipeline: Pipeline::new(pipeline_cfg, scheme),
            name,
            cfg,
            probes,
            versioned,
            rng,
            error: None,
            packets_ignored: 0,
        }
    }

    /// The versioned name, once known.
    pub fn versioned_name(&self) -> Option<&Name> {
        self.versioned.as_ref()
    }

    /// The pipeline (limit, RTT, counters).
    pub fn pipeline(&self) -> &Pipeline<Scheme> {
        &self.pipeline
    }

    /// Next `--log-cwnd`/`--log-rtt` event (see [`PipelineConfig::log_events`]).
    pub fn poll_log(&mut self) -> Option<crate::pipeline::LogEvent> {
        self.pipeline.poll_log()
    }

    /// True once every segment arrived.
    pub fn is_done(&self) -> bool {
        self.pipeline.is_done()
    }

    /// The fatal error, if any.
    pub fn error(&self) -> Option<FetchError> {
        self.error
            .clone()
            .or_else(|| self.pipeline.error().cloned().map(FetchError::from))
    }

    /// Packets that matched nothing outstanding.
    pub fn packets_ignored(&self) -> u64 {
        self.packets_ignored
    }

    /// Counters, with the scheme and the name filled in.
    pub fn stats(&self) -> FetchStats {
        let mut s = self.pipeline.stats();
        s.scheme = self.pipeline.law().kind().name().to_string();
        s.name = self.versioned.as_ref().unwrap_or(&self.name).to_string();
        s
    }

    /// Closes the timing window of an unfinished fetch.
    pub fn finish_timing(&mut self, now: Timestamp) {
        self.pipeline.finish_timing(now);
    }

    /// Next in-order content chunk.
    pub fn poll_output(&mut self) -> Option<Bytes> {
        self.pipeline.poll_output()
    }

    fn lifetime(&self) -> Duration {
        self.cfg.pipeline.lifetime
    }

    /// Next packet to send now.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Bytes> {
        if self.error.is_some() {
            return None;
        }
        let Some(versioned) = self.versioned.clone() else {
            return self.poll_probe(now);
        };
        let req = self.pipeline.poll_transmit(now)?;
        tracing::debug!(
            segment = req.segment,
            retransmission = req.retransmission,
            "requesting segment"
        );
        let mut i = Interest::new(versioned.append(Component::segment(req.segment)));
        i.must_be_fresh = self.cfg.must_be_fresh;
        i.nonce = Some(self.rng.random());
        i.lifetime = Some(self.lifetime());
        let wire = i.encode();
        match self.pipeline.law_mut().tag(req.segment, &mut self.rng) {
            None => Some(wire),
            Some(cc) => {
                let lp = LpPacket {
                    cc,
                    fragment: Some(wire),
                    ..LpPacket::default()
                };
                Some(lp.encode())
            }
        }
    }

    fn poll_probe(&mut self, now: Timestamp) -> Option<Bytes> {
        let lifetime = self.lifetime();
        let nonce: u32 = self.rng.random();
        let p = self.probes.iter_mut().find(|p| p.due && !p.dead)?;
        p.due = false;
        p.deadline = now + lifetime;
        let mut i = Interest::new(p.name.clone());
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        i.nonce = Some(nonce);
        i.lifetime = Some(lifetime);
        Some(i.encode())
    }

    /// When to call [`Fetcher::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        if self.error.is_some() {
            return None;
        }
        if self.versioned.is_none() {
            return self
                .probes
                .iter()
                .filter(|p| !p.dead && !p.due)
                .map(|p| p.deadline)
                .min();
        }
        self.pipeline.poll_timeout()
    }

    /// Timer expiry.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.versioned.is_some() {
            self.pipeline.handle_timeout(now);
            return;
        }
        let max = self.cfg.pipeline.max_retries;
        for p in &mut self.probes {
            if !p.dead && !p.due && p.deadline <= now {
                if p.backing_off {
                    // Its Nack was counted as the try.
                    p.backing_off = false;
                    p.due = true;
                    continue;
                }
                p.tries += 1;
                tracing::debug!(probe = ?p.kind, tries = p.tries, "version discovery timeout");
                if max.is_some_and(|m| p.tries > m) {
                    p.dead = true;
                } else {
                    p.due = true;
                }
            }
        }
        self.check_probes_dead("no reply (timeout)");
    }

    fn check_probes_dead(&mut self, reason: &str) {
        if self.versioned.is_none() && self.probes.iter().all(|p| p.dead) {
            self.error = Some(FetchError::Discovery {
                name: self.name.to_string(),
                reason: reason.to_string(),
            });
        }
    }

    /// One packet from the forwarder (bare TLV or LpPacket).
    pub fn handle_packet(&mut self, now: Timestamp, wire: Bytes) {
        let frame_bytes = wire.len();
        let Ok((lp, Some(pkt))) = decode_packet(wire) else {
            self.packets_ignored += 1;
            return;
        };
        match pkt {
            NetPacket::Data(d) => self.on_data(now, &lp, d, frame_bytes),
            NetPacket::Interest(i) => match lp.nack {
                Some(reason) => self.on_nack(now, &lp, &i, reason),
                None => self.packets_ignored += 1,
            },
        }
    }

    /// `frame_bytes`: the Data as it arrived, LP header included. Stamped
    /// rates count link frames (the forwarders pace and book frames), so
    /// the rate law turns them into Interests at the frame size.
    fn on_data(&mut self, now: Timestamp, lp: &LpPacket, d: Data, frame_bytes: usize) {
        let Some(versioned) = self.versioned.clone() else {
            // Size 0 (unknown): a metadata packet says nothing about the
            // segments' size, and the rate laws deflate by it.
            let fb = data_feedback(&lp.cc, lp.congestion_mark, 0, self.pipeline.law().reads());
            // Only a rate the law reads is worth passing: a window law
            // would count the probe's Data as one of its own.
            let rated = fb.primary_rate_bps.is_some()
                || fb.pace_constraint_ips.is_some()
                || fb.target_rate_bps.is_some();
            if self.on_discovery_data(d) && rated {
                self.pipeline.handle_path_data(now, fb);
            }
            return;
        };
        let vlen = versioned.len();
        let seg = (d.name.len() == vlen + 1 && versioned.is_prefix_of(&d.name))
            .then(|| d.name.get(vlen).and_then(|c| c.as_segment()))
            .flatten();
        let Some(seg) = seg else {
            self.packets_ignored += 1;
            return;
        };
        let final_seg = d.meta.final_block_id.as_ref().and_then(|c| c.as_segment());
        let size = frame_bytes.max(d.wire().map_or(0, |w| w.len()));
        let reads = self.pipeline.law().reads();
        let fb = data_feedback(&lp.cc, lp.congestion_mark, size, reads);
        tracing::debug!(
            segment = seg,
            mark = fb.congestion_mark,
            rate_bps = ?fb.primary_rate_bps,
            constraint_ips = ?fb.pace_constraint_ips,
            target_bps = ?fb.target_rate_bps,
            rto_ms = self.pipeline.rtt().rto().as_secs_f64() * 1e3,
            "received segment"
        );
        self.pipeline
            .handle_data(now, seg, d.content, final_seg, fb);
    }

    /// Whether `d` answered a discovery probe.
    fn on_discovery_data(&mut self, d: Data) -> bool {
        let nlen = self.name.len();
        let md = self
            .name
            .append(Component::keyword(Bytes::from_static(METADATA_KEYWORD)));
        let found = if md.is_prefix_of(&d.name) {
            Name::decode(d.content.clone())
                .ok()
                .filter(|n| n.last().is_some_and(|c| c.as_version().is_some()))
        } else if self.name.is_prefix_of(&d.name)
            && d.name.get(nlen).is_some_and(|c| c.as_version().is_some())
        {
            Some(d.name.prefix(nlen + 1))
        } else {
            None
        };
        match found {
            Some(v) => {
                tracing::debug!(version = %v, "discovered version");
                // A latest-version probe still on its way is answered with
                // the first segment (icnput, ndnputchunks): that Data may
                // come after the pipeline asked for the segment itself, and
                // timed from that request it read 58-66 ms on a 150 ms path
                // (icncat with rcp on the namespace testbed, whose probe
                // waited out a congestion Nack), the RTT estimator's first
                // sample and the lab's minimum RTT.
                let answered_latest = !md.is_prefix_of(&d.name);
                let latest_pending = self
                    .probes
                    .iter()
                    .any(|p| p.kind == Probe::Latest && !p.dead && !p.due && !p.backing_off);
                if latest_pending && !answered_latest {
                    self.pipeline.also_requested(0);
                }
                self.versioned = Some(v);
                self.probes.clear();
                true
            }
            None => {
                self.packets_ignored += 1;
                false
            }
        }
    }

    fn on_nack(&mut self, now: Timestamp, lp: &LpPacket, i: &Interest, reason: NackReason) {
        let Some(versioned) = self.versioned.clone() else {
            let max = self.cfg.pipeline.max_retries;
            if let Some(p) = self.probes.iter_mut().find(|p| p.name == i.name && !p.dead) {
                p.tries += 1;
                if reason == NackReason::Congestion && max.is_none_or(|m| p.tries <= m) {
                    tracing::debug!(probe = ?p.kind, tries = p.tries, "version discovery Nacked for congestion: backing off");
                    p.backing_off = true;
                    p.deadline = now + PROBE_CONGESTION_BACKOFF * p.tries.min(20);
                    return;
                }
                p.dead = true;
            }
            self.check_probes_dead(&format!("Nack {reason:?}"));
            return;
        };
        let vlen = versioned.len();
        if i.name.len() != vlen + 1 || !versioned.is_prefix_of(&i.name) {
            self.packets_ignored += 1;
            return;
        }
        let Some(seg) = i.name.get(vlen).and_then(|c| c.as_segment()) else {
            return;
        };
        tracing::debug!(segment = seg, ?reason, "received Nack");
        let fb = nack_feedback(&lp.cc, reason, self.pipeline.law().reads());
        self.pipeline.handle_nack(now, seg, nack_kind(reason), fb);
    }
}

impl Probe {
    fn state(self, name: Name) -> ProbeState {
        ProbeState {
            kind: self,
            name,
            deadline: Timestamp::ZERO,
            tries: 0,
            dead: false,
            due: true,
            backing_off: false,
        }
    }
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
