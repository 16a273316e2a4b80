//! The library's one error type: what went wrong, and in which file.

use std::path::PathBuf;

/// Errors of loading a scenario, running it and writing its report.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A TOML or schema error (an unknown key among them) at a position.
    #[error("{file}:{line}:{column}: {msg}")]
    Toml {
        file: String,
        line: usize,
        column: usize,
        msg: String,
    },
    /// The file is valid TOML but not a usable scenario.
    #[error("{file}: {msg}")]
    Invalid { file: String, msg: String },
    /// The scenario asks for something a runner cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// The namespace runner failed (its message names the process or step).
    #[error("real run: {0}")]
    Real(String),
    /// A sweep point that does not describe a topology.
    #[error("{0}")]
    Sweep(String),
    /// A plot could not be drawn.
    #[error("plot {file}: {msg}")]
    Plot { file: String, msg: String },
}

impl LabError {
    /// A `toml` error placed at its line and column in `text`.
    pub(crate) fn toml(file: &str, text: &str, e: &toml::de::Error) -> LabError {
        let start = e.span().map_or(0, |s| s.start).min(text.len());
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let column = start - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        LabError::Toml {
            file: file.to_string(),
            line,
            column,
            msg: e.message().to_string(),
        }
    }
}

impl From<String> for LabError {
    fn from(msg: String) -> Self {
        LabError::Real(msg)
    }
}
