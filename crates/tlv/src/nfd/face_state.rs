//! The icnfwd-specific dataset `/localhost/nfd/faces/icnfwd-state`: per-face
//! state that NFD's FaceStatus has no field for (link capacity, egress queue
//! occupancy and sojourn time, frames, congestion marks, drops by reason,
//! the congestion control's current rates). Served like every
//! status dataset (versioned, segmented); NFD tools never ask for it.
//!
//! ```text
//! FaceState        = 128 TLV-LENGTH FaceId [CapacityBps] QueueInterests
//!                      QueueInterestBytes QueueData QueueDataBytes QueueFrames
//!                      NOutFrames NOutMarked *Drop [PrimaryRateBps]
//!                      [SecondaryRateBps] [TargetRateBps]
//!                      [SojournLastNs SojournP95Ns SojournMaxNs]
//!                      [CcFlows] [PenalisedFlows] [AqmMarks] [AqmEpisodes]
//!                      [AqmMarking] [CcEvictedInterests] *Stamp
//!                      *ClassCapacity [WincmUiw]
//! FaceId           = 105 NNI                  (as in FaceStatus)
//! CapacityBps      = 200 NNI                  (bit/s; absent = unpaced)
//! QueueInterests   = 201 NNI   QueueInterestBytes = 202 NNI
//! QueueData        = 203 NNI   QueueDataBytes     = 204 NNI
//! QueueFrames      = 205 NNI   (encoded fragments awaiting release)
//! NOutFrames       = 206 NNI   NOutMarked         = 207 NNI
//! Drop             = 208 TLV-LENGTH DropReason Count
//! DropReason       = 209 UTF-8 (kebab-case, e.g. "queue-full")
//! Count            = 210 NNI
//! PrimaryRateBps   = 211 NNI   (RCP R / MIRCC Rp this face stamps, bit/s)
//! SecondaryRateBps = 212 NNI   (MIRCC Rs)
//! TargetRateBps    = 213 NNI   (QSCCP best-effort class capacity / CCC
//!                               used bandwidth, eq. 12)
//! SojournLastNs    = 214 NNI   (queueing delay of the last packet to leave)
//! SojournP95Ns     = 215 NNI   (95th percentile since the face was created,
//!                               upper edge of its log2 bucket)
//! SojournMaxNs     = 216 NNI   (largest since the face was created)
//! CcFlows          = 217 NNI   (flows the QSCCP scheduler or CCC tracks on
//!                               the face; absent = none)
//! PenalisedFlows   = 218 NNI   (flows QSCCP judged greedy and discounted
//!                               so far; absent = none)
//! AqmMarks         = 219 NNI   (Data this face's AQM marked: PCON CoDel,
//!                               WinCM multi-marking; absent = none)
//! AqmEpisodes      = 220 NNI   (congestion episodes the AQM entered)
//! AqmMarking       = 221 NNI   (1: the AQM is marking now; absent = not)
//! CcEvictedInterests = 222 NNI (Interests the MIRCC shaper evicted for
//!                               primary ones and Nacked; absent = none)
//! Stamp            = 223 TLV-LENGTH StampField StampMin StampMax
//! StampField       = 224 UTF-8 (a CC header field the face sent in the
//!                               last one-second window: "pace-constraint"
//!                               and "pace-objective" in milli-Interests/s,
//!                               "target-rate" and "downstream-rate" in bit/s)
//! StampMin         = 225 NNI   StampMax = 226 NNI (its range over the flows)
//! ClassCapacity    = 227 TLV-LENGTH ServiceClass ClassBps
//! ServiceClass     = 228 NNI   (QSCCP class code: 0 CS7 .. 7 BE)
//! ClassBps         = 229 NNI   (the class's PECN capacity B_c on the face
//!                               in the last period, bit/s)
//! WincmUiw         = 230 TLV-LENGTH UiwEntries UiwUin UiwMin UiwMean UiwMax
//! UiwEntries       = 231 NNI   (WinCM (content, face) entries of the face)
//! UiwUin           = 232 NNI   (their unsatisfied Interests, summed)
//! UiwMin/Mean/Max  = 233/234/235 NNI (their UIW, in thousandths)
//! ```
//! Drops include link emulation's random loss (reason "emulated-loss").
//! Decoders skip unknown elements, so fields can be added.

use bytes::{Bytes, BytesMut};

use super::wire::{self, put_nested, put_nni, put_opt_nni, put_tlv, TlvReader};
use super::MgmtError;

/// The dataset's module and name under `/localhost/nfd`.
pub const DATASET: (&str, &str) = ("faces", "icnfwd-state");

const ITEM: u32 = 128;
const FACE_ID: u32 = 105;
const CAPACITY_BPS: u32 = 200;
const QUEUE_INTERESTS: u32 = 201;
const QUEUE_INTEREST_BYTES: u32 = 202;
const QUEUE_DATA: u32 = 203;
const QUEUE_DATA_BYTES: u32 = 204;
const QUEUE_FRAMES: u32 = 205;
const N_OUT_FRAMES: u32 = 206;
const N_OUT_MARKED: u32 = 207;
const DROP: u32 = 208;
const DROP_REASON: u32 = 209;
const COUNT: u32 = 210;
const PRIMARY_RATE_BPS: u32 = 211;
const SECONDARY_RATE_BPS: u32 = 212;
const TARGET_RATE_BPS: u32 = 213;
const SOJOURN_LAST_NS: u32 = 214;
const SOJOURN_P95_NS: u32 = 215;
const SOJOURN_MAX_NS: u32 = 216;
const CC_FLOWS: u32 = 217;
const PENALISED_FLOWS: u32 = 218;
const AQM_MARKS: u32 = 219;
const AQM_EPISODES: u32 = 220;
const AQM_MARKING: u32 = 221;
const CC_EVICTED_INTERESTS: u32 = 222;
const STAMP: u32 = 223;
const STAMP_FIELD: u32 = 224;
const STAMP_MIN: u32 = 225;
const STAMP_MAX: u32 = 226;
const CLASS_CAPACITY: u32 = 227;
const SERVICE_CLASS: u32 = 228;
const CLASS_BPS: u32 = 229;
const WINCM_UIW: u32 = 230;
const UIW_ENTRIES: u32 = 231;
const UIW_UIN: u32 = 232;
const UIW_MIN: u32 = 233;
const UIW_MEAN: u32 = 234;
const UIW_MAX: u32 = 235;

/// The range of one CC header field a face sent in the last window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CcStamp {
    /// "pace-constraint", "pace-objective" (milli-Interests/s),
    /// "target-rate", "downstream-rate" (bit/s).
    pub field: String,
    pub min: u64,
    pub max: u64,
}

/// One face's icnfwd-specific state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceState {
    pub face_id: u64,
    pub capacity_bps: Option<u64>,
    /// Interests waiting on the face: its FIFO plus those held by the
    /// congestion-control shaper or scheduler (MIRCC/RCP, QSCCP).
    pub queue_interests: u64,
    /// Bytes of the FIFO's Interests (the held ones are not counted).
    pub queue_interest_bytes: u64,
    pub queue_data: u64,
    pub queue_data_bytes: u64,
    pub queue_frames: u64,
    pub n_out_frames: u64,
    pub n_out_marked: u64,
    /// (reason, count), non-zero counts only.
    pub drops: Vec<(String, u64)>,
    /// Rate the face stamps into returning Data (RCP R, MIRCC Rp), bit/s.
    pub primary_rate_bps: Option<u64>,
    /// MIRCC secondary rate Rs, bit/s.
    pub secondary_rate_bps: Option<u64>,
    /// QSCCP best-effort class capacity / CCC used bandwidth, bit/s.
    pub target_rate_bps: Option<u64>,
    /// Queueing delay of the packets that left the face (both queues):
    /// the last one's, the 95th percentile and the largest, ns. `None`
    /// until a packet has left.
    pub sojourn_last_ns: Option<u64>,
    pub sojourn_p95_ns: Option<u64>,
    pub sojourn_max_ns: Option<u64>,
    /// Flows the face's scheme tracks (QSCCP scheduler, CCC).
    pub cc_flows: u64,
    /// Flows QSCCP judged greedy and discounted so far.
    pub penalised_flows: u64,
    /// Data the face's AQM (PCON CoDel, WinCM multi-marking) marked; unlike
    /// `n_out_marked` this excludes marks that came from upstream.
    pub aqm_marks: u64,
    /// Congestion episodes the AQM entered.
    pub aqm_episodes: u64,
    /// True while the AQM is marking.
    pub aqm_marking: bool,
    /// Interests the MIRCC shaper evicted (and Nacked) for primary ones.
    pub cc_evicted_interests: u64,
    /// CC header fields the face sent in the last one-second window.
    pub stamps: Vec<CcStamp>,
    /// QSCCP: (class code, PECN class capacity B_c in bit/s), empty when
    /// the face runs no QSCCP scheduler.
    pub class_capacities: Vec<(u64, u64)>,
    /// WinCM: the face's UIN/UIW entries summarised, absent when none.
    pub uiw: Option<UiwState>,
}

/// WinCM's UIW entries of a face on the wire (UIW in thousandths).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UiwState {
    pub entries: u64,
    pub uin: u64,
    pub min_milli: u64,
    pub mean_milli: u64,
    pub max_milli: u64,
}

impl FaceState {
    pub fn encode_into(&self, out: &mut BytesMut) {
        let mut b = BytesMut::with_capacity(64 + 16 * self.drops.len());
        put_nni(&mut b, FACE_ID, self.face_id);
        put_opt_nni(&mut b, CAPACITY_BPS, self.capacity_bps);
        put_nni(&mut b, QUEUE_INTERESTS, self.queue_interests);
        put_nni(&mut b, QUEUE_INTEREST_BYTES, self.queue_interest_bytes);
        put_nni(&mut b, QUEUE_DATA, self.queue_data);
        put_nni(&mut b, QUEUE_DATA_BYTES, self.queue_data_bytes);
        put_nni(&mut b, QUEUE_FRAMES, self.queue_frames);
        put_nni(&mut b, N_OUT_FRAMES, self.n_out_frames);
        put_nni(&mut b, N_OUT_MARKED, self.n_out_marked);
        for (reason, count) in &self.drops {
            let mut d = BytesMut::with_capacity(reason.len() + 12);
            put_tlv(&mut d, DROP_REASON, reason.as_bytes());
            put_nni(&mut d, COUNT, *count);
            put_nested(&mut b, DROP, &d);
        }
        put_opt_nni(&mut b, PRIMARY_RATE_BPS, self.primary_rate_bps);
        put_opt_nni(&mut b, SECONDARY_RATE_BPS, self.secondary_rate_bps);
        put_opt_nni(&mut b, TARGET_RATE_BPS, self.target_rate_bps);
        put_opt_nni(&mut b, SOJOURN_LAST_NS, self.sojourn_last_ns);
        put_opt_nni(&mut b, SOJOURN_P95_NS, self.sojourn_p95_ns);
        put_opt_nni(&mut b, SOJOURN_MAX_NS, self.sojourn_max_ns);
        put_opt_nni(&mut b, CC_FLOWS, Some(self.cc_flows).filter(|&n| n > 0));
        put_opt_nni(
            &mut b,
            PENALISED_FLOWS,
            Some(self.penalised_flows).filter(|&n| n > 0),
        );
        let nonzero = |n: u64| Some(n).filter(|&n| n > 0);
        put_opt_nni(&mut b, AQM_MARKS, nonzero(self.aqm_marks));
        put_opt_nni(&mut b, AQM_EPISODES, nonzero(self.aqm_episodes));
        put_opt_nni(&mut b, AQM_MARKING, self.aqm_marking.then_some(1));
        put_opt_nni(
            &mut b,
            CC_EVICTED_INTERESTS,
            nonzero(self.cc_evicted_interests),
        );
        for s in &self.stamps {
            let mut d = BytesMut::with_capacity(s.field.len() + 24);
            put_tlv(&mut d, STAMP_FIELD, s.field.as_bytes());
            put_nni(&mut d, STAMP_MIN, s.min);
            put_nni(&mut d, STAMP_MAX, s.max);
            put_nested(&mut b, STAMP, &d);
        }
        for (class, bps) in &self.class_capacities {
            let mut d = BytesMut::with_capacity(16);
            put_nni(&mut d, SERVICE_CLASS, *class);
            put_nni(&mut d, CLASS_BPS, *bps);
            put_nested(&mut b, CLASS_CAPACITY, &d);
        }
        if let Some(u) = &self.uiw {
            let mut d = BytesMut::with_capacity(40);
            put_nni(&mut d, UIW_ENTRIES, u.entries);
            put_nni(&mut d, UIW_UIN, u.uin);
            put_nni(&mut d, UIW_MIN, u.min_milli);
            put_nni(&mut d, UIW_MEAN, u.mean_milli);
            put_nni(&mut d, UIW_MAX, u.max_milli);
            put_nested(&mut b, WINCM_UIW, &d);
        }
        put_nested(out, ITEM, &b);
    }

    /// Decodes the TLV-VALUE of one item.
    pub fn decode_value(v: Bytes) -> Result<Self, MgmtError> {
        let mut s = FaceState::default();
        let mut face = None;
        let mut r = TlvReader::new(v);
        while let Some((t, v)) = r.next_element()? {
            match t {
                FACE_ID => face = Some(wire::nni(&v)?),
                CAPACITY_BPS => s.capacity_bps = Some(wire::nni(&v)?),
                QUEUE_INTERESTS => s.queue_interests = wire::nni(&v)?,
                QUEUE_INTEREST_BYTES => s.queue_interest_bytes = wire::nni(&v)?,
                QUEUE_DATA => s.queue_data = wire::nni(&v)?,
                QUEUE_DATA_BYTES => s.queue_data_bytes = wire::nni(&v)?,
                QUEUE_FRAMES => s.queue_frames = wire::nni(&v)?,
                N_OUT_FRAMES => s.n_out_frames = wire::nni(&v)?,
                N_OUT_MARKED => s.n_out_marked = wire::nni(&v)?,
                PRIMARY_RATE_BPS => s.primary_rate_bps = Some(wire::nni(&v)?),
                SECONDARY_RATE_BPS => s.secondary_rate_bps = Some(wire::nni(&v)?),
                TARGET_RATE_BPS => s.target_rate_bps = Some(wire::nni(&v)?),
                SOJOURN_LAST_NS => s.sojourn_last_ns = Some(wire::nni(&v)?),
                SOJOURN_P95_NS => s.sojourn_p95_ns = Some(wire::nni(&v)?),
                SOJOURN_MAX_NS => s.sojourn_max_ns = Some(wire::nni(&v)?),
                CC_FLOWS => s.cc_flows = wire::nni(&v)?,
                PENALISED_FLOWS => s.penalised_flows = wire::nni(&v)?,
                AQM_MARKS => s.aqm_marks = wire::nni(&v)?,
                AQM_EPISODES => s.aqm_episodes = wire::nni(&v)?,
                AQM_MARKING => s.aqm_marking = wire::nni(&v)? != 0,
                CC_EVICTED_INTERESTS => s.cc_evicted_interests = wire::nni(&v)?,
                STAMP => {
                    let mut st = CcStamp::default();
                    let mut field = None;
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            STAMP_FIELD => field = Some(wire::utf8(&v)?),
                            STAMP_MIN => st.min = wire::nni(&v)?,
                            STAMP_MAX => st.max = wire::nni(&v)?,
                            _ => {}
                        }
                    }
                    st.field = field.ok_or(MgmtError::Missing("StampField"))?;
                    s.stamps.push(st);
                }
                CLASS_CAPACITY => {
                    let (mut class, mut bps) = (None, 0);
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            SERVICE_CLASS => class = Some(wire::nni(&v)?),
                            CLASS_BPS => bps = wire::nni(&v)?,
                            _ => {}
                        }
                    }
                    let class = class.ok_or(MgmtError::Missing("ServiceClass"))?;
                    s.class_capacities.push((class, bps));
                }
                WINCM_UIW => {
                    let mut u = UiwState::default();
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            UIW_ENTRIES => u.entries = wire::nni(&v)?,
                            UIW_UIN => u.uin = wire::nni(&v)?,
                            UIW_MIN => u.min_milli = wire::nni(&v)?,
                            UIW_MEAN => u.mean_milli = wire::nni(&v)?,
                            UIW_MAX => u.max_milli = wire::nni(&v)?,
                            _ => {}
                        }
                    }
                    s.uiw = Some(u);
                }
                DROP => {
                    let (mut reason, mut count) = (None, 0);
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            DROP_REASON => reason = Some(wire::utf8(&v)?),
                            COUNT => count = wire::nni(&v)?,
                            _ => {}
                        }
                    }
                    s.drops
                        .push((reason.ok_or(MgmtError::Missing("DropReason"))?, count));
                }
                _ => {}
            }
        }
        s.face_id = face.ok_or(MgmtError::Missing("FaceId"))?;
        Ok(s)
    }

    /// Packets waiting on the face (Interests, Data/Nacks, ready frames).
    pub fn queued_packets(&self) -> u64 {
        self.queue_interests + self.queue_data + self.queue_frames
    }

    /// Sum of the drop counters.
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().map(|(_, c)| c).sum()
    }

    /// The stamp of `field` sent in the last window, if any.
    pub fn stamp(&self, field: &str) -> Option<&CcStamp> {
        self.stamps.iter().find(|s| s.field == field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nfd::dataset::{encode_list, items};
    use proptest::prelude::*;

    fn arb_state() -> impl Strategy<Value = FaceState> {
        (
            any::<u64>(),
            proptest::option::of(any::<u64>()),
            proptest::array::uniform7(any::<u64>()),
            proptest::collection::vec(("[a-z-]{1,20}", any::<u64>()), 0..5),
            proptest::array::uniform3(proptest::option::of(any::<u64>())),
            proptest::array::uniform3(proptest::option::of(any::<u64>())),
            proptest::array::uniform2(any::<u64>()),
            (
                proptest::array::uniform3(any::<u64>()),
                any::<bool>(),
                proptest::collection::vec(("[a-z-]{1,20}", any::<u64>(), any::<u64>()), 0..4),
                proptest::collection::vec((0u64..8, any::<u64>()), 0..8),
                proptest::option::of(proptest::array::uniform5(any::<u64>())),
            ),
        )
            .prop_map(|(face_id, capacity_bps, q, drops, rates, sj, flows, cc)| {
                FaceState {
                    face_id,
                    capacity_bps,
                    queue_interests: q[0],
                    queue_interest_bytes: q[1],
                    queue_data: q[2],
                    queue_data_bytes: q[3],
                    queue_frames: q[4],
                    n_out_frames: q[5],
                    n_out_marked: q[6],
                    drops,
                    primary_rate_bps: rates[0],
                    secondary_rate_bps: rates[1],
                    target_rate_bps: rates[2],
                    sojourn_last_ns: sj[0],
                    sojourn_p95_ns: sj[1],
                    sojourn_max_ns: sj[2],
                    cc_flows: flows[0],
                    penalised_flows: flows[1],
                    aqm_marks: cc.0[0],
                    aqm_episodes: cc.0[1],
                    aqm_marking: cc.1,
                    cc_evicted_interests: cc.0[2],
                    stamps: cc
                        .2
                        .into_iter()
                        .map(|(field, min, max)| CcStamp { field, min, max })
                        .collect(),
                    class_capacities: cc.3,
                    uiw: cc.4.map(|u| UiwState {
                        entries: u[0],
                        uin: u[1],
                        min_milli: u[2],
                        mean_milli: u[3],
                        max_milli: u[4],
                    }),
                }
            })
    }

    proptest! {
        #[test]
        fn roundtrip(list in proptest::collection::vec(arb_state(), 0..6)) {
            let payload = encode_list(&list, FaceState::encode_into);
            let back: Vec<FaceState> = items(payload)
                .unwrap()
                .into_iter()
                .map(|v| FaceState::decode_value(v).unwrap())
                .collect();
            prop_assert_eq!(back, list);
        }
    }

    #[test]
    fn unknown_fields_are_skipped_and_face_id_required() {
        let mut v = BytesMut::new();
        put_nni(&mut v, FACE_ID, 300);
        put_nni(&mut v, 250, 9);
        put_nni(&mut v, QUEUE_DATA, 4);
        let s = FaceState::decode_value(v.freeze()).unwrap();
        assert_eq!((s.face_id, s.queue_data), (300, 4));
        let mut v = BytesMut::new();
        put_nni(&mut v, QUEUE_DATA, 4);
        assert_eq!(
            FaceState::decode_value(v.freeze()),
            Err(MgmtError::Missing("FaceId"))
        );
    }
}
