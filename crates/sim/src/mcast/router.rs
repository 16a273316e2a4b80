//! A simulated forwarder hosting a [`MulticastNode`].
//!
//! `on_frame` is the dispatch an engine needs, in order:
//! 1. decode the frame; an MCC header goes to `handle_feedback`;
//! 2. an Interest that [`Subscription::from_interest`] recognises goes to
//!    `handle_subscription` with the FIB next hop of the group (any other
//!    Interest takes the normal pipeline);
//! 3. a Data goes to `handle_group_data` before the PIT: `Forward` clones
//!    the received bytes to the listed faces, `WrongFace` drops, `NotGroup`
//!    runs the normal pipeline (here: no PIT, so it is unsolicited and
//!    dropped);
//! 4. drain `poll_transmit` onto the faces' queues.
//!
//! `on_timer` runs `handle_timeout` with a sampler over the faces' queues.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{decode_packet, Name, NetPacket};

use icn_multicast::node::{DataVerdict, FaceSampler, MulticastNode, NodeConfig};
use icn_multicast::wire::Subscription;

/// Drops and non-multicast traffic seen by a simulated router.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouterCounters {
    /// Frames that did not decode.
    pub malformed: u64,
    /// Data outside any group (dropped, as NDN requires without a PIT entry).
    pub unsolicited_data: u64,
    /// Group Data from a face other than the group's upstream.
    pub wrong_face: u64,
    /// Interests that are not subscriptions.
    pub other_interests: u64,
    /// Subscriptions or feedback the node refused.
    pub refused: u64,
}

/// A router.
#[derive(Debug)]
pub struct RouterHost {
    /// The tree-node state machine.
    pub node: MulticastNode,
    /// FIB: prefix → face towards the source.
    pub fib: Vec<(Name, u64)>,
    /// Counters.
    pub counters: RouterCounters,
    scratch: Vec<u64>,
}

impl RouterHost {
    pub(super) fn new(cfg: NodeConfig, now: Timestamp) -> Self {
        RouterHost {
            node: MulticastNode::new(cfg, now),
            fib: Vec::new(),
            counters: RouterCounters::default(),
            scratch: Vec::new(),
        }
    }

    /// Longest-prefix FIB next hop for `name`.
    pub fn upstream_of(&self, name: &Name) -> Option<u64> {
        self.fib
            .iter()
            .filter(|(p, _)| p.is_prefix_of(name))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, f)| *f)
    }

    /// A frame arrived on `face`; frames to send are appended to `out`.
    pub fn on_frame(
        &mut self,
        now: Timestamp,
        face: u64,
        bytes: Bytes,
        out: &mut Vec<(u64, Bytes)>,
    ) {
        let Ok((lp, net)) = decode_packet(bytes) else {
            self.counters.malformed += 1;
            return;
        };
        if let Some(fb) = &lp.mcc {
            if self.node.handle_feedback(now, face, fb).is_err() {
                self.counters.refused += 1;
            }
        }
        match net {
            Some(NetPacket::Interest(i)) => match Subscription::from_interest(&i) {
                Some(sub) => {
                    let up = self.upstream_of(&sub.group);
                    if self.node.handle_subscription(now, face, &sub, up).is_err() {
                        self.counters.refused += 1;
                    }
                }
                None => self.counters.other_interests += 1,
            },
            Some(NetPacket::Data(d)) => {
                self.scratch.clear();
                match self
                    .node
                    .handle_group_data(now, face, &d.name, &mut self.scratch)
                {
                    DataVerdict::Forward => {
                        let wire = d.wire().cloned().unwrap_or_default();
                        out.extend(self.scratch.iter().map(|f| (*f, wire.clone())));
                    }
                    DataVerdict::WrongFace => self.counters.wrong_face += 1,
                    DataVerdict::NotGroup => self.counters.unsolicited_data += 1,
                }
            }
            None => {}
        }
        self.drain(out);
    }

    /// Timers: sampling, feedback period, refresh, expiry.
    pub fn on_timer(
        &mut self,
        now: Timestamp,
        sampler: &impl FaceSampler,
        out: &mut Vec<(u64, Bytes)>,
    ) {
        if self.node.poll_timeout().is_some_and(|t| t <= now) {
            self.node.handle_timeout(now, sampler);
        }
        self.drain(out);
    }

    fn drain(&mut self, out: &mut Vec<(u64, Bytes)>) {
        while let Some(t) = self.node.poll_transmit() {
            out.push((t.face, t.bytes));
        }
    }

    /// When the node wants its timer.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.node.poll_timeout()
    }
}
