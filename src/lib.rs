//! # ubapp — optimal differentially private Bayes point estimators
//!
//! UBaPP (Lakshminarayanan & Rojas, IFAC 2023) designs the randomised estimator itself rather than
//! adding noise to a deterministic one: with a discretised parameter space Θ, prior π, a finite
//! observation space Y and an output grid Θ̃, the ε-DP estimator of least Bayes risk is the
//! solution P (`P[k,i] = Pr(release θ̃_k | y_i)`) of a linear program.
//!
//! The user's surface is four modules and a trait: [`model`] (a model file, validated),
//! [`solve`] (the optimum for each ε, with a certified lower bound), [`mechanism`] (the released
//! mechanism: integer weights, an exact privacy certificate and an exact sampler), [`compare`]
//! (the literature's estimators beside it) and [`eval::Estimator`]. Data flows one way:
//!
//! ```text
//! model file ─► model::Model ─► (LP) ─► solve::Solution ─► mechanism::Release ─► sample / verify / audit
//!                                        (P, risk, bound,    (repaired, quantised,
//!                                         checks)             certified exactly)
//! ```
//!
//! Solve a small model and check what came back:
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
//! assert!(solutions[0].checks.max_dp_violation <= 1e-9);
//! ```
//!
//! From a solution to a deployed mechanism: certify it, save the artifact, load it back (which
//! re-derives the certificate from the integer weights) and release values with the exact
//! sampler:
//!
//! ```
//! use rand::{rngs::StdRng, SeedableRng};
//! use ubapp::mechanism::Release;
//! use ubapp::model::{Model, ModelSpec};
//! use ubapp::solve::{solve_model, SolverChoice};
//!
//! # fn main() -> ubapp::Result<()> {
//! let text = "name = \"coin\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"midpoint\", points = 10 }\n\
//!             prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 20\n\
//!             [loss]\nkind = \"squared\"\n";
//! let model = Model::from_spec(ModelSpec::from_toml(text, "coin")?)?;
//! let solution = solve_model(&model, None, SolverChoice::Auto)?.remove(0);
//! let mechanism = Release::certify(&model, &solution)?; // repair, quantise, certify
//! assert!(mechanism.certified_eps() <= 1.0);
//!
//! let dir = tempfile::tempdir().expect("a temporary directory");
//! let path = dir.path().join("coin.json");
//! mechanism.save(&path)?; // atomic write
//! let loaded = Release::load(&path)?; // re-verifies from the weights
//! assert_eq!(loaded.certified_eps(), mechanism.certified_eps());
//!
//! let y = loaded.observation_index(&[13.0]).expect("13 successes is an observation");
//! let draws = loaded.sample_batch(y, 5, &mut StdRng::seed_from_u64(7));
//! assert!(draws.iter().all(|&k| k < loaded.n_outputs()));
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(unreachable_pub)]

/// `impl From<Source> for Target` that boxes the source into a variant: a layer's error keeps
/// the larger errors of the layers below it boxed, so every `Result` stays small.
macro_rules! boxed_from {
    ($target:ident { $($source:ty => $variant:ident),+ $(,)? }) => {
        $(
            impl From<$source> for $target {
                fn from(e: $source) -> Self {
                    $target::$variant(Box::new(e))
                }
            }
        )+
    };
}

pub mod analysis;
pub mod baselines;
pub mod bindings;
pub(crate) mod certify;
pub mod compare;
pub mod data;
pub mod error;
pub mod eval;
pub mod guard;
pub mod ledger;
pub(crate) mod lp;
pub mod mechanism;
pub mod model;
pub(crate) mod numeric;
pub mod output;
pub mod parties;
#[cfg(feature = "python")]
mod python;
pub mod report;
pub mod solve;
pub mod sweep;

pub use error::{Error, Result};
pub use lp::MemoryBudget;
/// The `rand` crate this API is written against (`Release::sample` takes its `Rng`): use
/// `ubapp::rand::{rngs::StdRng, SeedableRng}` to get the matching version without a dependency.
pub use rand;

#[cfg(test)]
mod tests;
