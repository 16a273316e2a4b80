//! Rate-limited warnings: a flood repeats the same condition thousands of
//! times a second; the log gets one line per key (peer, reason) per
//! interval, with the number of occurrences it stands for. Sans-IO: the
//! caller passes `now`.

use std::hash::Hash;

use cc_core::{Duration, Timestamp};
use hashbrown::HashMap;

/// Keys remembered at most; beyond, keys quiet for a whole interval go.
const MAX_KEYS: usize = 4096;

/// Decides which occurrences of a repeated condition get a log line.
#[derive(Debug)]
pub struct RateLimitedLog<K> {
    interval: Duration,
    /// Per key: when it was last logged and occurrences since.
    last: HashMap<K, (Timestamp, u64)>,
}

impl<K: Hash + Eq> RateLimitedLog<K> {
    pub fn new(interval: Duration) -> Self {
        RateLimitedLog {
            interval,
            last: HashMap::new(),
        }
    }

    /// Changes the interval (a reload); what was logged stays remembered.
    pub fn set_interval(&mut self, interval: Duration) {
        self.interval = interval;
    }

    /// Records one occurrence; `Some(n)` when it should be logged now, `n`
    /// being the occurrences this line stands for (this one included).
    pub fn hit(&mut self, now: Timestamp, key: K) -> Option<u64> {
        if self.last.len() >= MAX_KEYS && !self.last.contains_key(&key) {
            let interval = self.interval;
            self.last
                .retain(|_, (t, _)| now.saturating_since(*t) < interval);
            if self.last.len() >= MAX_KEYS {
                // Every key is recent: a flood of distinct keys; stay silent
                // for new ones rather than grow (their drops are counted).
                return None;
            }
        }
        match self.last.get_mut(&key) {
            Some((t, n)) if now.saturating_since(*t) < self.interval => {
                *n += 1;
                None
            }
            Some((t, n)) => {
                let count = *n + 1;
                (*t, *n) = (now, 0);
                Some(count)
            }
            None => {
                self.last.insert(key, (now, 0));
                Some(1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_key_per_interval_with_the_count() {
        let mut l = RateLimitedLog::new(Duration::from_secs(10));
        let t0 = Timestamp::ZERO;
        assert_eq!(l.hit(t0, 1), Some(1));
        assert_eq!(l.hit(t0 + Duration::from_secs(1), 1), None);
        assert_eq!(l.hit(t0 + Duration::from_secs(2), 2), Some(1));
        assert_eq!(l.hit(t0 + Duration::from_secs(3), 1), None);
        assert_eq!(l.hit(t0 + Duration::from_secs(10), 1), Some(3));
        assert_eq!(l.hit(t0 + Duration::from_secs(11), 1), None);
    }

    #[test]
    fn many_keys_stay_bounded() {
        let mut l = RateLimitedLog::new(Duration::from_secs(10));
        let t0 = Timestamp::ZERO;
        for k in 0..MAX_KEYS as u64 {
            assert_eq!(l.hit(t0, k), Some(1));
        }
        assert_eq!(l.hit(t0, u64::MAX), None);
        assert!(l.last.len() <= MAX_KEYS);
        // Once the old keys are quiet for an interval, new ones log again.
        assert_eq!(l.hit(t0 + Duration::from_secs(10), u64::MAX), Some(1));
        assert!(l.last.len() <= MAX_KEYS);
    }
}
