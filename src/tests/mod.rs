#![allow(unreachable_pub)] // helpers shared with tests/common, where they must be pub
//! Scenario tests of the crate internals (the LP, the solvers, the certificate arithmetic); the
//! public surface is tested from `tests/`.

pub(crate) mod common;

mod anytime;
pub(crate) mod block_ipm;
mod breadth_families;
mod breadth_programs;
mod chain_solver;
#[cfg(all(feature = "clarabel", feature = "highs"))]
mod constraints;
mod estimate;
#[cfg(feature = "highs")]
mod exact_bound;
mod mechanism_delta;
mod mechanism_properties;
mod optimum_checks;
mod outputs;
mod polish;
mod probes;
mod refine;
mod reprice;
mod solve_plan;
mod symmetry;
