//! QSCCP service classes (paper §IV-B) and their numeric codes
//! (docs/algorithms.md §1.2: the authors' code maps 0..7 to CS7..BE).

use core::fmt;

/// An NDN service class. Delay-sensitive: CS7, CS6, EF; delay-tolerant:
/// AF4, AF3, AF2, AF1, BE (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum ServiceClass {
    /// Network control, highest priority.
    Cs7 = 0,
    /// Network control.
    Cs6 = 1,
    /// Expedited forwarding (voice, conferencing).
    Ef = 2,
    /// Assured forwarding 4 (largest DT weight).
    Af4 = 3,
    /// Assured forwarding 3.
    Af3 = 4,
    /// Assured forwarding 2.
    Af2 = 5,
    /// Assured forwarding 1.
    Af1 = 6,
    /// Best effort, used when the field is absent.
    #[default]
    Be = 7,
}

impl ServiceClass {
    /// All classes, highest priority first; the index is the code.
    pub const ALL: [ServiceClass; 8] = [
        ServiceClass::Cs7,
        ServiceClass::Cs6,
        ServiceClass::Ef,
        ServiceClass::Af4,
        ServiceClass::Af3,
        ServiceClass::Af2,
        ServiceClass::Af1,
        ServiceClass::Be,
    ];
    /// Delay-sensitive classes in strict-priority order.
    pub const DELAY_SENSITIVE: [ServiceClass; 3] =
        [ServiceClass::Cs7, ServiceClass::Cs6, ServiceClass::Ef];
    /// Delay-tolerant classes.
    pub const DELAY_TOLERANT: [ServiceClass; 5] = [
        ServiceClass::Af4,
        ServiceClass::Af3,
        ServiceClass::Af2,
        ServiceClass::Af1,
        ServiceClass::Be,
    ];

    /// Decodes the ServiceClass wire field strictly: codes 0..=7 are the
    /// classes, 8..=15 the same classes with the authors' "+8" penalty
    /// marker (docs/algorithms.md §1.4 P7); anything else is `None`. The one
    /// decoding rule of the field (icn-tlv calls it).
    pub const fn from_wire(code: u64) -> Option<(ServiceClass, bool)> {
        if code < 8 {
            Some((ServiceClass::ALL[code as usize], false))
        } else if code < 16 {
            Some((ServiceClass::ALL[(code - 8) as usize], true))
        } else {
            None
        }
    }

    /// The wire field of this class, `+ 8` when `penalized` (inverse of
    /// [`ServiceClass::from_wire`]).
    pub const fn to_wire(self, penalized: bool) -> u64 {
        self as u64 + if penalized { 8 } else { 0 }
    }

    /// Lenient [`ServiceClass::from_wire`] for codes already stored as
    /// numbers (dataset fields, u8 table keys): an unknown code falls back
    /// to BE, unpenalized.
    pub fn from_code(code: impl Into<u64>) -> (ServiceClass, bool) {
        Self::from_wire(code.into()).unwrap_or((ServiceClass::Be, false))
    }

    /// The wire code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Index 0..8 (same as the code).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the class is delay-sensitive (strict priority, TBRL-capped).
    pub const fn is_delay_sensitive(self) -> bool {
        (self as u8) < 3
    }

    /// Lower-case name (`cs7`, `ef`, `af2`, `be`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            ServiceClass::Cs7 => "cs7",
            ServiceClass::Cs6 => "cs6",
            ServiceClass::Ef => "ef",
            ServiceClass::Af4 => "af4",
            ServiceClass::Af3 => "af3",
            ServiceClass::Af2 => "af2",
            ServiceClass::Af1 => "af1",
            ServiceClass::Be => "be",
        }
    }
}

impl fmt::Display for ServiceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for ServiceClass {
    type Err = UnknownServiceClass;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ServiceClass::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
            .ok_or(UnknownServiceClass)
    }
}

/// The name is not a service class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownServiceClass;

impl fmt::Display for UnknownServiceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown service class (expected cs7, cs6, ef, af4, af3, af2, af1 or be)")
    }
}

impl core::error::Error for UnknownServiceClass {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_round_trip() {
        for c in ServiceClass::ALL {
            assert_eq!(ServiceClass::from_code(u64::from(c.code())), (c, false));
            assert_eq!(c.name().parse::<ServiceClass>(), Ok(c));
        }
        assert_eq!(ServiceClass::from_code(10u64), (ServiceClass::Ef, true));
        assert_eq!(ServiceClass::from_code(99u64), (ServiceClass::Be, false));
        for code in 0..32u64 {
            match ServiceClass::from_wire(code) {
                Some((c, pen)) => assert_eq!(c.to_wire(pen), code),
                None => assert!(code >= 16),
            }
        }
        assert!(ServiceClass::Ef.is_delay_sensitive() && !ServiceClass::Af4.is_delay_sensitive());
    }
}
