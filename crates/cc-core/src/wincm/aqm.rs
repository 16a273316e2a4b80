//! WinCM AQM: CoDel detection and multi-congestion marking (Algorithm 1,
//! eqs. 1–2; the cleaned reading of docs/algorithms.md §5.1).
//!
//! Prompt re-entry ([`MultiMarkConfig::prompt_reentry`], tuned profile,
//! W11 in docs/deviations.md): Algorithm 1 waits a whole interval above
//! target before every episode, and N flows each add an Interest per round
//! trip meanwhile, so on short paths the queue an episode finds grows with
//! N (ten 1200 B flows on 2 Mbit/s at 50 ms: 75 ms p95). Once an episode
//! has run and the queue has since emptied (its cuts arrived), the next
//! rise above target within 16 intervals (CoDel's re-entry window) opens
//! an episode at once. Such an episode marks the delay above target
//! (`s − Target`) rather than eq. (1)'s `s + k`: it starts as soon as the
//! queue crosses target, so its excess is what the cuts must take away.
//! Emptied, not merely under target: a queue that hovers at target dips
//! under it all the time on a real link, and re-arming on every dip cost
//! the namespace testbed 5-9 points of utilisation that virtual time did
//! not show (7 of 14 points agreed; 14 of 14 with the emptied rule).
//!
//! Re-entry on the flow's own drain under a standing queue
//! ([`MultiMarkConfig::standing_reentry`], tuned profile, W14 in
//! docs/deviations.md): on a flow-queued face (W6) the emptied queue that
//! re-arms prompt re-entry is the face's, every flow's Data together. When
//! the flows' windows at their floors hold more Data than the path, the
//! face never empties, so each flow's marker waited a whole interval above
//! target before every episode, while its window grew by one Interest per
//! unmarked Data at a window of one (ten 8 KB flows on 2 Mbit/s at 10 ms:
//! windows 1.0-3.3, 516 ms of p95 queue against a floor of 345; with this
//! rule every window 1.0, 290 ms). Once the
//! face's queue stands ([`StandingQueue`]: CoDel's test, no Data left at or
//! under target and the face never emptied to one Data for a whole
//! interval), a flow's
//! own queue emptying (at most one of its Data behind) shows that flow's
//! cuts arrived, and re-arms its prompt re-entry; an episode that ends
//! while the flow's Data still wait above target then re-enters at once.
//! While some Data leave under target (a flow below its share, served in
//! its turn) the queue is not standing, and the rule is W11's: a flow
//! whose own queue is empty is not marked for the round of other flows'
//! Data it waited behind (without the standing test, ten 1200 B flows on
//! 10 Mbit/s at 150 ms left a flow at 0.49 of its share, and the envelope
//! grid lost as many points as it gained).

use crate::time::{Duration, Timestamp};

/// Parameters of the WinCM AQM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct MultiMarkConfig {
    /// Acceptable standing queue delay (paper: 5 ms).
    pub target: Duration,
    /// Time above target before congestion is declared (paper text 110 ms;
    /// 100 ms as CoDel/PCON by default, docs/algorithms.md §5.4).
    pub interval: Duration,
    /// After an episode, once the queue has emptied, the next rise above
    /// target within 16 intervals opens an episode at once (module doc)
    /// [D]. Off: every episode waits a whole interval above
    /// target, as Algorithm 1.
    pub prompt_reentry: bool,
    /// Where CoDel's MTU rule applies (per-flow markers, whose caller
    /// knows the backlog) on a link whose packet time exceeds target (the
    /// links the rule is for), it excuses the wait behind one packet, not
    /// more: a packet that waited longer than one packet's time plus
    /// target stood in a queue ([`MultiMarkCodel::mtu_excused`]) [D].
    /// Off, and on faster links: any wait with at most one packet left
    /// behind is excused, as Linux. Off in both profiles: measured, it
    /// took the envelope grid's WinCM points 57 → 62 but cost the
    /// multipath scenario ccc_fig1 (8 KB Data on 10 Mbit/s, a Data time
    /// of 6.4 ms) 99.2 → 96.5 % and its settling 0.5 → 7.5 s (W13 in
    /// docs/deviations.md); `[cc.wincm] mtu_excuse_one_packet = true`
    /// for single-path links with large Data.
    pub mtu_excuse_one_packet: bool,
    /// Per-flow markers: while the face's queue stands, the flow's own
    /// queue emptying re-arms prompt re-entry, and an episode that ends
    /// with the flow's Data still above target re-enters at once (module
    /// doc) [D]. Off: only the face's queue emptying re-arms it (W11);
    /// without prompt re-entry it has no effect.
    pub standing_reentry: bool,
}

impl Default for MultiMarkConfig {
    fn default() -> Self {
        MultiMarkConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            prompt_reentry: true,
            mtu_excuse_one_packet: false,
            standing_reentry: true,
        }
    }
}

impl MultiMarkConfig {
    /// Algorithm 1 with the paper's constants: 5 ms, 110 ms.
    pub fn paper() -> Self {
        MultiMarkConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(110),
            prompt_reentry: false,
            mtu_excuse_one_packet: false,
            standing_reentry: false,
        }
    }

    /// The configuration of `profile` (tuned is the default: 100 ms, as
    /// CoDel and PCON; 110 ms measured a 3.8 ms higher mean p95 queue over
    /// the envelope sweep and one point fewer within its bounds).
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::default(),
        }
    }
}

/// Counters of the WinCM AQM.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MultiMarkStats {
    /// Packets marked.
    pub marks: u64,
    /// Congestion episodes detected.
    pub episodes: u64,
}

/// Per-queue WinCM marking state.
#[derive(Debug, Clone)]
pub struct MultiMarkCodel {
    cfg: MultiMarkConfig,
    first_above: Option<Timestamp>,
    first_sojourn: Duration,
    over_interval: bool,
    next_marking: Timestamp,
    stop_marking: Timestamp,
    /// End of the last episode's marking window, if one ran.
    last_stop: Option<Timestamp>,
    /// The queue emptied after the last episode's window closed.
    drained: bool,
    stats: MultiMarkStats,
}

impl MultiMarkCodel {
    /// Creates the AQM in the idle state.
    pub fn new(cfg: MultiMarkConfig) -> Self {
        MultiMarkCodel {
            cfg,
            first_above: None,
            first_sojourn: Duration::ZERO,
            over_interval: false,
            next_marking: Timestamp::ZERO,
            stop_marking: Timestamp::ZERO,
            last_stop: None,
            drained: false,
            stats: MultiMarkStats::default(),
        }
    }

    /// Reports the dequeue of a packet that waited `sojourn`; returns
    /// whether to mark it (CongestionMark = 1 on the Data). Without the
    /// backlog, a packet at or under target counts as the queue emptied.
    pub fn on_dequeue(&mut self, now: Timestamp, sojourn: Duration) -> bool {
        self.on_dequeue_emptied(now, sojourn, sojourn <= self.cfg.target)
    }

    /// [`Self::on_dequeue`] for a caller that knows whether the queue
    /// (nearly) emptied behind this packet: only that counts as the drain
    /// that re-arms prompt re-entry.
    pub fn on_dequeue_emptied(&mut self, now: Timestamp, sojourn: Duration, emptied: bool) -> bool {
        self.dequeue(now, sojourn, emptied, false)
    }

    /// [`Self::on_dequeue_emptied`] for a per-flow marker on a flow-queued
    /// face: `flow_emptied`, at most one packet of this flow is left
    /// behind; `standing`, the face's queue stands ([`StandingQueue`]).
    /// With [`MultiMarkConfig::standing_reentry`] and a standing queue, the
    /// flow's own drain re-arms prompt re-entry, and an episode that ends
    /// while this packet waited above target re-enters at once.
    pub fn on_dequeue_flow(
        &mut self,
        now: Timestamp,
        sojourn: Duration,
        emptied: bool,
        flow_emptied: bool,
        standing: bool,
    ) -> bool {
        let own = self.cfg.standing_reentry && standing;
        if own && flow_emptied {
            self.note_drain(now);
        }
        self.dequeue(now, sojourn, emptied, own)
    }

    fn dequeue(&mut self, now: Timestamp, sojourn: Duration, emptied: bool, reopen: bool) -> bool {
        if sojourn <= self.cfg.target {
            self.first_above = None;
            self.over_interval = false;
            if emptied {
                self.note_drain(now);
            }
        } else {
            match self.first_above {
                // The last episode's cuts emptied the queue and it rises
                // again: mark its excess at once.
                None if self.reenters(now) => self.reenter(now, sojourn),
                None => {
                    self.first_above = Some(now);
                    self.first_sojourn = sojourn;
                    self.over_interval = false;
                }
                Some(fat) if !self.over_interval && now > fat + self.cfg.interval => {
                    let s = sojourn.as_secs_f64();
                    let elapsed = now.saturating_since(fat).as_secs_f64();
                    // (2) k = (s − FirstSojourn)/(now − FirstAboveTime) · s
                    let k = (s - self.first_sojourn.as_secs_f64()) / elapsed * s;
                    // (1) StopMarkingTime = FirstAboveTime + Interval + s + k, with s + k ≥ 0
                    let span = Duration::from_secs_f64((s + k).clamp(0.0, 1e6));
                    self.open_episode(now, fat + self.cfg.interval + span);
                }
                Some(_) => {}
            }
        }
        if !self.over_interval {
            return false;
        }
        if now > self.stop_marking {
            // End of the episode: re-arm detection.
            self.over_interval = false;
            self.first_above = None;
            if !(reopen && sojourn > self.cfg.target && self.reenters(now)) {
                return false;
            }
            // The flow's own queue emptied under a standing queue and its
            // Data still wait above target: the next episode at once.
            self.reenter(now, sojourn);
        }
        if now >= self.next_marking {
            self.next_marking = now;
            self.stats.marks += 1;
            return true;
        }
        false
    }

    /// The queue drained after the last episode ended: the next rise may
    /// re-enter at once.
    fn note_drain(&mut self, now: Timestamp) {
        if self.last_stop.is_some_and(|t| now > t) {
            self.drained = true;
        }
    }

    /// Opens an episode at once that marks the delay above target.
    fn reenter(&mut self, now: Timestamp, sojourn: Duration) {
        self.first_above = Some(now);
        self.first_sojourn = sojourn;
        self.open_episode(now, now + sojourn.saturating_sub(self.cfg.target));
    }

    /// Starts marking at `now` until `stop`.
    fn open_episode(&mut self, now: Timestamp, stop: Timestamp) {
        self.over_interval = true;
        self.stats.episodes += 1;
        self.stop_marking = stop;
        self.next_marking = now;
        self.last_stop = Some(stop);
        self.drained = false;
    }

    /// Within CoDel's re-entry window of the last episode (16 intervals).
    fn recent_episode(&self, now: Timestamp) -> bool {
        self.cfg.prompt_reentry
            && self
                .last_stop
                .is_some_and(|t| now.saturating_since(t) < self.cfg.interval * 16)
    }

    /// A rise above target opens an episode without waiting an interval.
    fn reenters(&self, now: Timestamp) -> bool {
        self.drained && self.recent_episode(now)
    }

    /// Whether CoDel's MTU rule excuses a packet of `packet_bytes` that
    /// waited `sojourn` and left at most one packet behind, on a link of
    /// `capacity_bps` (`None`: unknown). With
    /// [`MultiMarkConfig::mtu_excuse_one_packet`] and a packet time above
    /// target, only a wait within one packet's time plus target is
    /// excused. On faster links the rule stays Linux's: there it only
    /// spares the tail of a burst, and real links deliver in small bursts
    /// (the namespace testbed, W11). 8 KB Data on 2 Mbit/s take
    /// 32 ms, a flow whose window holds three waits about 54 ms and keeps
    /// two Data queued, and Linux's rule let it grow to four (three
    /// queued, p95 96.7 ms against two Data times, 64.5 ms) before any
    /// mark (W13 in docs/deviations.md).
    pub fn mtu_excused(
        &self,
        sojourn: Duration,
        packet_bytes: usize,
        capacity_bps: Option<u64>,
    ) -> bool {
        !self.cfg.mtu_excuse_one_packet
            || crate::codel::packet_time(packet_bytes, capacity_bps)
                .is_none_or(|d| d <= self.cfg.target || sojourn <= d + self.cfg.target)
    }

    /// End of the current marking window, if an episode is running.
    pub fn stop_marking_time(&self) -> Option<Timestamp> {
        self.over_interval.then_some(self.stop_marking)
    }

    /// True when no congestion episode is being detected or marked and
    /// none would open at once: the state a fresh marker starts in (a
    /// per-flow marker may be dropped).
    pub fn is_idle(&self, now: Timestamp) -> bool {
        self.first_above.is_none() && !self.over_interval && !self.recent_episode(now)
    }

    /// Counters.
    pub fn stats(&self) -> MultiMarkStats {
        self.stats
    }
}

/// CoDel's standing-queue test on a whole face, for the per-flow markers
/// of a flow-queued face ([`MultiMarkConfig::standing_reentry`]): the queue
/// stands once no Data has left at or under target, and the face has not
/// emptied (at most one Data left behind a departing one: CoDel's MTU
/// rule, W11's drain), for a whole interval. Per flow a Data's sojourn
/// includes the other flows' turns, so no single flow's marker can tell
/// this.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandingQueue {
    /// Last Data that left at or under target, or left the face empty
    /// (a face that never did has stood since it came up).
    last_low: Timestamp,
}

impl StandingQueue {
    /// A Data left after `sojourn`, `face_emptied` when at most one packet
    /// is queued behind it on the face; whether the queue stands (`cfg`'s
    /// target and interval).
    pub fn on_dequeue(
        &mut self,
        cfg: &MultiMarkConfig,
        now: Timestamp,
        sojourn: Duration,
        face_emptied: bool,
    ) -> bool {
        if sojourn <= cfg.target || face_emptied {
            self.last_low = now;
        }
        now.saturating_since(self.last_low) > cfg.interval
    }
}

impl Default for MultiMarkCodel {
    fn default() -> Self {
        MultiMarkCodel::new(MultiMarkConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// W13 (off by default): on a link whose packet time exceeds target it
    /// excuses a wait of one packet's time plus target, no more; the
    /// paper's reading (Linux's rule) any wait, and both any wait when the
    /// packet time is unknown or within target.
    #[test]
    fn the_mtu_excuse_covers_one_packet_time() {
        let ms = Duration::from_millis;
        let tuned = MultiMarkCodel::new(MultiMarkConfig {
            mtu_excuse_one_packet: true,
            ..MultiMarkConfig::default()
        });
        let paper = MultiMarkCodel::new(MultiMarkConfig::paper());
        let slow = Some(2_000_000); // 8 KB take 32 ms
        assert!(tuned.mtu_excused(ms(37), 8000, slow));
        assert!(!tuned.mtu_excused(ms(38), 8000, slow));
        assert!(tuned.mtu_excused(ms(500), 8000, None));
        assert!(
            tuned.mtu_excused(ms(500), 1200, Some(10_000_000)),
            "a packet time within target"
        );
        assert!(paper.mtu_excused(ms(500), 8000, slow));
        let default = MultiMarkCodel::new(MultiMarkConfig::default());
        assert!(default.mtu_excused(ms(500), 8000, slow));
    }

    #[test]
    fn marks_every_packet_for_about_one_queue_delay() {
        let mut q = MultiMarkCodel::default();
        // Sojourn grows linearly 10 ms → 20 ms over the first 100 ms, then stays 20 ms.
        let soj = |t: u64| Duration::from_micros(10_000 + 100 * t.min(100));
        let marks: Vec<u64> = (0..=200)
            .filter(|&t| q.on_dequeue(Timestamp::from_millis(t), soj(t)))
            .collect();
        // Detection at 101 ms (first now > 0 + 100): s = 20 ms, FirstSojourn = 10 ms,
        // k = (0.020 − 0.010)/0.101 · 0.020 = 1.98 ms → Stop = 100 + 20 + 1.98 = 121.98 ms.
        let expected: Vec<u64> = (101..=121).collect();
        assert_eq!(marks, expected);
        assert_eq!(q.stats().episodes, 1);
    }

    #[test]
    fn draining_queue_shortens_the_window_but_never_below_zero() {
        let mut q = MultiMarkCodel::default();
        assert!(!q.on_dequeue(Timestamp::ZERO, Duration::from_millis(50)));
        // Sojourn fell from 50 to 6 ms: k = (6 − 50)/101 · 6 = −2.61 ms, s + k = 3.39 ms.
        assert!(q.on_dequeue(Timestamp::from_millis(101), Duration::from_millis(6)));
        let stop = q.stop_marking_time().unwrap();
        assert!(stop > Timestamp::from_millis(103) && stop < Timestamp::from_millis(104));
        assert!(!q.on_dequeue(Timestamp::from_millis(104), Duration::from_millis(6)));
        // Re-armed: a new Interval above target is needed.
        assert!(!q.on_dequeue(Timestamp::from_millis(150), Duration::from_millis(6)));
    }

    #[test]
    fn low_sojourn_resets_detection() {
        let mut q = MultiMarkCodel::default();
        q.on_dequeue(Timestamp::ZERO, Duration::from_millis(10));
        q.on_dequeue(Timestamp::from_millis(50), Duration::from_millis(1));
        assert!(!q.on_dequeue(Timestamp::from_millis(120), Duration::from_millis(10)));
    }

    /// A tuned marker after one episode: 20 ms of queue from 0 to 110 ms.
    fn after_one_episode() -> MultiMarkCodel {
        let mut q = MultiMarkCodel::default();
        for t in 0..=110 {
            q.on_dequeue_emptied(Timestamp::from_millis(t), Duration::from_millis(20), false);
        }
        assert_eq!(q.stats().episodes, 1);
        q
    }

    /// Tuned: after an episode, once the queue has emptied, the
    /// next rise is marked at once for its delay above target; the paper's
    /// Algorithm 1 waits a whole interval again.
    #[test]
    fn a_rise_after_a_drained_episode_is_marked_at_once_when_tuned() {
        let ms = Timestamp::from_millis;
        let d = Duration::from_millis;
        let run = |cfg: MultiMarkConfig| {
            let mut q = MultiMarkCodel::new(cfg);
            // First episode: 20 ms of queue from 0 to 110 ms (interval).
            for t in 0..=110 {
                q.on_dequeue(ms(t), d(20));
            }
            assert_eq!(q.stats().episodes, 1);
            // The cuts arrive: the queue drains after the window closed.
            for t in 200..210 {
                assert!(!q.on_dequeue(ms(t), d(1)));
            }
            // It rises to 9 ms: 4 ms above target.
            (210..240)
                .filter(|&t| q.on_dequeue(ms(t), d(9)))
                .collect::<Vec<u64>>()
        };
        assert_eq!(
            run(MultiMarkConfig::default()),
            (210..=214).collect::<Vec<_>>()
        );
        let paper = MultiMarkConfig {
            interval: Duration::from_millis(100),
            ..MultiMarkConfig::paper()
        };
        assert!(run(paper).is_empty());
    }

    /// A dip under target with Data still behind does not re-arm prompt
    /// re-entry; the queue emptying does.
    #[test]
    fn only_an_emptied_queue_rearms_prompt_reentry() {
        let ms = Timestamp::from_millis;
        let d = Duration::from_millis;
        let mut q = after_one_episode();
        // Hovering at target: dips, never empty; the rise waits an interval.
        assert!(!q.on_dequeue_emptied(ms(200), d(4), false));
        assert!(!q.on_dequeue_emptied(ms(201), d(9), false));
        assert_eq!(q.stats().episodes, 1);
        // Emptied, then a rise: an episode at once.
        assert!(!q.on_dequeue_emptied(ms(250), d(1), true));
        assert!(q.on_dequeue_emptied(ms(251), d(9), false));
        assert_eq!(q.stats().episodes, 2);
    }

    /// No prompt episode while the queue has not drained since the last
    /// window (the cuts have not arrived), nor 16 intervals after it.
    #[test]
    fn prompt_reentry_needs_a_drain_and_a_recent_episode() {
        let ms = Timestamp::from_millis;
        let d = Duration::from_millis;
        let mut q = after_one_episode();
        let stop = q.stop_marking_time().unwrap();
        // Still above target after the window: a whole interval again.
        let t0 = stop.as_nanos() / 1_000_000 + 1;
        assert!(!q.on_dequeue(ms(t0), d(20)));
        assert!(!q.on_dequeue(ms(t0 + 50), d(20)));
        assert_eq!(q.stats().episodes, 1);
        assert!(!q.is_idle(ms(t0 + 50)));
        // Drained, but the next rise comes after 16 intervals.
        let mut q2 = after_one_episode();
        q2.on_dequeue(ms(300), d(1));
        assert!(q2.is_idle(ms(300 + 1_700)));
        assert!(!q2.on_dequeue(ms(300 + 1_700), d(20)));
        assert_eq!(q2.stats().episodes, 1);
    }

    /// The face's queue stands once an interval has passed with no Data
    /// at or under target and the face never emptied; either resets it.
    #[test]
    fn a_queue_stands_after_an_interval_without_a_low_dequeue() {
        let cfg = MultiMarkConfig::default();
        let ms = Timestamp::from_millis;
        let d = Duration::from_millis;
        let mut q = StandingQueue::default();
        assert!(!q.on_dequeue(&cfg, ms(50), d(1), false));
        assert!(!q.on_dequeue(&cfg, ms(150), d(40), false));
        assert!(q.on_dequeue(&cfg, ms(151), d(40), false));
        assert!(!q.on_dequeue(&cfg, ms(152), d(5), false), "at target");
        assert!(q.on_dequeue(&cfg, ms(253), d(40), false));
        assert!(
            !q.on_dequeue(&cfg, ms(254), d(40), true),
            "the face emptied"
        );
    }

    /// W14: after an episode, a Data of a flow whose own queue emptied,
    /// waiting above target behind a standing queue, opens an episode at
    /// once; without the standing queue, with the flow's Data still
    /// queued behind it, or in the paper profile, the next episode waits
    /// a whole interval (the face's queue never emptied).
    #[test]
    fn a_flows_own_drain_rearms_reentry_under_a_standing_queue() {
        let ms = Timestamp::from_millis;
        let d = Duration::from_millis;
        // (flow emptied, standing): marks of a flow whose Data keep
        // waiting 40 ms from 200 ms to 300 ms, the face never emptied.
        let run = |q: &mut MultiMarkCodel, flow_emptied: bool, standing: bool| {
            (200..=300)
                .filter(|&t| q.on_dequeue_flow(ms(t), d(40), false, flow_emptied, standing))
                .collect::<Vec<u64>>()
        };
        // First episode from 101 ms to 120 ms; at 200 ms it re-enters for
        // the 35 ms above target, and while the Data still wait above
        // target each episode that ends re-enters at once: every one of
        // them is marked.
        let marks = run(&mut after_one_episode(), true, true);
        assert_eq!(marks, (200..=300).collect::<Vec<_>>());
        let mut q = after_one_episode();
        assert!(q.on_dequeue_flow(ms(200), d(40), false, true, true));
        assert!(q.on_dequeue_flow(ms(236), d(40), false, true, true));
        assert_eq!(q.stats().episodes, 3);
        assert!(run(&mut after_one_episode(), true, false).is_empty());
        assert!(run(&mut after_one_episode(), false, true).is_empty());
        let off = MultiMarkConfig {
            standing_reentry: false,
            ..MultiMarkConfig::default()
        };
        let mut q = MultiMarkCodel::new(off);
        for t in 0..=110 {
            q.on_dequeue_emptied(ms(t), d(20), false);
        }
        assert!(run(&mut q, true, true).is_empty());
    }

    proptest! {
        #[test]
        fn no_mark_at_or_below_target(ev in proptest::collection::vec((0u64..20_000_000, 0u64..40_000_000), 1..400)) {
            let mut q = MultiMarkCodel::default();
            let mut now = 0;
            for (dt, s) in ev {
                now += dt;
                let m = q.on_dequeue(Timestamp::from_nanos(now), Duration::from_nanos(s));
                if s <= 5_000_000 { prop_assert!(!m); }
            }
        }
    }
}
