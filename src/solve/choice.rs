//! Which solver to use (the `solver` parameter), and the one function that decides the route a
//! model takes.

use crate::guard::{ArgumentError, Parameter};
use std::fmt;
use std::str::FromStr;

use super::backend::LpSolver;
use super::SolveError;
use crate::model::{Model, Neighbours};

/// Which solver to use: the `solver` parameter (the names are the kebab-case variant names,
/// [`SolverChoice::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolverChoice {
    /// Decided per model: the exact chain solver for chain neighbours and the plain Bayes
    /// program; on other explicit neighbour graphs the block interior point, then HiGHS's
    /// interior point, then Clarabel (HiGHS first on a symmetric model's orbit LP, and on a
    /// constrained program, which is solved whole); on banded relations Clarabel, then HiGHS.
    /// Where that exact route would not fit the memory budget or the time (--max-seconds, else
    /// 10 minutes), the anytime route on plain programs.
    // (The command line's help restates these lines. The decision is `Route::for_model`.)
    Auto,
    /// HiGHS, letting it choose the method (dual simplex on these LPs).
    Highs,
    /// HiGHS dual simplex.
    HighsSimplex,
    /// HiGHS interior point with crossover.
    HighsIpm,
    /// The block interior point built for the UBaPP LP's structure (one sparse factorisation per
    /// output, a dense Schur complement on the column sums), then repricing and the active-set
    /// polish. Plain Bayes programs only.
    BlockIpm,
    /// Clarabel interior point (with a regularisation ladder and the active-set polish).
    Clarabel,
    /// good_lp with its default backend here (HiGHS, else Clarabel, else microlp).
    GoodLp,
    /// good_lp driving HiGHS.
    GoodLpHighs,
    /// good_lp driving Clarabel.
    GoodLpClarabel,
    /// good_lp with microlp (pure-Rust simplex; small problems only).
    GoodLpMicrolp,
    /// The structured chain solver (geometric + remap or column generation, certified).
    Chain,
    /// The anytime route at any size: first-order iterations (restarted PDHG) that never build
    /// the LP, stopping at the certified gap (--gap) or the time limit with an exactly ε-DP
    /// mechanism and a proven lower bound. Plain Bayes programs only.
    Anytime,
}

impl SolverChoice {
    /// Every choice, in the order the command line's help lists them.
    pub const ALL: [SolverChoice; 12] = [
        SolverChoice::Auto,
        SolverChoice::Highs,
        SolverChoice::HighsSimplex,
        SolverChoice::HighsIpm,
        SolverChoice::BlockIpm,
        SolverChoice::Clarabel,
        SolverChoice::GoodLp,
        SolverChoice::GoodLpHighs,
        SolverChoice::GoodLpClarabel,
        SolverChoice::GoodLpMicrolp,
        SolverChoice::Chain,
        SolverChoice::Anytime,
    ];

    /// Every choice, in the order the command line's help lists them.
    pub fn all() -> &'static [SolverChoice] {
        &SolverChoice::ALL
    }

    /// The choice's name (kebab case), the one list of names: what `solver` takes and
    /// [`Display`](fmt::Display) writes.
    pub const fn name(self) -> &'static str {
        match self {
            SolverChoice::Auto => "auto",
            SolverChoice::Highs => "highs",
            SolverChoice::HighsSimplex => "highs-simplex",
            SolverChoice::HighsIpm => "highs-ipm",
            SolverChoice::BlockIpm => "block-ipm",
            SolverChoice::Clarabel => "clarabel",
            SolverChoice::GoodLp => "good-lp",
            SolverChoice::GoodLpHighs => "good-lp-highs",
            SolverChoice::GoodLpClarabel => "good-lp-clarabel",
            SolverChoice::GoodLpMicrolp => "good-lp-microlp",
            SolverChoice::Chain => "chain",
            SolverChoice::Anytime => "anytime",
        }
    }

    /// Other names the choice answers to (`good_lp`, the crate's own spelling).
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            SolverChoice::GoodLp => &["good_lp"],
            _ => &[],
        }
    }

    /// The cargo feature(s) a choice needs, if it is not compiled in.
    fn missing_feature(self) -> Option<&'static str> {
        let (needed, present) = match self {
            SolverChoice::Auto | SolverChoice::Chain | SolverChoice::BlockIpm | SolverChoice::Anytime => return None,
            SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm => {
                ("highs", cfg!(feature = "highs"))
            }
            SolverChoice::Clarabel => ("clarabel", cfg!(feature = "clarabel")),
            SolverChoice::GoodLp | SolverChoice::GoodLpMicrolp => ("good_lp", cfg!(feature = "good_lp")),
            SolverChoice::GoodLpHighs => ("good_lp,highs", cfg!(all(feature = "good_lp", feature = "highs"))),
            SolverChoice::GoodLpClarabel => ("good_lp,clarabel", cfg!(all(feature = "good_lp", feature = "clarabel"))),
        };
        (!present).then_some(needed)
    }

    /// True for HiGHS's own choices (direct, not through good_lp): the backends that solve the
    /// orbit LP of a symmetric model.
    pub(crate) fn is_highs(self) -> bool {
        matches!(self, SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm)
    }

    /// True for the choices that run Clarabel (directly or through good_lp).
    pub(crate) fn is_clarabel(self) -> bool {
        matches!(self, SolverChoice::Clarabel | SolverChoice::GoodLpClarabel)
    }

    /// True when this build can run it.
    pub fn is_available(self) -> bool {
        self.missing_feature().is_none()
    }

    /// Refuse a choice this build cannot run.
    pub(crate) fn check_available(self) -> Result<(), SolveError> {
        match self.missing_feature() {
            Some(feature) => Err(SolveError::NotCompiled { choice: self, feature }),
            None => Ok(()),
        }
    }

    /// The backend of an LP choice (not `Auto`), reporting its iterations to `progress` where the
    /// solver offers a callback.
    pub(crate) fn backend(
        self,
        limits: super::backend::Limits,
        progress: &super::Progress,
    ) -> Result<Box<dyn LpSolver>, SolveError> {
        self.check_available()?;
        #[allow(unreachable_code, unused_variables)]
        let backend: Box<dyn LpSolver> = match self {
            SolverChoice::Auto => {
                return Err(SolveError::NotApplicable {
                    choice: self,
                    requirement: "is a route, not a backend (Route::for_model resolves it)",
                    model: "this LP".into(),
                })
            }
            SolverChoice::Chain => Box::new(super::chain::ChainSolver),
            SolverChoice::Anytime => {
                return Err(SolveError::NotApplicable {
                    choice: self,
                    requirement: "is a route of its own, not an LP backend",
                    model: "this LP".into(),
                })
            }
            SolverChoice::BlockIpm => {
                Box::new(super::structured::BlockIpmSolver { limits, progress: progress.clone() })
            }
            #[cfg(feature = "highs")]
            SolverChoice::Highs => Box::new(super::highs::HighsSolver {
                method: super::highs::HighsAlgorithm::Choose,
                limits,
                progress: progress.clone(),
            }),
            #[cfg(feature = "highs")]
            SolverChoice::HighsSimplex => Box::new(super::highs::HighsSolver {
                method: super::highs::HighsAlgorithm::Simplex,
                limits,
                progress: progress.clone(),
            }),
            #[cfg(feature = "highs")]
            SolverChoice::HighsIpm => Box::new(super::highs::HighsSolver {
                method: super::highs::HighsAlgorithm::Ipm,
                limits,
                progress: progress.clone(),
            }),
            #[cfg(feature = "clarabel")]
            SolverChoice::Clarabel => Box::new(super::clarabel::ClarabelSolver {
                progress: progress.clone(),
                ..super::clarabel::ClarabelSolver::with_limits(limits)
            }),
            #[cfg(feature = "good_lp")]
            SolverChoice::GoodLp => {
                Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::preferred(), limits })
            }
            #[cfg(all(feature = "good_lp", feature = "highs"))]
            SolverChoice::GoodLpHighs => {
                Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::Highs, limits })
            }
            #[cfg(all(feature = "good_lp", feature = "clarabel"))]
            SolverChoice::GoodLpClarabel => {
                Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::Clarabel, limits })
            }
            #[cfg(feature = "good_lp")]
            SolverChoice::GoodLpMicrolp => {
                Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::Microlp, limits })
            }
            #[allow(unreachable_patterns)]
            other => return Err(SolveError::NotCompiled { choice: other, feature: "?" }),
        };
        Ok(backend)
    }
}

/// The name `solver` takes ([`SolverChoice::name`]).
impl fmt::Display for SolverChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A choice by its name or an alias (exactly, case and all).
impl FromStr for SolverChoice {
    type Err = ArgumentError;
    fn from_str(s: &str) -> Result<Self, ArgumentError> {
        SolverChoice::ALL.into_iter().find(|c| c.name() == s || c.aliases().contains(&s)).ok_or_else(|| {
            let names: Vec<&str> = SolverChoice::ALL.iter().map(|c| c.name()).collect();
            ArgumentError::new(
                Parameter::Solver,
                format!("names no known solver \"{s}\" (expected one of {})", names.join(", ")),
            )
        })
    }
}

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
    /// Bayes one; on another explicit neighbour graph with the plain program the block interior
    /// point, then HiGHS, then Clarabel (`lp_order_for`; HiGHS first where a symmetric model has
    /// its orbit LP, `structured::order_for`); otherwise Clarabel then HiGHS, HiGHS first on an
    /// explicit neighbour graph.
    ///
    /// Why the LP order depends on the graph: on a chain or band the KKT system of an
    /// interior-point method stays banded and Clarabel wins by far (HiGHS dual simplex: > 120 s at
    /// (K, M) = (300, 300) where Clarabel takes 5 s); on the multinomial's lattice it fills in and
    /// HiGHS wins (`models/vote-share-3way.toml` at ε = 0.5: 45 s against 217 s), its interior
    /// point with crossover ahead of its dual simplex (multinomial d = 3, K = 40 on the orbit LP:
    /// 24 s against 35 s). On a model with symmetries HiGHS solves the orbit LP
    /// (`lp::Symmetry`).
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
                } else if graph {
                    "auto: an explicit neighbour graph, so the block interior point first (HiGHS first on a symmetric model's orbit LP), then HiGHS interior point, then Clarabel"
                } else {
                    "auto: a banded neighbour relation, so Clarabel first, then HiGHS"
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
                other.check_available()?;
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

/// Explicit graphs: the block interior point (plain programs only), then HiGHS's interior point,
/// then Clarabel; chains and bands: Clarabel, then HiGHS.
fn lp_order_for(graph: bool, plain: bool) -> Vec<SolverChoice> {
    let order: &[SolverChoice] = match (graph, plain) {
        (true, true) => &[SolverChoice::BlockIpm, SolverChoice::HighsIpm, SolverChoice::Clarabel],
        (true, false) => &[SolverChoice::HighsIpm, SolverChoice::Clarabel],
        (false, _) => &[SolverChoice::Clarabel, SolverChoice::Highs],
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
