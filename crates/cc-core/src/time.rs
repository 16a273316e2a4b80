//! Time as the laws see it: plain nanosecond counts handed in by the caller.
//!
//! No law reads a clock. The forwarder, the consumer pipelines and the
//! virtual-time simulator all pass a [`Timestamp`] into every event, which is
//! what makes the same code run identically in tests and on real hosts.

use core::ops::{Add, AddAssign, Sub};
pub use core::time::Duration;

/// A point in time, in nanoseconds since an epoch chosen by the caller
/// (process start for the daemon, zero for simulations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Timestamp(u64);

impl Timestamp {
    /// The epoch itself.
    pub const ZERO: Timestamp = Timestamp(0);
    /// A time later than any real run reaches; used as "never".
    pub const MAX: Timestamp = Timestamp(u64::MAX);

    /// Builds a timestamp from nanoseconds since the epoch.
    pub const fn from_nanos(ns: u64) -> Self {
        Timestamp(ns)
    }
    /// Builds a timestamp from microseconds since the epoch.
    pub const fn from_micros(us: u64) -> Self {
        Timestamp(us.saturating_mul(1_000))
    }
    /// Builds a timestamp from milliseconds since the epoch.
    pub const fn from_millis(ms: u64) -> Self {
        Timestamp(ms.saturating_mul(1_000_000))
    }
    /// Builds a timestamp from (possibly fractional) seconds since the epoch.
    pub fn from_secs_f64(s: f64) -> Self {
        if s <= 0.0 || s.is_nan() {
            Timestamp(0)
        } else {
            Timestamp((s * 1e9) as u64)
        }
    }
    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the epoch, as a float (for rate arithmetic).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is in the future.
    pub fn saturating_since(self, earlier: Timestamp) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// Adds a duration, saturating at [`Timestamp::MAX`].
    pub fn saturating_add(self, d: Duration) -> Timestamp {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Timestamp(self.0.saturating_add(ns))
    }
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, d: Duration) -> Timestamp {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Timestamp {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl Sub<Timestamp> for Timestamp {
    type Output = Duration;
    fn sub(self, earlier: Timestamp) -> Duration {
        self.saturating_since(earlier)
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Timestamp;
    fn sub(self, d: Duration) -> Timestamp {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Timestamp(self.0.saturating_sub(ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let t = Timestamp::from_millis(5);
        assert_eq!(t - Timestamp::from_millis(7), Duration::ZERO);
        assert_eq!(Timestamp::MAX + Duration::from_secs(1), Timestamp::MAX);
        assert_eq!((t + Duration::from_millis(2)).as_nanos(), 7_000_000);
        assert_eq!(t - Duration::from_secs(1), Timestamp::ZERO);
    }
}
