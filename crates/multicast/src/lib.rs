//! SRMCC single-rate multicast groups.
