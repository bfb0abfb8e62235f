//! `ubapp sample FILE --y Y [--n N] [--seed S] [--json]`: release values from a verified mechanism.
//!
//! Releases stream: each is written as it is drawn (constant memory in N), and a closed pipe ends
//! the process by SIGPIPE (`ubapp sample … --n 1000000000 | head`).

use std::io::Write;
use std::path::PathBuf;

use super::trust::TrustArgs;
use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::Release;
use ubapp::{Error, Result};

/// Flags of `sample`.
#[derive(clap::Args)]
pub struct Args {
    /// Mechanism file written by `ubapp solve --out`.
    file: PathBuf,
    /// The observation: a number (e.g. 37 successes), or comma-separated coordinates for a
    /// vector observation (e.g. 3,5,12 for a 3-category count).
    #[arg(long, allow_negative_numbers = true)]
    y: String,
    /// How many independent releases to draw (a whole number ≥ 1; 1e6 is accepted). They are
    /// written as drawn, so any N runs in constant memory.
    #[arg(long, default_value_t = 1, value_parser = parse_count, allow_negative_numbers = true)]
    n: u64,
    /// Seed for reproducible tests only; without it fresh OS randomness is used (as a real
    /// release must).
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Print a JSON array instead of one value per line.
    #[arg(long)]
    json: bool,
    /// The total ε this request may spend: n releases from the same data spend n·ε (basic
    /// composition); required when n·ε exceeds the mechanism's ε (or --allow-composition).
    #[arg(long, allow_negative_numbers = true)]
    budget: Option<f64>,
    /// Spend n·ε without stating a budget.
    #[arg(long)]
    allow_composition: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

/// A request to sample, its flags checked before the file is read.
struct Request {
    file: PathBuf,
    /// The observation's text, as given, and its coordinates.
    y: String,
    coords: Vec<f64>,
    n: u64,
    seed: Option<u64>,
    json: bool,
    budget: Budget,
    trust: TrustArgs,
}

impl Args {
    /// The flags as a checked request (each error names its flag).
    fn validate(self) -> Result<Request> {
        if self.n == 0 {
            return Err(Error::argument("--n", "must be at least 1 (0 releases is not a request)"));
        }
        if let Some(b) = self.budget {
            if !(b.is_finite() && b > 0.0) {
                return Err(Error::argument("--budget", format!("must be a positive ε (got {b})")));
            }
        }
        let coords = parse_observation(&self.y)?;
        Ok(Request {
            file: self.file,
            y: self.y,
            coords,
            n: self.n,
            seed: self.seed,
            json: self.json,
            budget: Budget { eps_total: self.budget, allow_composition: self.allow_composition },
            trust: self.trust,
        })
    }
}

/// Run the command: the flags checked, the file loaded (which verifies) against the trusted model,
/// then N released θ̃ values printed, one per line (a vector output as comma-separated
/// coordinates; with `--json`, a list of numbers or of lists).
pub fn run(args: Args) -> Result<()> {
    let r = args.validate()?;
    let (m, checked) = super::trust::load_for_release(&r.file, &r.trust, "sample")?;
    let (eps_n, delta_n) = m.composed(r.n);
    check_budget(&m, r.n, eps_n, r.budget)?;
    let i = observation_index(&m, &r)?;
    super::trust::warn_if_unchecked(&r.file, &checked);
    let n = r.n;
    if n > 1 {
        let delta =
            if delta_n > 0.0 { format!(", δ = {n}·{} = {delta_n:e}", m.certified_delta()) } else { String::new() };
        eprintln!(
            "note: {n} releases from the same data spend ε = {n}·{} = {eps_n} by basic composition{delta}",
            m.certified_eps()
        );
    }
    // StdRng is a cryptographically secure generator; without --seed it is seeded from the OS.
    let mut rng: StdRng = match r.seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng(),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write_releases(&mut out, &m, i, n, r.json, &mut rng).map_err(|source| Error::Io { path: "<stdout>".into(), source })
}

/// The index of the requested observation in the mechanism's Y, or an error naming `--y` that
/// shows Y's range.
fn observation_index(m: &Release, r: &Request) -> Result<usize> {
    if let Some(i) = m.observation_index(&r.coords) {
        return Ok(i);
    }
    let obs = m.model().family().observations();
    let show = |j: usize| {
        let c: Vec<String> = obs.point(j).iter().map(|v| v.to_string()).collect();
        if c.len() == 1 {
            c[0].clone()
        } else {
            format!("({})", c.join(","))
        }
    };
    let what = if r.coords.len() == obs.dim() {
        "is not an observation of".to_string()
    } else {
        format!("has {} coordinate(s), but observations have {} in", r.coords.len(), obs.dim())
    };
    let rule = m.model().family().observation_rule(&r.coords).map(|why| format!(": {why}")).unwrap_or_default();
    Err(Error::argument(
        "--y",
        format!(
            "{} {what} model {} (Y = {{{}, …, {}}}, {} values){rule}",
            r.y,
            ubapp::guard::text::sanitize(m.model().name(), ubapp::guard::text::QUOTE_CHARS),
            show(0),
            show(obs.len() - 1),
            obs.len()
        ),
    ))
}

/// Draw `n` releases for observation index `i` and write each as it is drawn: one per line, or
/// (`json`) one JSON array written element by element.
fn write_releases(
    out: &mut impl Write,
    m: &Release,
    i: usize,
    n: u64,
    json: bool,
    rng: &mut StdRng,
) -> std::io::Result<()> {
    let scalar = m.model().outputs().dim() == 1;
    if json {
        out.write_all(b"[")?;
    }
    for r in 0..n {
        let k = m.sample(i, rng);
        let v = m.output(k);
        if json {
            if r > 0 {
                out.write_all(b",")?;
            }
            // Each coordinate as people write it (`0.1175`): within round-off of the output.
            let v: Vec<f64> = v.iter().map(|&x| ubapp::guard::text::tidy(x)).collect();
            let text = if scalar { serde_json::to_string(&v[0]) } else { serde_json::to_string(&v) };
            out.write_all(text.expect("floats serialise").as_bytes())?;
        } else {
            let line: Vec<String> = v.iter().map(|&x| ubapp::guard::text::number(x)).collect();
            writeln!(out, "{}", line.join(","))?;
        }
    }
    if json {
        out.write_all(b"]\n")?;
    }
    out.flush()
}

/// The privacy budget flags of `sample`.
#[derive(Debug, Clone, Copy, Default)]
struct Budget {
    /// `--budget EPS_TOTAL`: the most ε the request may spend.
    eps_total: Option<f64>,
    /// `--allow-composition`: spend n·ε without a stated budget.
    allow_composition: bool,
}

/// Refuse a request whose composed ε exceeds the budget, or exceeds the mechanism's ε without a
/// budget or `--allow-composition`.
fn check_budget(m: &Release, n: u64, eps_n: f64, budget: Budget) -> Result<()> {
    match budget.eps_total {
        Some(b) if eps_n > b => Err(Error::argument(
            "--budget",
            format!(
                "{b} is exceeded: {n} releases spend ε = {n}·{} = {eps_n} by basic composition, over the budget {b}",
                m.certified_eps()
            ),
        )),
        None if n > 1 && !budget.allow_composition => Err(Error::argument(
            "--n",
            format!(
                "{n} releases from the same data spend ε = {n}·{} = {eps_n} by basic composition, more than the mechanism's ε; state the total with --budget {eps_n} (or pass --allow-composition)",
                m.certified_eps()
            ),
        )),
        _ => Ok(()),
    }
}

/// `--n`: a whole number of releases, digits or a float form of one (`1e6`), at most 2^64 − 1.
pub fn parse_count(text: &str) -> std::result::Result<u64, CountError> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 18446744073709551616.0 => Ok(v as u64),
        _ => Err(CountError { text: t.to_string() }),
    }
}

/// `--n` is not a whole number of releases.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a whole number of releases from 1 to {} (got \"{text}\")", u64::MAX)]
pub struct CountError {
    /// What was given.
    pub text: String,
}

/// `37` → \[37\]; `3,5,12` → \[3, 5, 12\].
fn parse_observation(y: &str) -> Result<Vec<f64>> {
    parse_numbers(y, "--y")
}

/// A number or comma-separated numbers, for the flag `flag`.
pub(crate) fn parse_numbers(y: &str, flag: &str) -> Result<Vec<f64>> {
    y.split(',')
        .map(|c| {
            c.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::argument(flag, format!("\"{y}\" is not a number or comma-separated numbers")))
        })
        .collect()
}
