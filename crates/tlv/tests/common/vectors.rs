//! The shared test-vector table: wire packets produced by python-ndn 0.5.2
//! (an independent implementation; `testdata/README.md` of the shared vector
//! set describes each). Test-only: used by this crate's integration tests
//! and its codec bench (`#[path]`), never linked into the library.
#![allow(dead_code)]

/// One vector: a file name, its hex, whether decoding must fail, and the
/// outer TLV-TYPE.
#[derive(Debug, Clone, Copy)]
pub struct Vector {
    /// File name in `crates/tlv/testdata/`.
    pub file: &'static str,
    /// Lower-case hex of the whole TLV.
    pub hex: &'static str,
    /// Whether a decoder must reject it.
    pub bad: bool,
    /// Outer TLV-TYPE.
    pub typ: u32,
}

macro_rules! vector {
    ($file:literal, $typ:expr) => {
        Vector {
            file: $file,
            hex: include_str!(concat!("../../testdata/", $file)),
            bad: false,
            typ: $typ,
        }
    };
}

/// Every vector of the shared set.
pub const VECTORS: &[Vector] = &[
    vector!("interest_plain.hex", icn_tlv::types::INTEREST),
    vector!("interest_app_params.hex", icn_tlv::types::INTEREST),
    vector!("name_v1_seg3.hex", icn_tlv::types::NAME),
    vector!("data_digest_sha256.hex", icn_tlv::types::DATA),
    vector!("lp_nack_congestion.hex", icn_tlv::types::LP_PACKET),
    vector!("lp_congestion_mark_data.hex", icn_tlv::types::LP_PACKET),
    vector!("lp_pittoken_data.hex", icn_tlv::types::LP_PACKET),
    vector!("lp_idle.hex", icn_tlv::types::LP_PACKET),
    vector!("rib_register_appv2.hex", icn_tlv::types::INTEREST),
    vector!("rib_register_legacy_app.hex", icn_tlv::types::INTEREST),
    vector!("rib_register_response.hex", icn_tlv::types::DATA),
];

/// Malformed inputs every decoder must reject (hex, with a reason).
pub const BAD: &[(&str, &str)] = &[
    ("", "empty"),
    ("05", "truncated type only"),
    ("0503070108", "length past end"),
    ("0500", "Interest without Name"),
    ("05020700", "Interest with empty Name"),
    ("050807030801610a0112", "Nonce not 4 octets"),
    ("050807030801610d0100", "unknown critical element 13"),
    ("0004", "TLV-TYPE 0"),
    ("0603070161", "Data Name holding a truncated component"),
    ("06050703080161", "Data without SignatureInfo"),
    ("64025000", "empty Fragment"),
    ("6408500105fd03400101", "header field after Fragment"),
    ("6405520300000a", "FragIndex NNI of invalid length"),
    ("64035401ff", "unknown non-ignorable LP field 84"),
    ("6405fd03440500", "truncated ignorable field"),
    ("64026200", "empty PitToken"),
    (
        "6408fd0340010152010a",
        "FragIndex (82) after CongestionMark (832)",
    ),
    (
        "640507030801ff",
        "Name directly inside LpPacket (non-ignorable)",
    ),
];

/// Decodes a vector's hex (test helper; the table is known-good hex).
pub fn bytes_of(hex_str: &str) -> Option<Vec<u8>> {
    let s = hex_str.trim();
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}
