//! Which constants and rules a scheme runs with: its paper's, or icnfwd's
//! tuned defaults (docs/deviations.md lists every difference, with the
//! measurement behind it).
//!
//! Each scheme's configuration has a constructor per profile
//! (`CccConfig::paper()`, `CccConfig::tuned()`, `…::for_profile`), so the
//! paper's constants sit next to the law they parameterise and are tested
//! there.

use core::fmt;
use core::str::FromStr;

/// A parameter profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Profile {
    /// The literal algorithm and constants of the scheme's paper; where the
    /// paper is silent or contradicts itself, the reading of
    /// docs/algorithms.md.
    Paper,
    /// icnfwd's defaults: the paper plus the deviations of
    /// docs/deviations.md, each kept because it measured better.
    #[default]
    Tuned,
}

impl Profile {
    /// Both profiles, paper first.
    pub const ALL: [Profile; 2] = [Profile::Paper, Profile::Tuned];

    /// The config/CLI name.
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Paper => "paper",
            Profile::Tuned => "tuned",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownProfile;

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown profile (known: paper, tuned)")
    }
}

impl core::error::Error for UnknownProfile {}

impl FromStr for Profile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or(UnknownProfile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_tuned_is_the_default() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse::<Profile>(), Ok(p));
        }
        assert_eq!("PAPER".parse::<Profile>(), Ok(Profile::Paper));
        assert!("literal".parse::<Profile>().is_err());
        assert_eq!(Profile::default(), Profile::Tuned);
    }
}
