//! Flow queueing: deficit round robin over hashed flows (the scheduler of
//! Linux `fq_codel`, RFC 8290 §4), for the Data queue of a face whose
//! scheme signals congestion by marking (PCON, WinCM).
//!
//! Why it exists: with one FIFO and one marker per face, every flow sees
//! the same queueing delay and, per packet, the same marking probability,
//! so a window law's throughput goes as 1/RTT and a flow crossing several
//! marking hops starves (the envelope sweep measured long-RTT and
//! long-path flows at 0.1–0.5 of their proportional-fair share). With one
//! queue per flow served in byte-fair turns, a flow below its share keeps
//! an empty queue and is not marked; a flow above it queues behind itself
//! and only it is marked. The marker then runs per flow on the flow's own
//! sojourn (the caller keeps one per [`Popped::flow`]).
//!
//! Flows hash into `buckets` slots ([`FlowQueues::new`], RFC 8290's fixed
//! table) or each 32-bit flow hash is its own slot
//! ([`FlowQueues::per_flow`]). Either way state exists only for non-empty
//! slots (and for a slot that just emptied from the new list, as RFC 8290
//! keeps it), so memory follows the packets queued, not the flows seen or
//! the size of the hash space. Flows that share a slot share one turn and
//! one marker: at RFC 8290's 1024 slots ten flows collide with probability
//! ≈ 4 %, and the envelope sweep found two of ten flows held to half a
//! share each that way (docs/deviations.md, section P2/W6).

use alloc::collections::btree_map::Entry;
use alloc::collections::{BTreeMap, VecDeque};

/// One packet taken from the queues.
#[derive(Debug)]
pub struct Popped<T> {
    /// The packet.
    pub item: T,
    /// Its size as given to [`FlowQueues::push`].
    pub bytes: usize,
    /// The flow bucket it came from.
    pub flow: u32,
    /// Bytes still queued in that bucket after this one left.
    pub flow_backlog_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    New,
    Old,
}

#[derive(Debug)]
struct Bucket<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    deficit: i64,
    /// On the new or old list; an unlisted bucket is idle: kept (with its
    /// queue's capacity) so that a flow that drains and refills does not
    /// allocate a bucket per packet.
    listed: bool,
}

/// Idle buckets kept per queue set; beyond, an emptied bucket is dropped.
const IDLE_BUCKETS_MAX: usize = 64;

/// Queue capacity an idle bucket keeps.
const IDLE_CAPACITY_MAX: usize = 16;

/// Deficit-round-robin flow queues (new-flow list first, as RFC 8290).
#[derive(Debug)]
pub struct FlowQueues<T> {
    /// Slots the hash is reduced to (2^32 for [`FlowQueues::per_flow`]).
    buckets_n: u64,
    quantum_bytes: usize,
    buckets: BTreeMap<u32, Bucket<T>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Buckets in `buckets` that are not listed.
    idle: usize,
    len: usize,
    bytes: usize,
}

impl<T> FlowQueues<T> {
    /// `buckets` hash slots (at least 1); `quantum_bytes` is the byte credit
    /// a flow gets per turn (at least 1; [`FlowQueues::observe_packet`]
    /// raises it to the largest packet so one turn always sends one).
    pub fn new(buckets: u32, quantum_bytes: usize) -> Self {
        FlowQueues {
            buckets_n: u64::from(buckets.max(1)),
            quantum_bytes: quantum_bytes.max(1),
            buckets: BTreeMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            idle: 0,
            len: 0,
            bytes: 0,
        }
    }

    /// One slot per 32-bit flow hash (its low half): two flows share a
    /// turn only if their hashes agree on 32 bits, while the state stays
    /// bounded by the packets queued.
    pub fn per_flow(quantum_bytes: usize) -> Self {
        let mut q = Self::new(1, quantum_bytes);
        q.buckets_n = 1 << 32;
        q
    }

    /// The bucket a flow hash falls into.
    pub fn bucket_of(&self, flow_hash: u64) -> u32 {
        (flow_hash % self.buckets_n) as u32
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes queued.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Buckets holding packets.
    pub fn active_flows(&self) -> usize {
        self.buckets
            .values()
            .filter(|b| !b.items.is_empty())
            .count()
    }

    /// Bytes queued in one bucket.
    pub fn flow_bytes(&self, flow: u32) -> usize {
        self.buckets.get(&flow).map_or(0, |b| b.bytes)
    }

    /// The credit per turn: at least the largest packet seen.
    pub fn quantum_bytes(&self) -> usize {
        self.quantum_bytes
    }

    /// Raises the quantum to `bytes` if larger (a turn must fit a packet,
    /// or a flow of large Data waits several rounds per packet).
    pub fn observe_packet(&mut self, bytes: usize) {
        self.quantum_bytes = self.quantum_bytes.max(bytes);
    }

    /// Queues `item` of `bytes` for the flow `flow_hash`; returns its bucket.
    pub fn push(&mut self, flow_hash: u64, item: T, bytes: usize) -> u32 {
        let id = self.bucket_of(flow_hash);
        self.observe_packet(bytes);
        let quantum = self.quantum_bytes as i64;
        let b = match self.buckets.entry(id) {
            Entry::Occupied(o) => {
                let b = o.into_mut();
                if !b.listed {
                    // An idle bucket comes back, as a new flow.
                    self.idle -= 1;
                }
                b
            }
            Entry::Vacant(v) => v.insert(Bucket {
                items: VecDeque::new(),
                bytes: 0,
                deficit: quantum,
                listed: false,
            }),
        };
        if !b.listed {
            b.listed = true;
            b.deficit = quantum;
            self.new_flows.push_back(id);
        }
        b.items.push_back((item, bytes));
        b.bytes += bytes;
        self.len += 1;
        self.bytes += bytes;
        id
    }

    /// Takes the next packet in deficit-round-robin order.
    pub fn pop(&mut self) -> Option<Popped<T>> {
        let quantum = self.quantum_bytes as i64;
        loop {
            let (id, list) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&id), _) => (id, List::New),
                (None, Some(&id)) => (id, List::Old),
                (None, None) => return None,
            };
            let head = match list {
                List::New => &mut self.new_flows,
                List::Old => &mut self.old_flows,
            };
            head.pop_front();
            let Some(b) = self.buckets.get_mut(&id) else {
                // Cannot happen (listed buckets exist): drop the entry.
                continue;
            };
            if b.deficit <= 0 {
                b.deficit += quantum;
                self.old_flows.push_back(id);
                continue;
            }
            let Some((item, bytes)) = b.items.pop_front() else {
                // Empty: a new flow moves to the old list once (so that it
                // cannot regain new-flow priority by emptying), an old
                // one is forgotten.
                if list == List::New {
                    self.old_flows.push_back(id);
                } else if self.idle < IDLE_BUCKETS_MAX {
                    b.listed = false;
                    b.items.shrink_to(IDLE_CAPACITY_MAX);
                    self.idle += 1;
                } else {
                    self.buckets.remove(&id);
                }
                continue;
            };
            // Served: it stays at the head of its list.
            match list {
                List::New => self.new_flows.push_front(id),
                List::Old => self.old_flows.push_front(id),
            }
            b.deficit -= bytes as i64;
            b.bytes -= bytes;
            let flow_backlog_bytes = b.bytes;
            self.len -= 1;
            self.bytes -= bytes;
            return Some(Popped {
                item,
                bytes,
                flow: id,
                flow_backlog_bytes,
            });
        }
    }

    /// Removes and returns every queued packet.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.new_flows.clear();
        self.old_flows.clear();
        self.idle = 0;
        self.len = 0;
        self.bytes = 0;
        core::mem::take(&mut self.buckets)
            .into_values()
            .flat_map(|b| b.items.into_iter().map(|(t, _)| t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn two_backlogged_flows_alternate_by_bytes() {
        let mut q = FlowQueues::new(64, 1000);
        for k in 0..10 {
            q.push(1, (1, k), 1000);
            q.push(2, (2, k), 500);
        }
        let mut sent = [0usize; 3];
        for _ in 0..12 {
            let p = q.pop().unwrap();
            sent[p.item.0] += p.bytes;
        }
        // Flow 2 sends two 500-byte packets per 1000-byte packet of flow 1.
        assert!(sent[1].abs_diff(sent[2]) <= 1000, "{sent:?}");
    }

    #[test]
    fn a_sparse_flow_overtakes_a_standing_queue() {
        let mut q = FlowQueues::new(64, 1500);
        for k in 0..100 {
            q.push(1, k, 1500);
        }
        q.pop();
        q.push(2, 1000, 100);
        // The newcomer is on the new-flow list: served next.
        assert_eq!(q.pop().unwrap().item, 1000);
    }

    #[test]
    fn per_flow_slots_keep_hashes_apart_that_a_table_folds_together() {
        // 7 and 7 + 1024 share RFC 8290's 1024-slot table: one turn for both.
        let (a, b) = (7u64, 7 + 1024);
        let table = FlowQueues::<u8>::new(1024, 1500);
        assert_eq!(table.bucket_of(a), table.bucket_of(b));
        let mut q = FlowQueues::per_flow(1500);
        assert_ne!(q.bucket_of(a), q.bucket_of(b));
        assert_eq!(q.bucket_of(a), q.bucket_of(a + (1 << 32)));
        for k in 0..4 {
            q.push(a, ('a', k), 1500);
        }
        q.push(b, ('b', 0), 1500);
        // Two flows, one quantum a turn: b's packet leaves second.
        let first: Vec<char> = (0..2).map(|_| q.pop().unwrap().item.0).collect();
        assert!(first.contains(&'b'), "{first:?}");
        assert_eq!(q.active_flows(), 1);
    }

    #[test]
    fn backlog_and_counts_follow_the_packets() {
        let mut q = FlowQueues::new(8, 100);
        q.push(3, 'a', 100);
        q.push(3, 'b', 50);
        assert_eq!((q.len(), q.bytes(), q.flow_bytes(3)), (2, 150, 150));
        let p = q.pop().unwrap();
        assert_eq!((p.item, p.flow, p.flow_backlog_bytes), ('a', 3, 50));
        assert_eq!(q.drain().collect::<Vec<_>>(), vec!['b']);
        assert!(q.is_empty() && q.pop().is_none());
    }

    proptest! {
        /// Whatever goes in comes out once, and while two flows stay
        /// backlogged their sent bytes never differ by more than a quantum
        /// plus one packet.
        #[test]
        fn conserves_packets_and_shares_bytes(
            sizes in proptest::collection::vec((0u64..4, 1usize..1500), 1..300)
        ) {
            let mut q = FlowQueues::new(16, 1500);
            for (i, &(f, s)) in sizes.iter().enumerate() {
                q.push(f, (f, i), s);
            }
            prop_assert_eq!(q.len(), sizes.len());
            let mut out = Vec::new();
            while let Some(p) = q.pop() {
                out.push(p.item.1);
            }
            out.sort_unstable();
            prop_assert_eq!(out, (0..sizes.len()).collect::<Vec<_>>());
            prop_assert!(q.is_empty() && q.bytes() == 0);
        }

        #[test]
        fn backlogged_flows_get_equal_bytes(
            a in 1usize..1500, b in 1usize..1500, rounds in 10usize..200
        ) {
            let mut q = FlowQueues::new(16, 1500);
            for _ in 0..rounds * 4 {
                q.push(1, 1usize, a);
                q.push(2, 2usize, b);
            }
            let mut sent = [0usize; 3];
            for _ in 0..rounds {
                let p = q.pop().unwrap();
                sent[p.item] += p.bytes;
            }
            prop_assert!(sent[1].abs_diff(sent[2]) <= 1500 + a.max(b), "{:?}", sent);
        }
    }
}
