//! One backend's attempt at one LP: by output generation ([`outputs`]) where it applies, is on and
//! certifies its answer, else on the whole LP ([`strategy::run_whole`]). The one place that
//! decides between the two, so neither module calls the other back.

use std::time::Instant;

use super::assess::Judged;
use super::backend::Limits;
use super::progress::Phase;
use super::strategy::run_whole;
use super::{outputs, SolveError, SolveOptions, SolverChoice, Status};
use crate::lp::Problem;

/// Run `choice`'s backend on `problem`: by output generation ([`outputs`]) where it applies, is
/// on in `options` and certifies its answer, else on the whole LP ([`run_whole`]).
pub(crate) fn run(problem: &Problem, choice: SolverChoice, options: &SolveOptions) -> Result<Judged, SolveError> {
    let (limits, polish, progress) = (options.limits, options.polish, &options.progress);
    if !(options.output_generation && outputs::applies(problem)) {
        progress.phase(Phase::WholeLp);
        return run_whole(problem, choice, limits, polish, progress);
    }
    let started = Instant::now();
    let generation = progress.time("output generation");
    let generated = outputs::run(problem, choice, limits, polish, progress);
    drop(generation);
    let why = match generated {
        Ok(g) if g.judged.raw.status == Status::TimeLimit => return Ok(g.judged),
        Ok(g) if g.judged.assessment.confirmed => {
            let mut judged = g.judged;
            judged.raw.detail = format!(
                "{}; by output generation: {} of {} outputs in {} round(s)",
                judged.raw.detail,
                g.outputs_used,
                problem.n_outputs(),
                g.rounds
            );
            return Ok(judged);
        }
        // Every output was in the restricted LP: it was the whole LP, solved by the same backend.
        Ok(g) if g.outputs_used == problem.n_outputs() => {
            let mut judged = g.judged;
            judged.raw.detail = format!("{}; all {} outputs were needed", judged.raw.detail, g.outputs_used);
            return Ok(judged);
        }
        Ok(g) => format!(
            "output generation on {} of {} outputs not confirmed (gap {:.1e})",
            g.outputs_used,
            problem.n_outputs(),
            g.judged.assessment.checks.relative_gap.unwrap_or(f64::INFINITY)
        ),
        Err(why) => format!("output generation stopped: {why}"),
    };
    let limits = Limits { seconds: limits.remaining_after(started.elapsed()), ..limits };
    if limits.seconds == Some(0.0) {
        // No time is left for the whole LP: the route's time-limit fallbacks answer.
        return Err(SolveError::NoSolution {
            solver: choice,
            eps: problem.eps,
            status: Status::TimeLimit,
            detail: format!("{why}; no time left for the whole LP"),
        });
    }
    progress.phase(Phase::WholeLp);
    let mut judged = run_whole(problem, choice, limits, polish, progress)?;
    judged.raw.detail = format!("{}; {why}, so the whole LP", judged.raw.detail);
    Ok(judged)
}
