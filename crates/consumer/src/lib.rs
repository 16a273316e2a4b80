//! Consumer and producer pipelines.
