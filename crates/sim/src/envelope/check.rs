//! The bounds of the operating envelope (issue 16) and the check of one
//! run's figures against them.

use icn_forwarder::cc::CcScheme;

use super::Topology;

/// Every scheme's least utilisation of each bottleneck.
pub const UTILISATION_MIN: f64 = 0.90;
/// Rate schemes: the p95 queue bound's least value, ms.
pub const RATE_QUEUE_MS: f64 = 10.0;
/// Window schemes: the p95 queue bound's least value, ms.
pub const WINDOW_QUEUE_MS: f64 = 25.0;
/// Rate schemes on one bottleneck: the least Jain index.
pub const JAIN_MIN: f64 = 0.95;
/// Rate schemes on several bottlenecks: each flow within this fraction of
/// its max-min share.
pub const MAX_MIN_REL: f64 = 0.10;
/// Window schemes: each flow at least this fraction of its
/// proportional-fair share.
pub const PROPORTIONAL_FAIR_MIN: f64 = 0.75;

/// Which bounds a scheme is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// rcp, mircc, ccc, qsccp: explicit rates, so a short queue, no drops
    /// and max-min fairness.
    Rate,
    /// pcon, wincm: windows, so a queue of at least one Data per flow
    /// beyond the BDP and proportional fairness.
    Window,
}

impl Family {
    /// The family of `scheme`; `None` for a scheme without congestion
    /// control, which no bound applies to.
    pub fn of(scheme: CcScheme) -> Option<Family> {
        match scheme {
            CcScheme::Rcp | CcScheme::Mircc | CcScheme::Ccc | CcScheme::Qsccp => Some(Family::Rate),
            CcScheme::Pcon | CcScheme::Wincm => Some(Family::Window),
            CcScheme::None => None,
        }
    }
}

/// What a run measured over its last half, in the terms of the bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Utilisation of each bottleneck link (frame bytes carried ÷
    /// capacity), in the order of [`Topology::bottlenecks`].
    pub utilisation: Vec<f64>,
    /// Each flow's rate on the link, bit/s: its Data rate in the frame
    /// bytes the bottleneck carried for it.
    pub flow_bps: Vec<f64>,
    /// Jain's index over `flow_bps`.
    pub jain: f64,
    /// 95th percentile of the worst bottleneck's queue, ms: its Data
    /// backlog plus the Interests held on its reverse face (FIFO, shaper
    /// or scheduler) at the mean Data frame size, over its capacity.
    pub p95_queue_ms: f64,
    /// Congestion drops (queue full, AQM).
    pub drops: u64,
    /// Mean Data frame size on the bottleneck, bytes.
    pub frame_bytes: f64,
}

/// The bounds of the envelope `f` breaks on `t` under a scheme of
/// `family`, each as text; empty when the run holds them all.
pub fn check(t: &Topology, family: Family, f: &Figures) -> Vec<String> {
    let mut e = Vec::new();
    for (k, u) in f.utilisation.iter().enumerate() {
        if *u < UTILISATION_MIN {
            e.push(format!("link {k} utilisation {:.1}% < 90%", u * 100.0));
        }
    }
    let single = t.links.len() == 1;
    match family {
        Family::Rate => {
            // Two serialisations of a Data frame (the measured mean: every
            // Data of a grid run carries the same content, so the largest
            // is longer by a few bytes of segment number) at the slowest
            // bottleneck, or what unaligned paced flows queue at the load
            // measured (`paced_queue_floor_ms`, physics like the window
            // floor).
            let slowest = t.links.iter().map(|l| l.capacity_bps).min().unwrap_or(1) as f64;
            let two_data_ms = 2.0 * f.frame_bytes * 8.0 / slowest * 1e3;
            let paced_ms = t
                .bottlenecks()
                .zip(&f.utilisation)
                .map(|(l, rho)| t.paced_queue_floor_ms(l, f.frame_bytes, *rho))
                .fold(0.0, f64::max);
            let bound = two_data_ms.max(paced_ms).max(RATE_QUEUE_MS);
            if f.p95_queue_ms > bound {
                e.push(format!(
                    "p95 queue {:.1} ms > {bound:.1} ms",
                    f.p95_queue_ms
                ));
            }
            if f.drops > 0 {
                e.push(format!("{} congestion drops", f.drops));
            }
            if single {
                if f.jain < JAIN_MIN {
                    e.push(format!("Jain {:.3} < 0.95", f.jain));
                }
            } else {
                for (i, (r, s)) in f.flow_bps.iter().zip(t.max_min_shares()).enumerate() {
                    if (r - s).abs() > MAX_MIN_REL * s {
                        e.push(format!(
                            "flow {i} {:.2} Mbit/s vs max-min {:.2} (> 10% off)",
                            r / 1e6,
                            s / 1e6
                        ));
                    }
                }
            }
        }
        Family::Window => {
            // 25 ms, or what the links' Data size makes the least a window
            // can queue (two Data times; one Data per flow beyond the BDP):
            // below that no window law can go (`window_queue_floor_ms`).
            let floor = (0..t.links.len())
                .map(|l| {
                    let c = t.links[l].capacity_bps as f64;
                    let two_data = 2.0 * f.frame_bytes * 8.0 / c * 1e3;
                    two_data.max(t.window_queue_floor_ms(l, f.frame_bytes))
                })
                .fold(0.0, f64::max);
            let bound = floor.max(WINDOW_QUEUE_MS);
            if f.p95_queue_ms > bound {
                e.push(format!(
                    "p95 queue {:.1} ms > {bound:.1} ms",
                    f.p95_queue_ms
                ));
            }
            for (i, (r, s)) in f
                .flow_bps
                .iter()
                .zip(t.proportional_fair_shares())
                .enumerate()
            {
                if *r < PROPORTIONAL_FAIR_MIN * s {
                    e.push(format!(
                        "flow {i} {:.2} Mbit/s < 0.75 x proportional-fair {:.2}",
                        r / 1e6,
                        s / 1e6
                    ));
                }
            }
        }
    }
    e
}

/// Largest relative deviation of a flow from its max-min share.
pub fn max_min_deviation(t: &Topology, f: &Figures) -> f64 {
    f.flow_bps
        .iter()
        .zip(t.max_min_shares())
        .map(|(r, s)| (r - s).abs() / s)
        .fold(0.0, f64::max)
}
