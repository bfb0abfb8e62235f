//! # ubapp — optimal differentially private Bayes point estimators
//!
//! UBaPP (Lakshminarayanan & Rojas, IFAC 2023) designs the randomised estimator itself rather than
//! adding noise to a deterministic one: with a discretised parameter space Θ, prior π, a finite
//! observation space Y and an output grid Θ̃, the ε-DP estimator of least Bayes risk is the
//! solution P (`P[k,i] = Pr(release θ̃_k | y_i)`) of a linear program.
//!
//! The pipeline (one type per stage, data flows one way):
//!
//! ```text
//! model file ─► Model ─► lp::Problem ─► solve::LpSolver ─► solve::Solution (P, risk, checks)
//!                                                          ─► mechanism::Mechanism (integer weights, exact ε certificate, sampler)
//! ```
//!
//! ```
//! use ubapp::model::{Model, ModelSpec};
//! use ubapp::solve::{solve_model, SolverChoice, Status};
//!
//! let spec = ModelSpec::from_toml(r#"
//!     name = "tiny"
//!     epsilon = [0.5]
//!     [parameter]
//!     lower = 0.0
//!     upper = 1.0
//!     grid = { kind = "midpoint", points = 5 }
//!     prior = { kind = "uniform" }
//!     [observation]
//!     family = "binomial"
//!     trials = 4
//!     [loss]
//!     kind = "squared"
//! "#, "example").unwrap();
//! let model = Model::from_spec(spec).unwrap();
//! let solutions = solve_model(&model, None, SolverChoice::Auto).unwrap();
//! assert_eq!(solutions[0].status, Status::Optimal);
//! assert!(solutions[0].max_dp_violation <= 1e-9);
//! ```

#![deny(missing_docs)]

pub mod baselines;
pub mod bench;
pub mod compare;
pub mod error;
pub mod eval;
pub mod lp;
pub mod mechanism;
pub mod model;
pub mod output;
pub mod report;
pub mod solve;

pub use error::{Error, Result};
