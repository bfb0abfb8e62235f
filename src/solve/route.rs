//! The one function that decides the route a model takes ([`Route::for_model`]), and why.

use std::fmt;

use super::{SolveError, SolverChoice};
use crate::guard::Parameter;
use crate::model::{Model, Neighbours};

/// Why a model's solves take their route: `solver_detail` starts with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `auto`'s decision, in words.
    Auto(&'static str),
    /// The caller chose the solver.
    Chosen(SolverChoice),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Auto(why) => f.write_str(why),
            Reason::Chosen(SolverChoice::Chain) => write!(f, "{} chain", Parameter::Solver),
            Reason::Chosen(_) => write!(f, "chosen with {}", Parameter::Solver),
        }
    }
}

/// The route a model's solves take, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The exact chain solver; if it cannot certify an optimum, the LP backends in `fallback`
    /// order.
    Chain {
        /// LP backends to fall back on, in order.
        fallback: Vec<SolverChoice>,
        /// Why this route.
        reason: Reason,
    },
    /// LP backends in order until one is confirmed optimal (the best-ranked answer is kept).
    Lp {
        /// LP backends to try, in order.
        backends: Vec<SolverChoice>,
        /// Why this route.
        reason: Reason,
    },
    /// The anytime route (`solve::anytime`): a certified mechanism and a proven bound at any
    /// size, until the target gap or the time limit.
    Anytime {
        /// Why this route.
        reason: Reason,
    },
}

impl Route {
    /// The one decision of which solvers a model's LP goes to for `choice`. `Auto`: the chain
    /// solver when the neighbour relation is the chain y ~ y ± 1 and the program is the plain
    /// Bayes one; otherwise, on the plain program, the block interior point first, then on an
    /// explicit neighbour graph HiGHS and Clarabel (`lp_order_for`; HiGHS first where a symmetric
    /// model has its orbit LP, `structured::order_for`), on a chain or band Clarabel and HiGHS;
    /// on the (ε, δ), minimax or constrained programs HiGHS's interior point first on a graph,
    /// Clarabel first on a chain or band.
    ///
    /// Why the order depends on the relation and the program: the block interior point only ever
    /// factorises one output row's |Y| × |Y| matrix and the |Y| × |Y| Schur complement, and wins
    /// wherever it applies (multinomial d = 3, K = 40: 8 s against HiGHS's 239 s; the clipped
    /// Poisson sum of 200 records, cap 5: 17 s against Clarabel's 996 s, docs/benchmarks.md). Of
    /// the general backends, on a chain or band the KKT system of an interior point stays banded
    /// and Clarabel wins by far (HiGHS dual simplex: > 120 s at (K, M) = (300, 300) where Clarabel
    /// takes 5 s); on the multinomial's lattice it fills in and HiGHS wins
    /// (`models/vote-share-3way.toml` at ε = 0.5: 45 s against 217 s), its interior point with
    /// crossover ahead of its dual simplex (multinomial d = 3, K = 40 on the orbit LP: 24 s
    /// against 35 s). On a model with symmetries HiGHS solves the orbit LP (`lp::Symmetry`).
    pub fn for_model(model: &Model, choice: SolverChoice) -> Result<Route, SolveError> {
        let plain = model.is_plain_program();
        let (chain, graph) = neighbour_shape(model);
        match choice {
            SolverChoice::Auto if plain && chain => Ok(Route::Chain {
                fallback: lp_order_for(graph, plain),
                reason: Reason::Auto("auto: chain neighbours and the plain Bayes program, so the exact chain solver"),
            }),
            SolverChoice::Auto => {
                let backends = lp_order_for(graph, plain);
                if backends.is_empty() {
                    return Err(SolveError::NoBackend);
                }
                let reason = if !model.constraints().is_empty() {
                    // Output generation, the orbit LP and the polish are for the plain program
                    // only (`Program::is_plain`): the constrained LP is solved whole.
                    if graph {
                        "auto: [constraints] rows, so the whole LP (no chain solver, output generation, orbit LP or polish), HiGHS interior point first, then Clarabel"
                    } else {
                        "auto: [constraints] rows, so the whole LP (no chain solver, output generation, orbit LP or polish), Clarabel first, then HiGHS"
                    }
                } else {
                    match (graph, plain) {
                        (true, true) => "auto: an explicit neighbour graph and the plain Bayes program, so the block interior point first (HiGHS first on a symmetric model's orbit LP), then HiGHS interior point, then Clarabel",
                        (true, false) => "auto: an explicit neighbour graph and the (ε, δ) or minimax program, so HiGHS interior point first, then Clarabel",
                        (false, true) => "auto: a chain or banded neighbour relation and the plain Bayes program, so the block interior point first, then Clarabel, then HiGHS",
                        (false, false) => "auto: a chain or banded neighbour relation and the (ε, δ) or minimax program, so Clarabel first, then HiGHS",
                    }
                };
                Ok(Route::Lp { backends, reason: Reason::Auto(reason) })
            }
            SolverChoice::Chain if !plain => Err(SolveError::NotApplicable {
                choice,
                requirement: "solves the plain Bayes program only (no delta, objective = \"bayes\", no [constraints])",
                model: model.name().to_string(),
            }),
            SolverChoice::Chain if !chain => Err(SolveError::NotApplicable {
                choice,
                requirement: "needs the chain neighbour relation y ~ y ± 1",
                model: model.name().to_string(),
            }),
            SolverChoice::Chain => {
                Ok(Route::Chain { fallback: lp_order_for(graph, plain), reason: Reason::Chosen(choice) })
            }
            SolverChoice::Anytime if !plain => Err(SolveError::NotApplicable {
                choice,
                requirement: "solves the plain Bayes program only (no delta, objective = \"bayes\", no [constraints])",
                model: model.name().to_string(),
            }),
            SolverChoice::Anytime => Ok(Route::Anytime { reason: Reason::Chosen(choice) }),
            other => {
                SolveError::check_available(other)?;
                Ok(Route::Lp { backends: vec![other], reason: Reason::Chosen(other) })
            }
        }
    }

    /// Why this route, for `solver_detail`.
    pub fn reason(&self) -> Reason {
        match self {
            Route::Chain { reason, .. } | Route::Lp { reason, .. } | Route::Anytime { reason } => *reason,
        }
    }
}

/// `auto`'s LP order for a plain program on `neighbours`; only the backends
/// compiled in.
#[cfg(test)]
pub(crate) fn lp_order(neighbours: &Neighbours) -> Vec<SolverChoice> {
    lp_order_for(matches!(neighbours, Neighbours::Graph { .. }), true)
}

/// The block interior point first on plain programs (it solves only those), then on explicit
/// graphs HiGHS's interior point and Clarabel, on chains and bands Clarabel and HiGHS.
fn lp_order_for(graph: bool, plain: bool) -> Vec<SolverChoice> {
    let order: &[SolverChoice] = match (graph, plain) {
        (true, true) => &[SolverChoice::BlockIpm, SolverChoice::HighsIpm, SolverChoice::Clarabel],
        (true, false) => &[SolverChoice::HighsIpm, SolverChoice::Clarabel],
        (false, true) => &[SolverChoice::BlockIpm, SolverChoice::Clarabel, SolverChoice::Highs],
        (false, false) => &[SolverChoice::Clarabel, SolverChoice::Highs],
    };
    order.iter().copied().filter(|c| c.is_available()).collect()
}

/// (is the chain, is an explicit graph) of the model's neighbour relation, without building the
/// multinomial's edge list (which can be large): a multinomial with d ≥ 3 categories is never the
/// chain, so only d = 2 and tables (whose edges are already in memory) are looked at.
fn neighbour_shape(model: &Model) -> (bool, bool) {
    use crate::model::Family;
    match &model.family {
        Family::Multinomial { categories, .. } if *categories >= 3 => (false, true),
        family => {
            let n = family.neighbours();
            (n.is_chain(), matches!(n, Neighbours::Graph { .. }))
        }
    }
}
