//! The file as serde reads it: every table denies unknown keys, so a typo
//! is an error naming the key and its line instead of a silent default.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub name: String,
    pub title: String,
    pub duration_s: Option<f64>,
    pub ci_duration_s: Option<f64>,
    pub schemes: Vec<String>,
    pub none_window: Option<f64>,
    pub cc_period_ms: Option<f64>,
    pub segment_bytes: Option<f64>,
    #[serde(default)]
    pub ci_duration_s_by_scheme: BTreeMap<String, f64>,
    pub settle_to: Option<String>,
    #[serde(default)]
    pub single_path: bool,
    pub measure: Vec<Vec<String>>,
    #[serde(default)]
    pub node: Vec<RawNode>,
    #[serde(default)]
    pub link: Vec<RawLink>,
    #[serde(default)]
    pub flow: Vec<RawFlow>,
    #[serde(default)]
    pub route: Vec<RawRoute>,
    #[serde(default)]
    pub arrivals: Vec<RawArrivals>,
    #[serde(default)]
    pub group: Vec<RawGroup>,
    /// Verbatim into every node's `[multicast_groups]` (icnfwd's keys).
    pub multicast_groups: Option<toml::Table>,
    pub queue_packets: Option<f64>,
    pub cc_none: Option<toml::Table>,
    pub cc_pcon: Option<toml::Table>,
    pub cc_rcp: Option<toml::Table>,
    pub cc_mircc: Option<toml::Table>,
    pub cc_ccc: Option<toml::Table>,
    pub cc_wincm: Option<toml::Table>,
    pub cc_qsccp: Option<toml::Table>,
    pub consumer: Option<RawConsumer>,
}

/// `[consumer]`: consumer-law knobs beside the profile (icncat's flags).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConsumer {
    pub ccc_initial_window: Option<u32>,
    pub ccc_min_pace_ips: Option<f64>,
    pub wincm_hold_after_cut: Option<bool>,
    pub wincm_queue_growth_limit: Option<bool>,
    pub wincm_growth_limit_in_congestion: Option<bool>,
    pub wincm_bandwidth_floor: Option<bool>,
}

impl RawScenario {
    /// The `[cc_<scheme>]` tables, by scheme name.
    pub fn cc_tables(&self) -> [(&'static str, Option<&toml::Table>); 7] {
        [
            ("none", self.cc_none.as_ref()),
            ("pcon", self.cc_pcon.as_ref()),
            ("rcp", self.cc_rcp.as_ref()),
            ("mircc", self.cc_mircc.as_ref()),
            ("ccc", self.cc_ccc.as_ref()),
            ("wincm", self.cc_wincm.as_ref()),
            ("qsccp", self.cc_qsccp.as_ref()),
        ]
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNode {
    pub name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub a: String,
    pub b: String,
    pub capacity_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub loss: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFlow {
    pub name: String,
    pub consumer: String,
    pub producer: String,
    pub start_s: Option<f64>,
    pub stop_s: Option<f64>,
    pub class: Option<String>,
    pub objective_mbps: Option<f64>,
    pub cc: Option<String>,
    pub rate_mbps: Option<f64>,
    pub size_mb: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRoute {
    pub node: String,
    pub flow: String,
    pub via: String,
    pub cost: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawArrivals {
    pub name: String,
    pub mean_interarrival_s: f64,
    pub start_s: Option<f64>,
    pub stop_s: Option<f64>,
    pub consumers: Vec<String>,
    pub producers: Vec<String>,
    pub size_mb: f64,
    pub seed: Option<u64>,
    pub class: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroup {
    pub name: String,
    pub source: String,
    pub receivers: Vec<String>,
    pub start_s: Option<f64>,
    pub stop_s: Option<f64>,
    pub payload_bytes: Option<f64>,
    pub access_mbps: Option<f64>,
    pub gamma: Option<f64>,
    pub oth1: Option<f64>,
    pub oth2: Option<f64>,
    pub initial_rate_kbps: Option<f64>,
    pub rtt_ms: Option<f64>,
}
