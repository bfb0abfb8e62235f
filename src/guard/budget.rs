//! The size guard: every allocation proportional to an input's size (a model, a CSV file, an
//! artifact) is priced here first, so an input too large for the machine is refused in well under a
//! second with the fields to shrink.

use super::ArgumentError;

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
        match env_limit() {
            Some(bytes) => MemoryBudget { bytes },
            None => MemoryBudget { bytes: MemoryBudget::available().bytes.min(DEFAULT_LIMIT_BYTES) },
        }
    }

    /// The check of `UBAPP_MEMORY_LIMIT` a program makes before any work: unset, or a whole
    /// number of bytes > 0; anything else is an argument error naming it (the budgets themselves
    /// never fail, so a program that skips this check falls back to the defaults).
    pub fn check_env() -> Result<(), ArgumentError> {
        match std::env::var_os(LIMIT_ENV) {
            None => Ok(()),
            Some(value) => parse_limit(&value.to_string_lossy()).map(|_| ()).ok_or_else(|| {
                ArgumentError::new(
                    LIMIT_ENV,
                    format!(
                        "must be a whole number of bytes > 0, e.g. 17179869184 for 16 GiB (got {})",
                        crate::guard::text::sanitize(&value.to_string_lossy(), 40)
                    ),
                )
            }),
        }
    }

    /// The budget a solve uses unless a caller passes its own: `UBAPP_MEMORY_LIMIT` (bytes) when
    /// it is set to a whole number, else 80 % of the memory available now — the smaller of
    /// `MemAvailable` in /proc/meminfo and, inside a control group with a memory limit (v1 or
    /// v2: a container, a Slurm job, a systemd slice), that limit less what the group holds
    /// beyond reclaimable page cache — else, where neither can be read, [`DEFAULT_LIMIT_BYTES`].
    /// A solve priced above it is refused before allocating.
    pub fn for_solve() -> Self {
        match env_limit() {
            Some(bytes) => MemoryBudget { bytes },
            None => MemoryBudget::of_machine(machine_available()),
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

    /// The memory the operating system reports as available (`MemAvailable` in /proc/meminfo, or
    /// the control group's headroom where that is less), else 8 GiB.
    pub fn available() -> Self {
        MemoryBudget { bytes: machine_available().unwrap_or(8 << 30) }
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

/// `UBAPP_MEMORY_LIMIT` when it is set to a whole number of bytes > 0 ([`MemoryBudget::check_env`]
/// refuses anything else before any work).
fn env_limit() -> Option<u64> {
    std::env::var(LIMIT_ENV).ok().as_deref().and_then(parse_limit)
}

/// A whole number of bytes > 0.
fn parse_limit(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok().filter(|&b| b > 0)
}

/// The memory this process may still take: the smaller of `MemAvailable` and the control
/// group's headroom ([`cgroup_headroom`]), whichever can be read.
fn machine_available() -> Option<u64> {
    match (mem_available(), cgroup_headroom()) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    }
}

/// `MemAvailable` in /proc/meminfo (bytes), when it can be read.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb.saturating_mul(1024))
}

/// The memory this process's control group may still take (bytes): its limit less its usage,
/// the inactive page cache (which the kernel reclaims before it refuses) counted as free; `None`
/// outside a limited group. cgroup v2 (`memory.max`, `memory.current`, `inactive_file`) and v1
/// (`memory.limit_in_bytes`, `memory.usage_in_bytes`, `total_inactive_file`), at the group named
/// in /proc/self/cgroup under /sys/fs/cgroup, else at the mount's root (a container's namespace).
fn cgroup_headroom() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let (v2, v1) = cgroup_paths(&own);
    let mut candidates: Vec<(String, [&str; 3])> = Vec::new();
    let v2_files = ["memory.max", "memory.current", "inactive_file"];
    let v1_files = ["memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"];
    if let Some(path) = v2 {
        candidates.push((format!("/sys/fs/cgroup{path}"), v2_files));
    }
    candidates.push(("/sys/fs/cgroup".to_string(), v2_files));
    if let Some(path) = v1 {
        candidates.push((format!("/sys/fs/cgroup/memory{path}"), v1_files));
    }
    candidates.push(("/sys/fs/cgroup/memory".to_string(), v1_files));
    candidates.into_iter().find_map(|(dir, [limit, usage, inactive])| {
        let limit = read(&format!("{dir}/{limit}"))?;
        let usage = read(&format!("{dir}/{usage}"))?;
        let stat = read(&format!("{dir}/memory.stat")).unwrap_or_default();
        headroom(&limit, &usage, &stat, inactive)
    })
}

/// The v2 and v1 memory groups of this process, from /proc/self/cgroup's text
/// (`0::/PATH`, `N:memory:/PATH` or `N:...,memory,...:/PATH`).
fn cgroup_paths(text: &str) -> (Option<&str>, Option<&str>) {
    let (mut v2, mut v1) = (None, None);
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if id == "0" && controllers.is_empty() {
            v2 = Some(path);
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path);
        }
    }
    (v2, v1)
}

/// A group's headroom from its files' text: `None` without a limit (`max`, or v1's "unlimited",
/// a number near 2^63).
fn headroom(limit: &str, usage: &str, stat: &str, inactive_key: &str) -> Option<u64> {
    let limit = limit.trim().parse::<u64>().ok().filter(|&l| l < 1 << 60)?;
    let usage = usage.trim().parse::<u64>().ok()?;
    let inactive =
        stat.lines().find_map(|l| l.strip_prefix(inactive_key)?.trim().parse::<u64>().ok()).unwrap_or(0).min(usage);
    Some(limit.saturating_sub(usage - inactive))
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
            if let Some(a) = machine_available() {
                assert_eq!(MemoryBudget::for_solve().in_bytes(), (a as f64 * MACHINE_SHARE) as u64);
                // A reader's budget stays capped.
                assert!(MemoryBudget::from_env().in_bytes() <= DEFAULT_LIMIT_BYTES);
            }
        }
    }

    #[test]
    fn a_control_group_limit_caps_the_budget() {
        let (v2, v1) = cgroup_paths("12:memory:/slurm/job_7\n0::/user.slice/x.scope\n");
        assert_eq!((v2, v1), (Some("/user.slice/x.scope"), Some("/slurm/job_7")));
        assert_eq!(cgroup_paths("4:cpu,memory:/a\n"), (None, Some("/a")));
        // v2: 8 GiB limit, 3 GiB used of which 1 GiB inactive page cache: 6 GiB left.
        let stat = "anon 1\ninactive_file 1073741824\nactive_file 5\n";
        assert_eq!(headroom("8589934592\n", "3221225472\n", stat, "inactive_file"), Some(6 << 30));
        // No limit: v2's `max`, v1's near-2^63.
        assert_eq!(headroom("max\n", "1000", "", "inactive_file"), None);
        assert_eq!(headroom("9223372036854771712", "1000", "", "total_inactive_file"), None);
        // Over the limit: nothing left, never an underflow.
        assert_eq!(headroom("1000", "5000", "", "total_inactive_file"), Some(0));
    }

    #[test]
    fn a_limit_that_is_not_a_whole_number_of_bytes_is_refused() {
        assert_eq!(parse_limit(" 17179869184\n"), Some(16 << 30));
        for bad in ["abc", "", "-1", "0", "1.5e9", "4GiB"] {
            assert_eq!(parse_limit(bad), None, "{bad:?}");
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
