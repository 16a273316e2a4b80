//! Everything an RCP or MIRCC forwarder keeps per outgoing link, as icnfwd
//! runs it: the per-period law ([`AnyLinkLaw`]), the Data/Interest
//! [`Inflation`], the [`InterestShaper`] that books returning Data on the
//! link's capacity, the smoothed RTT and the per-period input counters.
//!
//! Beyond the papers' link (docs/algorithms.md §2.3), five rules that real
//! links needed, each with the measurement that asked for it:
//!
//! * **The period follows the RTT** ([`crate::control_period`]): RCP eq. 1
//!   and MIRCC §3.1.2 ask for T ≤ RTT.
//! * **A responsive floor** ([`crate::rcp::responsive_floor_bps`]): one Data
//!   per longest period once the Data size is known, not a fixed 10 kbit/s.
//!   With 8 KB Data a law that collapsed to 10 kbit/s left its consumers
//!   sending one Interest every 6.5 s, deaf to every later rate until that
//!   Interest came back (a dumbbell RCP stalled at 0.2 Mbit/s in half the
//!   runs).
//! * **Booking before the first Data**: the shaper books the largest Data
//!   an Interest may bring (8800 bytes) until one came back; with ι's
//!   initial 1.0 it booked Interest-sized Data and nothing paced the first
//!   RTT of Interests.
//! * **The shaper holds the queue paced flows meet by chance**
//!   ([`chance_wait`]): its `max_delay` (50 ms) refuses no wait shorter
//!   than the 5 % quantile of the N·D/D/1 queue of N̂ = y_p / R flows. At
//!   2 Mbit/s an 8 KB Data takes 32 ms, so the shaper held one Interest
//!   and Nacked the third of any three that met; ten flows meet that often
//!   (3.6 Data at the 5 % quantile), each Nack a lost slot: RCP 88-90 %
//!   and MIRCC 90-92 % on ten such flows in the envelope sweep, 96-99 %
//!   for both since, the p95 queue inside the bound's chance floor.
//! * **N̂ and the load over twenty Data** ([`AveragedLoad`]): the floor's
//!   fair-share cap η·C·R/y and the chance rules' N̂ = y_p/R, ρ = y/C read
//!   y and R averaged over 20 Data times, not one period. Read off one
//!   period they saw 0-3 Data at 8 KB on 1-2 Mbit/s: a period with one
//!   Interest set the floor to 1.47·R (0 Interests: one Data per period,
//!   three times the fair share), and the shaper's chance bound fell to
//!   nothing after an empty period. Parking-lot-3 with 8 KB on 2 Mbit/s:
//!   the middle link's R swung 0.26-0.65 Mbit/s around a 0.32 fair
//!   share, Nacked the excess (63 Nacks), and the first link, counting
//!   those Interests in y, stayed at 79 % (RCP) and 87 % (MIRCC); 94 %
//!   for both since (docs/deviations.md R4).
//! * **MIRCC ends a period early once when flows arrive** (input above 1.5
//!   times the capacity over half a period and eight Data serialisations):
//!   N̂ = max(C, y)/R (eq. 2) sees new flows in y(t) only at the period's
//!   end, and flows that took the pre-arrival rate send at it until then.
//!
//! RCP's queue term drains only what stands beyond the mean queue the
//! active flows meet by chance ([`chance_allowance_bytes`], R2, tuned;
//! one Data for one flow, 2.07 for ten at ρ = 0.95), which replaced R1's
//! one Data ([`crate::rcp::queue_beyond_one_data`]) once N̂ and ρ were read
//! over twenty Data (docs/deviations.md R2, R4). MIRCC charges the whole
//! queue.
//!
//! Call order: [`RateLink::on_interest`] for each Interest routed to the
//! link; [`RateLink::dequeue`] when [`RateLink::next_release_time`] is
//! reached; [`RateLink::on_data`] for each Data received on it, then
//! [`RateLink::stamp`] before forwarding it downstream;
//! [`RateLink::handle_timeout`] at [`RateLink::poll_timeout`].

use crate::law::LawKind;
use crate::link::{AnyLinkLaw, LinkLaw, LinkLawConfig, LinkRates, LinkSample, PeriodBounds};
use crate::mircc::{Inflation, InterestShaper, ShaperConfig, ShaperVerdict, TrafficClass};
use crate::rcp::RcpLink;
use crate::time::{Duration, Timestamp};

/// Input above this multiple of the capacity since the last update ends a
/// MIRCC period early ([`RateLink`]). Paced flows at η·C never reach it;
/// flows that joined at the pre-arrival rate do.
pub const ARRIVAL_INPUT_FACTOR: f64 = 1.5;

/// Largest Data an Interest may bring back (NDN's MAX_NDN_PACKET_SIZE).
pub const MAX_DATA_BYTES: f64 = 8800.0;

/// Parameters of a [`RateLink`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLinkConfig {
    /// The laws' parameters (the `period` of each is the longest period).
    pub law: LinkLawConfig,
    /// The Interest shaper's bounds.
    pub shaper: ShaperConfig,
    /// Where the period may go as it follows the RTT.
    pub period_bounds: PeriodBounds,
    /// q(t) is the shaper backlog averaged over the period rather than the
    /// backlog at the update (the papers' q(t), `false`, both profiles: the
    /// average measured no benefit, docs/deviations.md).
    pub mean_queue: bool,
    /// RCP leaves part of the queue uncharged (tuned, `true`; R1/R2 in
    /// docs/deviations.md); the paper charges the whole queue. Which part:
    /// `chance_queue_allowance`.
    pub rcp_queue_allowance: bool,
    /// With `rcp_queue_allowance`, RCP's allowance is the mean queue
    /// the active flows meet by chance ([`chance_allowance_bytes`], R2;
    /// tuned, `true`) rather than one Data
    /// ([`crate::rcp::queue_beyond_one_data`], R1). RCP only: MIRCC charges
    /// the whole queue, and with the allowance its β' = 0.1 let it stand
    /// (two envelope points lost, docs/deviations.md R2).
    pub chance_queue_allowance: bool,
    /// The shaper queues the wait paced flows meet by chance even past its
    /// `max_delay` ([`chance_wait`]; both profiles, as the shaper's bound
    /// itself is icnfwd's: the papers leave it open).
    pub shaper_holds_chance_queue: bool,
}

impl Default for RateLinkConfig {
    fn default() -> Self {
        let mut law = LinkLawConfig::default();
        // One longest period for both laws (icnfwd's `[cc] period_ms`).
        law.rcp.period = law.mircc.period;
        RateLinkConfig {
            law,
            shaper: ShaperConfig::default(),
            // icnfwd's defaults: T follows the RTT down to 5 ms, with at
            // least twenty Data per period (see its `[cc] min_period_ms`).
            period_bounds: PeriodBounds {
                min: Duration::from_millis(5),
                max: law.mircc.period,
                min_data: 20,
            },
            mean_queue: false,
            rcp_queue_allowance: true,
            chance_queue_allowance: true,
            shaper_holds_chance_queue: true,
        }
    }
}

impl RateLinkConfig {
    /// The laws, shaper and q(t) sampling of `profile` (period bounds and
    /// shaper as [`RateLinkConfig::default`]).
    pub fn for_profile(profile: crate::Profile) -> Self {
        let d = RateLinkConfig::default();
        let tuned = profile == crate::Profile::Tuned;
        let mut law = d.law;
        law.rcp = crate::rcp::RcpConfig {
            period: law.rcp.period,
            ..crate::rcp::RcpConfig::for_profile(profile)
        };
        law.mircc = crate::mircc::MirccConfig {
            period: law.mircc.period,
            ..crate::mircc::MirccConfig::for_profile(profile)
        };
        RateLinkConfig {
            law,
            rcp_queue_allowance: tuned,
            chance_queue_allowance: tuned,
            ..d
        }
    }
}

/// What one period's update saw and decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateUpdate {
    /// The input, queue and RTT the law was given.
    pub sample: LinkSample,
    /// The new rates.
    pub rates: LinkRates,
    /// The next period.
    pub period: Duration,
}

/// One outgoing link of an RCP or MIRCC forwarder (see the module doc).
#[derive(Debug, Clone)]
pub struct RateLink<T> {
    dual: bool,
    law: AnyLinkLaw,
    inflation: Inflation,
    shaper: InterestShaper<T>,
    primary_bytes: u64,
    secondary_bytes: u64,
    srtt_secs: Option<f64>,
    rtt_gain: f64,
    default_rtt: Duration,
    /// The longest control period, the floor's time base.
    period: Duration,
    period_bounds: PeriodBounds,
    /// Target utilisation η of the law (for the floor's fair-share cap).
    eta: f64,
    /// The current MIRCC period was already cut short by an arrival burst.
    cut_short: bool,
    capacity_bps: f64,
    mean_queue: bool,
    rcp_queue_allowance: bool,
    chance_queue_allowance: bool,
    shaper_holds_chance_queue: bool,
    /// y, y_p and the stamped R averaged over `min_data` Data
    /// serialisations: the N̂ and ρ of the floor and the chance rules.
    averaged_load: AveragedLoad,
}

/// y, y_p and R averaged over `min_data` Data serialisations at C (an
/// EWMA whose weight is the period over that span), so that eq. 2's
/// N̂ = y / R and the load y / C that the floor and the chance rules read
/// are not read off one or two Data (docs/deviations.md R4).
#[derive(Debug, Clone, Copy, Default)]
struct AveragedLoad {
    input_bps: f64,
    primary_bps: f64,
    rate_bps: f64,
    primed: bool,
}

impl AveragedLoad {
    /// Folds in one period of `elapsed_s` seconds that drew `input_bps`
    /// at the stamped `rate_bps`, averaging over `span_s`.
    fn update(
        &mut self,
        elapsed_s: f64,
        span_s: f64,
        input_bps: f64,
        primary_bps: f64,
        rate_bps: f64,
    ) {
        if !(elapsed_s > 0.0
            && input_bps.is_finite()
            && primary_bps.is_finite()
            && rate_bps.is_finite())
        {
            return;
        }
        let w = if self.primed && span_s > elapsed_s {
            elapsed_s / span_s
        } else {
            1.0
        };
        self.input_bps += w * (input_bps - self.input_bps);
        self.primary_bps += w * (primary_bps - self.primary_bps);
        self.rate_bps += w * (rate_bps - self.rate_bps);
        self.primed = true;
    }
}

impl<T> RateLink<T> {
    /// A link of `capacity_bps` in the Data direction running `kind`
    /// (`LawKind::Mircc` for MIRCC, anything else runs RCP).
    pub fn new(kind: LawKind, cfg: &RateLinkConfig, capacity_bps: f64) -> Self {
        let dual = kind == LawKind::Mircc;
        let law = if dual {
            AnyLinkLaw::Mircc(crate::mircc::MirccRate::new(cfg.law.mircc, capacity_bps))
        } else {
            AnyLinkLaw::Rcp(RcpLink::new(cfg.law.rcp, capacity_bps))
        };
        let m = cfg.law.mircc;
        RateLink {
            dual,
            law,
            inflation: Inflation::new(m.inflation_gain, m.initial_inflation),
            shaper: InterestShaper::new(cfg.shaper, capacity_bps),
            primary_bytes: 0,
            secondary_bytes: 0,
            srtt_secs: None,
            rtt_gain: m.rtt_gain,
            default_rtt: m.default_rtt,
            period: if dual { m.period } else { cfg.law.rcp.period },
            period_bounds: cfg.period_bounds,
            eta: if dual { m.eta } else { cfg.law.rcp.eta },
            cut_short: false,
            capacity_bps,
            mean_queue: cfg.mean_queue,
            rcp_queue_allowance: cfg.rcp_queue_allowance,
            chance_queue_allowance: cfg.chance_queue_allowance,
            shaper_holds_chance_queue: cfg.shaper_holds_chance_queue,
            averaged_load: AveragedLoad::default(),
        }
    }

    /// The factor the shaper books each Interest with: once a Data came
    /// back, the decaying peak of the measured Data sizes over the Interest
    /// size ([`Inflation::booking_factor`]); before that, the largest Data
    /// an Interest may bring over the Interest size. With ι's initial 1.0
    /// the shaper booked Interest-sized Data, so nothing paced the first
    /// RTT of Interests; with the averaged ι a small first Data (RDR
    /// metadata) still let 22-31 extra 8 KB Data through to the testbed
    /// dumbbell's upstream node.
    fn booking_factor(&self, interest_bytes: u32) -> f64 {
        if self.inflation.data_bytes().is_some() {
            return self.inflation.booking_factor();
        }
        let i = self
            .inflation
            .interest_bytes()
            .unwrap_or(f64::from(interest_bytes))
            .max(1.0);
        MAX_DATA_BYTES / i
    }

    /// A new capacity (the face's was reconfigured).
    pub fn set_capacity(&mut self, capacity_bps: f64) {
        self.capacity_bps = capacity_bps;
        self.law.set_capacity(capacity_bps);
        self.shaper.set_capacity(capacity_bps);
    }

    /// The smoothed RTT d(t), or the default before any sample.
    pub fn srtt(&self) -> Duration {
        match self.srtt_secs {
            Some(s) if s > 0.0 => Duration::from_secs_f64(s),
            _ => self.default_rtt,
        }
    }

    /// One Data per longest period once the Data size is known, capped at
    /// the fair share the averaged input shows ([`AveragedLoad`]).
    fn floor_bps(&self) -> f64 {
        crate::rcp::responsive_floor_bps(
            self.inflation.data_bytes(),
            self.period,
            self.eta,
            self.capacity_bps,
            self.averaged_load.rate_bps,
            self.averaged_load.input_bps,
        )
    }

    /// Interests held by the shaper.
    pub fn queued(&self) -> usize {
        self.shaper.len()
    }

    /// The shaper (read-only: counters, queue length).
    pub fn shaper(&self) -> &InterestShaper<T> {
        &self.shaper
    }

    /// The law (read-only).
    pub fn law(&self) -> &AnyLinkLaw {
        &self.law
    }

    /// The link's rates (what a congestion Nack carries).
    pub fn rates(&self) -> LinkRates {
        self.law.rates()
    }

    /// The Data/Interest inflation factor ι.
    pub fn inflation(&self) -> f64 {
        self.inflation.factor()
    }

    /// An Interest of `size_bytes` routed to this link: counted into y(t)
    /// whatever becomes of it (MIRCC footnote 2), then offered to the
    /// shaper. A secondary Interest on an RCP link counts as primary.
    pub fn on_interest(
        &mut self,
        now: Timestamp,
        item: T,
        class: TrafficClass,
        size_bytes: u32,
    ) -> ShaperVerdict<T> {
        let class = if self.dual {
            class
        } else {
            TrafficClass::Primary
        };
        let inflated = self.inflation.inflate(u64::from(size_bytes));
        let acc = match class {
            TrafficClass::Primary => &mut self.primary_bytes,
            TrafficClass::Secondary => &mut self.secondary_bytes,
        };
        *acc = acc.saturating_add(inflated);
        self.end_period_on_arrival(now);
        if self.inflation.data_bytes().is_none() {
            self.shaper.set_inflation(self.booking_factor(size_bytes));
        }
        self.shaper.enqueue(now, item, class, size_bytes)
    }

    /// Releases the next Interest if the pacing allows it now.
    pub fn dequeue(&mut self, now: Timestamp) -> Option<(T, TrafficClass)> {
        let (item, class, size) = self.shaper.dequeue(now)?;
        self.inflation.on_interest(size);
        self.shaper.set_inflation(self.booking_factor(size));
        Some((item, class))
    }

    /// When the shaper will next release an Interest.
    pub fn next_release_time(&self) -> Option<Timestamp> {
        self.shaper.next_release_time()
    }

    /// A Data received on this link, with the RTT of its Interest when
    /// measured (PIT out-record age).
    pub fn on_data(&mut self, now: Timestamp, data_bytes: u32, rtt: Option<Duration>) {
        let _ = now;
        self.inflation.on_data(data_bytes);
        self.shaper.set_inflation(self.booking_factor(0));
        if let Some(r) = rtt {
            let s = r.as_secs_f64();
            let g = self.rtt_gain;
            self.srtt_secs = Some(self.srtt_secs.map_or(s, |o| o + g * (s - o)));
        }
    }

    /// The rates a Data forwarded downstream carries: each the minimum of
    /// what it carried (absent = unlimited) and this link's.
    pub fn stamp(
        &self,
        data_primary_bps: Option<f64>,
        data_secondary_bps: Option<f64>,
    ) -> LinkRates {
        self.law.rates().stamp(data_primary_bps, data_secondary_bps)
    }

    /// True for MIRCC (two classes, path ids).
    pub fn is_dual(&self) -> bool {
        self.dual
    }

    /// When the next rate update is due.
    pub fn poll_timeout(&self) -> Timestamp {
        self.law.next_update()
    }

    /// Runs the rate update if it is due.
    pub fn handle_timeout(&mut self, now: Timestamp) -> Option<RateUpdate> {
        if now < self.law.next_update() {
            return None;
        }
        self.cut_short = false;
        Some(self.update(now))
    }

    /// MIRCC only: whether the input since the last update shows flows
    /// arriving, so the period ends now instead of at T. MIRCC §3.1.2 wants
    /// T "as short as possible, and no greater than RTT", limited only by
    /// lumpy measurements. Input above 1.5 times the capacity over at least
    /// half a period and eight Data serialisations is no lumpiness, so the
    /// period ends there, at most once per period: the next one must leave
    /// the flows an RTT to hear the new rate, or N̂ would count them twice.
    /// A shorter window (a quarter period, four Data) fired on chance
    /// clumps of paced flows in steady state on the testbed (7 Data of 8 KB
    /// within 28 ms at 10 Mbit/s, twice in 24 s), each a 20 % dip of Rp for
    /// no arrival.
    fn arrival_burst(&self, now: Timestamp) -> bool {
        if !self.dual || self.cut_short {
            return false;
        }
        let c = self.capacity_bps;
        let Some(data_bytes) = self.inflation.data_bytes() else {
            return false;
        };
        let Some(last) = self.period_start() else {
            return false;
        };
        if c.is_nan() || c <= 0.0 {
            return false;
        }
        let period = self.law.period();
        let elapsed = now.saturating_since(last).as_secs_f64();
        let min_s = (period.as_secs_f64() / 2.0).max(8.0 * data_bytes * 8.0 / c);
        if elapsed < min_s {
            return false;
        }
        let y_bps = self.primary_bytes.saturating_add(self.secondary_bytes) as f64 * 8.0 / elapsed;
        y_bps > ARRIVAL_INPUT_FACTOR * c
    }

    /// When the current period began (the law's last update), `None`
    /// before the first update.
    fn period_start(&self) -> Option<Timestamp> {
        let next = self.law.next_update();
        (next != Timestamp::ZERO).then(|| next - self.law.period())
    }

    /// Ends the period now if [`Self::arrival_burst`]; whether it did.
    fn end_period_on_arrival(&mut self, now: Timestamp) -> bool {
        if !self.arrival_burst(now) {
            return false;
        }
        self.update(now);
        self.cut_short = true;
        true
    }

    /// Ends the current period: one step of the link law.
    fn update(&mut self, now: Timestamp) -> RateUpdate {
        let rtt = self.srtt();
        // The integral restarts every period either way.
        let mean = self.shaper.take_mean_queued_bytes(now);
        let queue = self.inflation.inflate(if self.mean_queue {
            mean
        } else {
            self.shaper.queued_bytes()
        });
        let elapsed = self
            .period_start()
            .map(|t| now.saturating_since(t).as_secs_f64());
        let (primary_bytes, secondary_bytes) = (
            core::mem::take(&mut self.primary_bytes),
            core::mem::take(&mut self.secondary_bytes),
        );
        let (input_bps, primary_bps) = match elapsed {
            Some(e) if e > 0.0 => (
                primary_bytes.saturating_add(secondary_bytes) as f64 * 8.0 / e,
                primary_bytes as f64 * 8.0 / e,
            ),
            _ => (0.0, 0.0),
        };
        if let Some(e) = elapsed {
            let span_s = self
                .period_bounds
                .min_data_span_s(self.inflation.data_bytes(), self.capacity_bps);
            self.averaged_load.update(
                e,
                span_s,
                input_bps,
                primary_bps,
                self.law.rates().primary_bps,
            );
        }
        let load = self.averaged_load;
        if self.shaper_holds_chance_queue {
            self.shaper.set_delay_floor(chance_wait(
                self.inflation.data_bytes(),
                load.primary_bps,
                load.input_bps,
                load.rate_bps,
                self.capacity_bps,
            ));
        }
        let queue_bytes = if self.dual || !self.rcp_queue_allowance {
            queue
        } else if self.chance_queue_allowance {
            queue.saturating_sub(chance_allowance_bytes(
                self.inflation.data_bytes(),
                load.primary_bps,
                load.input_bps,
                load.rate_bps,
                self.capacity_bps,
            ))
        } else {
            crate::rcp::queue_beyond_one_data(queue, self.inflation.data_bytes())
        };
        let sample = LinkSample {
            primary_bytes,
            secondary_bytes,
            queue_bytes,
            rtt,
        };
        self.law.set_floor_bps(self.floor_bps());
        let rates = self.law.update(now, &sample);
        self.law.set_period(crate::control_period(
            self.srtt_secs.map(|_| rtt),
            &self.period_bounds,
            self.inflation.data_bytes(),
            self.capacity_bps,
        ));
        RateUpdate {
            sample,
            rates,
            period: self.law.period(),
        }
    }
}

/// The queue (inflated bytes) that flows paced at the stamped rate hold on
/// the link by chance, which no rate can remove: the mean N·D/D/1 queue
/// ([`crate::chance_queue::paced_chance_queue_mean_data`]) of N̂ = y_p / R
/// flows (eq. 2's count: flows held at the stamped rate all send at it) at
/// the load ρ = y / C of the last period; zero before the first Data.
///
/// Why: with Data of many kbytes one queued Interest is a whole Data, and
/// eq. 1 charges each sampled Data at β/α = 1 (MIRCC's β' = 0.1 charges a
/// tenth of it). Ten 8 KB flows on 50 Mbit/s at 10 ms, sampled each period
/// (virtual time, last half): RCP charged a queue (beyond R1's Data) at
/// 51 % of the period ends, 0.92 Data on average, at 85 % load; MIRCC
/// charged one at 14 %, 0.16 Data, at 95 %. Each charged Data cut R by
/// about 4 % of C (0.4·q/d at d = 13 ms; MIRCC's β' a quarter of that, and
/// its EWMA halves it again), all ten flows followed the cut together (R's
/// spread 8.5 % of its mean, MIRCC 2.8 %) and the next period met their
/// clumped Interests. Charging only the queue beyond the chance mean (2.1
/// Data there) ends that loop: 94.9 % with R's spread at 2.1 %. A queue no
/// rate removes is physics for both laws, so MIRCC gets it too, and MIRCC
/// lets it stand (p95 15.5 → 25.7 ms for ten 1200-byte flows on 2 Mbit/s):
/// RCP only, in the tuned profile (docs/deviations.md R2).
pub fn chance_allowance_bytes(
    data_bytes: Option<f64>,
    primary_bps: f64,
    input_bps: f64,
    rate_bps: f64,
    capacity_bps: f64,
) -> u64 {
    let Some((b, n, rho)) = paced_flows(data_bytes, primary_bps, input_bps, rate_bps, capacity_bps)
    else {
        return 0;
    };
    let k = crate::chance_queue::paced_chance_queue_mean_data(n, rho);
    (k * b) as u64
}

/// The Data size, the paced flows N̂ = y_p / R and the load ρ = y / C that
/// both chance-queue rules read; `None` before the first Data or while
/// a rate is zero.
fn paced_flows(
    data_bytes: Option<f64>,
    primary_bps: f64,
    input_bps: f64,
    rate_bps: f64,
    capacity_bps: f64,
) -> Option<(f64, f64, f64)> {
    let b = data_bytes.filter(|b| b.is_finite() && *b > 0.0)?;
    if !(rate_bps > 0.0 && capacity_bps > 0.0 && primary_bps > 0.0) {
        return None;
    }
    Some((b, primary_bps / rate_bps, input_bps / capacity_bps))
}

/// How long an Interest may wait in the shaper because of the queue
/// N̂ = y_p / R paced flows meet by chance at the load ρ = y / C: the 5 %
/// quantile of the N·D/D/1 queue
/// ([`crate::chance_queue::paced_chance_queue_data`]) in Data serialisations
/// at C; zero before the first Data.
pub fn chance_wait(
    data_bytes: Option<f64>,
    primary_bps: f64,
    input_bps: f64,
    rate_bps: f64,
    capacity_bps: f64,
) -> Duration {
    let Some((b, n, rho)) = paced_flows(data_bytes, primary_bps, input_bps, rate_bps, capacity_bps)
    else {
        return Duration::ZERO;
    };
    let k = crate::chance_queue::paced_chance_queue_data(n, rho);
    let secs = (k * b * 8.0 / capacity_bps).clamp(0.0, 1.0);
    Duration::from_nanos((secs * 1e9) as u64)
}

#[cfg(test)]
#[path = "rate_link_tests.rs"]
mod tests;
