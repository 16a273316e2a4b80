//! A flow's consumer in virtual time: icncat's whole sans-IO fetch
//! (`icn_consumer::fetch::Fetcher`: pipeline, RTO, retries, Nack back-off,
//! the scheme's law and per-Interest fields) on an application face,
//! configured as the namespace runner's icncat command line configures it.

use cc_core::{SendLimit, Timestamp};
use icn_consumer::fetch::{Discovery, FetchConfig, Fetcher};
use icn_consumer::pipeline::{LogEvent, PipelineConfig};
use icn_consumer::{Scheme, SchemeOptions};
use icn_sim::net::{AppId, Network};
use icn_tlv::Name;

/// One consumer and what it logged.
pub(super) struct FetchFlow {
    pub app: AppId,
    fetcher: Fetcher,
    start: Timestamp,
    stop: Timestamp,
    /// (run time s, RTT ms) of every sample the pipeline took.
    pub rtts: Vec<(f64, f64)>,
    /// (run time s, Interests/s) at each change of a rate law's rate.
    pub send_rates: Vec<(f64, f64)>,
    /// Run time (s) the fetch had the whole object (a sized flow's end).
    pub done_s: Option<f64>,
}

fn secs(t: Timestamp) -> f64 {
    t.saturating_since(Timestamp::ZERO).as_secs_f64()
}

impl FetchFlow {
    /// icncat fetching `name` (segments directly: the lab's producers
    /// publish no version) from `start` until `stop`, with
    /// `--retries -1` as the namespace runner passes it.
    pub fn new(
        app: AppId,
        name: Name,
        opts: &SchemeOptions,
        seed: u64,
        start: Timestamp,
        stop: Timestamp,
    ) -> FetchFlow {
        let cfg = FetchConfig {
            pipeline: PipelineConfig {
                max_retries: None,
                ignore_marks: opts.pipeline_ignores_marks(),
                // As icncat: cc-core's window laws gate decreases per RTT.
                cwa: false,
                rtt: opts.rtt,
                max_outstanding: opts.max_outstanding_for_law(),
                log_events: true,
                ..PipelineConfig::default()
            },
            discovery: Discovery::None,
            must_be_fresh: false,
            seed: Some(seed),
        };
        FetchFlow {
            app,
            fetcher: Fetcher::new(name, cfg, Scheme::new(opts)),
            start,
            stop,
            rtts: Vec::new(),
            send_rates: Vec::new(),
            done_s: None,
        }
    }

    /// Feeds what arrived, fires a due timer, sends what the fetch allows.
    pub fn tick(&mut self, net: &mut Network) {
        let now = net.now();
        let inbox = net.take_inbox(self.app);
        if now < self.start || now >= self.stop || self.fetcher.is_done() {
            return;
        }
        for r in inbox {
            self.fetcher.handle_packet(now, r.lp.encode());
        }
        if self.fetcher.poll_timeout().is_some_and(|t| t <= now) {
            self.fetcher.handle_timeout(now);
        }
        while let Some(wire) = self.fetcher.poll_transmit(now) {
            net.send(self.app, wire);
        }
        while self.fetcher.poll_output().is_some() {}
        if self.done_s.is_none() && self.fetcher.is_done() && self.fetcher.error().is_none() {
            self.done_s = Some(secs(now));
        }
        while let Some(ev) = self.fetcher.poll_log() {
            match ev {
                LogEvent::Rtt { rtt, .. } => self.rtts.push((secs(now), rtt.as_secs_f64() * 1e3)),
                LogEvent::Limit {
                    limit:
                        SendLimit::Rate {
                            interests_per_sec, ..
                        },
                    ..
                } => self.send_rates.push((secs(now), interests_per_sec)),
                LogEvent::Limit { .. } => {}
            }
        }
    }
}
