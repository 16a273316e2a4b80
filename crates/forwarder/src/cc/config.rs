//! The `[cc]` configuration table: scheme and per-scheme parameters, with
//! the papers' defaults. Durations are integers in milliseconds so that the
//! TOML stays readable; they are mapped onto cc-core's configs here.

use cc_core::Duration;
use cc_core::LawKind;
use serde::Deserialize;

pub use super::config_profiled::{
    CccParams, MirccParams, PconParams, QsccpParams, RcpParams, WincmParams,
};

/// Which congestion-control scheme the forwarder runs by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CcScheme {
    /// No congestion control (best-route, no marks, no stamping).
    #[default]
    None,
    /// PCON: CoDel marking + PCON split strategy.
    Pcon,
    /// RCP: per-face explicit rate stamped into Data.
    Rcp,
    /// MIRCC: dual-class RCP with Interest shaper and multipath steering.
    Mircc,
    /// CCC: pace objectives/constraints and queue supervision.
    Ccc,
    /// WinCM: multi-congestion marking + UIN/UIW forwarding.
    Wincm,
    /// QSCCP: CDS scheduler tree, PECN target rates, adaptive forwarding.
    Qsccp,
}

impl CcScheme {
    /// Every scheme that has engine machinery.
    pub const ALL: [CcScheme; 6] = [
        CcScheme::Pcon,
        CcScheme::Rcp,
        CcScheme::Mircc,
        CcScheme::Ccc,
        CcScheme::Wincm,
        CcScheme::Qsccp,
    ];

    /// The consumer law of the same scheme: the one list of scheme names
    /// is cc-core's [`LawKind`]; `CcScheme` is its part that has forwarder
    /// machinery (the consumer-only laws fixed, aimd and cubic have none).
    pub const fn law_kind(self) -> LawKind {
        match self {
            CcScheme::None => LawKind::None,
            CcScheme::Pcon => LawKind::Pcon,
            CcScheme::Rcp => LawKind::Rcp,
            CcScheme::Mircc => LawKind::Mircc,
            CcScheme::Ccc => LawKind::Ccc,
            CcScheme::Wincm => LawKind::Wincm,
            CcScheme::Qsccp => LawKind::Qsccp,
        }
    }

    /// The forwarder scheme of a law, None for consumer-only laws.
    pub fn from_law_kind(kind: LawKind) -> Option<CcScheme> {
        core::iter::once(CcScheme::None)
            .chain(CcScheme::ALL)
            .find(|s| s.law_kind() == kind)
    }

    /// The config/CLI name ([`LawKind::name`]).
    pub const fn name(self) -> &'static str {
        self.law_kind().name()
    }

    /// Bit in the enabled-schemes mask.
    pub(crate) fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// `[cc]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CcConfig {
    /// Default scheme for every prefix (`[[strategy]]` overrides per prefix).
    pub scheme: CcScheme,
    /// Control period T (QSCCP PECN period, CCC supervision period), ms.
    /// For RCP/MIRCC the longest period: theirs follows the measured RTT
    /// (`period_follows_rtt`).
    pub period_ms: u64,
    /// RCP/MIRCC: T follows the face's smoothed RTT within
    /// [`min_period_ms`, `period_ms`], and never shorter than twenty Data
    /// serialisations, even past `period_ms` (eq. 1 and MIRCC §3.1.2 ask
    /// T ≤ RTT, limited by lumpy measurements); `false` keeps T =
    /// `period_ms`.
    pub period_follows_rtt: bool,
    /// Shortest RCP/MIRCC period, ms.
    pub min_period_ms: u64,
    /// `[cc.rcp]`.
    pub rcp: RcpParams,
    /// `[cc.mircc]`.
    pub mircc: MirccParams,
    /// `[cc.pcon]`.
    pub pcon: PconParams,
    /// `[cc.wincm]`.
    pub wincm: WincmParams,
    /// `[cc.qsccp]`.
    pub qsccp: QsccpParams,
    /// `[cc.ccc]`.
    pub ccc: CccParams,
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig {
            scheme: CcScheme::None,
            period_ms: 100,
            period_follows_rtt: true,
            min_period_ms: 5,
            rcp: RcpParams::default(),
            mircc: MirccParams::default(),
            pcon: PconParams::default(),
            wincm: WincmParams::default(),
            qsccp: QsccpParams::default(),
            ccc: CccParams::default(),
        }
    }
}

impl CcConfig {
    /// Whether `scheme` queues Data per flow on every face (`[cc.pcon]` /
    /// `[cc.wincm] flow_queues`): schemes that mark per flow.
    pub fn flow_queues(&self, scheme: CcScheme) -> bool {
        match scheme {
            CcScheme::Pcon => self.pcon.flow_queues,
            CcScheme::Wincm => self.wincm.flow_queues,
            _ => false,
        }
    }

    /// The control period T.
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.period_ms.max(1))
    }

    /// Bounds of the RCP/MIRCC period (fixed at T when it does not follow
    /// the RTT).
    pub fn period_bounds(&self) -> cc_core::PeriodBounds {
        let max = self.period();
        cc_core::PeriodBounds {
            min: if self.period_follows_rtt {
                Duration::from_millis(self.min_period_ms.clamp(1, self.period_ms.max(1)))
            } else {
                max
            },
            max,
            // y(t) is counted in whole Interests: with n Data per period one
            // more or less is 1/n of y. Twenty keep that within η's 5 %
            // headroom; with four (26 ms of 8 KB Data at 10 Mbit/s) MIRCC
            // overshot the arrival scenario's new share by 17 % (3 % at a
            // fixed 100 ms).
            min_data: 20,
        }
    }

    /// Checks ranges; returns the offending key and why.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let bad = |k: &str, why: &str| Err((format!("cc.{k}"), why.to_owned()));
        if self.period_ms == 0 || self.period_ms > 10_000 {
            return bad("period_ms", "must be within 1..=10000");
        }
        if self.min_period_ms == 0 || self.min_period_ms > self.period_ms {
            return bad("min_period_ms", "must be within 1..=period_ms");
        }
        for (k, v) in [
            ("rcp.eta", self.rcp.eta),
            ("mircc.eta", self.mircc.eta),
            ("qsccp.eta", self.qsccp.eta),
            ("qsccp.ef_cap_fraction", self.qsccp.ef_cap_fraction),
            ("ccc.reduction", self.ccc.reduction),
            ("ccc.utilisation", self.ccc.utilisation),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(k, "must be within (0, 1]");
            }
        }
        if !(0.0..=1.0).contains(&self.ccc.reduction_floor_share) {
            return bad("ccc.reduction_floor_share", "must be within [0, 1]");
        }
        if !(0.0..=0.5).contains(&self.qsccp.ds_rate_headroom) {
            return bad("qsccp.ds_rate_headroom", "must be within [0, 0.5]");
        }
        if !(0.0..=0.5).contains(&self.qsccp.dt_rate_headroom) {
            return bad("qsccp.dt_rate_headroom", "must be within [0, 0.5]");
        }
        if self.wincm.d <= 1.0 {
            return bad("wincm.d", "must be > 1");
        }
        if self.mircc.shaper_queue == 0 {
            return bad("mircc.shaper_queue", "must be at least 1");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_core::ccc::Augmentation;

    /// Every law with forwarder machinery has a scheme of the same name,
    /// and the serde names are cc-core's.
    #[test]
    fn schemes_are_the_laws_with_forwarder_machinery() {
        for kind in LawKind::ALL {
            let consumer_only = matches!(kind, LawKind::Fixed | LawKind::Aimd | LawKind::Cubic);
            match CcScheme::from_law_kind(kind) {
                Some(s) => {
                    assert!(!consumer_only, "{kind}");
                    assert_eq!(s.name(), kind.name());
                    let parsed: CcConfig =
                        toml::from_str(&format!("scheme = \"{}\"", kind.name())).unwrap();
                    assert_eq!(parsed.scheme, s);
                }
                None => assert!(consumer_only, "{kind} has no forwarder scheme"),
            }
        }
    }

    #[test]
    fn parses_the_documented_keys_and_rejects_unknown_ones() {
        let c: CcConfig = toml::from_str(
            "scheme = \"mircc\"\nperiod_ms = 50\n[mircc]\nbeta_prime = 0.2\n[qsccp]\nef_cap_fraction = 0.1\neta = 0.99\n[pcon]\ntarget_ms = 10\ninterval_ms = 200\n",
        )
        .unwrap();
        assert_eq!(c.scheme, CcScheme::Mircc);
        assert_eq!(c.period(), Duration::from_millis(50));
        assert_eq!(c.mircc.beta_prime, 0.2);
        assert_eq!(c.pcon.interval_ms, 200);
        assert!(c.validate().is_ok());
        assert!(toml::from_str::<CcConfig>("[mircc]\nbeta = 1\n").is_err());
        let c: CcConfig =
            toml::from_str("[ccc]\naugmentation = \"spare_share\"\nsupervision_ms = 50\n").unwrap();
        let core = c.ccc.core(c.period());
        assert_eq!(core.augmentation, Augmentation::SpareShare);
        assert_eq!(core.supervision_period, Duration::from_millis(50));
        assert_eq!(
            CcConfig::default()
                .ccc
                .core(Duration::from_millis(100))
                .augmentation,
            Augmentation::MaxMinShare
        );
        assert!(toml::from_str::<CcConfig>("scheme = \"reno\"\n").is_err());
        let bad: CcConfig = toml::from_str("[qsccp]\nef_cap_fraction = 1.5\n").unwrap();
        assert_eq!(bad.validate().unwrap_err().0, "cc.qsccp.ef_cap_fraction");
    }
}
