//! Configuration and the public result types of the CDS scheduler.

use super::class::ServiceClass;
use super::pecn::PecnVariant;
use crate::time::{Duration, Timestamp};

/// Parameters of one face's CDS + PECN (defaults: docs/algorithms.md §1.8).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct QsccpConfig {
    /// Link capacity B (Data direction), bit/s.
    pub capacity_bps: u64,
    /// Target utilisation η.
    pub eta: f64,
    /// δ_c of CS7, CS6, EF: share of the link each may use.
    pub delta: [f64; 3],
    /// ω_c of AF4, AF3, AF2, AF1, BE.
    pub omega: [f64; 5],
    /// Depth of the DS token buckets, bits.
    pub ds_burst_bits: u64,
    /// Depth of the final token bucket, bits.
    pub final_burst_bits: u64,
    /// WDRR quantum per unit weight, bits.
    pub quantum_bits: u32,
    /// Interests queued per flow.
    pub flow_queue_capacity: u32,
    /// Interests queued per delay-tolerant class.
    pub dt_class_capacity: u32,
    /// Flows tracked per face (at most 2^24 − 1 are honoured).
    pub max_flows: u32,
    /// Expected Data size when an Interest carries none, bits.
    pub default_data_size_bits: u32,
    /// Largest expected Data size accepted (larger ones are clamped), bits.
    pub max_data_size_bits: u32,
    /// PECN period T: the shortest one (see `min_data_per_flow`).
    pub period: Duration,
    /// The period stretches (up to 20 T) so that each flow the face tracks
    /// can bring this many Data per period at its fair share (0 keeps T).
    /// Eqs. 5-9 read every flow's offer y over one period; a flow that
    /// offered nothing in it left the table and came back as a new flow,
    /// told its whole class's capacity. Ten flows of 8000-byte Data on
    /// 2 Mbit/s bring 3 Data a second each, so in 100 ms most offered
    /// nothing: they were told 1.98 Mbit/s each, and 180 Interests (5.9 s)
    /// stood in the scheduler (envelope sweep). Not in the paper, which
    /// ran 1 Gbit/s links.
    pub min_data_per_flow: u32,
    /// γ of the flow-state judgement.
    pub gamma: f64,
    /// λ, periods over κ before a flow is judged greedy.
    pub lambda: u8,
    /// κ, offered/target ratio counted as greedy.
    pub kappa: f64,
    /// φ of a penalised flow.
    pub phi_penalty: f64,
    /// Which eqs. 4–9 rules to use.
    pub variant: PecnVariant,
    /// Restore φ = 1 once the greedy counter is back to 0.
    pub restore_phi: bool,
    /// Fraction by which a delay-sensitive flow's suggested rate R stays
    /// below its class's token bucket (engineering, not in the paper).
    /// With R equal to the bucket rate the class queue runs at load 1: on
    /// real links any jitter or Data-size misestimate makes it a random
    /// walk, and one queued EF Interest costs a whole Interest gap of delay
    /// (65 ms at 1 Mbit/s of 8 KB Data). Measured on the testbed's
    /// qsccp_classes dumbbell (EF Data already prioritised on the return
    /// path): EF p95 RTT 41 and 1308 ms (its flow queue full) at 0,
    /// 36–38 ms in three runs at 0.05 (minimum 26 ms). 0 gives the paper's R.
    pub ds_rate_headroom: f64,
    /// The same for delay-tolerant flows (engineering, not in the paper):
    /// R told to a DT flow stays this fraction below its eq. 8 share, so a
    /// queue that jitter or a feedback delay built drains on its own
    /// instead of random-walking at load 1 until σ bites. Envelope sweep
    /// at 0 (η = 0.99): one BE flow of 1200-byte Data on 10 Mbit/s kept a
    /// p95 of 15 Interests (15 ms) at a 50 ms RTT and 35 at 150 ms.
    pub dt_rate_headroom: f64,
    /// Paper variant: scale a non-penalised delay-tolerant flow's R by σ of
    /// its own queue occupancy at the period end, normalised to 1 when
    /// empty (the authors' code applies σ, unnormalised, to every flow:
    /// P8). Without it the DT rates add up to the rate the final bucket
    /// serves, nothing drains a queue that jitter built, and the flow
    /// queues wander up to their capacity: on the testbed dumbbell (three
    /// BE flows, 20 Mbit/s, 8 KB Data) the bottleneck face held Interests
    /// worth a p95 of 84 ms, consumers saw up to 170 ms of queueing.
    pub dt_queue_factor: bool,
    /// A flow without an R here (it arrived in the current period, or the
    /// scheduler forgot it as idle while its Data were still upstream) is
    /// told its share of its class's capacity (engineering, not in the
    /// paper; see [`super::CdsScheduler::flow_rate_bps`]). `false`: the
    /// paper's rule, R exists only once a period closed over the flow.
    pub rate_new_flows: bool,
    /// A flow penalised here marks its Interests ServiceClass + 8, and an
    /// Interest arriving so marked penalises its flow here
    /// ([`super::CdsScheduler::penalise_flow`]): the authors' code's
    /// upstream propagation (P7), which the paper does not describe. On in
    /// both profiles (the reconstruction of §IV-D follows that code).
    pub propagate_penalty: bool,
}

impl Default for QsccpConfig {
    fn default() -> Self {
        QsccpConfig {
            capacity_bps: 10_000_000,
            eta: 0.99,
            delta: [0.2, 0.2, 0.3],
            omega: [5.0, 4.0, 3.0, 2.0, 1.0],
            ds_burst_bits: 160_000,
            final_burst_bits: 160_000,
            quantum_bits: 16_000,
            flow_queue_capacity: 20,
            dt_class_capacity: 200,
            max_flows: 65_536,
            default_data_size_bits: 9_000,
            max_data_size_bits: 160_000,
            period: Duration::from_millis(100),
            min_data_per_flow: 4,
            gamma: 0.95,
            lambda: 10,
            kappa: 1.2,
            phi_penalty: 0.5,
            variant: PecnVariant::PaperReconstruction,
            restore_phi: true,
            ds_rate_headroom: 0.05,
            dt_rate_headroom: 0.03,
            dt_queue_factor: true,
            rate_new_flows: true,
            propagate_penalty: true,
        }
    }
}

impl QsccpConfig {
    /// The paper's rates (docs/algorithms.md §1.5 reconstruction): eq. 8's
    /// R as it is, no DS/DT headroom, no σ drain factor for DT flows, no
    /// stretched period and no rate for a flow before its first period.
    pub fn paper() -> Self {
        QsccpConfig {
            ds_rate_headroom: 0.0,
            dt_rate_headroom: 0.0,
            dt_queue_factor: false,
            min_data_per_flow: 0,
            rate_new_flows: false,
            ..QsccpConfig::default()
        }
    }

    /// icnfwd's defaults (docs/deviations.md, QSCCP rows).
    pub fn tuned() -> Self {
        QsccpConfig::default()
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

/// Why an Interest was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// The flow's virtual queue is full.
    FlowQueueFull,
    /// The delay-tolerant class is at its cap.
    ClassFull,
    /// No room for a new flow.
    FlowTableFull,
}

/// An Interest handed back by [`CdsScheduler::enqueue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected<T> {
    /// The item itself.
    pub item: T,
    /// Why.
    pub reason: RejectReason,
}

/// An Interest leaving the scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled<T> {
    /// The item.
    pub item: T,
    /// Its class.
    pub class: ServiceClass,
    /// Its flow's prefix hash.
    pub prefix: u64,
    /// Expected Data size charged, bits.
    pub size_bits: u32,
    /// Time spent queued.
    pub sojourn: Duration,
    /// The flow's suggested target rate R here (eq. 10: DownstreamRate :=
    /// min(DownstreamRate, R)); `None` before the first PECN period.
    pub target_rate_bps: Option<f64>,
    /// Whether the flow is discounted here (φ < 1, eq. 9): what
    /// [`CdsScheduler::flow_phi`](super::CdsScheduler::flow_phi) would say,
    /// read from the flow's line at hand instead of a second table lookup
    /// (the ServiceClass + 8 mark of P7).
    pub discounted: bool,
}

/// Result of [`CdsScheduler::dequeue`].
///
/// `repr(u8)`: an explicit tag instead of a niche in `Scheduled`'s
/// `Option<f64>`, so a caller's `match` sees the variant as a plain byte
/// and keeps the fields in registers (22 fewer instructions per dequeue
/// in the bench loop, which stored and reloaded the whole result).
#[derive(Debug, Clone, PartialEq)]
#[repr(u8)]
pub enum Dequeue<T> {
    /// Send this now.
    Item(Scheduled<T>),
    /// Backlogged, but the rate limiters allow nothing before this time.
    NotBefore(Timestamp),
    /// Nothing queued.
    Empty,
}

/// Counters of one face.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CdsStats {
    /// Interests queued.
    pub enqueued: u64,
    /// Interests sent.
    pub dequeued: u64,
    /// Rejections: flow queue full.
    pub flow_queue_full: u64,
    /// Rejections: class full.
    pub class_full: u64,
    /// Rejections: flow table full.
    pub flow_table_full: u64,
    /// Expected Data bits sent, per class index.
    pub sent_bits: [u64; 8],
    /// Flows judged greedy and discounted to φ_pen (eq. 9), counted when
    /// it happens.
    pub penalties: u64,
    /// Flows penalised because their Interests arrived marked by a
    /// downstream router (ServiceClass + 8, [`super::CdsScheduler::penalise_flow`]).
    pub propagated_penalties: u64,
}
