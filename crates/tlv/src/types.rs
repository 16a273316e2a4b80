//! TLV-TYPE numbers: NDN packet format v0.3, NDNLPv2, and this project's
//! congestion-control header fields.
//!
//! Numbers for NDN and NDNLPv2 come from the NDN packet specification
//! (`types.rst`) and ndn-cxx `lp/tlv.hpp`. The congestion-control numbers
//! (`CC_*`, `MCC_*`) are this project's choice; `crates/tlv/README.md`
//! documents each one.

/// Interest packet.
pub const INTEREST: u32 = 5;
/// Data packet.
pub const DATA: u32 = 6;
/// Name.
pub const NAME: u32 = 7;

/// ImplicitSha256DigestComponent.
pub const IMPLICIT_SHA256_DIGEST: u32 = 1;
/// ParametersSha256DigestComponent.
pub const PARAMETERS_SHA256_DIGEST: u32 = 2;
/// GenericNameComponent.
pub const GENERIC_COMPONENT: u32 = 8;
/// KeywordNameComponent.
pub const KEYWORD_COMPONENT: u32 = 32;
/// SegmentNameComponent.
pub const SEGMENT_COMPONENT: u32 = 50;
/// ByteOffsetNameComponent.
pub const BYTE_OFFSET_COMPONENT: u32 = 52;
/// VersionNameComponent.
pub const VERSION_COMPONENT: u32 = 54;
/// TimestampNameComponent (microseconds since the Unix epoch).
pub const TIMESTAMP_COMPONENT: u32 = 56;
/// SequenceNumNameComponent.
pub const SEQUENCE_NUM_COMPONENT: u32 = 58;

/// CanBePrefix (empty).
pub const CAN_BE_PREFIX: u32 = 33;
/// MustBeFresh (empty).
pub const MUST_BE_FRESH: u32 = 18;
/// ForwardingHint (`1*Name`).
pub const FORWARDING_HINT: u32 = 30;
/// Nonce (exactly 4 octets).
pub const NONCE: u32 = 10;
/// InterestLifetime (NNI milliseconds).
pub const INTEREST_LIFETIME: u32 = 12;
/// HopLimit (exactly 1 octet).
pub const HOP_LIMIT: u32 = 34;
/// ApplicationParameters.
pub const APPLICATION_PARAMETERS: u32 = 36;
/// InterestSignatureInfo.
pub const INTEREST_SIGNATURE_INFO: u32 = 44;
/// InterestSignatureValue.
pub const INTEREST_SIGNATURE_VALUE: u32 = 46;

/// MetaInfo.
pub const META_INFO: u32 = 20;
/// Content.
pub const CONTENT: u32 = 21;
/// SignatureInfo.
pub const SIGNATURE_INFO: u32 = 22;
/// SignatureValue.
pub const SIGNATURE_VALUE: u32 = 23;
/// ContentType (NNI).
pub const CONTENT_TYPE: u32 = 24;
/// FreshnessPeriod (NNI milliseconds).
pub const FRESHNESS_PERIOD: u32 = 25;
/// FinalBlockId (one NameComponent TLV).
pub const FINAL_BLOCK_ID: u32 = 26;
/// SignatureType (NNI).
pub const SIGNATURE_TYPE: u32 = 27;
/// KeyLocator.
pub const KEY_LOCATOR: u32 = 28;

/// SignatureType value of DigestSha256.
pub const SIGNATURE_DIGEST_SHA256: u64 = 0;

/// NDNLPv2 LpPacket.
pub const LP_PACKET: u32 = 100;
/// LP Fragment (always last).
pub const LP_FRAGMENT: u32 = 80;
/// LP Sequence (exactly 8 octets).
pub const LP_SEQUENCE: u32 = 81;
/// LP FragIndex (NNI).
pub const LP_FRAG_INDEX: u32 = 82;
/// LP FragCount (NNI).
pub const LP_FRAG_COUNT: u32 = 83;
/// LP PitToken (1-32 octets).
pub const LP_PIT_TOKEN: u32 = 98;
/// LP Nack.
pub const LP_NACK: u32 = 800;
/// LP NackReason (nested in Nack).
pub const LP_NACK_REASON: u32 = 801;
/// LP IncomingFaceId (812 since ndn-cxx 0.8.0; 817 before).
pub const LP_INCOMING_FACE_ID: u32 = 812;
/// LP NextHopFaceId.
pub const LP_NEXT_HOP_FACE_ID: u32 = 816;
/// LP CachePolicy.
pub const LP_CACHE_POLICY: u32 = 820;
/// LP CachePolicyType (nested in CachePolicy); 1 = NoCache.
pub const LP_CACHE_POLICY_TYPE: u32 = 821;
/// LP CongestionMark (NNI; 0 = not marked).
pub const LP_CONGESTION_MARK: u32 = 832;
/// LP Ack (reliability; recognised and skipped).
pub const LP_ACK: u32 = 836;
/// LP TxSequence (reliability; recognised and skipped).
pub const LP_TX_SEQUENCE: u32 = 840;
/// LP NonDiscovery (empty).
pub const LP_NON_DISCOVERY: u32 = 844;
/// LP PrefixAnnouncement (recognised and skipped).
pub const LP_PREFIX_ANNOUNCEMENT: u32 = 848;

/// MIRCC primary stamping rate, bit/s (Data, Nack).
pub const CC_PRIMARY_RATE: u32 = 900;
/// MIRCC secondary stamping rate, bit/s (Data, Nack).
pub const CC_SECONDARY_RATE: u32 = 904;
/// MIRCC path id (Data).
pub const CC_PATH_ID: u32 = 908;
/// MIRCC steering hint (Interest; reflected on Data).
pub const CC_STEERING_HINT: u32 = 912;
/// MIRCC traffic class, 0 = primary, 1 = secondary (Interest).
pub const CC_TRAFFIC_CLASS: u32 = 916;
/// CCC pace objective, milli-Interests/s (Interest).
pub const CC_PACE_OBJECTIVE: u32 = 920;
/// CCC pace constraint, milli-Interests/s (Data).
pub const CC_PACE_CONSTRAINT: u32 = 924;
/// CCC/QSCCP flow Data size, bytes (Interest, Data).
pub const CC_FLOW_DATA_SIZE: u32 = 928;
/// QSCCP service class 0..=7 (+8 = penalised) (Interest, Data).
pub const CC_SERVICE_CLASS: u32 = 932;
/// QSCCP downstream rate, bit/s (Interest).
pub const CC_DOWNSTREAM_RATE: u32 = 936;
/// QSCCP target rate, bit/s (Data).
pub const CC_TARGET_RATE: u32 = 940;
/// SRMCC MCC feedback message (LpPacket without Fragment).
pub const CC_MCC_FEEDBACK: u32 = 944;

/// MCC feedback: maximum queue occupancy, parts per million (nested).
pub const MCC_MAX_OCCUPANCY: u32 = 129;
/// MCC feedback: minimum queue occupancy, parts per million (nested).
pub const MCC_MIN_OCCUPANCY: u32 = 131;
/// MCC feedback: minimum fair-share rate, bit/s (nested).
pub const MCC_MIN_FAIR_SHARE_RATE: u32 = 133;

/// Largest NDN packet NFD and ndn-cxx accept (octets).
pub const MAX_NDN_PACKET_SIZE: usize = 8800;

/// Evolvability rule of the packet format: types up to 31 and odd types are
/// critical (an unrecognized one aborts decoding).
#[inline]
pub const fn is_critical(typ: u32) -> bool {
    typ <= 31 || typ & 1 == 1
}

/// NDNLPv2 rule: an unrecognized header field may be skipped only when it is
/// in 800..=959 and its two low bits are zero.
#[inline]
pub const fn lp_is_ignorable(typ: u32) -> bool {
    typ >= 800 && typ <= 959 && typ & 0x03 == 0
}
