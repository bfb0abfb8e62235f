//! The size guard: every allocation proportional to an input's size (a model, a CSV file, an
//! artifact) is priced here first, so an input too large for the machine is refused in well under a
//! second with the fields to shrink.

/// How much memory the library may use for one problem (bytes). The caller decides: the CLI reads
/// `UBAPP_MEMORY_LIMIT`, a library user passes what their process may spend. Two defaults: a
/// solve's ([`MemoryBudget::for_solve`]) follows the machine, so a workstation solves what a
/// laptop cannot; a reader of a file that states its own sizes (a model's grids, an artifact, a
/// shard) keeps a fixed cap ([`MemoryBudget::from_env`]), so a short hostile file cannot make the
/// process allocate the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    bytes: u64,
}

/// The memory a reader may use unless told otherwise: 4 GiB (or less, when less is available);
/// also a solve's budget where the available memory cannot be read.
pub const DEFAULT_LIMIT_BYTES: u64 = 4 << 30;

/// The share of the memory available when a solve starts that it may use by default: what is
/// left covers the estimates' error on the side they err least (they are checked to lie above
/// the measured peaks) and the rest of the machine.
pub(crate) const MACHINE_SHARE: f64 = 0.8;

/// The environment variable that sets the budget in bytes (`UBAPP_MEMORY_LIMIT=17179869184`).
pub const LIMIT_ENV: &str = "UBAPP_MEMORY_LIMIT";

impl MemoryBudget {
    /// The budget `ubapp` uses unless a caller passes its own: `UBAPP_MEMORY_LIMIT` (bytes) when
    /// it is set to a whole number, else the smaller of [`DEFAULT_LIMIT_BYTES`] and the memory
    /// available. A model, artifact or solve priced above it is refused before allocating.
    pub fn from_env() -> Self {
        match std::env::var(LIMIT_ENV).ok().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(bytes) => MemoryBudget { bytes },
            None => MemoryBudget { bytes: MemoryBudget::available().bytes.min(DEFAULT_LIMIT_BYTES) },
        }
    }

    /// The budget a solve uses unless a caller passes its own: `UBAPP_MEMORY_LIMIT` (bytes) when
    /// it is set to a whole number, else 80 % of the memory available now
    /// (`MemAvailable` in /proc/meminfo), else — where that cannot be read —
    /// [`DEFAULT_LIMIT_BYTES`]. A solve priced above it is refused before allocating.
    pub fn for_solve() -> Self {
        match std::env::var(LIMIT_ENV).ok().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(bytes) => MemoryBudget { bytes },
            None => MemoryBudget::of_machine(mem_available()),
        }
    }

    /// [`MACHINE_SHARE`] of `available` bytes, or [`DEFAULT_LIMIT_BYTES`] when unknown.
    pub(crate) fn of_machine(available: Option<u64>) -> Self {
        let bytes = available.map_or(DEFAULT_LIMIT_BYTES, |a| (a as f64 * MACHINE_SHARE) as u64);
        MemoryBudget { bytes }
    }

    /// A fixed budget.
    pub fn bytes(bytes: u64) -> Self {
        MemoryBudget { bytes }
    }

    /// The memory the operating system reports as available (`MemAvailable` in /proc/meminfo),
    /// else 8 GiB.
    pub fn available() -> Self {
        MemoryBudget { bytes: mem_available().unwrap_or(8 << 30) }
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
                route: None,
            });
        }
        Ok(())
    }
}

/// `MemAvailable` in /proc/meminfo (bytes), when it can be read.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb.saturating_mul(1024))
}

impl Default for MemoryBudget {
    /// [`MemoryBudget::from_env`].
    fn default() -> Self {
        MemoryBudget::from_env()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_solve_budget_follows_the_machine_and_falls_back_to_the_fixed_default() {
        assert_eq!(MemoryBudget::of_machine(Some(10 << 30)).in_bytes(), 8 << 30);
        assert_eq!(MemoryBudget::of_machine(None).in_bytes(), DEFAULT_LIMIT_BYTES);
        if std::env::var(LIMIT_ENV).is_err() {
            if let Some(a) = mem_available() {
                assert_eq!(MemoryBudget::for_solve().in_bytes(), (a as f64 * MACHINE_SHARE) as u64);
                // A reader's budget stays capped.
                assert!(MemoryBudget::from_env().in_bytes() <= DEFAULT_LIMIT_BYTES);
            }
        }
    }
}

/// A problem that would not fit in memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}the problem needs about {:.1} GiB{}, more than the {:.1} GiB memory budget (UBAPP_MEMORY_LIMIT, in bytes, raises it); reduce {fields}",
    .origin.as_ref().map(|o| format!("{o}: ")).unwrap_or_default(),
    *.needed_bytes as f64 / 2f64.powi(30),
    .route.as_ref().map(|r| format!(" on the route that would run ({r})")).unwrap_or_default(),
    *.available_bytes as f64 / 2f64.powi(30)
)]
pub struct SizeError {
    /// The model file, when known.
    pub origin: Option<Box<str>>,
    /// Bytes the problem would need.
    pub needed_bytes: u128,
    /// Bytes the budget allows.
    pub available_bytes: u64,
    /// The model fields that set the size, in the model file's own terms.
    pub fields: Box<str>,
    /// The route whose peak was priced (a solve's: its first solver, e.g. `block-ipm`), when the
    /// need is a solve's.
    pub route: Option<Box<str>>,
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
            self.origin = Some(origin.into());
        }
        self
    }
}
