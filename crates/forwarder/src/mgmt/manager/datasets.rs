//! Status datasets: segmented, versioned, cached for follow-up segments.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{Component, Data, Interest};

use super::{CachedDataset, FwdOps, Manager, DATASET_CACHE, DATASET_TTL, REPLY_FRESHNESS};
use crate::mgmt::dataset::{
    self, FaceStatus, FibEntry, ForwarderStatus, RibEntryStatus, RouteRecord, StrategyChoiceStatus,
};
use crate::mgmt::face_query;
use crate::mgmt::face_state::FaceState;

impl Manager {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dataset(
        &mut self,
        now: Timestamp,
        ops: &mut dyn FwdOps,
        face: u64,
        interest: &Interest,
        module: &str,
        dataset: &str,
        base_len: usize,
    ) {
        let name = &interest.name;
        if name.len() > base_len {
            // A follow-up segment: /<request>/v=<n>/seg=<i>.
            let seg = name.get(base_len + 1).and_then(|c| c.as_segment());
            let versioned = name.prefix(base_len + 1);
            if let (Some(seg), Some(cached)) =
                (seg, self.datasets.iter().find(|d| d.prefix == versioned))
            {
                if let Some(data) = usize::try_from(seg)
                    .ok()
                    .and_then(|i| cached.segments.get(i))
                {
                    ops.send_reply(now, face, data.clone());
                }
            }
            return;
        }
        let payload = if (module, dataset) == face_query::DATASET {
            // A filter that does not decode gets no reply (NFD: 400).
            let Some(Ok(filter)) = name
                .get(4)
                .map(|c| face_query::FaceQueryFilter::decode(c.value().clone()))
            else {
                return;
            };
            let faces = ops.face_statuses();
            let hits: Vec<&FaceStatus> = faces.iter().filter(|f| filter.matches(f)).collect();
            dataset::encode_list(&hits, |f, out| f.encode_into(out))
        } else {
            self.build_dataset(now, ops, module, dataset)
        };
        let wall_ms = self.cfg.unix_epoch_offset_ms + now.as_nanos() / 1_000_000;
        let version = wall_ms.max(self.last_version + 1);
        self.last_version = version;
        let prefix = name.append(Component::version(version));
        let chunks = dataset::segment_payload(&payload, dataset::MAX_SEGMENT_CONTENT);
        let last = chunks.len() as u64 - 1;
        let segments: Vec<Bytes> = chunks
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let mut d = Data::new(prefix.append(Component::segment(i as u64)), c);
                d.meta.freshness_period = Some(REPLY_FRESHNESS);
                d.meta.final_block_id = Some(Component::segment(last));
                d.encode_signed_digest_sha256()
            })
            .collect();
        ops.send_reply(now, face, segments[0].clone());
        // Cached even when it is one segment: NDNts' list() discovers the
        // version with CanBePrefix, then fetches from segment 0 again by
        // exact name (NFD's SegmentPublisher serves every segment).
        if self.datasets.len() >= DATASET_CACHE {
            self.datasets.pop_front();
        }
        self.datasets.push_back(CachedDataset {
            prefix,
            segments,
            expires: now + DATASET_TTL,
        });
    }

    fn build_dataset(
        &self,
        now: Timestamp,
        ops: &dyn FwdOps,
        module: &str,
        dataset: &str,
    ) -> Bytes {
        match (module, dataset) {
            ("faces", "list") => {
                dataset::encode_list(&ops.face_statuses(), FaceStatus::encode_into)
            }
            crate::mgmt::face_state::DATASET => {
                let mut states = ops.face_states();
                for st in &mut states {
                    st.drops.extend(self.scope.face_counts(st.face_id));
                }
                dataset::encode_list(&states, FaceState::encode_into)
            }
            crate::mgmt::mcast_state::DATASET => ops.mcast_state().encode(),
            crate::mgmt::cs_info::DATASET => ops.cs_info().encode(),
            crate::mgmt::limits_state::DATASET => {
                let mut limits = ops.limits_state();
                limits.drops.extend(self.scope.total_counts());
                limits.encode()
            }
            ("fib", "list") => dataset::encode_list(&ops.fib_entries(), FibEntry::encode_into),
            ("strategy-choice", "list") => {
                dataset::encode_list(&ops.strategy_choices(), StrategyChoiceStatus::encode_into)
            }
            ("rib", "list") => {
                let entries: Vec<RibEntryStatus> = self
                    .rib
                    .entries()
                    .map(|(n, routes)| RibEntryStatus {
                        name: n.clone(),
                        routes: routes
                            .iter()
                            .map(|r| RouteRecord {
                                face_id: r.face,
                                origin: r.origin,
                                cost: r.cost,
                                flags: r.flags,
                                expiration_period_ms: r
                                    .expires
                                    .map(|t| (t - now).as_millis() as u64),
                            })
                            .collect(),
                    })
                    .collect();
                dataset::encode_list(&entries, RibEntryStatus::encode_into)
            }
            _ => {
                let g = ops.general_counters();
                let s = ForwarderStatus {
                    nfd_version: self.cfg.version.clone(),
                    start_timestamp_ms: self.cfg.unix_epoch_offset_ms,
                    current_timestamp_ms: self.cfg.unix_epoch_offset_ms
                        + now.as_nanos() / 1_000_000,
                    n_name_tree_entries: g.n_name_tree_entries,
                    n_fib_entries: g.n_fib_entries,
                    n_pit_entries: g.n_pit_entries,
                    n_measurements_entries: g.n_measurements_entries,
                    n_cs_entries: g.n_cs_entries,
                    counters: g.packets,
                    n_satisfied_interests: g.n_satisfied_interests,
                    n_unsatisfied_interests: g.n_unsatisfied_interests,
                };
                let mut b = bytes::BytesMut::with_capacity(128);
                s.encode_into(&mut b);
                b.freeze()
            }
        }
    }
}
