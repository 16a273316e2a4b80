//! The TOML configuration of `icnfwd` (`configs/icnfwd.toml` documents every
//! key). Unknown keys are errors that name the key; a missing file section
//! takes the built-in default, so `icnfwd` with no file runs like NFD
//! (UDP/TCP 6363, Unix socket `/run/nfd/nfd.sock`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use icn_tlv::Name;
use serde::Deserialize;

use crate::mgmt::FaceUri;

/// Default Unix socket: where python-ndn, NDNts and ndn-cxx look first on Linux.
pub const DEFAULT_UNIX_PATH: &str = "/run/nfd/nfd.sock";
/// NDN IPv4 multicast group and port.
pub const DEFAULT_MULTICAST_GROUP: &str = "224.0.23.170:56363";
/// NFD's UDP unicast MTU.
pub const DEFAULT_UDP_MTU: usize = 8800;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    #[error("invalid value for `{key}`: {reason}")]
    Invalid { key: String, reason: String },
}

fn invalid(key: impl Into<String>, reason: impl ToString) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        reason: reason.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// tracing filter (RUST_LOG syntax); the RUST_LOG variable overrides it.
    pub log_level: String,
    pub tables: Tables,
    pub unix: UnixConfig,
    pub udp: UdpConfig,
    pub tcp: TcpConfig,
    pub multicast: MulticastConfig,
    pub ethernet: Vec<EthernetConfig>,
    pub face: Vec<FaceConfig>,
    pub route: Vec<RouteConfig>,
    pub strategy: Vec<StrategyConfig>,
    pub cc: CcConfig,
    /// SRMCC multicast groups (tree-node defaults); not the UDP `[multicast]` face.
    pub multicast_groups: GroupsConfig,
    /// The optional Prometheus endpoint.
    pub metrics: crate::daemon::metrics::MetricsConfig,
    /// Management from non-local faces.
    pub mgmt: crate::mgmt::trust::MgmtConfig,
    /// Face-table and memory bounds.
    pub limits: crate::limits::LimitsConfig,
    /// Engine threads (experimental sharded engine, `daemon::shard`).
    pub engine: crate::daemon::shard::EngineThreadsConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            log_level: "info".into(),
            tables: Tables::default(),
            unix: UnixConfig::default(),
            udp: UdpConfig::default(),
            tcp: TcpConfig::default(),
            multicast: MulticastConfig::default(),
            ethernet: Vec::new(),
            face: Vec::new(),
            route: Vec::new(),
            strategy: Vec::new(),
            cc: CcConfig::default(),
            multicast_groups: GroupsConfig::default(),
            metrics: Default::default(),
            mgmt: Default::default(),
            limits: Default::default(),
            engine: Default::default(),
        }
    }
}

/// Table bounds.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tables {
    pub cs_max_packets: usize,
    pub cs_max_bytes: usize,
    pub pit_max_entries: usize,
    pub dead_nonce_max: usize,
    pub rib_max_routes: usize,
}

impl Default for Tables {
    fn default() -> Self {
        Tables {
            cs_max_packets: 65_536,
            cs_max_bytes: 256 << 20,
            pit_max_entries: 200_000,
            dead_nonce_max: 100_000,
            rib_max_routes: 100_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UnixConfig {
    pub enabled: bool,
    pub path: PathBuf,
}

impl Default for UnixConfig {
    fn default() -> Self {
        UnixConfig {
            enabled: true,
            path: PathBuf::from(DEFAULT_UNIX_PATH),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UdpConfig {
    pub enabled: bool,
    pub listen: Vec<SocketAddr>,
    /// On-demand faces idle this long are closed (NFD: 600 s).
    pub idle_timeout_s: u64,
    pub mtu: usize,
    /// Capacity given to on-demand UDP faces (peers not listed as
    /// `[[face]]`), so that their egress is paced too. Absent = unpaced.
    pub default_capacity_bps: Option<u64>,
    /// Give on-demand faces of loopback peers local scope (python-ndn
    /// registers over udp://127.0.0.1); false: non-local, as in NFD.
    pub loopback_is_local: bool,
}

impl Default for UdpConfig {
    fn default() -> Self {
        UdpConfig {
            enabled: true,
            listen: vec![SocketAddr::from(([0, 0, 0, 0], 6363))],
            idle_timeout_s: 600,
            mtu: DEFAULT_UDP_MTU,
            default_capacity_bps: None,
            loopback_is_local: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    pub enabled: bool,
    pub listen: Vec<SocketAddr>,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            enabled: true,
            listen: vec![SocketAddr::from(([0, 0, 0, 0], 6363))],
        }
    }
}

/// UDP multicast discovery face; off unless enabled.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MulticastConfig {
    pub enabled: bool,
    pub group: SocketAddr,
    /// IPv4 address of the interface to join on (one face each).
    pub interfaces: Vec<std::net::Ipv4Addr>,
}

impl Default for MulticastConfig {
    fn default() -> Self {
        MulticastConfig {
            enabled: false,
            group: DEFAULT_MULTICAST_GROUP.parse().expect("constant"),
            interfaces: Vec::new(),
        }
    }
}

/// An Ethernet (AF_PACKET) multicast face on one interface, plus on-demand
/// unicast faces for the peers that address this host.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EthernetConfig {
    pub interface: String,
    /// Face MTU; absent = the interface's MTU, and never above it.
    #[serde(default)]
    pub mtu: Option<usize>,
}

/// A permanent face opened at start.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaceConfig {
    /// `udp4://host:port` or `tcp4://host:port` (IP literals).
    pub uri: String,
    /// Pace egress at this rate (the queue then forms inside icnfwd).
    pub capacity_bps: Option<u64>,
    /// Capacity of the link's other direction, Data arriving from the peer,
    /// when it differs (asymmetric links); the rate laws and Interest
    /// shapers book it. Absent: `capacity_bps`.
    #[serde(default)]
    pub ingress_capacity_bps: Option<u64>,
    pub mtu: Option<usize>,
    /// Link emulation for testbeds: one-way delay added after the shaper, ms.
    #[serde(default)]
    pub emulated_delay_ms: u64,
    /// Link emulation for testbeds: drop probability after the shaper
    /// (seeded), 0.0..=1.0.
    #[serde(default)]
    pub emulated_loss: f64,
}

impl FaceConfig {
    /// The face's link emulation, if any.
    pub fn emulation(&self) -> Option<crate::engine::LinkEmulation> {
        let e = crate::engine::LinkEmulation::new(
            cc_core::Duration::from_millis(self.emulated_delay_ms),
            self.emulated_loss,
        );
        (!e.is_noop()).then_some(e)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    pub prefix: String,
    /// The `uri` of a `[[face]]`.
    pub face: String,
    #[serde(default)]
    pub cost: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyConfig {
    pub prefix: String,
    pub strategy: String,
}

pub use crate::cc::{CcConfig, CcScheme};
pub use crate::groups::GroupsConfig;

/// A validated route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRoute {
    pub prefix: Name,
    pub face: FaceUri,
    pub cost: u64,
}

impl Config {
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml_str(&text)
    }

    pub fn from_toml_str(text: &str) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text)?;
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        crate::config_checks::check_log_filter(&self.log_level)
            .map_err(|e| invalid("log_level", e))?;
        let t = &self.tables;
        crate::config_checks::check_nonzero(&[
            ("tables.pit_max_entries", t.pit_max_entries as u64),
            ("tables.rib_max_routes", t.rib_max_routes as u64),
            ("udp.idle_timeout_s", self.udp.idle_timeout_s),
        ])
        .map_err(|(k, why)| invalid(k, why))?;
        if self.udp.mtu < 64 || self.udp.mtu > DEFAULT_UDP_MTU {
            return Err(invalid("udp.mtu", "must be within 64..=8800"));
        }
        if self.multicast.enabled && !self.multicast.group.ip().is_multicast() {
            return Err(invalid("multicast.group", "not a multicast address"));
        }
        if let Err((key, why)) = self.cc.validate() {
            return Err(invalid(key, why));
        }
        if let Err((key, why)) = self.multicast_groups.validate() {
            return Err(invalid(key, why));
        }
        if let Err((key, why)) = self.metrics.validate() {
            return Err(invalid(key, why));
        }
        if self.metrics.listen.is_some() && !self.unix.enabled {
            return Err(invalid(
                "metrics.listen",
                "the endpoint reads the forwarder over its Unix socket; enable [unix]",
            ));
        }
        if let Err((key, why)) = self.mgmt.anchors() {
            return Err(invalid(key, why));
        }
        if let Err((key, why)) = self.limits.validate() {
            return Err(invalid(key, why));
        }
        for (i, f) in self.face.iter().enumerate() {
            let uri = self.face_uri(i)?;
            if !matches!(uri, FaceUri::Udp(_) | FaceUri::Tcp(_)) {
                return Err(invalid(
                    format!("face[{i}].uri"),
                    "only udp and tcp faces can be configured",
                ));
            }
            if !(0.0..=1.0).contains(&f.emulated_loss) {
                return Err(invalid(
                    format!("face[{i}].emulated_loss"),
                    "must be within 0.0..=1.0",
                ));
            }
            if f.emulated_delay_ms > 60_000 {
                return Err(invalid(
                    format!("face[{i}].emulated_delay_ms"),
                    "must be at most 60000",
                ));
            }
            if let Some(m) = f.mtu {
                if !(64..=DEFAULT_UDP_MTU).contains(&m) {
                    return Err(invalid(
                        format!("face[{i}].mtu"),
                        "must be within 64..=8800",
                    ));
                }
            }
        }
        self.routes()?;
        self.strategies()?;
        Ok(())
    }

    /// The parsed URI of `face[i]`.
    pub fn face_uri(&self, i: usize) -> Result<FaceUri, ConfigError> {
        FaceUri::parse(&self.face[i].uri).map_err(|e| invalid(format!("face[{i}].uri"), e))
    }

    /// Routes with parsed names, each referring to a configured face: a
    /// `[[face]]` uri, `dev://IFNAME` for the Ethernet multicast face of an
    /// `[[ethernet]]` interface, or the `[multicast]` group URI for every
    /// UDP multicast face.
    pub fn routes(&self) -> Result<Vec<ResolvedRoute>, ConfigError> {
        let mut faces: Vec<FaceUri> = (0..self.face.len())
            .map(|i| self.face_uri(i))
            .collect::<Result<_, _>>()?;
        faces.extend(
            self.ethernet
                .iter()
                .map(|e| FaceUri::Dev(e.interface.clone())),
        );
        if self.multicast.enabled {
            faces.push(FaceUri::Udp(self.multicast.group));
        }
        self.route
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let prefix: Name = r
                    .prefix
                    .parse()
                    .map_err(|e| invalid(format!("route[{i}].prefix"), format!("{e:?}")))?;
                let face =
                    FaceUri::parse(&r.face).map_err(|e| invalid(format!("route[{i}].face"), e))?;
                if !faces.contains(&face) {
                    return Err(invalid(
                        format!("route[{i}].face"),
                        format!(
                            "{} is not the uri of any [[face]], [[ethernet]] (dev://IFNAME) or enabled [multicast] group",
                            r.face
                        ),
                    ));
                }
                Ok(ResolvedRoute {
                    prefix,
                    face,
                    cost: r.cost,
                })
            })
            .collect()
    }

    /// (prefix, strategy name) pairs.
    pub fn strategies(&self) -> Result<Vec<(Name, Name)>, ConfigError> {
        self.strategy
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let p: Name = s
                    .prefix
                    .parse()
                    .map_err(|e| invalid(format!("strategy[{i}].prefix"), format!("{e:?}")))?;
                let n: Name = s
                    .strategy
                    .parse()
                    .map_err(|e| invalid(format!("strategy[{i}].strategy"), format!("{e:?}")))?;
                Ok((p, n))
            })
            .collect()
    }

    /// Engine table bounds from `[tables]`.
    pub fn engine_config(&self) -> crate::engine::EngineConfig {
        crate::engine::EngineConfig {
            pit_max_entries: self.tables.pit_max_entries,
            cs_max_packets: self.tables.cs_max_packets,
            cs_max_bytes: self.tables.cs_max_bytes,
            dead_nonce_max: self.tables.dead_nonce_max,
            pit_max_bytes: self.limits.pit_max_bytes,
            reassembly_max_bytes: self.limits.reassembly_max_bytes,
            queue_max_bytes: self.limits.queue_max_bytes,
            queue: crate::engine::QueueLimits {
                max_packets: self.limits.face_queue_max_packets,
                ..crate::engine::QueueLimits::default()
            },
            face_share_pct: self.limits.face_share_percent,
            ..Default::default()
        }
    }

    /// The engine with `[cc]` and `[multicast_groups]`: what the daemon runs.
    pub fn router_config(&self) -> crate::router::RouterConfig {
        crate::router::RouterConfig {
            engine: self.engine_config(),
            cc: self.cc.clone(),
            multicast_groups: self.multicast_groups.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_the_defaults() {
        let c = Config::from_toml_str("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.unix.path, PathBuf::from("/run/nfd/nfd.sock"));
        assert_eq!(c.udp.listen[0].port(), 6363);
        assert!(!c.multicast.enabled);
        assert_eq!(c.cc.scheme, CcScheme::None);
    }

    /// The shipped file says every value it shows is the default: with
    /// its comments as written, it is the built-in configuration.
    #[test]
    fn shipped_config_is_the_defaults() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/icnfwd.toml");
        let c = Config::from_file(Path::new(path)).unwrap();
        assert_eq!(c, Config::default());
    }

    #[test]
    fn a_face_queue_length_reaches_the_engine() {
        let c = Config::from_toml_str("[limits]\nface_queue_max_packets = 50\n").unwrap();
        assert_eq!(c.engine_config().queue.max_packets, 50);
        assert_eq!(
            Config::default().engine_config().queue,
            crate::engine::QueueLimits::default()
        );
    }

    #[test]
    fn unknown_key_is_named() {
        let e =
            Config::from_toml_str("[udp]\nlisten = [\"0.0.0.0:6363\"]\nmtuu = 5\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("mtuu"), "{msg}");
        let e = Config::from_toml_str("bogus = 1").unwrap_err();
        assert!(e.to_string().contains("bogus"));
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = Config::from_toml_str(
            "[[face]]\nuri = \"udp4://127.0.0.1:7000\"\n[[route]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:7001\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("route[0].face"), "{e}");
        let e = Config::from_toml_str("[[face]]\nuri = \"udp4://example.com:7000\"\n").unwrap_err();
        assert!(e.to_string().contains("face[0].uri"), "{e}");
        for (text, key) in [
            ("[tables]\npit_max_entries = 0\n", "tables.pit_max_entries"),
            ("[tables]\nrib_max_routes = 0\n", "tables.rib_max_routes"),
            ("[udp]\nidle_timeout_s = 0\n", "udp.idle_timeout_s"),
            ("log_level = \"verbose!!\"\n", "log_level"),
            (
                "[limits]\nface_share_percent = 0\n",
                "limits.face_share_percent",
            ),
            ("[limits]\npit_max_bytes = 100\n", "limits.pit_max_bytes"),
            ("[limits]\nmax_faces = 0\n", "limits.max_faces"),
            (
                "[limits]\nface_queue_max_packets = 0\n",
                "limits.face_queue_max_packets",
            ),
        ] {
            let e = Config::from_toml_str(text).unwrap_err();
            assert!(e.to_string().contains(&format!("`{key}`")), "{e}");
        }
        let e = Config::from_toml_str("[udp]\nmtu = 9000\n").unwrap_err();
        assert!(e.to_string().contains("udp.mtu"), "{e}");
        let e = Config::from_toml_str("[cc]\nscheme = \"reno\"\n").unwrap_err();
        assert!(e.to_string().contains("scheme"), "{e}");
        let e = Config::from_toml_str("[cc]\nperiod_ms = 0\n").unwrap_err();
        assert!(e.to_string().contains("cc.period_ms"), "{e}");
        let e = Config::from_toml_str(
            "[[face]]\nuri = \"udp4://127.0.0.1:7000\"\nemulated_loss = 2.0\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("face[0].emulated_loss"), "{e}");
    }

    #[test]
    fn routes_may_name_multicast_faces() {
        let c = Config::from_toml_str(
            r#"
            [multicast]
            enabled = true
            interfaces = ["10.0.0.1"]
            [[ethernet]]
            interface = "veth0"
            [[route]]
            prefix = "/a"
            face = "dev://veth0"
            [[route]]
            prefix = "/b"
            face = "udp4://224.0.23.170:56363"
            "#,
        )
        .unwrap();
        let r = c.routes().unwrap();
        assert_eq!(r[0].face, FaceUri::Dev("veth0".into()));
        assert_eq!(r[1].face, FaceUri::Udp(c.multicast.group));
        assert_eq!(c.ethernet[0].mtu, None);
        let e = Config::from_toml_str("[[route]]\nprefix = \"/a\"\nface = \"dev://eth9\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("route[0].face"), "{e}");
    }

    #[test]
    fn routes_and_strategies_resolve() {
        let c = Config::from_toml_str(
            r#"
            [[face]]
            uri = "udp4://127.0.0.1:7000"
            capacity_bps = 10_000_000
            [[route]]
            prefix = "/a/b"
            face = "udp4://127.0.0.1:7000"
            cost = 3
            [[strategy]]
            prefix = "/a"
            strategy = "/localhost/nfd/strategy/multicast"
            "#,
        )
        .unwrap();
        let r = c.routes().unwrap();
        assert_eq!(r[0].prefix.to_string(), "/a/b");
        assert_eq!(r[0].cost, 3);
        assert_eq!(
            c.strategies().unwrap()[0].1.to_string(),
            "/localhost/nfd/strategy/multicast"
        );
    }
}
