//! The experiments: each reads its options, measures, and returns one
//! [`crate::results::Report`] for the table and the exporters. `report` is the main job (every
//! experiment within a budget, one page); the others are its sections in detail (the seeds),
//! and `adapt`, auto mode against every fixed limit.

pub mod adapt;
pub mod adapt_plot;
pub mod frames;
pub mod overhead;
pub mod procs;
pub mod procs_budget;
pub mod report;
pub mod sum;
pub mod sweep;
