//! `ubapp solve MODEL [--eps LIST] [--solver NAME] [--json] [--out FILE]`.

use std::path::{Path, PathBuf};

use ubapp::analysis::SolveSummary;
use ubapp::mechanism::Release;
use ubapp::model::{Model, Objective};
use ubapp::solve::{Estimate, LpSize, Solution, SolveError, SolveOptions, SolvePlan, SolverChoice, Status, Timings};

use super::progress::{seconds, Shown, SolveProgress};
use ubapp::{Error, MemoryBudget, Result};

/// Without `--max-seconds`, a solve estimated to take longer than this is refused up front (with
/// the estimate and the flag to pass) unless `auto` can take the anytime route instead; with it,
/// the solve runs and stops at the limit.
pub use ubapp::solve::DEFAULT_TIME_BUDGET_SECONDS;

/// The share of `--max-seconds` the solve itself may take (the model's load and the estimate
/// before it count against it too).
const SOLVE_SHARE: f64 = 0.95;

/// A solve's memory budget: `UBAPP_MEMORY_LIMIT` (bytes) when set, else 80 % of the memory the OS
/// reports available, or the control group's headroom where less ([`MemoryBudget::for_solve`]).
pub fn memory_budget() -> MemoryBudget {
    MemoryBudget::for_solve()
}

/// Flags of `solve`.
#[derive(clap::Args)]
pub struct Args {
    /// Model file (TOML), e.g. models/bernoulli-k100.toml.
    model: PathBuf,
    /// Comma-separated privacy levels; default: the model's `epsilon` list.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    eps: Option<Vec<f64>>,
    /// Solver (auto = the exact chain solver when the neighbour relation is y ~ y ± 1 and the
    /// program is the plain Bayes one; else on the plain program the block interior point first
    /// (HiGHS first on a symmetric model's orbit LP), then HiGHS and Clarabel; the anytime route
    /// where the exact one would not fit the memory or time budget).
    #[arg(long, value_parser = super::params::solver(), default_value_t = SolverChoice::Auto)]
    solver: SolverChoice,
    /// Print only a JSON array, one object per ε.
    #[arg(long)]
    json: bool,
    /// Write the certified mechanism as a JSON artifact (one ε only; see `ubapp verify`): the
    /// dense weights, or for a large chain model solved in compact form the geometric noise
    /// and remap table.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the LP's size, the route `auto` (or --solver) takes, the memory it needs and a
    /// rough time, and exit without solving.
    #[arg(long)]
    dry_run: bool,
    /// Run for at most S seconds (shared among the ε): a solve stopped by the limit returns
    /// the best certified mechanism found by then, with status time-limit and its gap.
    /// Without it, a solve estimated (see --dry-run) to take more than 10 minutes is refused,
    /// and the anytime route runs for at most 10 minutes; either limit covers the whole command,
    /// the written artifact's check included.
    #[arg(long, value_name = "S")]
    max_seconds: Option<f64>,
    /// Stop the anytime route when the certified relative gap (risk of the released mechanism
    /// minus the proven lower bound, over that risk) is at most G, in (0, 1); default 1e-3.
    /// The exact routes solve to their own tolerance (1e-7).
    #[arg(long, value_name = "G")]
    gap: Option<f64>,
    /// No progress on stderr (the results are printed as usual).
    #[arg(long, short)]
    quiet: bool,
    /// Solve only slice I of N (0-based) of the ε list and write DIR/shard.json (--out DIR)
    /// for `ubapp merge`, which joins the slices into this command's --json. `env` and `env/N`
    /// take I (and N) from a job array's environment, as for `compare --shard`.
    #[arg(long, value_name = "I/N|env|env/N", conflicts_with = "dry_run")]
    shard: Option<String>,
}

/// A solve as asked for: the flags checked, the model loaded and checked against them, the
/// library's options built.
struct Request {
    model_path: PathBuf,
    model: Model,
    /// `--eps`, when given (else the model's list).
    eps: Option<Vec<f64>>,
    out: Option<PathBuf>,
    options: SolveOptions,
    json: bool,
    dry_run: bool,
    quiet: bool,
    /// Where each ε's time went (`--json`'s `phases`).
    timings: Timings,
}

impl Args {
    /// The flags as a checked request: `--max-seconds`, the model file, `--out` (a new file, one ε),
    /// each error naming its flag or file.
    fn validate(self) -> Result<Request> {
        super::common::check_limits(self.max_seconds, self.gap)?;
        let model = Model::load(&self.model)?;
        if let Some(out) = &self.out {
            check_out(out, &self.model, model.csv_files())?;
        }
        let n_eps = self.eps.as_ref().map_or(model.epsilons().len(), Vec::len);
        if self.out.is_some() && n_eps != 1 {
            return Err(Error::argument(
                "--out",
                format!("writes one mechanism: give exactly one ε with --eps (the model lists {n_eps})"),
            ));
        }
        let limits = ubapp::solve::Limits { seconds: self.max_seconds, ..Default::default() };
        let options = SolveOptions {
            solver: self.solver,
            memory: memory_budget(),
            limits,
            gap: self.gap,
            ..SolveOptions::default()
        };
        Ok(Request {
            model_path: self.model,
            model,
            eps: self.eps,
            out: self.out,
            options,
            json: self.json,
            dry_run: self.dry_run,
            quiet: self.quiet,
            timings: Timings::new(),
        })
    }
}

impl Request {
    fn n_eps(&self) -> usize {
        self.eps.as_ref().map_or(self.model.epsilons().len(), Vec::len)
    }

    /// An error about the model as a whole names the model's file.
    fn name_file(&self, e: impl Into<Error>) -> Error {
        super::common::name_model_file(e, &self.model_path)
    }
}

/// Run the command: the flags checked and the model loaded, the solve's plan made once (route,
/// estimate, cost matrix) with every input check of the solve before the header, the solve (rows
/// streamed as each ε is solved), the certified release written; `--dry-run`, the refusal, the
/// solve, the reference risks and the certification all read the one plan.
pub fn run(args: Args) -> Result<()> {
    if args.shard.is_some() {
        return run_shard(args);
    }
    let started = std::time::Instant::now();
    let r = args.validate()?;
    if r.dry_run {
        let plan = SolvePlan::new(&r.model, r.eps.as_deref(), r.options.clone()).map_err(|e| r.name_file(e))?;
        print_estimate(&r.model, plan.estimate(), r.n_eps(), r.json);
        return Ok(());
    }
    let mut plan = check_before_header(&r)?;
    // --max-seconds caps the whole command: the solve gets what the checks before it left of
    // SOLVE_SHARE of it, the rest is for the work after it (the summary, the artifact) — or,
    // where the cost matrix is costly to build, what rebuilding it takes: the summary and the
    // certified artifact read the plan's, the artifact's check as read back builds its own.
    // The anytime route runs until its limit: without --max-seconds the default budget, which
    // caps the whole command in the same way.
    let anytime = matches!(plan.route(), ubapp::solve::Route::Anytime { .. });
    let limit = r.options.limits.seconds.or(anytime.then_some(DEFAULT_TIME_BUDGET_SECONDS));
    if let Some(s) = limit {
        let est = plan.estimate();
        let after = if r.out.is_some() { est.cost_matrix_seconds + est.artifact_seconds } else { 0.0 };
        let reserve = ((1.0 - SOLVE_SHARE) * s).max(after);
        plan.set_time_limit(Some((s - reserve - started.elapsed().as_secs_f64()).max(0.0)));
    }
    let (solutions, streaming) = solve_and_stream(&r, &mut plan)?;
    // The certified mechanism (repaired, quantised, checked exactly; or the compact one) is built
    // before anything is written, so a failure leaves no file behind.
    let built = match r.out {
        None => None,
        Some(_) => Some(Release::certify_planned(&plan, &solutions[0])?),
    };
    print_results(&r, &plan, &solutions, streaming);
    match (&r.out, built) {
        (Some(path), Some(release)) => write_release(&r, path, &release, &solutions[0]),
        _ => Ok(()),
    }
}

/// Bad input answers before the header (nothing on stdout for a refused run): the ε list, the
/// route, the size and the default time budget, priced by the plan's estimate (the one
/// `--dry-run` prints). Returns the plan (the header's sizes, the ETA, the solve).
fn check_before_header(r: &Request) -> Result<SolvePlan<'_>> {
    let plan = SolvePlan::checked(&r.model, r.eps.as_deref(), r.options.clone())?;
    let est = plan.estimate();
    let estimated = est.seconds_per_eps * r.n_eps() as f64;
    if let Some(size) = plan.refusal() {
        return Err(r.name_file(Error::TooLarge(size)));
    }
    if r.options.limits.seconds.is_none() && estimated > DEFAULT_TIME_BUDGET_SECONDS {
        return Err(r.name_file(SolveError::TooSlow {
            estimated_seconds: estimated,
            limit_seconds: DEFAULT_TIME_BUDGET_SECONDS,
            fields: est.fields.clone(),
        }));
    }
    Ok(plan)
}

/// The header, then the plan's solve with progress on stderr. Rows of the plain program are
/// printed as each ε is solved (returned `true`); the (ε, δ) and minimax tables (small programs,
/// extra lines first) are printed once all are.
fn solve_and_stream(r: &Request, plan: &mut SolvePlan<'_>) -> Result<(Vec<Solution>, bool)> {
    let streaming = !r.json && r.model.objective() == Objective::Bayes && r.model.delta() == 0.0;
    let est = plan.estimate();
    if !r.json {
        print_header(&r.model, &est.size);
    }
    let shown = if r.json { Shown::Silent } else { Shown::for_stderr(r.quiet) };
    let estimated = est.seconds_per_eps * r.n_eps() as f64;
    let mut progress = SolveProgress::new(r.n_eps(), Some(estimated), shown);
    progress.set_limits(plan.options().limits, plan.options().gap);
    plan.set_progress(progress.handle().with_timings(r.timings.clone()));
    let mut printed = 0usize;
    let mut each = |s: &Solution| {
        if streaming {
            progress.suspend(|| {
                if printed == 0 {
                    print_columns();
                }
                print_row(s);
            });
        }
        printed += 1;
    };
    let solutions = plan.solve_each(&mut each).map_err(|e| r.name_file(e))?;
    progress.finish();
    Ok((solutions, streaming))
}

/// The results: JSON rows, or the table with its references; the warnings, the time-limit note
/// and the parties note.
fn print_results(r: &Request, plan: &SolvePlan<'_>, solutions: &[Solution], streaming: bool) {
    let context = SolveSummary::of_plan(plan, solutions).with_timings(r.timings.finished());
    if r.json {
        let rows = context.json_rows(solutions);
        outln!("{}", serde_json::to_string_pretty(&rows).expect("solutions serialise"));
    } else if streaming {
        outln!("{FOOTNOTE}");
        print_references(&r.model, solutions, &context);
    } else {
        print_table(&r.model, solutions);
        print_references(&r.model, solutions, &context);
    }
    for w in &context.warnings {
        eprintln!("{w}");
    }
    if let (Some(limit), true) = (r.options.limits.seconds, solutions.iter().any(|s| s.status == Status::TimeLimit)) {
        let note = format!(
            "time-limit: the solve stopped at --max-seconds {limit}; a time-limit row is the best certified mechanism found by then, at most rel_gap above the optimum"
        );
        if r.json {
            eprintln!("{note}");
        } else {
            outln!("{note}");
        }
    }
    if solutions.iter().any(|s| s.status == Status::CertifiedGap) {
        let note = "certified-gap: the anytime route stopped there (--gap, default 1e-3, or the time limit); the mechanism --out writes is exactly ε-DP and its risk is proven at most rel_gap above the optimum, which is proven to lie above dual_bound";
        if r.json {
            eprintln!("{note}");
        } else {
            outln!("{note}");
        }
    }
    if r.model.parties() > 1 {
        eprintln!(
            "note: the model has {} parties: this is one party's mechanism (ε-DP for its own records);              `ubapp compare` evaluates the Bayes aggregate of their releases",
            r.model.parties()
        );
    }
}

/// Save the certified release to `path` and say what was written, with the model's fingerprint
/// (the one a deployer pins with `verify --fingerprint`): on stdout, or stderr under `--json`.
fn write_release(r: &Request, path: &Path, release: &Release, solution: &Solution) -> Result<()> {
    release.save(path)?;
    let note = format!("wrote {}: {}", path.display(), release.written_words(solution.status));
    let note = format!("{note}\nmodel fingerprint {}", r.model.fingerprint());
    if r.json {
        eprintln!("{note}");
    } else {
        outln!("{note}");
    }
    Ok(())
}

/// `solve --shard`: solve the ε of one slice of the list and write `DIR/shard.json` (`out`, a
/// directory here) for `ubapp merge`. The same checks as [`run`], before any work; the time
/// budget is the slice's.
fn run_shard(a: Args) -> Result<()> {
    let Args { model: model_path, eps, solver, json, out, max_seconds, quiet, shard, .. } = a;
    let (model_path, eps) = (model_path.as_path(), eps.as_deref());
    let given = shard.as_deref().unwrap_or_default();
    let (shard, dir) = super::common::shard_and_dir(given, out.as_deref())?;
    if let Some(s) = max_seconds {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::argument("--max-seconds", format!("must be a number of seconds > 0 (got {s})")));
        }
    }
    let model = Model::load(model_path)?;
    ubapp::report::check_report_dir(dir, "--out", &super::common::inputs(model_path, &model))?;
    let name_file = |e: Error| super::common::name_model_file(e, model_path);
    let eps_list: Vec<f64> = eps.map_or_else(|| model.epsilons().to_vec(), <[f64]>::to_vec);
    let limits = ubapp::solve::Limits { seconds: max_seconds, ..Default::default() };
    let options = SolveOptions { solver, memory: memory_budget(), limits, ..SolveOptions::default() };
    // Every ε of the list is checked, whichever slice this is; the slice's own are planned.
    ubapp::solve::check_solve(&model, &eps_list, &options)?;
    let mine = ubapp::sweep::solve::shard_eps(&eps_list, shard);
    let planning = std::time::Instant::now();
    let mut plan = SolvePlan::new(&model, Some(&mine), options.clone()).map_err(Error::from).map_err(name_file)?;
    // The time limit covers the planning too.
    plan.set_time_limit(max_seconds.map(|s| (s - planning.elapsed().as_secs_f64()).max(0.0)));
    let est = plan.estimate();
    let estimated = est.seconds_per_eps * mine.len() as f64;
    if let Some(size) = plan.refusal() {
        return Err(name_file(Error::TooLarge(size)));
    }
    if max_seconds.is_none() && estimated > DEFAULT_TIME_BUDGET_SECONDS {
        let fields = est.fields.clone();
        return Err(name_file(
            SolveError::TooSlow { estimated_seconds: estimated, limit_seconds: DEFAULT_TIME_BUDGET_SECONDS, fields }
                .into(),
        ));
    }
    let shown = if json { Shown::Silent } else { Shown::for_stderr(quiet) };
    if !matches!(shown, Shown::Silent) {
        eprintln!("shard {}/{}: {} of the list's {} ε", shard.index, shard.count, mine.len(), eps_list.len());
    }
    let mut progress = SolveProgress::new(mine.len(), Some(estimated), shown);
    progress.set_limits(options.limits, options.gap);
    plan.set_progress(progress.handle());
    let file = ubapp::sweep::solve::solve_shard(&plan, &eps_list, max_seconds, shard, &mut |_| {})
        .map_err(Error::from)
        .map_err(name_file)?;
    progress.finish();
    file.write(dir)?;
    let rows = file.rows();
    if json {
        outln!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    } else {
        outln!(
            "wrote shard {}/{} ({} row(s)) to {}; join every shard's directory with `ubapp merge`",
            shard.index,
            shard.count,
            rows.len(),
            dir.join(ubapp::sweep::SHARD_FILE).display()
        );
    }
    Ok(())
}

/// `--out` before any work: not one of the run's inputs (it would be replaced), nothing but a
/// regular file (or a link, itself replaced) where it points, and a file the process can create:
/// missing parent directories are created when the mechanism is written, so the nearest existing
/// one must be a writable directory.
fn check_out(out: &Path, model_path: &Path, csv_files: &[std::path::PathBuf]) -> Result<()> {
    let refuse = |problem: String| Err(Error::argument("--out", problem));
    if let Ok(target) = std::fs::metadata(out) {
        if target.is_dir() {
            return refuse(format!("{} is a directory; name the mechanism file to write", out.display()));
        }
        for input in std::iter::once(model_path).chain(csv_files.iter().map(|p| p.as_path())) {
            if std::fs::metadata(input).is_ok_and(|m| same_file(&m, &target)) {
                return refuse(format!(
                    "{} is an input of this run ({}); writing the mechanism there would replace it",
                    out.display(),
                    input.display()
                ));
            }
        }
    }
    ubapp::output::check_target_file(out, "--out")?;
    ubapp::output::check_parent(out, "--out")?;
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

const FOOTNOTE: &str = "rel_gap: how far the mechanism --out releases can be from the optimum, (its objective − dual_bound)/objective (LP path: measured after repair)";

/// `--dry-run`: what a solve would take, without solving.
fn print_estimate(model: &Model, est: &Estimate, n_eps: usize, json: bool) {
    if json {
        let mut v = serde_json::to_value(est).expect("an estimate serialises");
        v["model"] = model.name().into();
        v["epsilons"] = n_eps.into();
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialise"));
        return;
    }
    let gib = |b: f64| b / 2f64.powi(30);
    outln!(
        "model {}: |Θ| = {}, |Y| = {}, |Θ̃| = {}, {} neighbour pairs; LP {} variables × {} rows",
        ubapp::guard::text::sanitize(model.name(), ubapp::guard::text::QUOTE_CHARS),
        model.theta().len(),
        est.size.observations,
        est.size.outputs,
        est.edges,
        est.size.variables,
        est.size.rows
    );
    let how = match (est.output_generation, est.restricted_outputs) {
        (true, Some(n)) => format!(", by output generation (starting from {n} of {} outputs)", est.size.outputs),
        (true, None) => ", by output generation".to_string(),
        _ => String::new(),
    };
    outln!("route: {} via {}{how} ({})", est.solvers.join(" then "), est.path, est.reason);
    let fits = if est.fits {
        "fits".to_string()
    } else {
        format!("does NOT fit: reduce {} (or raise UBAPP_MEMORY_LIMIT)", est.fields)
    };
    // The block interior point's end game splits stiff rows off, at several plain iterations'
    // time each (of the bench models only the poll of 100 gets that far): its memory is priced
    // (the allowance it stays within), its time is not, for the estimate cannot tell beforehand
    // whether it will come.
    let block_ipm = est.priced == SolverChoice::BlockIpm.to_string() && est.fits;
    let (most, peak) = if est.output_generation {
        ("at most ", " (its whole LP, if output generation falls back to it)")
    } else {
        ("", "")
    };
    let end_game = if block_ipm { " and the room its end game may take for stiff rows" } else { "" };
    let end_game_time = if block_ipm {
        "; not counted: the block interior point's end game where it splits stiff rows off"
    } else {
        ""
    };
    outln!(
        "memory: {most}about {:.3} GiB on {}, the route that runs{peak}{end_game}, of the {:.1} GiB budget ({fits})",
        gib(est.memory_bytes as f64),
        est.priced,
        gib(est.available_bytes as f64)
    );
    if !est.not_started.is_empty() {
        outln!("not started as fallbacks: {}", est.not_started.join(", "));
    }
    outln!(
        "time: roughly {} per ε, {} ε: {} (a rough estimate from this machine's benchmarks; size fields: {}{end_game_time})",
        duration(est.seconds_per_eps),
        n_eps,
        duration(est.seconds_per_eps * n_eps as f64),
        est.fields
    );
    if let Some(note) = model.release_reach() {
        outln!("note: {note}");
    }
}

/// `12 ms` below a second, else as [`seconds`].
fn duration(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", (s * 1e3).max(1.0))
    } else {
        seconds(s)
    }
}

fn print_header(model: &Model, size: &LpSize) {
    outln!(
        "model {}: |Θ| = {}, |Y| = {}, |Θ̃| = {}, {} loss; LP {} variables × {} rows",
        ubapp::guard::text::sanitize(model.name(), ubapp::guard::text::QUOTE_CHARS),
        model.theta().len(),
        size.observations,
        size.outputs,
        model.loss().name(),
        size.variables,
        size.rows
    );
}

fn print_columns() {
    outln!(
        "{:>10}  {:>14}  {:>14}  {:>10}  {:>12}  {:>9}  {:>10}  {:>10}",
        "eps",
        "bayes_risk",
        "dual_bound",
        "rel_gap",
        "status",
        "seconds",
        "max_dp_viol",
        "solver"
    );
}

fn print_row(s: &Solution) {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$e}"));
    outln!(
        "{:>10}  {:>14.8e}  {:>14}  {:>10}  {:>12}  {:>9.5}  {:>10.1e}  {:>10}",
        s.eps,
        s.bayes_risk,
        opt(s.checks.dual_bound, 8),
        opt(s.checks.relative_gap, 1),
        s.status.to_string(),
        s.seconds,
        s.checks.max_dp_violation,
        s.solver
    );
}

fn print_table(model: &Model, solutions: &[Solution]) {
    let minimax = model.objective() == Objective::Minimax;
    let delta = model.delta();
    if minimax || delta > 0.0 {
        // What the extra lines show depends on the program: the worst case for minimax, the δ
        // spent for (ε, δ); the main table follows them.
        let mut columns = Vec::new();
        if minimax {
            columns.push("worst_risk");
        }
        if delta > 0.0 {
            columns.push("delta_spent");
        }
        outln!(
            "objective {}, δ = {delta}; dual_bound bounds the {} ({} per ε just below, the full table after)",
            if minimax { "minimax" } else { "bayes" },
            if minimax { "worst-case risk over Θ" } else { "Bayes risk" },
            columns.join(" and ")
        );
        for s in solutions {
            let mut line = format!("  eps {:>10}:", s.eps);
            if minimax {
                line += &format!(
                    " worst_risk {}",
                    s.checks.worst_case_risk.map_or("-".to_string(), |w| format!("{w:.8e}"))
                );
            }
            if delta > 0.0 {
                line += &format!(" delta_spent {:.3e}", s.checks.delta_spent);
            }
            outln!("{line}");
        }
    }
    print_columns();
    for s in solutions {
        print_row(s);
    }
    outln!("{FOOTNOTE}");
}

/// The second table: the references every optimum lies between, RMSE and the design's worst case.
fn print_references(model: &Model, solutions: &[Solution], c: &SolveSummary) {
    let dash = || "-".to_string();
    let e = |x: Option<f64>| x.map_or_else(dash, |v| format!("{v:.4e}"));
    outln!(
        "{:>10}  {:>11}  {:>16}  {:>11}  {:>15}  {:>11}",
        "eps",
        "prior_risk",
        "non_private_risk",
        "rmse",
        "worst_case_risk",
        "worst_theta"
    );
    for (s, r) in solutions.iter().zip(&c.rows) {
        let worst = r.robustness.as_ref().map(|w| w.worst_case_risk).or(s.checks.worst_case_risk);
        let theta = r
            .robustness
            .as_ref()
            .map_or_else(dash, |w| w.worst_case_theta.iter().map(|v| format!("{v:.4}")).collect::<Vec<_>>().join(","));
        outln!(
            "{:>10}  {:>11}  {:>16}  {:>11}  {:>15}  {:>11}",
            s.eps,
            e(c.refs.map(|x| x.prior_risk)),
            e(c.refs.map(|x| x.non_private_risk)),
            e(r.rmse),
            e(worst),
            theta
        );
    }
    let rmse =
        if model.loss().name() == "squared" { "rmse = √bayes_risk (θ's units)" } else { "rmse: squared loss only" };
    outln!("prior_risk: best constant release (ε → 0); non_private_risk: best non-private estimator on the output grid (ε → ∞); {rmse}; worst_case_risk: max over the parameter grid of the risk at θ");
}
