//! Everything a MIRCC forwarder keeps per outgoing link (algorithms.md §2.3).

use super::{
    Inflation, InterestShaper, MirccConfig, MirccRate, ShaperConfig, ShaperVerdict, TrafficClass,
};
use crate::time::{Duration, Timestamp};

/// One outgoing link of a MIRCC forwarder: stamping rates, inflation
/// factor, smoothed RTT, per-period input counters and the Interest shaper.
///
/// Call order: [`on_interest`](Self::on_interest) for each Interest routed
/// to the link; [`dequeue`](Self::dequeue) whenever
/// [`next_release_time`](Self::next_release_time) is reached;
/// [`on_data`](Self::on_data) for each Data received on it, then
/// [`stamp`](Self::stamp) before forwarding that Data downstream;
/// [`handle_timeout`](Self::handle_timeout) at
/// [`poll_timeout`](Self::poll_timeout).
#[derive(Debug, Clone)]
pub struct MirccLink<T> {
    rate: MirccRate,
    inflation: Inflation,
    shaper: InterestShaper<T>,
    srtt_secs: Option<f64>,
    primary_bytes: u64,
    secondary_bytes: u64,
}

impl<T> MirccLink<T> {
    /// A link of `capacity_bps` in the Data direction.
    pub fn new(cfg: MirccConfig, shaper: ShaperConfig, capacity_bps: f64) -> Self {
        let inflation = Inflation::new(cfg.inflation_gain, cfg.initial_inflation);
        let mut shaper = InterestShaper::new(shaper, capacity_bps);
        shaper.set_inflation(inflation.booking_factor());
        MirccLink {
            rate: MirccRate::new(cfg, capacity_bps),
            inflation,
            shaper,
            srtt_secs: None,
            primary_bytes: 0,
            secondary_bytes: 0,
        }
    }

    /// An Interest routed to this link. It counts towards y(t) whatever
    /// becomes of it (MIRCC footnote 2: y includes Nacked and queued ones).
    pub fn on_interest(
        &mut self,
        now: Timestamp,
        item: T,
        class: TrafficClass,
        size_bytes: u32,
    ) -> ShaperVerdict<T> {
        let inflated = self.inflation.inflate(u64::from(size_bytes));
        let acc = match class {
            TrafficClass::Primary => &mut self.primary_bytes,
            TrafficClass::Secondary => &mut self.secondary_bytes,
        };
        *acc = acc.saturating_add(inflated);
        self.shaper.enqueue(now, item, class, size_bytes)
    }

    /// Releases the next Interest if the pacing allows it now.
    pub fn dequeue(&mut self, now: Timestamp) -> Option<(T, TrafficClass)> {
        let (item, class, size) = self.shaper.dequeue(now)?;
        self.inflation.on_interest(size);
        self.shaper.set_inflation(self.inflation.booking_factor());
        Some((item, class))
    }

    /// When the shaper will next release an Interest.
    pub fn next_release_time(&self) -> Option<Timestamp> {
        self.shaper.next_release_time()
    }

    /// A Data received on this link, with the RTT of its Interest when
    /// measured (PIT in-record age).
    pub fn on_data(&mut self, _now: Timestamp, data_bytes: u32, rtt: Option<Duration>) {
        self.inflation.on_data(data_bytes);
        self.shaper.set_inflation(self.inflation.booking_factor());
        if let Some(r) = rtt {
            let s = r.as_secs_f64();
            let g = self.rate.config().rtt_gain;
            self.srtt_secs = Some(match self.srtt_secs {
                Some(old) => old + g * (s - old),
                None => s,
            });
        }
    }

    /// When the next rate update is due.
    pub fn poll_timeout(&self) -> Timestamp {
        self.rate.next_update()
    }

    /// Runs the rate update if it is due; returns the new `(Rp, Rs)`.
    pub fn handle_timeout(&mut self, now: Timestamp) -> Option<(f64, f64)> {
        if now < self.rate.next_update() {
            return None;
        }
        let q = self
            .inflation
            .inflate(self.shaper.take_mean_queued_bytes(now));
        let rtt = self.srtt();
        let rates = self.rate.update_dual(
            now,
            core::mem::take(&mut self.primary_bytes),
            core::mem::take(&mut self.secondary_bytes),
            q,
            rtt,
        );
        Some(rates)
    }

    /// The rates a Data forwarded downstream must carry: the minimum of what
    /// it carries (absent = unlimited) and this link's `(Rp, Rs)`.
    pub fn stamp(&self, data_rp_bps: Option<f64>, data_rs_bps: Option<f64>) -> (f64, f64) {
        let (rp, rs) = self.rate.rates_bps();
        let min = |d: Option<f64>, r: f64| match d {
            Some(x) if x.is_finite() && x >= 0.0 => x.min(r),
            _ => r,
        };
        (min(data_rp_bps, rp), min(data_rs_bps, rs))
    }

    /// `(Rp, Rs)` of this link (what a congestion Nack carries).
    pub fn rates_bps(&self) -> (f64, f64) {
        self.rate.rates_bps()
    }

    /// The smoothed RTT d(t) (the configured default before any sample).
    pub fn srtt(&self) -> Duration {
        match self.srtt_secs {
            Some(s) if s > 0.0 => Duration::from_secs_f64(s),
            _ => self.rate.config().default_rtt,
        }
    }

    /// The Data/Interest inflation factor ι.
    pub fn inflation(&self) -> f64 {
        self.inflation.factor()
    }

    /// The shaper (read-only: counters, queue length).
    pub fn shaper(&self) -> &InterestShaper<T> {
        &self.shaper
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_counts_inflated_input_and_stamps_minimum() {
        let mut l: MirccLink<u32> =
            MirccLink::new(MirccConfig::default(), ShaperConfig::default(), 1e6);
        let t0 = Timestamp::ZERO;
        assert!(l.handle_timeout(t0).is_some());
        // Teach the inflation: 50-byte Interest, 1000-byte Data → ι = 20.
        l.on_interest(t0, 0, TrafficClass::Primary, 50);
        assert_eq!(l.dequeue(t0).map(|x| x.0), Some(0));
        l.on_data(t0, 1000, Some(Duration::from_millis(100)));
        assert_eq!(l.inflation(), 20.0);
        // 100 more Interests of 50 bytes: 100 kB of Data in 100 ms = 8 Mbit/s,
        // eight times the 1 Mbit/s link: the rate falls well below η·C.
        for i in 1..=100 {
            l.on_interest(t0, i, TrafficClass::Primary, 50);
        }
        assert_eq!(l.handle_timeout(Timestamp::from_millis(50)), None);
        let (rp1, _) = l.handle_timeout(Timestamp::from_millis(100)).unwrap();
        // Nothing was released and the input goes on: the queue (as much
        // as the shaper's 50 ms holds) stood through the next period, and
        // with the input the rate falls well below η·C.
        for i in 101..=200 {
            l.on_interest(Timestamp::from_millis(150), i, TrafficClass::Primary, 50);
        }
        let (rp, _) = l.handle_timeout(Timestamp::from_millis(200)).unwrap();
        assert!(rp < 0.6e6 && rp < rp1, "{rp1} then {rp}");
        assert_eq!(l.stamp(None, Some(1.0)), (rp, 1.0));
        assert_eq!(l.stamp(Some(1e9), None).0, rp);
        assert_eq!(l.srtt(), Duration::from_millis(100));
    }
}
