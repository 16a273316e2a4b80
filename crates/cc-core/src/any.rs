//! Static dispatch over every consumer law.
//!
//! [`AnyConsumerLaw`] is an enum of the consumer halves of all schemes; it
//! implements [`ConsumerLaw`] by `match`, so a pipeline can hold "whichever
//! law `--cc` named" without a `Box<dyn ConsumerLaw>` (no allocation, no
//! indirect call, and the whole law inlines into the caller's loop).
//! `Box<dyn ConsumerLaw>` works as well, since every law implements the
//! trait; the enum is for hot loops and `no_std` callers without a heap
//! budget for it.
//!
//! [`AnyConsumerLaw::new`] builds the law of a [`LawKind`] from a
//! [`ConsumerLawConfig`], which gathers each law's config with the paper's
//! (or the reference tool's) defaults.

use crate::aimd::{Aimd, AimdConfig};
use crate::ccc::{CccConsumer, CccConsumerConfig};
use crate::cubic::{Cubic, CubicConfig};
use crate::fixed::{FixedRate, FixedRateConfig, FixedWindow, FixedWindowConfig};
use crate::law::{ConsumerLaw, DataFeedback, LawKind, NackFeedback, SendLimit};
use crate::mircc::{MirccConsumer, MirccConsumerConfig};
use crate::pcon::{PconConsumer, PconWindow};
use crate::qsccp::{QsccpConsumer, QsccpConsumerConfig};
use crate::rcp::{RateConsumer, RateConsumerConfig};
use crate::time::Timestamp;
use crate::wincm::{WincmConsumer, WincmConsumerConfig};

/// What `--cc fixed` runs: a constant window or a constant Interest rate.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum FixedLawConfig {
    /// A constant number of Interests in flight.
    Window(FixedWindowConfig),
    /// A constant Interest rate.
    Rate(FixedRateConfig),
}

impl Default for FixedLawConfig {
    /// ndnget's fixed pipeline: one Interest in flight.
    fn default() -> Self {
        FixedLawConfig::Window(FixedWindowConfig::default())
    }
}

/// Every consumer law's parameters, one field per scheme; a scheme reads
/// only its own field(s). Defaults are each law's `Default`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct ConsumerLawConfig {
    /// `none`: the window kept without congestion control (64 Interests,
    /// the consumer's default pipeline).
    pub none: FixedWindowConfig,
    /// `fixed`: a window or a rate.
    pub fixed: FixedLawConfig,
    /// `aimd`, and `pcon` when `pcon_window` is AIMD.
    pub aimd: AimdConfig,
    /// `cubic`, and `pcon` when `pcon_window` is CUBIC.
    pub cubic: CubicConfig,
    /// Which window `pcon` runs (marks are never ignored under PCON).
    pub pcon_window: PconWindow,
    /// `rcp`.
    pub rcp: RateConsumerConfig,
    /// `mircc`.
    pub mircc: MirccConsumerConfig,
    /// `ccc`.
    pub ccc: CccConsumerConfig,
    /// `wincm`.
    pub wincm: WincmConsumerConfig,
    /// `qsccp`.
    pub qsccp: QsccpConsumerConfig,
}

impl Default for ConsumerLawConfig {
    fn default() -> Self {
        ConsumerLawConfig {
            none: FixedWindowConfig {
                window_interests: 64.0,
            },
            fixed: FixedLawConfig::default(),
            aimd: AimdConfig::default(),
            cubic: CubicConfig::default(),
            pcon_window: PconWindow::default(),
            rcp: RateConsumerConfig::default(),
            mircc: MirccConsumerConfig::default(),
            ccc: CccConsumerConfig::default(),
            wincm: WincmConsumerConfig::default(),
            qsccp: QsccpConsumerConfig::default(),
        }
    }
}

/// One consumer law of any scheme, dispatched by `match`.
#[derive(Debug, Clone)]
pub enum AnyConsumerLaw {
    /// `none`, or `fixed` with a window.
    FixedWindow(FixedWindow),
    /// `fixed` with a rate.
    FixedRate(FixedRate),
    /// ndnget AIMD.
    Aimd(Aimd),
    /// ndnget CUBIC.
    Cubic(Cubic),
    /// PCON: AIMD or CUBIC reacting to marks.
    Pcon(PconConsumer),
    /// RCP: the minimum stamped rate over the Data size.
    Rcp(RateConsumer),
    /// MIRCC: per-path primary and secondary rates.
    Mircc(MirccConsumer),
    /// CCC: min(objective, constraint).
    Ccc(CccConsumer),
    /// WinCM: BIC window with β per mark.
    Wincm(WincmConsumer),
    /// QSCCP: smoothed TargetRate (eq. 13).
    Qsccp(QsccpConsumer),
}

impl AnyConsumerLaw {
    /// The consumer law of scheme `kind`, configured from `cfg`.
    pub fn new(kind: LawKind, cfg: &ConsumerLawConfig) -> Self {
        match kind {
            LawKind::None => AnyConsumerLaw::FixedWindow(FixedWindow::new(cfg.none)),
            LawKind::Fixed => match cfg.fixed {
                FixedLawConfig::Window(w) => AnyConsumerLaw::FixedWindow(FixedWindow::new(w)),
                FixedLawConfig::Rate(r) => AnyConsumerLaw::FixedRate(FixedRate::new(r)),
            },
            LawKind::Aimd => AnyConsumerLaw::Aimd(Aimd::new(cfg.aimd)),
            LawKind::Cubic => AnyConsumerLaw::Cubic(Cubic::new(cfg.cubic)),
            LawKind::Pcon => {
                AnyConsumerLaw::Pcon(PconConsumer::new(cfg.pcon_window, cfg.aimd, cfg.cubic))
            }
            LawKind::Rcp => AnyConsumerLaw::Rcp(RateConsumer::new(cfg.rcp)),
            LawKind::Mircc => AnyConsumerLaw::Mircc(MirccConsumer::new(cfg.mircc)),
            LawKind::Ccc => AnyConsumerLaw::Ccc(CccConsumer::new(cfg.ccc)),
            LawKind::Wincm => AnyConsumerLaw::Wincm(WincmConsumer::new(cfg.wincm)),
            LawKind::Qsccp => AnyConsumerLaw::Qsccp(QsccpConsumer::new(cfg.qsccp)),
        }
    }

    /// The scheme this law belongs to (a fixed window reports `Fixed`).
    pub fn kind(&self) -> LawKind {
        match self {
            AnyConsumerLaw::FixedWindow(_) | AnyConsumerLaw::FixedRate(_) => LawKind::Fixed,
            AnyConsumerLaw::Aimd(_) => LawKind::Aimd,
            AnyConsumerLaw::Cubic(_) => LawKind::Cubic,
            AnyConsumerLaw::Pcon(_) => LawKind::Pcon,
            AnyConsumerLaw::Rcp(_) => LawKind::Rcp,
            AnyConsumerLaw::Mircc(_) => LawKind::Mircc,
            AnyConsumerLaw::Ccc(_) => LawKind::Ccc,
            AnyConsumerLaw::Wincm(_) => LawKind::Wincm,
            AnyConsumerLaw::Qsccp(_) => LawKind::Qsccp,
        }
    }
}

/// Expands `$body` once per variant with `$l` bound to the inner law.
macro_rules! each_law {
    ($self:expr, $l:ident => $body:expr) => {
        match $self {
            AnyConsumerLaw::FixedWindow($l) => $body,
            AnyConsumerLaw::FixedRate($l) => $body,
            AnyConsumerLaw::Aimd($l) => $body,
            AnyConsumerLaw::Cubic($l) => $body,
            AnyConsumerLaw::Pcon($l) => $body,
            AnyConsumerLaw::Rcp($l) => $body,
            AnyConsumerLaw::Mircc($l) => $body,
            AnyConsumerLaw::Ccc($l) => $body,
            AnyConsumerLaw::Wincm($l) => $body,
            AnyConsumerLaw::Qsccp($l) => $body,
        }
    };
}

impl ConsumerLaw for AnyConsumerLaw {
    #[inline]
    fn on_interest_sent(&mut self, now: Timestamp, retransmission: bool) {
        each_law!(self, l => l.on_interest_sent(now, retransmission))
    }
    #[inline]
    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        each_law!(self, l => l.on_data(now, fb))
    }
    #[inline]
    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        each_law!(self, l => l.on_nack(now, fb))
    }
    #[inline]
    fn on_timeout(&mut self, now: Timestamp) {
        each_law!(self, l => l.on_timeout(now))
    }
    #[inline]
    fn limit(&self) -> SendLimit {
        each_law!(self, l => l.limit())
    }
    #[inline]
    fn pace_ips(&self) -> Option<f64> {
        each_law!(self, l => ConsumerLaw::pace_ips(l))
    }
}

macro_rules! from_law {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(impl From<$ty> for AnyConsumerLaw {
            fn from(law: $ty) -> Self {
                AnyConsumerLaw::$variant(law)
            }
        })*
    };
}

from_law!(
    FixedWindow(FixedWindow),
    FixedRate(FixedRate),
    Aimd(Aimd),
    Cubic(Cubic),
    Pcon(PconConsumer),
    Rcp(RateConsumer),
    Mircc(MirccConsumer),
    Ccc(CccConsumer),
    Wincm(WincmConsumer),
    Qsccp(QsccpConsumer),
);

#[cfg(test)]
#[path = "any_tests.rs"]
mod tests;
