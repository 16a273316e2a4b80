//! Rate arguments (`--rate 10Mbps`, `--rate 1200pps`) and their display.

use core::fmt;
use core::str::FromStr;

/// A target rate as the user wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateSpec {
    /// Bits of Data per second; converted to Interests/s by the Data size.
    BitsPerSec(f64),
    /// Interests (packets) per second.
    InterestsPerSec(f64),
}

impl RateSpec {
    /// Interests per second, given the (average) Data size on the wire.
    pub fn interests_per_sec(self, data_size_bytes: f64) -> f64 {
        match self {
            RateSpec::InterestsPerSec(r) => r,
            RateSpec::BitsPerSec(bps) => bps / (8.0 * data_size_bytes.max(1.0)),
        }
    }
}

/// The rate string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rate {0:?}: expected a positive number with a unit: bps, kbps, Mbps, Gbps (bits of Data) or pps (Interests per second), e.g. 10Mbps or 1200pps")]
pub struct RateParseError(pub String);

impl FromStr for RateSpec {
    type Err = RateParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || RateParseError(s.to_string());
        let t = s.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '_'))
            .ok_or_else(err)?;
        let (num, unit) = t.split_at(split);
        let v: f64 = num.replace('_', "").parse().map_err(|_| err())?;
        if !v.is_finite() || v <= 0.0 {
            return Err(err());
        }
        let unit = unit.trim();
        let mult = match unit {
            "bps" | "bit/s" => 1.0,
            "kbps" | "Kbps" | "kbit/s" => 1e3,
            "Mbps" | "mbps" | "Mbit/s" => 1e6,
            "Gbps" | "gbps" | "Gbit/s" => 1e9,
            "pps" | "ips" | "Interests/s" => return Ok(RateSpec::InterestsPerSec(v)),
            _ => return Err(err()),
        };
        Ok(RateSpec::BitsPerSec(v * mult))
    }
}

impl fmt::Display for RateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateSpec::BitsPerSec(b) => write!(f, "{}", format_bit_rate(*b)),
            RateSpec::InterestsPerSec(p) => write!(f, "{p}pps"),
        }
    }
}

/// Formats a bit rate the way ndnget does (kbit/s, Mbit/s, ...).
pub fn format_bit_rate(mut bps: f64) -> String {
    const UNITS: [&str; 5] = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"];
    let mut i = 0;
    while bps >= 1000.0 && i < UNITS.len() - 1 {
        bps /= 1000.0;
        i += 1;
    }
    format!("{bps:.6} {}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bit_and_packet_rates() {
        assert_eq!("10Mbps".parse(), Ok(RateSpec::BitsPerSec(10e6)));
        assert_eq!("1200pps".parse(), Ok(RateSpec::InterestsPerSec(1200.0)));
        assert_eq!("2.5 Gbps".parse(), Ok(RateSpec::BitsPerSec(2.5e9)));
        assert_eq!("500kbps".parse(), Ok(RateSpec::BitsPerSec(500e3)));
        assert!("10".parse::<RateSpec>().is_err());
        assert!("0pps".parse::<RateSpec>().is_err());
        assert!("-3Mbps".parse::<RateSpec>().is_err());
        assert!("3furlongs".parse::<RateSpec>().is_err());
    }

    #[test]
    fn bit_rate_deflates_by_data_size() {
        let r = RateSpec::BitsPerSec(8e6);
        assert!((r.interests_per_sec(1000.0) - 1000.0).abs() < 1e-9);
        assert_eq!(RateSpec::InterestsPerSec(7.0).interests_per_sec(1e6), 7.0);
    }

    #[test]
    fn formats_like_ndnget() {
        assert_eq!(format_bit_rate(1.5e6), "1.500000 Mbit/s");
        assert_eq!(format_bit_rate(12.0), "12.000000 bit/s");
    }
}
