//! Values that parse but leave the daemon useless, rejected with the key
//! named (`icnfwd check-config`, at start and on SIGHUP): a PIT of 0
//! entries Nacks every Interest, `status` included; a log filter that
//! `tracing` reads as a target name (`verbose!!`) silences every line.

/// Level names a filter directive may end with.
const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];

/// Checks a `log_level` filter (RUST_LOG syntax) strictly: every
/// comma-separated directive is a level, a module path, or
/// `target[span{field}]=level`.
pub(crate) fn check_log_filter(filter: &str) -> Result<(), String> {
    if filter.trim().is_empty() {
        return Err("empty filter".into());
    }
    tracing_subscriber::EnvFilter::try_new(filter).map_err(|e| e.to_string())?;
    for d in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let (target, level) = match d.rsplit_once('=') {
            // `=` inside `{field=value}` belongs to the span filter.
            Some((t, l)) if !l.contains('}') => (t, Some(l)),
            _ => (d, None),
        };
        if let Some(l) = level {
            if !LEVELS.contains(&l.to_ascii_lowercase().as_str()) {
                return Err(format!(
                    "`{d}`: `{l}` is not a level ({})",
                    LEVELS.join(", ")
                ));
            }
        }
        let path = target.split('[').next().unwrap_or_default();
        if level.is_none() && LEVELS.contains(&path.to_ascii_lowercase().as_str()) {
            continue;
        }
        let ok = path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '-');
        if !ok || (path.is_empty() && !target.starts_with('[')) {
            return Err(format!(
                "`{d}` is neither a level ({}) nor `target=level`",
                LEVELS.join(", ")
            ));
        }
    }
    Ok(())
}

/// Table bounds that must not be zero: (key, value).
pub(crate) fn check_nonzero(values: &[(&str, u64)]) -> Result<(), (String, String)> {
    match values.iter().find(|(_, v)| *v == 0) {
        Some((k, _)) => Err(((*k).to_owned(), "must be at least 1".into())),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_filters() {
        for ok in [
            "info",
            "WARN",
            "icn_forwarder=debug",
            "info,icn_forwarder::daemon=trace",
            "icn_forwarder",
            "h2=off,tokio-util=warn",
            "[span{field=value}]=debug",
        ] {
            assert_eq!(check_log_filter(ok), Ok(()), "{ok}");
        }
        for bad in ["verbose!!", "", "info,icn=loud", "a b", "=info"] {
            assert!(check_log_filter(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zero_bounds_name_the_key() {
        assert_eq!(check_nonzero(&[("a", 1), ("b", 2)]), Ok(()));
        assert_eq!(check_nonzero(&[("a", 1), ("b", 0)]).unwrap_err().0, "b");
    }
}
