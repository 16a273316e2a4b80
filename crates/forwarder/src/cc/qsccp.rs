//! QSCCP glue: classes and flow keys from packets, and the cc-core
//! scheduler configuration of one face.

use cc_core::qsccp::{QsccpConfig, ServiceClass};
use icn_tlv::CcFields;

use super::config::CcConfig;

/// The QSCCP class of an Interest (absent = best effort).
pub(crate) fn class_of(cc: &CcFields) -> ServiceClass {
    cc.service_class
        .map_or(ServiceClass::Be, |s| ServiceClass::from_code(s.code()).0)
}

/// Hash of the Interest name without its last component (the flow: one
/// content object's segments). Falls back to 0 on malformed input.
pub(crate) fn flow_prefix_of(interest_wire: &[u8]) -> u64 {
    match icn_tlv::Interest::decode(bytes::Bytes::copy_from_slice(interest_wire)) {
        Ok(i) => super::prefix_key(i.name.value()),
        Err(_) => 0,
    }
}

/// The scheduler configuration of a face of `capacity_bps`.
pub(crate) fn qsccp_config(cfg: &CcConfig, capacity_bps: u64) -> QsccpConfig {
    let q = &cfg.qsccp;
    QsccpConfig {
        capacity_bps,
        eta: q.eta,
        delta: [q.cs7_cap_fraction, q.cs6_cap_fraction, q.ef_cap_fraction],
        omega: q.class_weights,
        flow_queue_capacity: q.flow_queue_capacity.max(1),
        kappa: q.kappa,
        lambda: q.lambda,
        phi_penalty: q.phi_penalty,
        period: cfg.period(),
        ds_rate_headroom: q.ds_rate_headroom,
        dt_rate_headroom: q.dt_rate_headroom,
        dt_queue_factor: q.dt_queue_factor,
        ..QsccpConfig::default()
    }
}
