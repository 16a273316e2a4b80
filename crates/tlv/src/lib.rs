//! NDN packet format v0.3 and NDNLPv2 codec, zero-copy over [`bytes::Bytes`],
//! with this project's congestion-control header fields.
//!
//! Two levels (see `README.md`): [`element::Element`] borrows one TLV from a
//! slice and never panics once parsed; the owned types ([`Name`],
//! [`Interest`], [`Data`], [`LpPacket`]) keep `Bytes` slices of the wire and
//! encode into a caller's `BytesMut`.
//!
//! No input can make a decoder panic: every slice access is checked and
//! every failure is a [`TlvError`].

#![warn(missing_docs)]

pub mod cc;
pub mod data;
pub mod element;
mod error;
pub mod frag;
pub mod interest;
pub mod lp;
pub mod name;
pub mod nfd;
pub mod packet;
pub mod types;
mod uri;
pub mod varnum;

pub use cc::{CcFields, MccFeedback, ServiceClass, TrafficClass};
pub use data::{Data, MetaInfo};
pub use error::{Result, TlvError};
pub use frag::{fragment, Reassembler};
pub use interest::{Interest, DEFAULT_INTEREST_LIFETIME};
pub use lp::{LpPacket, NackReason};
pub use name::{Component, Name};
pub use packet::{decode_packet, decode_reassembled, NetPacket};
