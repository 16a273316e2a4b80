//! Congestion-control header fields, carried as ignorable NDNLPv2 header
//! fields (800..=959, two low bits zero) so that forwarders rewrite them hop
//! by hop without touching the signed network packet, and forwarders that do
//! not know them skip them. Numbers and units: `crates/tlv/README.md`.

use bytes::Bytes;
use ndn_tlv::{NonNegativeInteger, Tlv, TlvDecode, TlvEncode};

use crate::element::Elements;
use crate::error::{Result, TlvError};
use crate::name::Name;
use crate::types;
use crate::varnum::read_nni;

/// MIRCC traffic class of an Interest: cc-core's enum is the one
/// definition; its `code`/`from_code` are the wire codes (0, 1).
pub use cc_core::mircc::TrafficClass;
/// QSCCP service class: cc-core's enum is the one definition; its
/// `from_wire`/`to_wire` are the wire rule (0..=7 CS7..BE, +8 penalised).
pub use cc_core::qsccp::ServiceClass;

/// Milli-units per unit of a pace on the wire (CCC paces travel as
/// milli-Interests per second, docs/algorithms.md §3.3).
const MILLI: f64 = 1000.0;

/// The one rate/pace encoding rule: a non-negative `f64` becomes the nearest
/// NonNegativeInteger (`f64::round`, halves away from zero), saturating at
/// `u64::MAX`. "Unbounded" (`+∞`) is `u64::MAX`, the largest representable
/// value, so it never binds a receiver that takes a minimum; NaN and values
/// ≤ 0 are 0.
fn to_wire(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.round() as u64
    }
}

/// A CCC pace (Interests/s) as its wire value, milli-Interests/s, by the
/// rule of [`rate_to_wire`]: `ips_to_wire(1.5) == 1500`, `+∞ → u64::MAX`.
pub fn ips_to_wire(ips: f64) -> u64 {
    to_wire(ips * MILLI)
}

/// Inverse of [`ips_to_wire`]. `u64::MAX` decodes to about 1.8e16
/// Interests/s: finite, so laws that treat non-finite input as 0 still read
/// it as "no limit".
pub fn ips_from_wire(milli_ips: u64) -> f64 {
    milli_ips as f64 / MILLI
}

/// A rate (bit/s) as its wire value, by the same rule as [`ips_to_wire`]:
/// rounded to the nearest bit/s, `+∞ → u64::MAX`, NaN/negative → 0.
pub fn rate_to_wire(bps: f64) -> u64 {
    to_wire(bps)
}

/// Inverse of [`rate_to_wire`].
pub fn rate_from_wire(bps: u64) -> f64 {
    bps as f64
}

/// The congestion-control header fields of one LpPacket. All optional;
/// `Default` is "none present".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CcFields {
    /// MIRCC/RCP primary stamping rate, bit/s (Data, Nack).
    pub primary_rate_bps: Option<u64>,
    /// MIRCC secondary stamping rate, bit/s (Data, Nack).
    pub secondary_rate_bps: Option<u64>,
    /// MIRCC path id (Data).
    pub path_id: Option<u64>,
    /// MIRCC steering hint (Interest; reflected on Data).
    pub steering_hint: Option<u64>,
    /// MIRCC traffic class (Interest).
    pub traffic_class: Option<TrafficClass>,
    /// CCC pace objective, milli-Interests per second (Interest).
    pub pace_objective_milli_ips: Option<u64>,
    /// CCC pace constraint, milli-Interests per second (Data).
    pub pace_constraint_milli_ips: Option<u64>,
    /// CCC/QSCCP Data size of the flow, bytes (Interest, Data).
    pub flow_data_size_bytes: Option<u64>,
    /// QSCCP service class (Interest, Data echo).
    pub service_class: Option<ServiceClass>,
    /// QSCCP "penalised downstream" flag, carried as class code + 8; only
    /// encoded together with `service_class`.
    pub service_penalised: bool,
    /// QSCCP downstream bottleneck rate, bit/s (Interest).
    pub downstream_rate_bps: Option<u64>,
    /// QSCCP target rate, bit/s (Data).
    pub target_rate_bps: Option<u64>,
}

impl CcFields {
    /// No field present (`Default`), usable in `const` and `static` items.
    pub const NONE: CcFields = CcFields {
        primary_rate_bps: None,
        secondary_rate_bps: None,
        path_id: None,
        steering_hint: None,
        traffic_class: None,
        pace_objective_milli_ips: None,
        pace_constraint_milli_ips: None,
        flow_data_size_bytes: None,
        service_class: None,
        service_penalised: false,
        downstream_rate_bps: None,
        target_rate_bps: None,
    };

    /// Whether no field is present.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.primary_rate_bps.is_none()
            && self.secondary_rate_bps.is_none()
            && self.path_id.is_none()
            && self.steering_hint.is_none()
            && self.traffic_class.is_none()
            && self.pace_objective_milli_ips.is_none()
            && self.pace_constraint_milli_ips.is_none()
            && self.flow_data_size_bytes.is_none()
            && self.service_class.is_none()
            && self.downstream_rate_bps.is_none()
            && self.target_rate_bps.is_none()
    }

    /// The fields as `(TLV-TYPE, NNI value)` in ascending type order.
    pub(crate) fn nni_fields(&self) -> [(u32, Option<u64>); 11] {
        [
            (types::CC_PRIMARY_RATE, self.primary_rate_bps),
            (types::CC_SECONDARY_RATE, self.secondary_rate_bps),
            (types::CC_PATH_ID, self.path_id),
            (types::CC_STEERING_HINT, self.steering_hint),
            (
                types::CC_TRAFFIC_CLASS,
                self.traffic_class.map(TrafficClass::code),
            ),
            (types::CC_PACE_OBJECTIVE, self.pace_objective_milli_ips),
            (types::CC_PACE_CONSTRAINT, self.pace_constraint_milli_ips),
            (types::CC_FLOW_DATA_SIZE, self.flow_data_size_bytes),
            (
                types::CC_SERVICE_CLASS,
                self.service_class
                    .map(|c| c.to_wire(self.service_penalised)),
            ),
            (types::CC_DOWNSTREAM_RATE, self.downstream_rate_bps),
            (types::CC_TARGET_RATE, self.target_rate_bps),
        ]
    }

    /// Decodes one header field if it is a CC field; `Ok(false)` if the type
    /// is not one of ours.
    pub(crate) fn decode_field(&mut self, typ: u32, value: &[u8]) -> Result<bool> {
        let slot = match typ {
            types::CC_PRIMARY_RATE => &mut self.primary_rate_bps,
            types::CC_SECONDARY_RATE => &mut self.secondary_rate_bps,
            types::CC_PATH_ID => &mut self.path_id,
            types::CC_STEERING_HINT => &mut self.steering_hint,
            types::CC_PACE_OBJECTIVE => &mut self.pace_objective_milli_ips,
            types::CC_PACE_CONSTRAINT => &mut self.pace_constraint_milli_ips,
            types::CC_FLOW_DATA_SIZE => &mut self.flow_data_size_bytes,
            types::CC_DOWNSTREAM_RATE => &mut self.downstream_rate_bps,
            types::CC_TARGET_RATE => &mut self.target_rate_bps,
            types::CC_TRAFFIC_CLASS => {
                let c = read_nni(value, typ)?;
                self.traffic_class =
                    Some(TrafficClass::from_code(c).ok_or(TlvError::InvalidValue(typ))?);
                return Ok(true);
            }
            types::CC_SERVICE_CLASS => {
                let c = read_nni(value, typ)?;
                let (class, penalised) =
                    ServiceClass::from_wire(c).ok_or(TlvError::InvalidValue(typ))?;
                self.service_class = Some(class);
                self.service_penalised = penalised;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        *slot = Some(read_nni(value, typ)?);
        Ok(true)
    }
}

/// Parts per million of a full queue (1_000_000 = full).
pub const PPM_FULL: u32 = 1_000_000;

/// SRMCC MCC feedback, sent receiver -> source hop by hop as an LpPacket
/// without Fragment (forwarders that do not know it see an IDLE packet).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MccFeedback {
    /// Multicast group (GUMGID) as a name.
    pub group: Name,
    /// Largest averaged queue occupancy on the tree below, ppm of capacity.
    pub max_occupancy_ppm: u32,
    /// Smallest averaged queue occupancy on the tree below, ppm of capacity.
    pub min_occupancy_ppm: u32,
    /// Smallest fair-share rate on the tree below, bit/s.
    pub min_fair_share_bps: u64,
}

// Cold path (a few messages per second per group): the value is described
// with ndn-tlv's derive rather than hand-written code.
#[derive(Tlv)]
#[tlv(129)]
struct MaxOccupancy(NonNegativeInteger);
#[derive(Tlv)]
#[tlv(131)]
struct MinOccupancy(NonNegativeInteger);
#[derive(Tlv)]
#[tlv(133)]
struct MinFairShareRate(NonNegativeInteger);
#[derive(Tlv)]
#[tlv(944)]
struct MccWire {
    group: Name,
    max: MaxOccupancy,
    min: MinOccupancy,
    fair: MinFairShareRate,
}

/// Checks that `buf` is a well-formed sequence of TLVs, recursively one level
/// (the MCC value's children). ndn-tlv's `find_tlv` advances by a length it
/// does not bound-check, so input is validated before it is handed over.
fn well_formed(buf: &[u8]) -> Result<()> {
    for e in Elements::new(buf) {
        e?;
    }
    Ok(())
}

impl MccFeedback {
    /// The whole header field TLV (type [`types::CC_MCC_FEEDBACK`]).
    pub fn encode(&self) -> Bytes {
        MccWire {
            group: self.group.clone(),
            max: MaxOccupancy(NonNegativeInteger::new(u64::from(self.max_occupancy_ppm))),
            min: MinOccupancy(NonNegativeInteger::new(u64::from(self.min_occupancy_ppm))),
            fair: MinFairShareRate(NonNegativeInteger::new(self.min_fair_share_bps)),
        }
        .encode()
    }

    /// Decodes the whole header field TLV.
    ///
    /// # Errors
    /// [`TlvError::InvalidValue`] for a malformed value or an occupancy above
    /// 1_000_000 ppm.
    pub fn decode(tlv: &Bytes) -> Result<MccFeedback> {
        const T: u32 = types::CC_MCC_FEEDBACK;
        let outer = crate::element::Element::parse_typed(tlv, T)?;
        well_formed(outer.value())?;
        let w = MccWire::decode(&mut tlv.clone()).map_err(|_| TlvError::InvalidValue(T))?;
        let ppm = |n: NonNegativeInteger| {
            u32::try_from(n.as_u64())
                .ok()
                .filter(|&v| v <= PPM_FULL)
                .ok_or(TlvError::InvalidValue(T))
        };
        Ok(MccFeedback {
            group: w.group,
            max_occupancy_ppm: ppm(w.max.0)?,
            min_occupancy_ppm: ppm(w.min.0)?,
            min_fair_share_bps: w.fair.0.as_u64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derive_numbers_match_constants() {
        assert_eq!(MaxOccupancy::TYP, types::MCC_MAX_OCCUPANCY as usize);
        assert_eq!(MinOccupancy::TYP, types::MCC_MIN_OCCUPANCY as usize);
        assert_eq!(
            MinFairShareRate::TYP,
            types::MCC_MIN_FAIR_SHARE_RATE as usize
        );
        assert_eq!(MccWire::TYP, types::CC_MCC_FEEDBACK as usize);
    }

    #[test]
    fn mcc_wire_layout() {
        let m = MccFeedback {
            group: "/g".parse().unwrap(),
            max_occupancy_ppm: 1000,
            min_occupancy_ppm: 0,
            min_fair_share_bps: 10_000_000,
        };
        let w = m.encode();
        // type 944 = fd 03 b0; Name /g; 129 -> 81 (1 octet, < 253).
        assert_eq!(&w[..3], &[0xFD, 0x03, 0xB0]);
        assert_eq!(&w[4..9], &[0x07, 0x03, 0x08, 0x01, b'g']);
        assert_eq!(&w[9..13], &[0x81, 0x02, 0x03, 0xE8]);
        assert_eq!(MccFeedback::decode(&w).unwrap(), m);
    }

    #[test]
    fn mcc_rejects_garbage_without_panic() {
        // A child whose length runs past the end would make ndn-tlv's find_tlv panic.
        let bad = Bytes::from_static(&[0xFD, 0x03, 0xB0, 0x04, 0x07, 0x00, 0x90, 0x7F]);
        assert!(MccFeedback::decode(&bad).is_err());
        let over = MccFeedback {
            group: Name::root(),
            max_occupancy_ppm: PPM_FULL + 1,
            min_occupancy_ppm: 0,
            min_fair_share_bps: 1,
        };
        assert_eq!(
            MccFeedback::decode(&over.encode()),
            Err(TlvError::InvalidValue(types::CC_MCC_FEEDBACK))
        );
    }

    #[test]
    fn rate_rule_rounds_and_saturates() {
        assert_eq!(ips_to_wire(1.5), 1500);
        assert_eq!(ips_to_wire(0.0015), 2); // 1.5 milli rounds away from zero
        assert_eq!(ips_to_wire(0.0014), 1);
        assert_eq!(ips_to_wire(f64::INFINITY), u64::MAX);
        assert_eq!(ips_to_wire(1e300), u64::MAX);
        assert_eq!(ips_to_wire(f64::NAN), 0);
        assert_eq!(ips_to_wire(-3.0), 0);
        assert_eq!(ips_to_wire(f64::NEG_INFINITY), 0);
        assert_eq!(ips_from_wire(2500), 2.5);
        assert_eq!(rate_to_wire(999.5), 1000);
        assert_eq!(rate_to_wire(999.49), 999);
        assert_eq!(rate_to_wire(f64::INFINITY), u64::MAX);
        assert_eq!(rate_from_wire(8_000_000), 8e6);
        // "Unbounded" decodes finite and larger than any real pace.
        let unbounded = ips_from_wire(ips_to_wire(f64::INFINITY));
        assert!(unbounded.is_finite() && unbounded > 1e15);
    }

    proptest::proptest! {
        #[test]
        fn wire_round_trip_is_identity(milli in 0u64..(1u64 << 42)) {
            // /1000 then *1000 errs by a few ulps; below 2^42 (4.4e9
            // Interests/s, far above any link) an ulp is under 2^-10, so
            // rounding restores the integer. Near 2^52 it no longer does.
            proptest::prop_assert_eq!(ips_to_wire(ips_from_wire(milli)), milli);
        }

        #[test]
        fn rate_wire_round_trip_is_identity(bps in 0u64..(1u64 << 53)) {
            // Integers below 2^53 are exact in f64.
            proptest::prop_assert_eq!(rate_to_wire(rate_from_wire(bps)), bps);
        }

        #[test]
        fn rate_error_at_most_half_a_unit(ips in 0.0f64..1e9) {
            let back = ips_from_wire(ips_to_wire(ips));
            proptest::prop_assert!((back - ips).abs() <= 0.0005 + ips * 1e-15);
        }
    }

    #[test]
    fn service_class_codes() {
        let mut f = CcFields::default();
        assert!(f.decode_field(types::CC_SERVICE_CLASS, &[10]).unwrap());
        assert_eq!(
            (f.service_class, f.service_penalised),
            (Some(ServiceClass::Ef), true)
        );
        assert!(f.decode_field(types::CC_SERVICE_CLASS, &[16]).is_err());
        assert!(f.decode_field(types::CC_TRAFFIC_CLASS, &[2]).is_err());
        assert!(!f.decode_field(952, &[1]).unwrap());
    }
}
