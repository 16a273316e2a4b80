//! SIGHUP for `[limits]` and `[mgmt]`: both apply at once, with one info
//! line per changed key. Lowered bounds hold for every new admission;
//! what is held above them already (PIT in-records, queued packets,
//! on-demand faces) is not thrown away but drains, and a line says so.
//! Sections read only at start are named when the file changed them.

use super::Shell;
use crate::config::Config;
use crate::mgmt::scope::ScopePolicy;

impl Shell {
    /// Applies the `[limits]` and `[mgmt]` of a re-read (validated) file.
    pub(super) fn reload_limits_and_mgmt(&mut self, cfg: &Config) {
        let (old, new) = (&self.cfg.limits, &cfg.limits);
        if old != new {
            for (key, was, now) in [
                ("limits.max_faces", old.max_faces, new.max_faces),
                ("limits.pit_max_bytes", old.pit_max_bytes, new.pit_max_bytes),
                (
                    "limits.reassembly_max_bytes",
                    old.reassembly_max_bytes,
                    new.reassembly_max_bytes,
                ),
                (
                    "limits.queue_max_bytes",
                    old.queue_max_bytes,
                    new.queue_max_bytes,
                ),
                (
                    "limits.face_queue_max_packets",
                    old.face_queue_max_packets,
                    new.face_queue_max_packets,
                ),
                (
                    "limits.face_share_percent",
                    old.face_share_percent as usize,
                    new.face_share_percent as usize,
                ),
                (
                    "limits.evict_idle_ms",
                    old.evict_idle_ms as usize,
                    new.evict_idle_ms as usize,
                ),
            ] {
                if was != now {
                    tracing::info!(key, old = was, new = now, "reload: applied");
                }
            }
            // The shell's admission reads `self.cfg.limits` for each new
            // peer; the engine holds the byte budgets and the face share.
            self.node
                .forwarder_mut()
                .apply_budgets(&cfg.engine_config());
            let fwd = self.node.forwarder();
            for (key, held, bound) in [
                ("limits.max_faces", self.on_demand_faces(), new.max_faces),
                ("limits.pit_max_bytes", fwd.pit_bytes(), new.pit_max_bytes),
                (
                    "limits.queue_max_bytes",
                    fwd.queued_bytes(),
                    new.queue_max_bytes,
                ),
            ] {
                if held > bound {
                    tracing::info!(key, held, new = bound,
                        "reload: more held than the new bound; it stays until it drains, nothing new is admitted above it");
                }
            }
            self.cfg.limits = new.clone();
        }
        if cfg.mgmt != self.cfg.mgmt {
            let (old, new) = (&self.cfg.mgmt, &cfg.mgmt);
            match ScopePolicy::from_config(new) {
                Ok(policy) => {
                    if old.localhop != new.localhop {
                        tracing::info!(
                            key = "mgmt.localhop",
                            old = old.localhop,
                            new = new.localhop,
                            "reload: applied"
                        );
                    }
                    if old.trust_anchor != new.trust_anchor {
                        tracing::info!(
                            key = "mgmt.trust_anchor",
                            old = old.trust_anchor.len(),
                            new = new.trust_anchor.len(),
                            "reload: applied (keys' last SignatureTime kept)"
                        );
                    }
                    if old.refusal_log_interval_s != new.refusal_log_interval_s {
                        tracing::info!(
                            key = "mgmt.refusal_log_interval_s",
                            old = old.refusal_log_interval_s,
                            new = new.refusal_log_interval_s,
                            "reload: applied"
                        );
                    }
                    self.node.set_mgmt_policy(policy);
                    self.cfg.mgmt = new.clone();
                }
                // Config::from_file validated it; keep the running policy if not.
                Err((key, why)) => {
                    tracing::error!(key = %key, why, "reload: keeping the running [mgmt]")
                }
            }
        }
        for (key, changed) in [
            ("tables", self.cfg.tables != cfg.tables),
            ("unix", self.cfg.unix != cfg.unix),
            ("udp", self.cfg.udp != cfg.udp),
            ("tcp", self.cfg.tcp != cfg.tcp),
            ("multicast", self.cfg.multicast != cfg.multicast),
            ("ethernet", self.cfg.ethernet != cfg.ethernet),
            ("cc", self.cfg.cc != cfg.cc),
            (
                "multicast_groups",
                self.cfg.multicast_groups != cfg.multicast_groups,
            ),
            ("metrics", self.cfg.metrics != cfg.metrics),
        ] {
            if changed {
                tracing::info!(
                    key,
                    "reload: section read at start only; the running values stay until restart"
                );
            }
        }
    }
}
