//! The memory guard: every allocation proportional to the model's size is priced here first, so a
//! model too large for the machine is refused in well under a second with the fields to shrink.

/// How much memory the library may use for one problem (bytes). The caller decides: the CLI reads
/// `UBAPP_MEMORY_LIMIT`, a library user passes what their process may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    bytes: u64,
}

impl MemoryBudget {
    /// A fixed budget.
    pub fn bytes(bytes: u64) -> Self {
        MemoryBudget { bytes }
    }

    /// The memory the operating system reports as available (`MemAvailable` in /proc/meminfo),
    /// else 8 GiB.
    pub fn available() -> Self {
        let bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("MemAvailable:"))
                    .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).map(|kb| kb * 1024))
            })
            .unwrap_or(8 << 30);
        MemoryBudget { bytes }
    }

    /// The budget in bytes.
    pub fn in_bytes(self) -> u64 {
        self.bytes
    }

    /// Refuse to allocate dense f64 matrices of the given shapes plus `extra_bytes` when that
    /// would not fit.
    pub fn check_dense(self, shapes: &[(usize, usize)], extra_bytes: u128) -> Result<(), SizeError> {
        let need: u128 = shapes.iter().map(|&(r, c)| r as u128 * c as u128 * 8).sum::<u128>() + extra_bytes;
        if need > self.bytes as u128 {
            return Err(SizeError {
                origin: None,
                needed_bytes: need,
                available_bytes: self.bytes,
                fields: "observation.trials, parameter.grid.points or output.grid.points".into(),
            });
        }
        Ok(())
    }
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::available()
    }
}

/// A problem that would not fit in memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}the problem needs about {:.1} GiB, more than the {:.1} GiB of memory available; reduce {fields}",
    .origin.as_ref().map(|o| format!("{o}: ")).unwrap_or_default(),
    *.needed_bytes as f64 / 2f64.powi(30),
    *.available_bytes as f64 / 2f64.powi(30)
)]
pub struct SizeError {
    /// The model file, when known.
    pub origin: Option<String>,
    /// Bytes the problem would need.
    pub needed_bytes: u128,
    /// Bytes the budget allows.
    pub available_bytes: u64,
    /// The model fields that set the size, in the model file's own terms.
    pub fields: Box<str>,
}

/// The fields of `model`'s file that set the LP's size, in its own terms: `observation.trials` for
/// a binomial, `observation.records` and `observation.cap` for a Poisson count,
/// `observation.records` and `observation.categories` for a multinomial, the parameter grid's
/// `points` or `resolution`, and the output grid's when it has its own.
pub(crate) fn size_fields(model: &crate::model::Model) -> String {
    use crate::model::spec::{GridSpec, ObservationSpec, OutputGridSpec};
    let spec = model.spec();
    let mut fields: Vec<&str> = match &spec.observation {
        ObservationSpec::Binomial { .. } => vec!["observation.trials"],
        ObservationSpec::Poisson { .. } => vec!["observation.records", "observation.cap"],
        ObservationSpec::Multinomial { .. } => vec!["observation.records", "observation.categories"],
        ObservationSpec::Table { .. } => vec!["observation.likelihood (its columns)"],
    };
    let grid = |g: &GridSpec, prefix: &'static str| -> &'static str {
        match (g, prefix) {
            (GridSpec::Simplex { .. }, "parameter") => "parameter.grid.resolution",
            (GridSpec::Simplex { .. }, _) => "output.grid.resolution",
            (GridSpec::Explicit { .. }, "parameter") => "parameter.grid (its points)",
            (GridSpec::Explicit { .. }, _) => "output.grid (its points)",
            (_, "parameter") => "parameter.grid.points",
            _ => "output.grid.points",
        }
    };
    if model.exact().is_none() {
        fields.push(grid(&spec.parameter.grid, "parameter"));
    }
    if let OutputGridSpec::Own(g) = &spec.output.grid {
        fields.push(grid(g, "output"));
    }
    match fields.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => fields.join(""),
    }
}

impl SizeError {
    /// Name the model fields that set the size.
    pub fn with_fields(mut self, fields: String) -> Self {
        self.fields = fields.into();
        self
    }

    /// Name the model file the problem came from.
    pub fn in_origin(mut self, origin: &str) -> Self {
        if self.origin.is_none() {
            self.origin = Some(origin.to_string());
        }
        self
    }
}
