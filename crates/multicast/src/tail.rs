//! Detection of a lost stream tail.
//!
//! A hole is seen only when a later packet arrives, so when the last
//! packets of a stream are lost (the end packet among them) the gap repair
//! never learns of them: the receiver waits for its idle timeout and hands
//! the application a truncated stream. After a silence clearly longer than
//! the stream's packet spacing, the receiver asks for the next sequence
//! number exactly as it asks for a hole; the source's buffer (or a Content
//! Store on the tree) answers when the packet exists, and nobody answers a
//! stream that only paused. The asks back off while the silence lasts, so
//! a paused live stream costs one small Interest every few seconds.

use cc_core::{Duration, Timestamp};

/// Silence, in packet spacings at the announced rate, after which the
/// tail is asked for: a paced stream that still flows delivers its next
/// packet one spacing after the last, plus queueing jitter that the
/// silence's RTT floor ([`TailProbe::on_packet`]) covers.
pub const SILENCE_SPACINGS: u32 = 4;

/// When to ask for the packet after the highest one seen.
#[derive(Debug, Clone, Copy)]
pub struct TailProbe {
    due: Option<Timestamp>,
    interval: Duration,
    max_interval: Duration,
    probes: u64,
}

impl TailProbe {
    /// Asks back off up to `max_interval` apart.
    pub fn new(max_interval: Duration) -> Self {
        TailProbe {
            due: None,
            interval: Duration::ZERO,
            max_interval,
            probes: 0,
        }
    }

    /// A packet beyond every one seen arrived at `now`. `spacing` is the
    /// stream's packet spacing (its size at the announced rate), `floor`
    /// the shortest silence worth asking about (the RTT to the source).
    pub fn on_packet(&mut self, now: Timestamp, spacing: Duration, floor: Duration) {
        // A stream slower than one packet per backoff cap is asked about
        // at the cap's pace.
        let silence = (spacing * SILENCE_SPACINGS)
            .min(self.max_interval)
            .max(floor);
        self.interval = silence;
        self.due = Some(now + silence);
    }

    /// The stream ended (or the receiver left): nothing more to ask for.
    pub fn stop(&mut self) {
        self.due = None;
    }

    /// True when the next sequence number is to be asked for at `now`;
    /// the following ask is then due one doubled interval later.
    pub fn poll(&mut self, now: Timestamp) -> bool {
        match self.due {
            Some(t) if t <= now => {
                self.interval = (self.interval * 2).min(self.max_interval);
                self.due = Some(now + self.interval);
                self.probes += 1;
                true
            }
            _ => false,
        }
    }

    /// When [`Self::poll`] next asks, if ever.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.due
    }

    /// Asks made so far.
    pub fn probes(&self) -> u64 {
        self.probes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    #[test]
    fn a_flowing_stream_is_never_probed() {
        let mut t = TailProbe::new(Duration::from_secs(2));
        let spacing = Duration::from_millis(10);
        for i in 0..100 {
            let now = ms(i * 10);
            assert!(!t.poll(now));
            t.on_packet(now, spacing, Duration::from_millis(5));
        }
        assert_eq!(t.probes(), 0);
        assert_eq!(t.poll_timeout(), Some(ms(990 + 40)));
    }

    #[test]
    fn silence_is_probed_then_backs_off_to_the_cap() {
        let mut t = TailProbe::new(Duration::from_millis(500));
        t.on_packet(ms(0), Duration::from_millis(10), Duration::from_millis(100));
        assert_eq!(t.poll_timeout(), Some(ms(100)), "the RTT floor wins");
        assert!(!t.poll(ms(99)));
        let mut asks = Vec::new();
        for now in 100..3000 {
            if t.poll(ms(now)) {
                asks.push(now);
            }
        }
        assert_eq!(asks, vec![100, 300, 700, 1200, 1700, 2200, 2700]);
        t.on_packet(ms(3000), Duration::from_millis(10), Duration::ZERO);
        assert_eq!(t.poll_timeout(), Some(ms(3040)), "a packet resets it");
        t.stop();
        assert!(!t.poll(ms(10_000)));
        assert_eq!(t.poll_timeout(), None);
    }
}
