//! Configuration tables: permanent faces, static routes (origin 255) and
//! strategy choices, applied at start and again on SIGHUP, which also
//! reloads the log filter, `[limits]` and `[mgmt]` (`limits.rs`). Reloads
//! never drop a face.

use super::Shell;
use crate::config::Config;
use crate::engine::FaceId;
use crate::mgmt::rib::ORIGIN_STATIC;
use crate::mgmt::Route;

impl Shell {
    /// Opens new permanent faces, replaces static routes and strategies.
    pub(super) fn apply_config_tables(&mut self, cfg: &Config) -> anyhow::Result<()> {
        for i in 0..cfg.face.len() {
            let uri = cfg.face_uri(i)?;
            if self.config_faces.contains_key(&uri) {
                continue;
            }
            let f = &cfg.face[i];
            let id = self.open_permanent(&uri, f.capacity_bps, f.ingress_capacity_bps, f.mtu)?;
            // Link emulation (testbeds): delay/loss after the face's shaper.
            let _ = self
                .node
                .forwarder_mut()
                .set_face_emulation(id, f.emulation());
            self.config_faces.insert(uri, id);
        }
        self.node.remove_routes_of_origin(ORIGIN_STATIC);
        for r in cfg.routes()? {
            let faces: Vec<FaceId> = match self.config_faces.get(&r.face) {
                Some(f) => vec![*f],
                None => self.group_faces.get(&r.face).cloned().unwrap_or_default(),
            };
            if faces.is_empty() {
                // A [[ethernet]] or [multicast] face added by a reload is
                // only opened at the next start.
                tracing::warn!(prefix = %r.prefix, face = %r.face, "route to a face that is not open");
            }
            for face in faces {
                let route = Route::from_config(face.0, r.cost);
                self.node
                    .add_route(r.prefix.clone(), route)
                    .map_err(|e| anyhow::anyhow!("route {}: {e}", r.prefix))?;
            }
        }
        let wanted = cfg.strategies()?;
        for old in std::mem::take(&mut self.config_strategies) {
            if !wanted.iter().any(|(p, _)| *p == old) {
                self.node.unset_strategy(&old);
            }
        }
        for (prefix, s) in wanted {
            self.node
                .set_strategy(&prefix, &s)
                .ok_or_else(|| anyhow::anyhow!("unknown strategy {s} for {prefix}"))?;
            self.config_strategies.push(prefix);
        }
        Ok(())
    }

    /// SIGHUP: re-read the file; replace static routes and strategies, open
    /// new permanent faces, apply the new log level, `[limits]` and
    /// `[mgmt]`, keep every existing face.
    pub(super) fn reload(&mut self) {
        let Some(path) = self.config_path.clone() else {
            tracing::info!("SIGHUP without --config: nothing to reload");
            return;
        };
        match Config::from_file(&path) {
            Ok(cfg) => {
                self.reload_limits_and_mgmt(&cfg);
                if let Err(e) = self.apply_config_tables(&cfg) {
                    tracing::error!(error = %e, "reload failed part way");
                } else {
                    tracing::info!(path = %path.display(), "configuration reloaded");
                }
                if cfg.log_level != self.cfg.log_level {
                    self.reload_log_level(&cfg.log_level);
                }
                self.cfg.route = cfg.route.clone();
                self.cfg.strategy = cfg.strategy.clone();
                self.cfg.face = cfg.face.clone();
                self.cfg.log_level = cfg.log_level.clone();
            }
            Err(e) => tracing::error!(error = %e, "reload: keeping the old configuration"),
        }
    }

    fn reload_log_level(&self, level: &str) {
        match &self.log_reload {
            Some(f) => match f(level) {
                Ok(()) => tracing::info!(log_level = level, "log level reloaded"),
                Err(e) => tracing::error!(error = %e, "log level reload failed"),
            },
            None => tracing::info!("log level fixed by RUST_LOG; not reloaded"),
        }
    }
}
