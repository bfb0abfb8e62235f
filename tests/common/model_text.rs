//! Model-file text for tests: one builder for the binomial models that tests write by hand.
//!
//! Plain text, no crate types, so both test harnesses use this one file: the integration tests
//! (`tests/common/mod.rs`) and the crate-internal scenario tests (`src/tests/common.rs`, through
//! `#[path]`).
#![allow(dead_code)]

/// A binomial model file: `trials` trials, a midpoint grid of `points` on [0, 1], a uniform prior,
/// the output grid equal to the parameter grid (Θ̃ = Θ) unless [`Binomial::output`] says otherwise.
/// Each setter replaces one piece; [`Binomial::toml`] renders the text.
#[derive(Clone, Debug)]
pub struct Binomial {
    name: String,
    trials: u64,
    points: usize,
    loss: String,
    eps: Vec<f64>,
    top: Vec<String>,
    grid: Option<String>,
    prior: String,
    output: Option<String>,
}

/// The binomial model file with the given numbers and defaults for the rest (see [`Binomial`]).
pub fn binomial(trials: u64, points: usize, loss: &str, eps: &[f64]) -> Binomial {
    Binomial {
        name: "t".to_string(),
        trials,
        points,
        loss: loss.to_string(),
        eps: eps.to_vec(),
        top: Vec::new(),
        grid: None,
        prior: "{ kind = \"uniform\" }".to_string(),
        output: None,
    }
}

/// The text of [`binomial`]`(trials, points, loss, eps)`.
pub fn binomial_toml(trials: u64, points: usize, loss: &str, eps: &[f64]) -> String {
    binomial(trials, points, loss, eps).toml()
}

impl Binomial {
    /// The model's `name`.
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// One more top-level line (after `epsilon`, before the tables), e.g. `delta = 0.01` or
    /// `objective = "minimax"`; an empty line adds nothing.
    pub fn top(mut self, line: &str) -> Self {
        if !line.trim().is_empty() {
            self.top.push(line.to_string());
        }
        self
    }

    /// The parameter grid as a TOML inline table, instead of `{ kind = "midpoint", points = … }`.
    pub fn grid(mut self, grid: &str) -> Self {
        self.grid = Some(grid.to_string());
        self
    }

    /// The prior as a TOML inline table, instead of `{ kind = "uniform" }`.
    pub fn prior(mut self, prior: &str) -> Self {
        self.prior = prior.to_string();
        self
    }

    /// An `[output]` table with this `grid` value (TOML: `"parameter"` or an inline table).
    pub fn output(mut self, grid: &str) -> Self {
        self.output = Some(grid.to_string());
        self
    }

    /// The model file's text.
    pub fn toml(&self) -> String {
        let mut t = format!("name = \"{}\"\nepsilon = {:?}\n", self.name, self.eps);
        for line in &self.top {
            t += line;
            t += "\n";
        }
        let grid = self.grid.clone().unwrap_or_else(|| format!("{{ kind = \"midpoint\", points = {} }}", self.points));
        t += &format!(
            "[parameter]\nlower = 0.0\nupper = 1.0\ngrid = {grid}\nprior = {}\n\
             [observation]\nfamily = \"binomial\"\ntrials = {}\n",
            self.prior, self.trials
        );
        if let Some(output) = &self.output {
            t += &format!("[output]\ngrid = {output}\n");
        }
        t += &format!("[loss]\nkind = \"{}\"\n", self.loss);
        t
    }
}
