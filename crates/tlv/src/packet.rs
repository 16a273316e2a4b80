//! One received link-layer unit, decoded to the network layer.

use bytes::Bytes;

use crate::data::Data;
use crate::element::Element;
use crate::error::{Result, TlvError};
use crate::interest::Interest;
use crate::lp::LpPacket;
use crate::types;

/// A network-layer packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetPacket {
    /// An Interest (also the payload of a Nack; see `LpPacket::nack`).
    Interest(Interest),
    /// A Data.
    Data(Data),
}

impl NetPacket {
    /// Decodes a whole Interest or Data TLV.
    ///
    /// # Errors
    /// Malformed packet, or a type other than Interest/Data.
    pub fn decode(wire: Bytes) -> Result<NetPacket> {
        let (e, _) = Element::parse(&wire)?;
        match e.typ() {
            types::INTEREST => Interest::decode(wire).map(NetPacket::Interest),
            types::DATA => Data::decode(wire).map(NetPacket::Data),
            found => Err(TlvError::UnexpectedType {
                expected: types::INTEREST,
                found,
            }),
        }
    }

    /// The bytes the packet was decoded from.
    pub fn wire(&self) -> Option<&Bytes> {
        match self {
            NetPacket::Interest(i) => i.wire(),
            NetPacket::Data(d) => d.wire(),
        }
    }
}

/// Decodes one received link-layer unit. `packet` is `None` for IDLE, MCC
/// feedback, or a fragment that still needs reassembly (see
/// [`crate::Reassembler`], then [`decode_reassembled`]).
///
/// # Errors
/// Any LP or network-layer decoding error.
pub fn decode_packet(wire: Bytes) -> Result<(LpPacket, Option<NetPacket>)> {
    let lp = LpPacket::decode(wire)?;
    decode_reassembled(lp)
}

/// Decodes the network packet of an already-decoded (or reassembled) LpPacket.
///
/// # Errors
/// Any network-layer decoding error.
pub fn decode_reassembled(lp: LpPacket) -> Result<(LpPacket, Option<NetPacket>)> {
    let net = match (&lp.fragment, lp.is_fragmented()) {
        (Some(f), false) => Some(NetPacket::decode(f.clone())?),
        _ => None,
    };
    Ok((lp, net))
}
