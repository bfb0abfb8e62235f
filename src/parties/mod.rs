//! Many data holders: M parties, each holding its own records of the model's family and releasing
//! through its own certified ε-DP mechanism (privacy per party, Chen & Sung's setting), and an
//! aggregator that knows the mechanisms and computes the exact Bayes aggregate of the M releases.
//!
//! - [`local`]: the per-party mechanisms — `ubapp-local` (the single-party UBaPP optimum, which
//!   releases a Bayes point of its own data) and `geometric-local` (a likelihood-preserving release
//!   with release space Y: the truncated geometric on the count, Ghosh, Roughgarden & Sundararajan
//!   2009, or the exponential mechanism on the neighbour graph's distance for graph families), both
//!   quantised to integer weights and certified exactly as an artifact is.
//! - [`aggregate`]: the likelihood of a release r_θ(k) = Σ_y q_θ(y) P\[k, y\], the posterior over
//!   the parameter grid given the M releases, and the Bayes action (posterior mean for squared
//!   loss, coordinate-wise posterior median for absolute loss, the best output-grid point for any
//!   other loss).
//! - [`risk`]: the aggregate's exact risk (a sum over the histogram of the M releases, the
//!   releases' sufficient statistic since the parties use the same mechanism) or, when that sum is
//!   too long, stratified Monte Carlo with its standard error; the method is named in the result.
//! - [`shares`]: the distributed geometric: noise shares whose sum is the optimal central
//!   two-sided geometric, with exact integer samplers, and the secure-aggregation protocol.

pub mod aggregate;
mod error;
pub mod local;
pub mod risk;
pub mod shares;

pub use aggregate::{Aggregate, Aggregator};
pub use error::PartiesError;
pub use local::{LocalDesign, LocalMechanism};
pub use risk::{party_risk, PartyRisk, RiskOptions};
