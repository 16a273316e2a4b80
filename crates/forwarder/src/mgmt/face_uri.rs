//! FaceUri parsing and canonical formatting (`udp4://192.0.2.1:6363`, ...).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// NDN's default port for UDP and TCP.
pub const DEFAULT_PORT: u16 = 6363;

/// The face URIs this forwarder creates or reports.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FaceUri {
    Udp(SocketAddr),
    Tcp(SocketAddr),
    Unix(PathBuf),
    /// A stream accepted on a Unix socket, as NFD names it.
    Fd(u64),
    /// `ether://[01:00:5e:00:17:aa]`
    Ether([u8; 6]),
    /// `dev://eth0`
    Dev(String),
    Internal,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaceUriError {
    #[error("unsupported scheme in {0:?}")]
    UnsupportedScheme(String),
    #[error("non-canonical or malformed FaceUri {0:?} (need an IP literal and port)")]
    NotCanonical(String),
}

impl FaceUri {
    /// Parses a FaceUri; for UDP/TCP the host must be an IP literal, the
    /// port defaults to 6363 and the `4`/`6` suffix must match the address.
    pub fn parse(s: &str) -> Result<FaceUri, FaceUriError> {
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| FaceUriError::NotCanonical(s.to_owned()))?;
        match scheme {
            "udp" | "udp4" | "udp6" | "tcp" | "tcp4" | "tcp6" => {
                let rest = rest.trim_end_matches('/');
                let addr = parse_host_port(rest)
                    .ok_or_else(|| FaceUriError::NotCanonical(s.to_owned()))?;
                let fam_ok = match scheme.as_bytes().last() {
                    Some(b'4') => addr.is_ipv4(),
                    Some(b'6') => addr.is_ipv6(),
                    _ => true,
                };
                if !fam_ok {
                    return Err(FaceUriError::NotCanonical(s.to_owned()));
                }
                Ok(if scheme.starts_with("udp") {
                    FaceUri::Udp(addr)
                } else {
                    FaceUri::Tcp(addr)
                })
            }
            "unix" => Ok(FaceUri::Unix(PathBuf::from(rest))),
            "fd" => rest
                .parse()
                .map(FaceUri::Fd)
                .map_err(|_| FaceUriError::NotCanonical(s.to_owned())),
            "dev" if !rest.is_empty() => Ok(FaceUri::Dev(rest.to_owned())),
            "ether" => parse_mac(rest.trim_start_matches('[').trim_end_matches(']'))
                .map(FaceUri::Ether)
                .ok_or_else(|| FaceUriError::NotCanonical(s.to_owned())),
            "internal" => Ok(FaceUri::Internal),
            _ => Err(FaceUriError::UnsupportedScheme(s.to_owned())),
        }
    }

    /// The socket address of a UDP/TCP URI.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self {
            FaceUri::Udp(a) | FaceUri::Tcp(a) => Some(*a),
            _ => None,
        }
    }
}

fn parse_host_port(s: &str) -> Option<SocketAddr> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Some(a);
    }
    // Host without port.
    let host = s.trim_start_matches('[').trim_end_matches(']');
    host.parse::<IpAddr>()
        .ok()
        .map(|ip| SocketAddr::new(ip, DEFAULT_PORT))
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for b in mac.iter_mut() {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

impl fmt::Display for FaceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fam = |a: &SocketAddr| if a.is_ipv4() { '4' } else { '6' };
        match self {
            FaceUri::Udp(a) => write!(f, "udp{}://{}", fam(a), a),
            FaceUri::Tcp(a) => write!(f, "tcp{}://{}", fam(a), a),
            FaceUri::Unix(p) => write!(f, "unix://{}", p.display()),
            FaceUri::Fd(n) => write!(f, "fd://{n}"),
            FaceUri::Ether(m) => write!(
                f,
                "ether://[{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}]",
                m[0], m[1], m[2], m[3], m[4], m[5]
            ),
            FaceUri::Dev(i) => write!(f, "dev://{i}"),
            FaceUri::Internal => write!(f, "internal://"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        let u = FaceUri::parse("udp4://127.0.0.1:6364").unwrap();
        assert_eq!(u.to_string(), "udp4://127.0.0.1:6364");
        assert_eq!(
            FaceUri::parse("udp://127.0.0.1").unwrap().to_string(),
            "udp4://127.0.0.1:6363"
        );
        assert_eq!(
            FaceUri::parse("tcp6://[::1]:7000").unwrap().to_string(),
            "tcp6://[::1]:7000"
        );
        assert!(matches!(
            FaceUri::parse("udp4://example.net:6363"),
            Err(FaceUriError::NotCanonical(_))
        ));
        assert!(matches!(
            FaceUri::parse("udp6://127.0.0.1:1"),
            Err(FaceUriError::NotCanonical(_))
        ));
        assert!(matches!(
            FaceUri::parse("ws://127.0.0.1:9696"),
            Err(FaceUriError::UnsupportedScheme(_))
        ));
        assert_eq!(
            FaceUri::parse("ether://[01:00:5e:00:17:aa]").unwrap(),
            FaceUri::Ether([1, 0, 0x5e, 0, 0x17, 0xaa])
        );
        assert_eq!(
            FaceUri::parse("unix:///run/nfd/nfd.sock")
                .unwrap()
                .to_string(),
            "unix:///run/nfd/nfd.sock"
        );
    }
}
