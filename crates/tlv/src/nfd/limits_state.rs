//! The icnfwd-specific dataset `/localhost/nfd/status/icnfwd-limits`: each
//! memory budget's use against its bound, and the forwarder-wide drops by
//! reason (including those the shell makes: oversized datagrams, refused
//! peers). `icnfwd status` prints it.
//!
//! ```text
//! LimitsState = 190 TLV-LENGTH *Budget *Drop   (one item, always present)
//! Budget      = 191 TLV-LENGTH Label Used Max
//! Drop        = 195 TLV-LENGTH Label Used      (Used = the count)
//! Label       = 192 UTF-8 (kebab-case)   Used = 193 NNI   Max = 194 NNI
//! ```
//! Decoders skip unknown elements.

use bytes::{Bytes, BytesMut};

use super::wire::{self, put_nested, put_nni, put_tlv, TlvReader};
use super::MgmtError;

/// The dataset's module and name under `/localhost/nfd`.
pub const DATASET: (&str, &str) = ("status", "icnfwd-limits");

const STATE: u32 = 190;
const BUDGET: u32 = 191;
const LABEL: u32 = 192;
const USED: u32 = 193;
const MAX: u32 = 194;
const DROP: u32 = 195;

/// Budgets and drops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitsState {
    /// (label, used, max).
    pub budgets: Vec<(String, u64, u64)>,
    /// (reason, count), non-zero ones.
    pub drops: Vec<(String, u64)>,
}

impl LimitsState {
    /// The count of one drop reason (0 if absent).
    pub fn drop_count(&self, reason: &str) -> u64 {
        wire::named_count(&self.drops, reason)
    }

    /// The dataset payload.
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        for (label, used, max) in &self.budgets {
            let mut e = BytesMut::new();
            put_tlv(&mut e, LABEL, label.as_bytes());
            put_nni(&mut e, USED, *used);
            put_nni(&mut e, MAX, *max);
            put_nested(&mut b, BUDGET, &e);
        }
        for (label, count) in &self.drops {
            let mut e = BytesMut::new();
            put_tlv(&mut e, LABEL, label.as_bytes());
            put_nni(&mut e, USED, *count);
            put_nested(&mut b, DROP, &e);
        }
        let mut out = BytesMut::with_capacity(b.len() + 8);
        put_nested(&mut out, STATE, &b);
        out.freeze()
    }

    /// Decodes the dataset payload.
    pub fn decode(payload: Bytes) -> Result<Self, MgmtError> {
        let mut s = LimitsState::default();
        let mut r = TlvReader::new(wire::single(payload, STATE)?);
        while let Some((t, v)) = r.next_element()? {
            if t != BUDGET && t != DROP {
                continue;
            }
            let (mut label, mut used, mut max) = (None, 0, 0);
            let mut rr = TlvReader::new(v);
            while let Some((t, v)) = rr.next_element()? {
                match t {
                    LABEL => label = Some(wire::utf8(&v)?),
                    USED => used = wire::nni(&v)?,
                    MAX => max = wire::nni(&v)?,
                    _ => {}
                }
            }
            let label = label.ok_or(MgmtError::Missing("Label"))?;
            if t == BUDGET {
                s.budgets.push((label, used, max));
            } else {
                s.drops.push((label, used));
            }
        }
        Ok(s)
    }

    /// The `icnfwd status` section.
    pub fn render(&self) -> String {
        let budgets: Vec<String> = self
            .budgets
            .iter()
            .map(|(l, u, m)| format!("{l}={u}/{m}"))
            .collect();
        let drops: Vec<String> = self.drops.iter().map(|(r, c)| format!("{r}={c}")).collect();
        format!(
            "Limits:\n  {}\nDrops:\n  {}\n",
            budgets.join(" "),
            drops.join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_missing_label() {
        let s = LimitsState {
            budgets: vec![
                ("pit-bytes".into(), 5, 10),
                ("cs-bytes".into(), 0, u64::MAX),
            ],
            drops: vec![("oversized".into(), 3)],
        };
        let d = LimitsState::decode(s.encode()).unwrap();
        assert_eq!(d, s);
        assert_eq!(d.drop_count("oversized"), 3);
        assert_eq!(d.drop_count("pit-full"), 0);
        let mut e = BytesMut::new();
        put_nni(&mut e, USED, 1);
        let mut b = BytesMut::new();
        put_nested(&mut b, DROP, &e);
        let mut out = BytesMut::new();
        put_nested(&mut out, STATE, &b);
        assert_eq!(
            LimitsState::decode(out.freeze()),
            Err(MgmtError::Missing("Label"))
        );
    }
}
