//! The `[cc.<scheme>]` tables of the schemes with a paper profile (RCP,
//! MIRCC, QSCCP, CCC, PCON, WinCM): every key defaults to its `profile`'s value
//! (docs/deviations.md), taken from the scheme's cc-core configuration.

use cc_core::ccc::{Augmentation, CccConfig, InterestPace};
use cc_core::{Duration, Profile};
use serde::Deserialize;

/// A per-scheme table whose keys default to its `profile`'s values: serde
/// reads every key as optional ($raw), then the profile fills the gaps, so
/// `profile = "paper"` with one key set runs the paper but for that key.
macro_rules! profiled_params {
    ($name:ident, $raw:ident { $($f:ident : $t:ty),* $(,)? }) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $raw {
            profile: Option<Profile>,
            $($f: Option<$t>,)*
        }

        impl From<$raw> for $name {
            fn from(r: $raw) -> Self {
                let profile = r.profile.unwrap_or_default();
                let d = $name::for_profile(profile);
                $name {
                    profile,
                    $($f: r.$f.unwrap_or(d.$f),)*
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::for_profile(Profile::Tuned)
            }
        }
    };
}

/// `[cc.rcp]`: RCP eq. 1 gains (MIRCC's adaptation, docs/algorithms.md §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "RawRcp")]
pub struct RcpParams {
    /// `paper` or `tuned` (default): where the keys below default from.
    pub profile: Profile,
    /// α.
    pub alpha: f64,
    /// β.
    pub beta: f64,
    /// Target utilisation η.
    pub eta: f64,
    /// q(t) averaged over the period rather than sampled at its end (the
    /// paper; both profiles, the average measured no benefit).
    pub mean_queue: bool,
    /// Charge only the queue beyond what paced flows meet by chance (tuned;
    /// R2 in
    /// docs/deviations.md) or all of it (paper).
    pub queue_allowance: bool,
}

impl RcpParams {
    /// The parameters of `profile` (cc-core's `RcpConfig::for_profile`).
    pub fn for_profile(profile: Profile) -> Self {
        let d = cc_core::rcp::RcpConfig::for_profile(profile);
        let l = cc_core::rate_link::RateLinkConfig::for_profile(profile);
        RcpParams {
            profile,
            alpha: d.alpha,
            beta: d.beta,
            eta: d.eta,
            mean_queue: l.mean_queue,
            queue_allowance: l.rcp_queue_allowance,
        }
    }
}

profiled_params!(
    RcpParams,
    RawRcp {
        alpha: f64,
        beta: f64,
        eta: f64,
        mean_queue: bool,
        queue_allowance: bool,
    }
);

/// `[cc.mircc]`: MIRCC §3-4 parameters and the Interest shaper.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "RawMircc")]
pub struct MirccParams {
    /// `paper` or `tuned` (default): where the keys below default from.
    pub profile: Profile,
    /// β' (0.1).
    pub beta_prime: f64,
    /// EWMA α of base/excess (0.5).
    pub ewma_alpha: f64,
    /// Target utilisation η (0.95).
    pub eta: f64,
    /// Interests the per-face shaper may hold (shared with RCP).
    pub shaper_queue: usize,
    /// Longest wait in the shaper, ms (50; shared with RCP): an Interest
    /// that would wait longer is Nacked with the face's rates.
    pub shaper_max_delay_ms: u64,
    /// Share of the Data-direction capacity the shaper books.
    pub data_share: f64,
    /// Secondary rate on Cs = C − yp/η (tuned) or eq. 11's C − yp (paper);
    /// see `cc_core::mircc::MirccConfig::secondary_keeps_headroom`.
    pub secondary_keeps_headroom: bool,
    /// Rs starts at its floor (tuned) or at η·C like Rp (paper).
    pub secondary_starts_at_floor: bool,
    /// q(t) averaged over the period rather than sampled at its end (the
    /// paper; both profiles, the average measured no benefit).
    pub mean_queue: bool,
}

impl MirccParams {
    /// The parameters of `profile` (cc-core's `MirccConfig::for_profile`).
    pub fn for_profile(profile: Profile) -> Self {
        let d = cc_core::mircc::MirccConfig::for_profile(profile);
        let l = cc_core::rate_link::RateLinkConfig::for_profile(profile);
        let s = l.shaper;
        MirccParams {
            profile,
            beta_prime: d.beta_min,
            ewma_alpha: d.ewma_alpha,
            eta: d.eta,
            shaper_queue: s.max_queue,
            shaper_max_delay_ms: u64::try_from(s.max_delay.as_millis()).unwrap_or(u64::MAX),
            data_share: s.data_share,
            secondary_keeps_headroom: d.secondary_keeps_headroom,
            secondary_starts_at_floor: d.secondary_starts_at_floor,
            mean_queue: l.mean_queue,
        }
    }
}

profiled_params!(
    MirccParams,
    RawMircc {
        beta_prime: f64,
        ewma_alpha: f64,
        eta: f64,
        shaper_queue: usize,
        shaper_max_delay_ms: u64,
        data_share: f64,
        secondary_keeps_headroom: bool,
        secondary_starts_at_floor: bool,
        mean_queue: bool,
    }
);

/// `[cc.qsccp]`: CDS scheduler, PECN and multipath feedback.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "RawQsccp")]
pub struct QsccpParams {
    /// `paper` or `tuned` (default): where the keys below default from.
    pub profile: Profile,
    /// Target utilisation η (0.99).
    pub eta: f64,
    /// δ_EF: share of the link EF may use (0.3).
    pub ef_cap_fraction: f64,
    /// δ of CS7 and CS6 (0.2 each).
    pub cs7_cap_fraction: f64,
    /// δ of CS6.
    pub cs6_cap_fraction: f64,
    /// ω of AF4, AF3, AF2, AF1, BE (5:4:3:2:1).
    pub class_weights: [f64; 5],
    /// Interests queued per flow (20).
    pub flow_queue_capacity: u32,
    /// κ: offered/target ratio counted as greedy (1.2).
    pub kappa: f64,
    /// λ: periods over κ before a flow is penalised (10).
    pub lambda: u8,
    /// φ of a penalised flow (0.5).
    pub phi_penalty: f64,
    /// Share of Interests sent to a random next hop (0.01).
    pub probe_probability: f64,
    /// u of an upstream face without feedback yet, bit/s (2 Mb/s).
    pub default_upstream_bps: f64,
    /// How far below its class's token bucket a delay-sensitive (CS7, CS6,
    /// EF) flow's TargetRate is set, fraction (tuned 0.05; paper 0).
    pub ds_rate_headroom: f64,
    /// The same for delay-tolerant flows (tuned 0.03; paper 0).
    pub dt_rate_headroom: f64,
    /// Scale each delay-tolerant flow's TargetRate by σ of its own queue
    /// occupancy (tuned; paper: off, queues may stand).
    pub dt_queue_factor: bool,
    /// Tell a flow not yet rated its share of its class's capacity
    /// (tuned; paper: no rate before its first period).
    pub rate_new_flows: bool,
    /// Stretch the PECN period so each flow brings this many Data per
    /// period at its fair share (tuned 4; paper 0 = fixed T).
    pub min_data_per_flow: u32,
    /// Propagate a penalty upstream with ServiceClass + 8 (the authors'
    /// code; both profiles).
    pub propagate_penalty: bool,
}

impl QsccpParams {
    /// The parameters of `profile` (cc-core's `QsccpConfig::for_profile`).
    pub fn for_profile(profile: Profile) -> Self {
        let c = cc_core::qsccp::QsccpConfig::for_profile(profile);
        let m = cc_core::qsccp::MultipathConfig::default();
        QsccpParams {
            profile,
            eta: c.eta,
            ef_cap_fraction: c.delta[2],
            cs7_cap_fraction: c.delta[0],
            cs6_cap_fraction: c.delta[1],
            class_weights: c.omega,
            flow_queue_capacity: c.flow_queue_capacity,
            kappa: c.kappa,
            lambda: c.lambda,
            phi_penalty: c.phi_penalty,
            probe_probability: m.probe_probability,
            default_upstream_bps: m.default_upstream_bps,
            ds_rate_headroom: c.ds_rate_headroom,
            dt_rate_headroom: c.dt_rate_headroom,
            dt_queue_factor: c.dt_queue_factor,
            rate_new_flows: c.rate_new_flows,
            min_data_per_flow: c.min_data_per_flow,
            propagate_penalty: c.propagate_penalty,
        }
    }
}

profiled_params!(
    QsccpParams,
    RawQsccp {
        eta: f64,
        ef_cap_fraction: f64,
        cs7_cap_fraction: f64,
        cs6_cap_fraction: f64,
        class_weights: [f64; 5],
        flow_queue_capacity: u32,
        kappa: f64,
        lambda: u8,
        phi_penalty: f64,
        probe_probability: f64,
        default_upstream_bps: f64,
        ds_rate_headroom: f64,
        dt_rate_headroom: f64,
        dt_queue_factor: bool,
        rate_new_flows: bool,
        min_data_per_flow: u32,
        propagate_penalty: bool,
    }
);

/// `[cc.ccc]`: queue supervision.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "RawCcc")]
pub struct CccParams {
    /// `paper` or `tuned` (default): where the keys below default from.
    pub profile: Profile,
    /// Supervision period τ, ms (0 = `period_ms`).
    pub supervision_ms: u64,
    /// Pace reduction factor of Algorithm 5 (0.9).
    pub reduction: f64,
    /// Data size assumed before a flow's first Data, bytes (8400).
    pub default_data_size_bytes: u32,
    /// Reading of Algorithm 6: `max_min_share` (tuned: flows below their
    /// max-min share of the face are raised to it, which reaches per-link
    /// max-min fairness) or `spare_share` (paper: only the spare
    /// bandwidth of eq. 12 is shared, so a split left unequal by the last
    /// reduction stays unequal; cc-core README, "CCC closed loop").
    pub augmentation: Augmentation,
    /// Share η of a face's capacity the supervisor hands out (tuned 0.95,
    /// paper 1). With η = 1 the constraints can add up to exactly C, and a
    /// queue a burst built never drains.
    pub utilisation: f64,
    /// Algorithm 4's congestion test: a Data/Nack dropped on the face, or
    /// (when > 0) one that waited longer than this in the face's queue, ms
    /// (tuned 20). 0 is the literal reading (paper: drops only): with a
    /// deep buffer the queue then has to fill before anything is cut, and
    /// the drops stall consumers for an RTO.
    pub congestion_sojourn_ms: u64,
    /// A new flow's first constraint is an equal share of the face
    /// (tuned) rather than what its next hops allow (paper).
    pub admit_equal_share: bool,
    /// Algorithm 5 never cuts below this fraction of a flow's max-min
    /// share (tuned 0.5; paper 0).
    pub reduction_floor_share: f64,
    /// Pace each flow's Interests on every output face (§IV-A; both
    /// profiles). `false` only splits them by round robin.
    pub pace_interests: bool,
    /// The pacing rate: `outgoing_pace` (p_o,k, the paper) or
    /// `constraint` (p_i,k_max, tuned).
    pub interest_pace: InterestPace,
    /// Interests a flow may wait with in a face's pacer; more are Nacked.
    pub pacer_queue: usize,
    /// The pacer's bucket holds at least this long at the flow's pace, ms
    /// (tuned 20, paper 0: two Interests).
    pub pacer_burst_ms: u64,
    /// Send each Interest to the next hop whose pacer releases it first
    /// (tuned) rather than by the paces' round robin alone (paper).
    pub next_hop_by_room: bool,
    /// Max-min shares count a flow held back elsewhere at its measured
    /// demand (tuned; cc-core `CccConfig::max_min_demand`).
    pub max_min_demand: bool,
}

impl CccParams {
    /// The parameters of `profile` (cc-core's `CccConfig::for_profile`).
    pub fn for_profile(profile: Profile) -> Self {
        let c = CccConfig::for_profile(profile);
        CccParams {
            profile,
            supervision_ms: 0,
            reduction: c.reduction_factor,
            default_data_size_bytes: c.initial_data_size_bytes as u32,
            augmentation: c.augmentation,
            utilisation: c.utilisation,
            congestion_sojourn_ms: u64::try_from(c.congestion_sojourn.as_millis())
                .unwrap_or(u64::MAX),
            admit_equal_share: c.admit_equal_share,
            reduction_floor_share: c.reduction_floor_share,
            pace_interests: c.pace_interests,
            interest_pace: c.interest_pace,
            pacer_queue: c.pacer.max_queue,
            pacer_burst_ms: u64::try_from(c.pacer.burst_time.as_millis()).unwrap_or(u64::MAX),
            next_hop_by_room: c.next_hop_by_room,
            max_min_demand: c.max_min_demand,
        }
    }

    /// The cc-core configuration, τ defaulting to the control period.
    pub fn core(&self, period: Duration) -> CccConfig {
        CccConfig {
            supervision_period: if self.supervision_ms == 0 {
                period
            } else {
                Duration::from_millis(self.supervision_ms)
            },
            reduction_factor: self.reduction,
            initial_data_size_bytes: f64::from(self.default_data_size_bytes.max(1)),
            augmentation: self.augmentation,
            utilisation: self.utilisation,
            congestion_sojourn: Duration::from_millis(self.congestion_sojourn_ms),
            admit_equal_share: self.admit_equal_share,
            reduction_floor_share: self.reduction_floor_share,
            pace_interests: self.pace_interests,
            interest_pace: self.interest_pace,
            pacer: cc_core::ccc::pacer::PacerConfig {
                max_queue: self.pacer_queue.max(1),
                burst_time: Duration::from_millis(self.pacer_burst_ms),
                ..CccConfig::for_profile(self.profile).pacer
            },
            next_hop_by_room: self.next_hop_by_room,
            max_min_demand: self.max_min_demand,
            ..CccConfig::for_profile(self.profile)
        }
    }
}

profiled_params!(
    CccParams,
    RawCcc {
        supervision_ms: u64,
        reduction: f64,
        default_data_size_bytes: u32,
        augmentation: Augmentation,
        utilisation: f64,
        congestion_sojourn_ms: u64,
        admit_equal_share: bool,
        reduction_floor_share: f64,
        pace_interests: bool,
        interest_pace: InterestPace,
        pacer_queue: usize,
        pacer_burst_ms: u64,
        next_hop_by_room: bool,
        max_min_demand: bool,
    }
);

/// `[cc.pcon]`: CoDel marking and the PCON split.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "RawPcon")]
pub struct PconParams {
    /// `paper` or `tuned` (default): where the keys below default from.
    pub profile: Profile,
    /// CoDel target, ms (5).
    pub target_ms: u64,
    /// CoDel interval, ms (100).
    pub interval_ms: u64,
    /// Share moved away from a face per mark (0.02).
    pub change_per_mark: f64,
    /// Probability of probing the other next hops (0.001).
    pub probing_probability: f64,
    /// Queue Data per flow (deficit round robin) with one CoDel per flow
    /// (tuned). The paper marks one FIFO per face; per flow, long-RTT and
    /// multi-hop flows keep their share (see the forwarder README).
    pub flow_queues: bool,
    /// CoDel step marking after the first episode (tuned; cc-core
    /// `codel::CodelConfig::step_marking`), for consumers that cut in
    /// proportion to the marked fraction.
    pub step_marking: bool,
    /// Least time between split updates caused by marked Data, ms (tuned
    /// 110, as the Nack updates; paper 0: every marked Data). Step marking
    /// marks tens of times more Data than RFC CoDel.
    pub mark_update_spacing_ms: u64,
}

impl PconParams {
    /// The parameters of `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        let p = cc_core::pcon::PconConfig::default();
        let c = cc_core::codel::CodelConfig::default();
        PconParams {
            profile,
            target_ms: c.target.as_millis() as u64,
            interval_ms: c.interval.as_millis() as u64,
            change_per_mark: p.change_per_mark,
            probing_probability: p.probing_probability,
            flow_queues: profile == Profile::Tuned,
            step_marking: profile == Profile::Tuned,
            mark_update_spacing_ms: if profile == Profile::Tuned {
                p.nack_update_spacing.as_millis() as u64
            } else {
                0
            },
        }
    }
}

profiled_params!(
    PconParams,
    RawPcon {
        target_ms: u64,
        interval_ms: u64,
        change_per_mark: f64,
        probing_probability: f64,
        flow_queues: bool,
        step_marking: bool,
        mark_update_spacing_ms: u64,
    }
);

/// `[cc.wincm]`: multi-marking CoDel and UIN/UIW forwarding.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "RawWincm")]
pub struct WincmParams {
    /// `paper` or `tuned` (default): where the keys below default from.
    pub profile: Profile,
    /// CoDel target, ms (5).
    pub target_ms: u64,
    /// CoDel interval, ms (tuned 100, paper 110).
    pub interval_ms: u64,
    /// Once an episode's cuts have emptied the queue, its next rise opens
    /// an episode at once (tuned; cc-core
    /// `MultiMarkConfig::prompt_reentry`, W11 in docs/deviations.md).
    pub prompt_reentry: bool,
    /// A per-flow marker's MTU rule excuses a wait of at most one Data
    /// time plus target on links whose Data time exceeds target (off in
    /// both profiles; cc-core
    /// `MultiMarkConfig::mtu_excuse_one_packet`, W13 in docs/deviations.md).
    pub mtu_excuse_one_packet: bool,
    /// Per-flow markers: while the face's queue stands, a flow's own queue
    /// emptying re-arms prompt re-entry, and an episode that ends with the
    /// flow's Data still above target re-enters at once (tuned; cc-core
    /// `MultiMarkConfig::standing_reentry`, W14 in docs/deviations.md).
    pub standing_reentry: bool,
    /// UIW decrease per marked Data (tuned 1.1, paper 1.5; see cc-core
    /// `wincm::forwarding`).
    pub d: f64,
    /// Send to faces with room (UIN + 1 ≤ UIW) before saturated ones
    /// (tuned; cc-core `UiwConfig::prefer_unsaturated`).
    pub prefer_unsaturated: bool,
    /// Queue Data per flow with one multi-marking CoDel per flow (tuned;
    /// the paper marks one FIFO per face), as `[cc.pcon] flow_queues`.
    pub flow_queues: bool,
    /// Keep UIN/UIW per FIB prefix (Algorithm 3, paper) rather than per
    /// content object (the name without its last component).
    pub uiw_per_fib_prefix: bool,
}

impl WincmParams {
    /// The parameters of `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        let m = cc_core::wincm::MultiMarkConfig::for_profile(profile);
        let u = cc_core::wincm::UiwConfig::for_profile(profile);
        WincmParams {
            profile,
            target_ms: m.target.as_millis() as u64,
            interval_ms: m.interval.as_millis() as u64,
            prompt_reentry: m.prompt_reentry,
            mtu_excuse_one_packet: m.mtu_excuse_one_packet,
            standing_reentry: m.standing_reentry,
            d: u.d,
            prefer_unsaturated: u.prefer_unsaturated,
            flow_queues: profile == Profile::Tuned,
            uiw_per_fib_prefix: profile == Profile::Paper,
        }
    }
}

profiled_params!(
    WincmParams,
    RawWincm {
        target_ms: u64,
        interval_ms: u64,
        prompt_reentry: bool,
        mtu_excuse_one_packet: bool,
        standing_reentry: bool,
        d: f64,
        prefer_unsaturated: bool,
        flow_queues: bool,
        uiw_per_fib_prefix: bool,
    }
);

#[cfg(test)]
mod tests {
    use super::super::config::CcConfig;
    use super::*;

    /// `profile` picks where unset keys default from; a key set beside it
    /// wins; no profile is `tuned`, whose values are the ones icnfwd ran
    /// before profiles existed (written out here, not derived).
    /// PCON's and WinCM's paper tables: one FIFO per face, WinCM's 110 ms
    /// interval, d = 1.5 and eq. 3's roulette over every face; tuned keeps
    /// the values icnfwd ran before profiles existed.
    #[test]
    fn pcon_and_wincm_paper_tables() {
        let tuned = CcConfig::default();
        assert_eq!(
            (
                tuned.pcon.profile,
                tuned.pcon.flow_queues,
                tuned.pcon.interval_ms
            ),
            (Profile::Tuned, true, 100)
        );
        assert_eq!(
            (
                tuned.wincm.interval_ms,
                tuned.wincm.d,
                tuned.wincm.prefer_unsaturated,
                tuned.wincm.uiw_per_fib_prefix
            ),
            (100, 1.1, true, false)
        );
        let paper: CcConfig =
            toml::from_str("[pcon]\nprofile = \"paper\"\n[wincm]\nprofile = \"paper\"\nd = 1.2\n")
                .unwrap();
        assert!(!paper.pcon.flow_queues);
        assert!(!paper.pcon.step_marking && tuned.pcon.step_marking);
        assert_eq!(
            (
                paper.pcon.mark_update_spacing_ms,
                tuned.pcon.mark_update_spacing_ms
            ),
            (0, 110)
        );
        assert_eq!(paper.pcon.target_ms, 5);
        assert_eq!(
            (
                paper.wincm.interval_ms,
                paper.wincm.d,
                paper.wincm.prefer_unsaturated,
                paper.wincm.flow_queues,
                paper.wincm.uiw_per_fib_prefix
            ),
            (110, 1.2, false, false, true)
        );
        assert!(!paper.wincm.prompt_reentry && tuned.wincm.prompt_reentry);
        assert!(!paper.wincm.mtu_excuse_one_packet && !tuned.wincm.mtu_excuse_one_packet);
        assert!(!paper.wincm.standing_reentry && tuned.wincm.standing_reentry);
        assert!(toml::from_str::<CcConfig>("[wincm]\nprofile = \"paper\"\nbeta = 4\n").is_err());
    }

    #[test]
    fn profiles_fill_the_keys_not_given() {
        let tuned = CcConfig::default();
        assert_eq!(tuned.ccc.profile, Profile::Tuned);
        assert_eq!(tuned.ccc.augmentation, Augmentation::MaxMinShare);
        assert_eq!(
            (tuned.ccc.utilisation, tuned.ccc.congestion_sojourn_ms),
            (0.95, 20)
        );
        assert!(tuned.ccc.admit_equal_share && tuned.ccc.reduction_floor_share == 0.5);
        assert_eq!(tuned.ccc.interest_pace, InterestPace::Constraint);
        assert!(tuned.ccc.next_hop_by_room);
        assert_eq!(
            (tuned.qsccp.ds_rate_headroom, tuned.qsccp.dt_rate_headroom),
            (0.05, 0.03)
        );
        assert!(tuned.qsccp.dt_queue_factor && tuned.qsccp.rate_new_flows);
        assert!(tuned.mircc.secondary_keeps_headroom && tuned.mircc.secondary_starts_at_floor);
        assert!(tuned.rcp.queue_allowance);

        let paper: CcConfig = toml::from_str(
            "[ccc]\nprofile = \"paper\"\nutilisation = 0.9\n[qsccp]\nprofile = \"paper\"\n\
             [mircc]\nprofile = \"paper\"\n[rcp]\nprofile = \"paper\"\n",
        )
        .unwrap();
        assert!(paper.validate().is_ok());
        let c = paper.ccc.core(Duration::from_millis(100));
        assert_eq!(c.augmentation, Augmentation::SpareShare);
        assert_eq!(c.congestion_sojourn, Duration::ZERO);
        assert!(!c.admit_equal_share && c.reduction_floor_share == 0.0);
        assert_eq!(c.interest_pace, InterestPace::OutgoingPace);
        assert!(!c.next_hop_by_room);
        assert_eq!(c.utilisation, 0.9, "a key given beside the profile wins");
        assert_eq!(paper.qsccp.ds_rate_headroom, 0.0);
        assert!(!paper.qsccp.dt_queue_factor && !paper.qsccp.rate_new_flows);
        assert_eq!(paper.qsccp.min_data_per_flow, 0);
        assert!(!paper.mircc.secondary_keeps_headroom);
        assert!(!paper.mircc.secondary_starts_at_floor);
        assert!(!paper.rcp.queue_allowance);
        assert!(toml::from_str::<CcConfig>("[ccc]\nprofile = \"literal\"\n").is_err());
        assert!(toml::from_str::<CcConfig>("[ccc]\nprofile = \"paper\"\nreductio = 1\n").is_err());
    }
}
