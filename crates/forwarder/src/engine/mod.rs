//! The sans-IO forwarding engine: FIB, PIT, CS, Dead Nonce List, strategies
//! and per-face egress queues, driven quinn-proto style.
//!
//! See [`Forwarder`] for the call order. The design README is
//! `crates/forwarder/README.md` ("Engine").

mod actions;
mod api;
mod budgets;
pub mod cc_hooks;
pub mod counters;
pub mod cs;
mod cs_order;
pub mod dead_nonce;
mod egress;
pub mod face;
pub mod fib;
mod forwarder;
pub mod hash;
pub mod multicast_hook;
pub mod name_table;
mod observe;
mod pipeline;
mod pipeline_data;
pub mod pit;
pub mod queue;
pub mod strategy;
mod timer_queue;
mod timers;

pub use api::{EngineConfig, EngineError, EngineEvent, Transmit};
pub use cc_hooks::{CcFaceStatus, CcHooks, HookDequeue, IncomingLp, InterestAdmission, NoCc};
pub use counters::{DropCounters, DropReason, FaceCounters, ForwarderCounters};
pub use face::{
    FaceId, FaceInfo, FaceParams, FaceScope, LinkEmulation, LinkType, Persistency, QueueStats,
};
pub use fib::NextHop;
pub use forwarder::Forwarder;
pub use multicast_hook::{
    GroupDataVerdict, McFrame, MulticastHook, NoMulticast, SubscriptionVerdict,
};
pub use observe::{CcStamps, CsStats, StampRange, StampWindow, STAMP_WINDOW};
pub use pit::{InRecord, OutRecord, PitEntry};
pub use queue::{DataFlow, OutPacket, PacketKind, QueueLimits, QueueView, SojournStats};
pub use strategy::{
    Action, BestRoute, FaceLookup, IncomingInterest, Multicast, NameScope, Strategy,
    StrategyBuilder, StrategyCtx, StrategyFactory, StrategyName,
};
