//! The block-angular primal-dual interior point (Mehrotra predictor-corrector) on the UBaPP LP.
//!
//! Per output k (m outputs, n observations, E directed neighbour pairs), with G the E × n matrix of
//! the DP rows (row (a, b): e_a − e^ε e_b):
//!
//! ```text
//! primal  min Σ_k c_kᵀ x_k   s.t.  G x_k + s_k = 0,  Σ_k x_k = 1,  x, s ≥ 0
//! dual    max 1ᵀν            s.t.  z_k = c_k + Gᵀλ_k − ν ≥ 0,  λ ≥ 0
//! ```
//!
//! Eliminating each output's slack and duals from the Newton system leaves, per output, the n × n
//! matrix H_k = X_k⁻¹Z_k + Gᵀ W_k G (W = Λ S⁻¹), sparse with the neighbour graph's pattern, and
//! the column sums couple the outputs only through the n × n Schur complement Σ_k H_k⁻¹ (Gondzio
//! & Grothey's OOPS exploits the same block-angular form). One iteration factorises every H_k (one
//! symbolic analysis shared by all), forms the Schur complement from blocks of solves with the
//! identity summed in column strips, factorises it densely and back-substitutes: no LP matrix is
//! ever built. The outputs' work is split over the machine's cores.
//!
//! H_k is handled as D(I + D Gᵀ W G D)D with D = (X⁻¹Z + ρI)^{-1/2}: the middle matrix has
//! eigenvalues ≥ 1, so its inverse is bounded, and ρ (a primal regularisation, Altman & Gondzio
//! 1999) caps D. Near the end a tight row's weight in it grows like (xλ/μ)², and past about 1e12
//! the solves lose the directions the tight rows leave free. Once that stops the iteration, every
//! output with a row heavier than [`STIFF_ABOVE`] is split: its rows heavier than
//! [`CLASSES_ABOVE`] join classes of observations they hold in proportion, and the block is taken
//! in the basis those classes give ([`super::quotient`]), where the weights sit on coordinates of
//! their own and the free directions are exact; its stiff rows' multipliers are unknowns of their
//! own, as in the augmented system [H_L, G_Tᵀ; G_T, −W_T⁻¹] a quasidefinite solver would keep
//! (Vanderbei 1995), solved through a forest-sized matrix (or, where a class holds x = 0, the
//! augmented system's small dense Schur complement, the Woodbury form of H_k⁻¹).

// Index loops over parallel arrays (x, z, s, λ by output and row) read as the formulas do.
#![allow(clippy::needless_range_loop)]
// `!(a <= b)` is meant: it is also true when a is NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use crate::numeric::conjugate_gradients;
use crate::numeric::dense_cholesky::DenseCholesky;
use crate::numeric::double_double::{DoubleDouble, Real};
use crate::numeric::sparse_cholesky::{SparseCholesky, Symbolic, PIVOT_FLOOR, WIDTH};

use super::quotient::{BlockPattern, NotBuilt, Quotient, Tight};

/// The LP in the interior point's terms (costs normalised so that max |c| = 1).
pub(crate) struct BlockLp {
    /// Outputs.
    pub m: usize,
    /// Observations.
    pub n: usize,
    /// c\[k·n + i\].
    pub c: Vec<f64>,
    /// Directed DP rows (a, b): x_a ≤ e^ε x_b.
    pub rows: Vec<(usize, usize)>,
    /// e^ε.
    pub rho: f64,
}

impl BlockLp {
    /// Where output k's entries lie: its DP rows in λ and s (k·E..), its columns in x and z (k·n..).
    fn spans(&self, k: usize) -> (Range<usize>, Range<usize>) {
        let ne = self.rows.len();
        (k * ne..(k + 1) * ne, k * self.n..(k + 1) * self.n)
    }
}

/// How the interior point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Gap and residuals within the tolerances.
    Converged,
    /// Progress stopped (numerical limits); the best iterate is returned.
    Stalled,
    /// Gap and residuals within the end game's tolerances ([`Settings::end_game_gap`]) once the
    /// stiff rows hold more than [`Settings::end_game_above`], where each further iteration
    /// costs several plain ones.
    EndGame,
    /// The iteration cap.
    IterationLimit,
    /// The time cap.
    TimeLimit,
}

/// The best iterate and how it was reached.
pub(crate) struct IpmResult {
    /// x\[k·n + i\].
    pub x: Vec<f64>,
    /// λ\[k·E + e\] (E = rows.len()), in the normalised costs' units.
    pub lambda: Vec<f64>,
    pub ending: Ending,
    pub iterations: u32,
    /// Relative gap |p − d| / |p| of the iterate returned.
    pub gap: f64,
    /// Largest primal and dual residuals of it.
    pub primal_residual: f64,
    pub dual_residual: f64,
    /// Seconds spent in the iterations' three dense kernels.
    pub times: KernelTimes,
}

/// Seconds the iterations spent factorising the outputs' blocks, forming the Schur complement,
/// splitting off the stiff rows and factorising the Schur complement (the rest of an iteration is
/// the Newton solves and the vector work).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KernelTimes {
    pub block_factorisations: f64,
    pub schur_forming: f64,
    pub schur_factorisation: f64,
    /// The split outputs' blocks ([`STIFF_ABOVE`]): their stiff rows' classes, the bases' and
    /// the forest's factors (or C's).
    pub stiff_rows: f64,
}

/// Stopping rule and limits.
pub(crate) struct Settings {
    pub gap_tolerance: f64,
    pub feasibility_tolerance: f64,
    /// The gap and residuals that end the loop once the stiff rows hold more than
    /// [`Settings::end_game_above`].
    pub end_game_gap: f64,
    pub end_game_feasibility: f64,
    pub max_iterations: u32,
    pub deadline: Option<Instant>,
    /// Seconds the first iteration is expected to take (later ones: the last one's): an
    /// iteration expected to end past the deadline is not started.
    pub first_iteration_seconds: f64,
    /// Called after every iteration with its number.
    pub on_iteration: Box<dyn Fn(u32) + Send + Sync>,
    /// Threads the outputs' work is split over ([`worker_threads`] for one LP on the whole
    /// machine; 1 where the caller runs several LPs side by side).
    pub threads: usize,
    /// Bytes the stiff rows may take ([`stiff_allowance`], what the estimate prices): past them
    /// they stay in their blocks. Each iteration the end game goes on gives the gap a factor of
    /// 2–2.5 and takes 1.1–1.5 times the last one's stiff rows, so the allowance decides how far
    /// it goes.
    pub stiff_allowance: u128,
    /// Bytes of stiff rows past which the end game stops at [`Settings::end_game_gap`] (0: from
    /// the first split on).
    pub end_game_above: u128,
}

/// Primal regularisation ρ: X⁻¹Z + ρI.
const PRIMAL_REGULARISATION: f64 = 1e-14;
/// Fraction of the step to the boundary.
const STEP_FRACTION: f64 = 0.99;
/// Iterations without a better merit before the interior point gives up.
const PATIENCE: u32 = 4;
/// Passes of iterative refinement on the whole Newton system at most.
const REFINEMENTS: usize = 3;
/// A Newton direction is refined only while its leftover exceeds this multiple of μ (the
/// complementarity rows' share of it is their relative error times μ): early on the reduced solve
/// alone is accurate to 1e-15, and a pass costs as much as the solve.
const REFINE_ABOVE: f64 = 1e-6;
/// A Newton direction whose leftover (after refinement) exceeds this is not used: the linear
/// algebra has reached its limit (near the end, as μ → 0) and the best iterate so far is returned.
const NEWTON_ERROR_LIMIT: f64 = 1e-9;
/// Where the linear algebra gives out (a block that is not positive definite, a Schur complement
/// with no pivot left, a Newton leftover above [`NEWTON_ERROR_LIMIT`]), the iteration is tried
/// again with the sparse factors' relative pivot floor raised 100-fold, up to this. Asymmetric
/// multinomial K = 60 with f64 blocks (before [`DOUBLE_DOUBLE_ABOVE`]): the Schur complement
/// overflowed at a gap of 3.5e-7 with the floor at 1e-10; at 1e-8 one more iteration reached
/// 1.3e-7, which certifies (5.3e-8).
const MAX_PIVOT_FLOOR: f64 = 1e-6;
/// Weight of a DP row in a block, relative to the block's unit diagonal (w (d_a² + e^{2ε} d_b²) in
/// I + D Gᵀ W G D), above which the block is factorised in double-double. A tight row's weight
/// grows like (xλ/μ)² as μ → 0, and f64 keeps the identity under it to about weight · 1e-16: past
/// 1e16 the directions the tight rows leave free, which decide the column sums, are rounding.
/// Measured (asymmetric multinomial K = 60): the f64 factors stopped the interior point at a gap of
/// 1.3e-7 after 39 iterations (certified 5.3e-8 after raising the pivot floor); with this
/// threshold (the factor rounded to f64 for the solves) it converged to 8.9e-11 in 45, and K = 40
/// to 9.1e-12 in 41 instead of stopping at 6.7e-8. Thresholds 1e10–1e14 gave the same iterates
/// within noise; the double-double factorisations cost little next to forming the Schur
/// complement.
const DOUBLE_DOUBLE_ABOVE: f64 = 1e8;
/// Weight of a DP row in a block (as for [`DOUBLE_DOUBLE_ABOVE`]) above which, once the blocks'
/// linear algebra has given out, the row's output is split ([`Split`]): its stiff rows are kept
/// out of the block, their multipliers unknowns of their own, so that no weight above
/// [`CLASSES_ABOVE`] multiplies the rounding of a block's solve. Below 1e12 the double-double
/// blocks keep the free directions (their f64 solves lose them from about 1e12). Measured on a
/// ring of 300 observations with chords (60 outputs, squared loss, ε = 0.5): the f64 solves gave
/// out at a gap of 8.5e-6 (weights 2e15); with the stiff rows above 1e12 split off the interior
/// point converged to 2e-12 in 31 iterations; above 1e14 it stopped as before.
const STIFF_ABOVE: f64 = 1e12;
/// Weight of a DP row above which, in an output that is split ([`STIFF_ABOVE`]), the row is
/// stiff: it joins the classes of [`super::quotient`] (or the augmented system's C). Rows kept in
/// the block between this and [`STIFF_ABOVE`] would spoil their own multipliers,
/// W_L(G_L Δx − b_L), a weight times the rounding of Δx: on the 120-observation ring with the
/// split at 1e12 the Newton leftover stalled at 0.245; from 1e10 the interior point converged
/// (1.7e-11, 16 iterations after the split).
const CLASSES_ABOVE: f64 = 1e10;
/// Entries a task of an elementwise pass takes at least (a pass over 10⁵ entries is tens of
/// microseconds: finer tasks cost more to hand out than they save).
const ELEMENTS_A_TASK: usize = 1 << 14;
/// Bytes of factors the Schur complement is formed from at a time: every column block is solved
/// against one group of outputs' factors before the next group, so that the group stays in the
/// shared cache (every factor read once a column block from memory made forming K = 60, whose
/// factors outgrow the cache, gain 1.26× from a second core where K = 40 gained 1.85×).
const SCHUR_GROUP_BYTES: usize = 8 << 20;
/// Conjugate-gradient steps a Schur complement solve takes at most for the directions of its
/// dropped pivots (2·dropped + 1 reach the solution in exact arithmetic). Measured on a clipped
/// Poisson sum of 200 records, cap 8, ε = 0.3 (|Y| = 1601, 30 outputs, 29 of them split): the
/// factor dropped 2 pivots from iteration 139 and left 2.7e-9 of the column sums, past
/// [`NEWTON_ERROR_LIMIT`], which stopped the interior point at a gap of 1.9e-7; 5 steps left
/// 2e-16, and it went on to stop in its end game at 2.9e-8 (155 iterations).
const SCHUR_GRADIENT_STEPS: usize = 16;
/// The residual's reduction at which the Schur complement's conjugate gradients stop.
const SCHUR_GRADIENT_REDUCTION: f64 = 1e-6;
/// Centrality correctors per iteration at most.
const CENTRALITY_CORRECTORS: usize = 2;

struct Point {
    x: Vec<f64>,
    z: Vec<f64>,
    s: Vec<f64>,
    lambda: Vec<f64>,
    nu: Vec<f64>,
}

/// Right-hand sides of the Newton system: primal rows, column sums, dual rows, x∘z and s∘λ.
struct Rhs {
    p: Vec<f64>,
    l: Vec<f64>,
    d: Vec<f64>,
    xz: Vec<f64>,
    sl: Vec<f64>,
}

struct Direction {
    x: Vec<f64>,
    z: Vec<f64>,
    s: Vec<f64>,
    lambda: Vec<f64>,
    nu: Vec<f64>,
}

/// The vectors a Newton solve fills and drops (directions, right-hand sides, leftovers: a dozen
/// solves an iteration, four or five vectors of the outputs' size each), kept on the loop's thread
/// for the next solve instead of freed: freshly allocated, every one is new pages for the kernel
/// to zero (on K = 40, 2 cores, that was a fifth of the interior point's time).
mod recycled {
    use std::cell::RefCell;

    /// Vectors kept at most.
    const KEPT: usize = 32;

    thread_local! {
        static FREE: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
    }

    /// A vector of `len` entries whose values are unspecified: the caller writes every one.
    pub(super) fn vector(len: usize) -> Vec<f64> {
        let kept = FREE.with(|free| {
            let mut free = free.borrow_mut();
            free.iter().position(|v| v.len() == len).map(|i| free.swap_remove(i))
        });
        kept.unwrap_or_else(|| vec![0.0; len])
    }

    /// Keep `v` for a later [`vector`] of its length.
    pub(super) fn give(v: Vec<f64>) {
        if v.is_empty() {
            return;
        }
        FREE.with(|free| {
            let mut free = free.borrow_mut();
            if free.len() < KEPT {
                free.push(v);
            }
        });
    }

    /// Free what is kept (the end of a solve).
    pub(super) fn clear() {
        FREE.with(|free| free.borrow_mut().clear());
    }
}

impl Drop for Rhs {
    fn drop(&mut self) {
        for v in [&mut self.p, &mut self.l, &mut self.d, &mut self.xz, &mut self.sl] {
            recycled::give(std::mem::take(v));
        }
    }
}

impl Drop for Direction {
    fn drop(&mut self) {
        for v in [&mut self.x, &mut self.z, &mut self.s, &mut self.lambda, &mut self.nu] {
            recycled::give(std::mem::take(v));
        }
    }
}

/// A vector of `len` entries from [`recycled`], entry j set to `f(j)` (on the pool's threads
/// where `threads` > 1).
fn filled(len: usize, threads: usize, f: impl Fn(usize) -> f64 + Sync + Send) -> Vec<f64> {
    let mut v = recycled::vector(len);
    let least = least_per_task(threads, len, ELEMENTS_A_TASK);
    v.par_iter_mut().enumerate().with_min_len(least).for_each(|(j, x)| *x = f(j));
    v
}

/// `v` copied into a new vector, on the pool's threads where `threads` > 1 (the loop keeps its best
/// iterate, megabytes, nearly every iteration: 1 % of K = 40's time on 2 cores on one thread).
fn copied(v: &[f64], threads: usize) -> Vec<f64> {
    if threads <= 1 {
        return v.to_vec();
    }
    let mut out = Vec::with_capacity(v.len());
    out.par_extend(v.par_iter().copied().with_min_len(least_per_task(threads, v.len(), ELEMENTS_A_TASK)));
    out
}

/// A vector of `len` zeros, written on the pool's threads where `threads` > 1 (the Schur
/// complement's n² entries an iteration: allocated from the heap once its size has been freed
/// before, they were zeroed on one thread, 1.4 % of K = 40's time on 2 cores).
fn zeroed(len: usize, threads: usize) -> Vec<f64> {
    if threads <= 1 {
        return vec![0.0; len];
    }
    let mut out = Vec::with_capacity(len);
    out.par_extend(rayon::iter::repeat_n(0.0, len).with_min_len(least_per_task(threads, len, ELEMENTS_A_TASK)));
    out
}

/// The symmetric pattern of I + Gᵀ W G (the graph plus the diagonal) in CSC, with where each
/// directed row's contributions go.
struct Pattern {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    diagonal: Vec<usize>,
    /// For row e = (a, b): positions of (a, b) and (b, a).
    off: Vec<(usize, usize)>,
}

impl Pattern {
    fn new(n: usize, rows: &[(usize, usize)]) -> Pattern {
        let mut cols: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
        for &(a, b) in rows {
            cols[a].push(b);
            cols[b].push(a);
        }
        for c in &mut cols {
            c.sort_unstable();
            c.dedup();
        }
        let mut col_ptr = vec![0];
        let mut row_idx = Vec::new();
        for c in &cols {
            row_idx.extend_from_slice(c);
            col_ptr.push(row_idx.len());
        }
        let find = |col: usize, row: usize| {
            col_ptr[col] + row_idx[col_ptr[col]..col_ptr[col + 1]].binary_search(&row).expect("in the pattern")
        };
        let diagonal = (0..n).map(|j| find(j, j)).collect();
        let off = rows.iter().map(|&(a, b)| (find(b, a), find(a, b))).collect();
        Pattern { col_ptr, row_idx, diagonal, off }
    }
}

/// Threads the outputs' work is split over: the machine's cores, at most one per output.
pub(crate) fn worker_threads(outputs: usize) -> usize {
    std::thread::available_parallelism().map_or(1, |t| t.get()).min(outputs.max(1))
}

/// Solve `lp` from the standard interior start: each iteration measures the residuals (and
/// keeps the best iterate), factorises the Newton system, takes Mehrotra's predictor-corrector
/// direction with Gondzio's correctors, and steps; a factorisation or Newton solve that gives out
/// raises the pivot floor and retries the iteration.
pub(crate) fn solve(lp: &BlockLp, settings: &Settings) -> IpmResult {
    if settings.threads <= 1 {
        return iterate(lp, settings);
    }
    // The loop itself runs on one of the pool's threads: its many short parallel passes are then
    // pushed to that thread's own queue for the others to steal, instead of each being handed
    // in from outside and the caller woken when it is done (measured on K = 40, 2 cores: the
    // iterations' serial share and the wake-ups were a third of the time).
    rayon::scope(|_| iterate(lp, settings))
}

/// Threads of the pool kept taking its work while the loop runs. The loop's passes are short and
/// many (K = 40: hundreds an iteration): a thread left idle falls asleep between them and waking
/// it costs more than a short pass (measured: 8 300 context switches a solve on 2 cores, 2 500
/// with them kept awake). Each keeper is a job on the pool that takes work as it comes and spins
/// between; it ends when the loop ends or after [`KEEPER_IDLE`] without work (so a keeper that
/// lands on a thread above a task the loop waits for ends soon after the loop runs out of work
/// for it, and no thread spins through a long serial stretch), and the loop calls up those
/// missing each iteration.
struct Keepers {
    state: Arc<KeeperState>,
}

struct KeeperState {
    /// Set when the loop ends.
    done: AtomicBool,
    /// Keepers running or called up.
    alive: AtomicUsize,
    /// Keepers wanted: one for each of the loop's threads but its own.
    wanted: usize,
    /// The loop's own thread, where a keeper returns at once (the loop must not wait under it).
    home: Option<usize>,
}

thread_local! {
    /// A keeper runs on this thread (another found here returns at once).
    static KEEPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How long a keeper spins without finding work before it ends.
const KEEPER_IDLE: std::time::Duration = std::time::Duration::from_millis(2);

impl Keepers {
    /// Keepers for a loop on `threads` threads, running on this thread (none for one thread).
    fn new(threads: usize) -> Keepers {
        let state = KeeperState {
            done: AtomicBool::new(false),
            alive: AtomicUsize::new(0),
            wanted: threads.saturating_sub(1),
            home: rayon::current_thread_index(),
        };
        Keepers { state: Arc::new(state) }
    }

    /// Call up the keepers missing.
    fn wake(&self) {
        while self.state.alive.load(Ordering::Acquire) < self.state.wanted {
            self.state.alive.fetch_add(1, Ordering::AcqRel);
            let state = Arc::clone(&self.state);
            rayon::spawn(move || {
                keep(&state);
                state.alive.fetch_sub(1, Ordering::AcqRel);
            });
        }
    }
}

impl Drop for Keepers {
    fn drop(&mut self) {
        self.state.done.store(true, Ordering::Release);
    }
}

/// One keeper's run (see [`Keepers`]).
fn keep(state: &KeeperState) {
    if rayon::current_thread_index() == state.home || KEEPING.with(|k| k.replace(true)) {
        return;
    }
    let mut last_work = Instant::now();
    while !state.done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            last_work = Instant::now();
        } else if last_work.elapsed() > KEEPER_IDLE {
            break;
        } else {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    }
    KEEPING.with(|k| k.set(false));
}

/// [`solve`]'s loop, on the thread it is called from.
fn iterate(lp: &BlockLp, settings: &Settings) -> IpmResult {
    let (m, n, ne) = (lp.m, lp.n, lp.rows.len());
    let pattern = Pattern::new(n, &lp.rows);
    let symbolic = Symbolic::analyse(n, &pattern.col_ptr, &pattern.row_idx);
    let threads = settings.threads.clamp(1, m.max(1));
    let mut p = starting_point(lp);

    let count = (m * (n + ne)) as f64;
    let mut best: Option<(f64, IpmResult)> = None;
    let mut since_best = 0;
    let mut iteration = 0;
    let mut pivot_floor = PIVOT_FLOOR;
    let mut stiff_above = f64::INFINITY;
    let mut stiff_outgrown = false;
    // The last split's stiff rows took more than `end_game_above`: the end game stops at its own
    // tolerances.
    let mut end_game = false;
    let mut times = KernelTimes::default();
    let mut iteration_seconds = settings.first_iteration_seconds;
    let mut iteration_began = Instant::now();
    let keepers = Keepers::new(threads);
    let ending = loop {
        keepers.wake();
        let r = residuals(lp, &p, count, threads);
        if best.as_ref().is_none_or(|(b, _)| r.merit < *b) {
            best = Some((r.merit, r.iterate(&p, iteration, threads)));
            since_best = 0;
        } else {
            since_best += 1;
        }
        if let Some(ending) = stopped(settings, &r, (since_best, end_game), iteration, iteration_seconds) {
            break ending;
        }
        let rung = Rung { pivot_floor, stiff_above, stiff_allowance: settings.stiff_allowance };
        let direction = factorise(lp, &pattern, &symbolic, &p, rung, threads, &mut times).and_then(|f| {
            end_game = f.stiff_bytes > settings.end_game_above;
            let newton = Newton {
                lp,
                p: &p,
                f: &f,
                perm: symbolic.perm(),
                pattern: &pattern,
                threads,
                mu: r.mu,
                solve_dropped: stiff_above.is_finite(),
            };
            newton.direction(&r, count).ok_or(GaveOut::LinearAlgebra)
        });
        let dir = match direction {
            Ok(dir) => dir,
            Err(GaveOut::LinearAlgebra) if stiff_above > STIFF_ABOVE && !stiff_outgrown => {
                stiff_above = STIFF_ABOVE;
                continue;
            }
            Err(gave_out) => {
                if gave_out == GaveOut::StiffRowsOutgrowTheirMemory {
                    // From here on the stiff rows stay in their blocks, and the pivot floor rises.
                    stiff_outgrown = true;
                    stiff_above = f64::INFINITY;
                }
                if end_game && pivot_floor < MAX_PIVOT_FLOOR {
                    // That far into the end game a try costs several plain iterations: the last
                    // rung at once (on the poll of 100 the two below it gave out again, 220 s
                    // each).
                    pivot_floor = MAX_PIVOT_FLOOR;
                    continue;
                }
                if raise_floor(&mut pivot_floor) {
                    continue;
                }
                break Ending::Stalled;
            }
        };
        take_step(lp, &mut p, &dir, threads);
        iteration += 1;
        iteration_seconds = iteration_began.elapsed().as_secs_f64();
        iteration_began = Instant::now();
        (settings.on_iteration)(iteration);
    };
    drop(keepers);
    recycled::clear();
    let (_, mut result) = best.expect("the first iterate is always recorded");
    result.ending = ending;
    result.times = times;
    result
}

/// G x for one output's block: `out[e] = x[a] − ρ x[b]` for each DP row e = (a, b).
fn apply_g(lp: &BlockLp, x: &[f64], out: &mut [f64]) {
    for (e, &(a, b)) in lp.rows.iter().enumerate() {
        out[e] = x[a] - lp.rho * x[b];
    }
}

/// `out += Gᵀ l` for one output's block.
fn add_gt(lp: &BlockLp, l: &[f64], out: &mut [f64]) {
    for (e, &(a, b)) in lp.rows.iter().enumerate() {
        out[a] += l[e];
        out[b] -= lp.rho * l[e];
    }
}

/// The start: the uniform mechanism is strictly feasible; the duals start small and below every
/// column's least cost, then both sides are shifted off the boundary (Mehrotra 1992, §7).
fn starting_point(lp: &BlockLp) -> Point {
    let (m, n, ne) = (lp.m, lp.n, lp.rows.len());
    let mut p = Point {
        x: vec![1.0 / m as f64; m * n],
        z: vec![0.0; m * n],
        s: vec![0.0; m * ne],
        lambda: vec![1e-3; m * ne],
        nu: vec![f64::INFINITY; n],
    };
    let mut t = lp.c.clone();
    for k in 0..m {
        apply_g(lp, &p.x[k * n..(k + 1) * n], &mut p.s[k * ne..(k + 1) * ne]);
        for v in &mut p.s[k * ne..(k + 1) * ne] {
            *v = -*v;
        }
        add_gt(lp, &p.lambda[k * ne..(k + 1) * ne], &mut t[k * n..(k + 1) * n]);
    }
    let (t_min, t_max) = t.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    for k in 0..m {
        for i in 0..n {
            p.nu[i] = p.nu[i].min(t[k * n + i]);
        }
    }
    for v in &mut p.nu {
        *v -= 0.1 * (t_max - t_min).max(1.0);
    }
    for k in 0..m {
        for i in 0..n {
            p.z[k * n + i] = t[k * n + i] - p.nu[i];
        }
    }
    let xz: f64 = dot(&p.x, &p.z) + dot(&p.s, &p.lambda);
    let shift = 0.5 * xz / (p.x.iter().sum::<f64>() + p.s.iter().sum::<f64>());
    p.lambda.iter_mut().for_each(|v| *v += shift);
    p.z.iter_mut().for_each(|v| *v += shift);
    p
}

/// An iterate's residuals — the DP rows' (r_p), the column sums' (r_l), the dual rows' (r_d) —
/// and what the loop judges it by: μ, the relative gap, the infeasibilities and their merit.
struct Residuals {
    rp: Vec<f64>,
    rd: Vec<f64>,
    rl: Vec<f64>,
    mu: f64,
    gap: f64,
    pinf: f64,
    dinf: f64,
    merit: f64,
}

/// The residuals of `p`; `count` is the number of complementarity pairs.
fn residuals(lp: &BlockLp, p: &Point, count: f64, threads: usize) -> Residuals {
    let (m, n, ne) = (lp.m, lp.n, lp.rows.len());
    let mut rp = vec![0.0; m * ne];
    let mut rd = vec![0.0; m * n];
    parts(&mut rp, m)
        .into_par_iter()
        .zip(parts(&mut rd, m))
        .with_min_len(least_outputs(m, threads))
        .enumerate()
        .for_each(|(k, (rpk, rdk))| {
            let (rows, cols) = lp.spans(k);
            apply_g(lp, &p.x[cols.clone()], rpk);
            for (e, j) in rows.clone().enumerate() {
                rpk[e] = -(rpk[e] + p.s[j]);
            }
            rdk.copy_from_slice(&lp.c[cols.clone()]);
            add_gt(lp, &p.lambda[rows], rdk);
            for (i, j) in cols.enumerate() {
                rdk[i] = -(rdk[i] - p.nu[i] - p.z[j]);
            }
        });
    let mut rl = vec![1.0; n];
    for xk in p.x.chunks_exact(n) {
        for i in 0..n {
            rl[i] -= xk[i];
        }
    }
    let mu = (dot(&p.x, &p.z) + dot(&p.s, &p.lambda)) / count;
    let pobj = dot(&lp.c, &p.x);
    let dobj: f64 = p.nu.iter().sum();
    let gap = (pobj - dobj).abs() / pobj.abs().max(1e-12);
    let pinf = max_abs(&rp).max(max_abs(&rl));
    let dinf = max_abs(&rd);
    // (f64::max would pass over a NaN.)
    let merit = if gap.is_nan() || pinf.is_nan() || dinf.is_nan() { f64::NAN } else { gap.max(pinf).max(dinf) };
    Residuals { rp, rd, rl, mu, gap, pinf, dinf, merit }
}

impl Residuals {
    /// The iterate `p` as a result, should it stay the best.
    fn iterate(&self, p: &Point, iteration: u32, threads: usize) -> IpmResult {
        IpmResult {
            x: copied(&p.x, threads),
            lambda: copied(&p.lambda, threads),
            ending: Ending::Stalled,
            iterations: iteration,
            gap: self.gap,
            primal_residual: self.pinf,
            dual_residual: self.dinf,
            times: KernelTimes::default(),
        }
    }
}

/// Why the loop ends before this iteration, if it does: converged (to the end game's tolerances
/// where the stiff rows hold more than [`Settings::end_game_above`]: `end_game`), no better iterate
/// for [`PATIENCE`] iterations (or a non-finite one), the iteration limit, or a deadline the
/// next iteration (as long as the last) would pass.
fn stopped(
    settings: &Settings,
    r: &Residuals,
    (since_best, end_game): (u32, bool),
    iteration: u32,
    iteration_seconds: f64,
) -> Option<Ending> {
    let within = |gap: f64, feasibility: f64| r.gap <= gap && r.pinf <= feasibility && r.dinf <= feasibility;
    if within(settings.gap_tolerance, settings.feasibility_tolerance) {
        return Some(Ending::Converged);
    }
    if end_game && within(settings.end_game_gap, settings.end_game_feasibility) {
        return Some(Ending::EndGame);
    }
    if since_best > PATIENCE || !r.merit.is_finite() {
        return Some(Ending::Stalled);
    }
    if iteration >= settings.max_iterations {
        return Some(Ending::IterationLimit);
    }
    if settings.deadline.is_some_and(|d| d.saturating_duration_since(Instant::now()).as_secs_f64() < iteration_seconds)
    {
        return Some(Ending::TimeLimit);
    }
    None
}

/// The Newton system factorised at a point: the scalings W = Λ S⁻¹ and D, every output's block
/// and the factorised Schur complement on the column sums.
struct Factored<'s> {
    w: Vec<f64>,
    d: Vec<f64>,
    blocks: Vec<Block<'s>>,
    /// Bytes the stiff rows take ([`Split::bytes`]).
    stiff_bytes: u128,
    schur: DenseCholesky,
}

/// One output's block D⁻¹ H D⁻¹ = M = I + D Gᵀ W G D, factorised.
enum Block<'s> {
    /// No row heavier than the rung's split: M's factor.
    Whole(SparseCholesky<'s>),
    /// Rows heavier than the split: see [`Split`].
    Split(Box<Split<'s>>),
}

/// An output whose stiff rows are split off: its block in the basis of the classes of its rows
/// heavier than [`CLASSES_ABOVE`] ([`Quotient`]), which gives its share of the Schur complement
/// and, where no class contradicts itself, its Newton solves; where one does, the solves go
/// through the augmented system on the rows heavier than the split ([`Woodbury`]).
struct Split<'s> {
    quotient: Quotient,
    woodbury: Option<Woodbury<'s>>,
}

/// The augmented system [H_L, G_Tᵀ; G_T, −W_T⁻¹] on one output's stiff rows T: H_L's block
/// factor (I + D G_Lᵀ W_L G_L D, the stiff rows weighing 0) and C = W_T⁻¹ + G_T H_L⁻¹ G_Tᵀ
/// factorised (Woodbury).
struct Woodbury<'s> {
    factor: SparseCholesky<'s>,
    rows: Vec<usize>,
    capacitance: DenseCholesky,
}

impl Split<'_> {
    /// Bytes the split takes beyond a plain block's factor.
    fn bytes(&self) -> u128 {
        let woodbury = self
            .woodbury
            .as_ref()
            .map_or(0, |w| 8 * (w.factor.nonzeros() as u128 + (w.rows.len() as u128).pow(2) + w.rows.len() as u128));
        self.quotient.bytes() + woodbury
    }

    /// The stiff rows whose multipliers the Newton solves return.
    fn rows(&self) -> &[usize] {
        match &self.woodbury {
            Some(w) => &w.rows,
            None => self.quotient.stiff_rows(),
        }
    }
}

impl Block<'_> {
    /// The DP rows whose multipliers the block's Newton solves return (none for a whole block).
    fn stiff_rows(&self) -> &[usize] {
        match self {
            Block::Whole(_) => &[],
            Block::Split(split) => split.rows(),
        }
    }
}

/// How far an iteration's linear algebra is pushed: the pivot floor of the blocks' factors, the
/// weight above which DP rows are split off as stiff, and the bytes those may take.
#[derive(Debug, Clone, Copy)]
struct Rung {
    pivot_floor: f64,
    stiff_above: f64,
    stiff_allowance: u128,
}

/// Why an iteration's linear algebra gave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GaveOut {
    /// A block not positive definite at the pivot floor, nothing left of the Schur complement, or
    /// a Newton direction whose leftover exceeds [`NEWTON_ERROR_LIMIT`].
    LinearAlgebra,
    /// More stiff rows than their allowance ([`Settings::stiff_allowance`]) holds.
    StiffRowsOutgrowTheirMemory,
}

/// Factorise every block and form and factorise the Schur complement (the kernels' times added
/// to `times`), the outputs with a row heavier than `stiff_above` split ([`Split`]).
fn factorise<'s>(
    lp: &BlockLp,
    pattern: &Pattern,
    symbolic: &'s Symbolic,
    p: &Point,
    rung: Rung,
    threads: usize,
    times: &mut KernelTimes,
) -> Result<Factored<'s>, GaveOut> {
    let Rung { pivot_floor, stiff_above, stiff_allowance } = rung;
    let (m, n, ne) = (lp.m, lp.n, lp.rows.len());
    let w: Vec<f64> = p.lambda.iter().zip(&p.s).map(|(l, s)| l / s).collect();
    let d: Vec<f64> = p.x.iter().zip(&p.z).map(|(x, z)| (x / (z + PRIMAL_REGULARISATION * x)).sqrt()).collect();
    let output = |k: usize| (&w[k * ne..(k + 1) * ne], &d[k * n..(k + 1) * n]);
    let clock = Instant::now();
    let heaviest: Vec<f64> = per_output(m, threads, |k| {
        let (wk, dk) = output(k);
        heaviest_row(lp, wk, dk)
    });
    let (split_outputs, whole_outputs): (Vec<usize>, Vec<usize>) =
        (0..m).partition(|&k| stiff_above.is_finite() && heaviest[k] > stiff_above);
    // A block in double-double costs several times one in f64: those go first, so that a pass
    // ends on the cheap ones, not with one thread alone on an expensive one.
    let mut cheapest_last: Vec<usize> = (0..whole_outputs.len()).collect();
    cheapest_last.sort_by_key(|&i| heaviest[whole_outputs[i]] <= DOUBLE_DOUBLE_ABOVE);
    let wholes = in_turn_map(&cheapest_last, threads, |i| {
        let k = whole_outputs[i];
        let (wk, dk) = output(k);
        block_factor(lp, pattern, symbolic, (wk, dk, heaviest[k]), pivot_floor)
    });
    times.block_factorisations += clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    // The split outputs take their bytes from the allowance as they are made; one that would
    // outgrow what is left, counting what it needs while it is made, is not made. (Which
    // output finds the room short depends on the threads' order: the path can differ with the
    // number of threads only where the splits come within one output's making of the
    // allowance.)
    let taken = AtomicU64::new(0);
    let splits = over_outputs(&split_outputs, threads, |k| {
        let (wk, dk) = output(k);
        let room = stiff_allowance.saturating_sub(u128::from(taken.load(Ordering::Relaxed)));
        let split = split_block(lp, pattern, symbolic, (wk, dk), pivot_floor, room)?;
        let bytes = u64::try_from(split.bytes()).unwrap_or(u64::MAX);
        taken.fetch_add(bytes, Ordering::Relaxed);
        Ok(split)
    });
    times.stiff_rows += clock.elapsed().as_secs_f64();
    if wholes.iter().any(Option::is_none) {
        return Err(GaveOut::LinearAlgebra);
    }
    let splits: Vec<Split<'s>> = splits.into_iter().collect::<Result<_, _>>()?;
    let stiff_bytes: u128 = splits.iter().map(Split::bytes).sum();
    if stiff_bytes > stiff_allowance {
        return Err(GaveOut::StiffRowsOutgrowTheirMemory);
    }
    let mut blocks: Vec<Option<Block<'s>>> = (0..m).map(|_| None).collect();
    for (k, whole) in whole_outputs.into_iter().zip(wholes) {
        blocks[k] = whole.map(Block::Whole);
    }
    for (k, split) in split_outputs.into_iter().zip(splits) {
        blocks[k] = Some(Block::Split(Box::new(split)));
    }
    let blocks: Vec<Block<'s>> = blocks.into_iter().map(|b| b.expect("every output is whole or split")).collect();
    let clock = Instant::now();
    let shares: Vec<SchurShare<'_, 's>> = blocks
        .iter()
        .map(|block| match block {
            Block::Whole(factor) => SchurShare::Block(factor),
            Block::Split(split) => SchurShare::Quotient(&split.quotient),
        })
        .collect();
    let schur = form_schur(&shares, symbolic, &d, threads);
    drop(shares);
    times.schur_forming += clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let schur = DenseCholesky::factorise(n, schur, threads);
    times.schur_factorisation += clock.elapsed().as_secs_f64();
    if schur.dropped == n {
        // Nothing left of the Schur complement (its entries overflowed): the end of the road.
        return Err(GaveOut::LinearAlgebra);
    }
    Ok(Factored { w, d, blocks, stiff_bytes, schur })
}

/// The block I + D Gᵀ W G D's factor for one output (`wk` its rows' weights, 0 for a row kept
/// out; `heaviest` the largest [`row_weight`] among them), or `None` where it is not positive
/// definite at `pivot_floor`; in double-double where a row is heavier than
/// [`DOUBLE_DOUBLE_ABOVE`]. Every pivot is ≥ 1 (the matrix is ⪰ I).
fn block_factor<'s>(
    lp: &BlockLp,
    pattern: &Pattern,
    symbolic: &'s Symbolic,
    (wk, dk, heaviest): (&[f64], &[f64], f64),
    pivot_floor: f64,
) -> Option<SparseCholesky<'s>> {
    if heaviest > DOUBLE_DOUBLE_ABOVE {
        symbolic.factorise(&block_values::<DoubleDouble>(lp, pattern, wk, dk), 1.0, pivot_floor).ok()
    } else {
        symbolic.factorise(&block_values::<f64>(lp, pattern, wk, dk), 1.0, pivot_floor).ok()
    }
}

/// `[f(k) for k in outputs]`, shared over the pool's threads as [`per_output`] does.
fn over_outputs<T: Send>(outputs: &[usize], threads: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    shared_outputs(outputs.par_iter().copied(), threads, f)
}

/// One output's block with its stiff rows split off ([`Split`]): the rows heavier than
/// [`CLASSES_ABOVE`], in their classes' basis or, where a class contradicts itself, the augmented
/// system on them; it gives out where a factor is not positive definite or the split would take
/// more than `room` bytes.
fn split_block<'s>(
    lp: &BlockLp,
    pattern: &Pattern,
    symbolic: &'s Symbolic,
    (wk, dk): (&[f64], &[f64]),
    pivot_floor: f64,
    room: u128,
) -> Result<Split<'s>, GaveOut> {
    // Each row's weight once: the stiff rows, and the heaviest of those left in the block.
    let mut stiff = Vec::new();
    let mut outside = wk.to_vec();
    let mut heaviest_outside = 0.0f64;
    for e in 0..lp.rows.len() {
        let weight = row_weight(lp, e, wk, dk);
        if weight > CLASSES_ABOVE {
            stiff.push(e);
            outside[e] = 0.0;
        } else {
            heaviest_outside = heaviest_outside.max(weight);
        }
    }
    let tight = Tight { rows: &lp.rows, stiff: &stiff, rho: lp.rho };
    let block = BlockPattern { col_ptr: &pattern.col_ptr, row_idx: &pattern.row_idx, perm: symbolic.perm() };
    let quotient = if heaviest_outside > DOUBLE_DOUBLE_ABOVE {
        Quotient::new(tight, wk, dk, &block_values::<DoubleDouble>(lp, pattern, &outside, dk), block, room)
    } else {
        Quotient::new(tight, wk, dk, &block_values::<f64>(lp, pattern, &outside, dk), block, room)
    };
    let quotient = quotient.map_err(|why| match why {
        NotBuilt::NotPositiveDefinite => GaveOut::LinearAlgebra,
        NotBuilt::OutgrowsItsRoom => GaveOut::StiffRowsOutgrowTheirMemory,
    })?;
    let woodbury = if quotient.solves_newton() && !woodbury_only() {
        None
    } else {
        let t = stiff.len() as u128;
        if quotient.bytes() + 8 * (t * t + symbolic.factor_nonzeros() as u128) > room {
            return Err(GaveOut::StiffRowsOutgrowTheirMemory);
        }
        let factor = block_factor(lp, pattern, symbolic, (&outside, dk, heaviest_outside), pivot_floor)
            .ok_or(GaveOut::LinearAlgebra)?;
        let capacitance = capacitance(lp, &factor, &stiff, wk, dk);
        Some(Woodbury { factor, rows: stiff, capacitance })
    };
    Ok(Split { quotient, woodbury })
}

/// Whether every split output takes the augmented system's route (tests ask for it, to compare
/// the two routes).
#[cfg(not(test))]
fn woodbury_only() -> bool {
    false
}
#[cfg(test)]
use tests::woodbury_only;

/// Bytes set aside for the stiff rows of `m` outputs on `n` observations ([`super::memory_bytes`]
/// counts them): [`STIFF_SCHURS`] Schur complements' worth; on a band of width w (`band`,
/// [`super::band_width`]) at least [`STIFF_BYTES_AN_ENTRY_A_WIDTH`] · w for each of P's m·n
/// entries; and at least 32 MiB.
pub(crate) fn stiff_allowance(n: usize, m: usize, band: Option<f64>) -> u128 {
    let schurs = STIFF_SCHURS * 8 * (n as u128).pow(2);
    let entries = band.map_or(0, |width| (STIFF_BYTES_AN_ENTRY_A_WIDTH * width * n as f64 * m as f64) as u128);
    schurs.max(entries).max(32 << 20)
}

/// Bytes a band's stiff rows may take for each entry of P and each unit of the band's width. On
/// a band every output splits near the end, and its basis's factor grows with n and the band's
/// reach (not n², as the lattice's Schur complements price it). The most an iteration took (each
/// class's forest from its centre, the bases' analyses kept for solves only), on clipped Poisson
/// sums at ε = 0.3 (width ≈ the cap): 3.3 KB an entry, 0.33 KB a width, on 100 records, cap 10
/// (|Y| = 1001, 28 outputs split: 92 MB, past the 89 MB that 3 KiB an entry gave, which stopped
/// the interior point at a gap of 1.3e-7); 2.2 KB (0.31) on 60 records, cap 7 (|Y| = 421, 40
/// outputs: 37.2 MB); 1.8 KB (0.23) on 200 records, cap 8 (|Y| = 1601, 29 outputs: 84 MB); 0.9
/// and 0.7 KB (0.15, 0.09) on 80 records, caps 6 and 8 (12.8 MB each). The price keeps 3× the
/// most measured, for what a basis holds while it is made (its analysis whole, A's values in
/// double-double: one basis peaked at 2.8× its bytes once made, each thread making one) and the
/// end game's Newton solves: at 0.75 KB a width a sum of 150 records, cap 8, ε = 0.2 (|Y| =
/// 1201) was estimated at 454 MB and peaked at 469 MB (402 MB of live heap).
const STIFF_BYTES_AN_ENTRY_A_WIDTH: f64 = 1024.0;

/// The Schur complements' worth of memory the stiff rows may take. The poll of 100 (|Y| = 5151,
/// 66 outputs, one Schur complement 212 MB) split every output at iteration 38, its rows and
/// bases taking 575 MB ([`Split::bytes`]: the bases' analyses, factors and rows, at their
/// capacities), then 603, 658, 724, 760, 830, 904 and 977 MB by iteration 45, where the end
/// game stopped at a gap of 2.6e-8 (more than half the allowance from iteration 44).
const STIFF_SCHURS: u128 = 8;

/// H_L⁻¹ v = D M_L⁻¹ D v for one output's block factor.
fn hl_solve(factor: &SparseCholesky<'_>, dk: &[f64], v: &[f64]) -> Vec<f64> {
    let scaled: Vec<f64> = v.iter().zip(dk).map(|(a, b)| a * b).collect();
    let mut y = factor.solve(&scaled);
    y.iter_mut().zip(dk).for_each(|(a, b)| *a *= b);
    y
}

/// G_Tᵀ t: the stiff rows' multipliers `t` spread onto the observations.
fn stiff_gt(lp: &BlockLp, rows: &[usize], t: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; lp.n];
    for (&e, &te) in rows.iter().zip(t) {
        let (a, b) = lp.rows[e];
        out[a] += te;
        out[b] -= lp.rho * te;
    }
    out
}

/// G_T x: the stiff rows of G applied to `x`.
fn stiff_g(lp: &BlockLp, rows: &[usize], x: &[f64]) -> Vec<f64> {
    rows.iter()
        .map(|&e| {
            let (a, b) = lp.rows[e];
            x[a] - lp.rho * x[b]
        })
        .collect()
}

/// One output's C = W_T⁻¹ + G_T V with V = H_L⁻¹ G_Tᵀ = D M_L⁻¹ D G_Tᵀ, factorised densely: V by
/// blocked solves ([`WIDTH`] columns a solve), each block's columns of C taken from it at once
/// (V is never whole).
fn capacitance(lp: &BlockLp, factor: &SparseCholesky<'_>, rows: &[usize], wk: &[f64], dk: &[f64]) -> DenseCholesky {
    let (n, t) = (lp.n, rows.len());
    let perm = factor.perm();
    let mut position = vec![0; n];
    perm.iter().enumerate().for_each(|(new, &old)| position[old] = new);
    let d_permuted: Vec<f64> = perm.iter().map(|&old| dk[old]).collect();
    let mut c = vec![0.0; t * t];
    let mut block = vec![0.0; n * WIDTH];
    for (chunk_index, chunk) in rows.chunks(WIDTH).enumerate() {
        block.iter_mut().for_each(|x| *x = 0.0);
        for (w, &e) in chunk.iter().enumerate() {
            let (a, b) = (position[lp.rows[e].0], position[lp.rows[e].1]);
            block[a * WIDTH + w] = d_permuted[a];
            block[b * WIDTH + w] = -lp.rho * d_permuted[b];
        }
        factor.solve_block_lower(&mut block, 0);
        // C[i, j] = (G_T V)[i, j], row i of G_T applied to column j of V, on and below the
        // diagonal: rows i ≥ first for this block's columns j.
        let first = chunk_index * WIDTH;
        for (i, &e) in rows.iter().enumerate().skip(first) {
            let (a, b) = (position[lp.rows[e].0], position[lp.rows[e].1]);
            let (da, db) = (d_permuted[a], lp.rho * d_permuted[b]);
            let width = chunk.len().min(i + 1 - first);
            for w in 0..width {
                c[i * t + first + w] = da * block[a * WIDTH + w] - db * block[b * WIDTH + w];
            }
        }
    }
    for (i, &e) in rows.iter().enumerate() {
        c[i * t + i] += 1.0 / wk[e];
    }
    DenseCholesky::factorise(t, c, 1)
}

/// What the Schur complement's solve does with the directions of the pivots its factor dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dropped {
    /// Leaves them at 0: right where the right-hand side has no part along them.
    Zero,
    /// Solves for them ([`Newton::schur_solve`]).
    Solved,
}

/// Solves of the whole Newton system at the point `p` through its factorisation `f`.
struct Newton<'a, 's> {
    lp: &'a BlockLp,
    p: &'a Point,
    f: &'a Factored<'s>,
    /// The blocks' (and so the Schur complement's) order of the observations.
    perm: &'a [usize],
    /// The blocks' pattern (for M_L's products in the classes' solves).
    pattern: &'a Pattern,
    threads: usize,
    mu: f64,
    /// Whether the directions of the Schur complement's dropped pivots are solved for where
    /// leaving them out leaves the system unsolved ([`Newton::solve_full`]): only once the rung
    /// splits stiff rows off. Before, a solve that loses digits is what sends the iteration to
    /// the split, the first remedy; solving for the dropped directions instead kept the blocks
    /// whole and made some bands slower (a clipped Poisson sum of 100 records, cap 7, ε = 1:
    /// 126 iterations to converge, 14.9 s, against 78 and 8.1 s to its end game).
    solve_dropped: bool,
}

impl Newton<'_, '_> {
    /// Output k's augmented system [H_L, G_Tᵀ; G_T, −W_T⁻¹][x; t] = [v; b_T] (`b` the right-hand
    /// side of all its DP rows, of which the stiff rows' are read; `None` for 0): through the
    /// classes' basis ([`Quotient::newton_solve`]), or by Woodbury, t = C⁻¹(G_T H_L⁻¹ v − b_T),
    /// x = H_L⁻¹(v − G_Tᵀ t). A whole block gives x = H_k⁻¹ v and no t.
    fn augmented_solve(&self, k: usize, v: &[f64], b: Option<&[f64]>) -> (Vec<f64>, Vec<f64>) {
        let (n, ne) = (self.lp.n, self.lp.rows.len());
        let dk = &self.f.d[k * n..(k + 1) * n];
        let split = match &self.f.blocks[k] {
            Block::Whole(factor) => return (hl_solve(factor, dk, v), Vec::new()),
            Block::Split(split) => split,
        };
        let wk = &self.f.w[k * ne..(k + 1) * ne];
        let Some(woodbury) = &split.woodbury else {
            let block =
                BlockPattern { col_ptr: &self.pattern.col_ptr, row_idx: &self.pattern.row_idx, perm: self.perm };
            return split.quotient.newton_solve(&block, wk, v, b);
        };
        let y = hl_solve(&woodbury.factor, dk, v);
        let mut t = stiff_g(self.lp, &woodbury.rows, &y);
        if let Some(b) = b {
            t.iter_mut().zip(&woodbury.rows).for_each(|(q, &e)| *q -= b[e]);
        }
        woodbury.capacitance.solve(&mut t, 1);
        let back = hl_solve(&woodbury.factor, dk, &stiff_gt(self.lp, &woodbury.rows, &t));
        (y.iter().zip(&back).map(|(a, b)| a - b).collect(), t)
    }

    /// S v = Σ_k H_k⁻¹ v: the Schur complement applied through the outputs' blocks (the
    /// caller's order).
    fn schur_apply(&self, v: &[f64]) -> Vec<f64> {
        let m = self.lp.m;
        let shares: Vec<Vec<f64>> = (0..m)
            .into_par_iter()
            .with_min_len(least_outputs(m, self.threads))
            .map(|k| self.augmented_solve(k, v, None).0)
            .collect();
        let mut out = vec![0.0; v.len()];
        for share in &shares {
            out.iter_mut().zip(share).for_each(|(o, s)| *o += s);
        }
        out
    }

    /// The factorised Schur complement's solve of `r` (the caller's order), its dropped pivots
    /// dropped or, `floored`, floored ([`DenseCholesky::solve_floored`]).
    fn schur_factor_solve(&self, r: &[f64], floored: bool) -> Vec<f64> {
        // The Schur complement is factorised in the blocks' order.
        let mut permuted: Vec<f64> = self.perm.iter().map(|&i| r[i]).collect();
        if floored {
            self.f.schur.solve_floored(&mut permuted, self.threads);
        } else {
            self.f.schur.solve(&mut permuted, self.threads);
        }
        let mut out = vec![0.0; r.len()];
        for (new, &old) in self.perm.iter().enumerate() {
            out[old] = permuted[new];
        }
        out
    }

    /// Δν with S Δν = `r`: the factor's solve, the directions of its dropped pivots left at 0;
    /// with [`Dropped::Solved`] (where pivots were dropped), from there by conjugate gradients
    /// on S ([`Newton::schur_apply`]) preconditioned by the factor with those pivots floored.
    fn schur_solve(&self, r: &[f64], dropped: Dropped) -> Vec<f64> {
        let dnu = self.schur_factor_solve(r, false);
        if dropped == Dropped::Zero || self.f.schur.dropped == 0 {
            return dnu;
        }
        let steps = (2 * self.f.schur.dropped + 3).min(SCHUR_GRADIENT_STEPS);
        let apply = |v: &[f64]| self.schur_apply(v);
        let precondition = |v: &[f64]| self.schur_factor_solve(v, true);
        conjugate_gradients::solve(apply, precondition, r, dnu, steps, SCHUR_GRADIENT_REDUCTION).0
    }

    /// One solve of the Newton system for right-hand sides (r_p, r_l, r_d, r_xz, r_sλ):
    /// b = r_p − r_sλ/λ, g_k = r_d + r_xz/x + G_Lᵀ(W_L b_L), the augmented block solve
    /// [H_L, G_Tᵀ; G_T, −W_T⁻¹][h_k; λ⁰_k] = [g_k; b_T], Δν = S⁻¹(r_l − Σ h_k),
    /// Δx_k = h_k + H_k⁻¹Δν, Δλ_T = λ⁰_k + C⁻¹G_T H_L⁻¹Δν, Δλ_L = W_L(G_L Δx − b_L), Δs and Δz
    /// from the complementarity rows. `dropped`: what the Schur complement's solve does with its
    /// dropped pivots.
    fn reduced(&self, rhs: &Rhs, dropped: Dropped) -> Direction {
        let (lp, p, w) = (self.lp, self.p, &self.f.w);
        let (m, n, ne) = (lp.m, lp.n, lp.rows.len());
        let least = least_outputs(m, self.threads);
        let mut b = recycled::vector(m * ne);
        let mut h = recycled::vector(m * n);
        let lambda0: Vec<Vec<f64>> = parts(&mut b, m)
            .into_par_iter()
            .zip(parts(&mut h, m))
            .with_min_len(least)
            .enumerate()
            .map(|(k, (bk, hk))| {
                let (rows, cols) = lp.spans(k);
                let stiff_rows = self.f.blocks[k].stiff_rows();
                let mut wb = vec![0.0; ne];
                for (e, j) in rows.enumerate() {
                    bk[e] = rhs.p[j] - rhs.sl[j] / p.lambda[j];
                    wb[e] = w[j] * bk[e];
                }
                stiff_rows.iter().for_each(|&e| wb[e] = 0.0);
                let mut gk: Vec<f64> = cols.map(|j| rhs.d[j] + rhs.xz[j] / p.x[j]).collect();
                add_gt(lp, &wb, &mut gk);
                let (x, l0) = self.augmented_solve(k, &gk, Some(bk));
                hk.copy_from_slice(&x);
                l0
            })
            .collect();
        let mut sum_h = vec![0.0; n];
        for hk in h.chunks_exact(n) {
            for i in 0..n {
                sum_h[i] += hk[i];
            }
        }
        let on_sums: Vec<f64> = (0..n).map(|i| rhs.l[i] - sum_h[i]).collect();
        let dnu = self.schur_solve(&on_sums, dropped);
        let mut dir = Direction::unset(m, n, ne);
        let Direction { x: dx, z: dz, s: ds, lambda: dlambda, nu } = &mut dir;
        nu.copy_from_slice(&dnu);
        parts(dx, m)
            .into_par_iter()
            .zip(parts(dz, m))
            .zip(parts(ds, m))
            .zip(parts(dlambda, m))
            .with_min_len(least)
            .enumerate()
            .for_each(|(k, (((dxk, dzk), dsk), dlk))| {
                let (rows, cols) = lp.spans(k);
                let (hx, t) = self.augmented_solve(k, &dnu, None);
                dxk.copy_from_slice(&hx);
                for (i, j) in cols.clone().enumerate() {
                    dxk[i] += h[j];
                }
                apply_g(lp, dxk, dlk);
                for (e, j) in rows.clone().enumerate() {
                    dlk[e] = w[j] * (dlk[e] - b[j]);
                }
                for (q, &e) in self.f.blocks[k].stiff_rows().iter().enumerate() {
                    dlk[e] = lambda0[k][q] + t[q];
                }
                for (e, j) in rows.enumerate() {
                    dsk[e] = (rhs.sl[j] - p.s[j] * dlk[e]) / p.lambda[j];
                }
                for (i, j) in cols.enumerate() {
                    dzk[i] = (rhs.xz[j] - p.z[j] * dxk[i]) / p.x[j];
                }
            });
        recycled::give(b);
        recycled::give(h);
        dir
    }

    /// What a direction leaves of the whole (unreduced) Newton system's right-hand side.
    fn leftover(&self, rhs: &Rhs, dir: &Direction) -> Rhs {
        let (lp, p) = (self.lp, self.p);
        let (m, n, ne) = (lp.m, lp.n, lp.rows.len());
        let mut out = Rhs {
            p: recycled::vector(m * ne),
            l: filled(n, self.threads, |i| rhs.l[i]),
            d: recycled::vector(m * n),
            xz: recycled::vector(m * n),
            sl: recycled::vector(m * ne),
        };
        parts(&mut out.p, m)
            .into_par_iter()
            .zip(parts(&mut out.sl, m))
            .zip(parts(&mut out.d, m))
            .zip(parts(&mut out.xz, m))
            .with_min_len(least_outputs(m, self.threads))
            .enumerate()
            .for_each(|(k, (((op, osl), od), oxz))| {
                let (rows, cols) = lp.spans(k);
                apply_g(lp, &dir.x[cols.clone()], op);
                for (e, j) in rows.clone().enumerate() {
                    op[e] = rhs.p[j] - (op[e] + dir.s[j]);
                    osl[e] = rhs.sl[j] - (p.lambda[j] * dir.s[j] + p.s[j] * dir.lambda[j]);
                }
                let mut gl = vec![0.0; n];
                add_gt(lp, &dir.lambda[rows], &mut gl);
                for (i, j) in cols.enumerate() {
                    od[i] = rhs.d[j] - (gl[i] - dir.nu[i] - dir.z[j]);
                    oxz[i] = rhs.xz[j] - (p.z[j] * dir.x[j] + p.x[j] * dir.z[j]);
                }
            });
        for xk in dir.x.chunks_exact(n) {
            for i in 0..n {
                out.l[i] -= xk[i];
            }
        }
        out
    }

    /// Size of a leftover: feasibility rows absolutely, complementarity rows relative to x∘z, s∘λ.
    fn size(&self, r: &Rhs) -> f64 {
        let (p, mu) = (self.p, self.mu);
        let m = self.lp.m;
        let per_output = (0..m).into_par_iter().with_min_len(least_outputs(m, self.threads)).map(|k| {
            let (rows, cols) = self.lp.spans(k);
            let compl_x = cols.clone().map(|j| r.xz[j].abs() / (p.x[j] * p.z[j])).fold(0.0, f64::max);
            let compl_s = rows.clone().map(|j| r.sl[j].abs() / (p.s[j] * p.lambda[j])).fold(0.0, f64::max);
            max_abs(&r.p[rows]).max(max_abs(&r.d[cols])).max(compl_x * mu).max(compl_s * mu)
        });
        per_output.reduce(|| 0.0, f64::max).max(max_abs(&r.l))
    }

    /// The reduced solve and its refinement ([`Newton::refined`]), the Schur complement's dropped
    /// pivots left at 0 (Wright 1999); where that leaves more than [`NEWTON_ERROR_LIMIT`] and
    /// pivots were dropped, the right-hand side had a part along their directions, and (where
    /// [`Newton::solve_dropped`]) they are solved for.
    fn solve_full(&self, rhs: &Rhs) -> (Direction, f64) {
        let (dir, error) = self.refined(rhs, Dropped::Zero);
        if error <= NEWTON_ERROR_LIMIT || !self.solve_dropped || self.f.schur.dropped == 0 {
            return (dir, error);
        }
        let (solved, solved_error) = self.refined(rhs, Dropped::Solved);
        if solved_error < error {
            (solved, solved_error)
        } else {
            (dir, error)
        }
    }

    /// The reduced solve, then iterative refinement on the whole system while it helps.
    fn refined(&self, rhs: &Rhs, dropped: Dropped) -> (Direction, f64) {
        let mut dir = self.reduced(rhs, dropped);
        let mut left = self.leftover(rhs, &dir);
        let mut error = self.size(&left);
        for _ in 0..REFINEMENTS {
            if error <= REFINE_ABOVE * self.mu {
                break;
            }
            let correction = self.reduced(&left, dropped);
            let candidate = dir.plus(&correction, self.threads);
            let candidate_left = self.leftover(rhs, &candidate);
            let candidate_error = self.size(&candidate_left);
            if !(candidate_error < 0.5 * error) {
                break;
            }
            (dir, left, error) = (candidate, candidate_left, candidate_error);
        }
        (dir, error)
    }

    /// The Newton step for the residuals `r` and complementarity right-hand sides `rxz`, `rsl`.
    fn newton(&self, r: &Residuals, xz: Vec<f64>, sl: Vec<f64>) -> (Direction, f64) {
        let copy = |v: &[f64]| filled(v.len(), self.threads, |j| v[j]);
        self.solve_full(&Rhs { p: copy(&r.rp), l: copy(&r.rl), d: copy(&r.rd), xz, sl })
    }

    /// The step's direction: the predictor (affine scaling), Mehrotra's corrector, then Gondzio's
    /// centrality correctors; `None` where a Newton solve leaves too large an error.
    fn direction(&self, r: &Residuals, count: f64) -> Option<Direction> {
        let (p, mu) = (self.p, self.mu);
        let (m, n, ne) = (self.lp.m, self.lp.n, self.lp.rows.len());
        let rxz = filled(m * n, self.threads, |j| -p.x[j] * p.z[j]);
        let rsl = filled(m * ne, self.threads, |j| -p.s[j] * p.lambda[j]);
        let (affine, error) = self.newton(r, rxz, rsl);
        if !(error <= NEWTON_ERROR_LIMIT) {
            return None;
        }
        let (ap, ad) = steps(self.lp, p, &affine, self.threads);
        let mu_affine =
            (p.x.iter()
                .zip(&affine.x)
                .zip(p.z.iter().zip(&affine.z))
                .map(|((x, dx), (z, dz))| (x + ap * dx) * (z + ad * dz))
                .sum::<f64>()
                + p.s
                    .iter()
                    .zip(&affine.s)
                    .zip(p.lambda.iter().zip(&affine.lambda))
                    .map(|((s, ds), (l, dl))| (s + ap * ds) * (l + ad * dl))
                    .sum::<f64>())
                / count;
        let sigma = (mu_affine / mu).powi(3).min(1.0);
        let rxz = filled(m * n, self.threads, |j| sigma * mu - p.x[j] * p.z[j] - affine.x[j] * affine.z[j]);
        let rsl = filled(m * ne, self.threads, |j| sigma * mu - p.s[j] * p.lambda[j] - affine.s[j] * affine.lambda[j]);
        let (dir, error) = self.newton(r, rxz, rsl);
        if !(error <= NEWTON_ERROR_LIMIT) {
            return None;
        }
        Some(self.centrality_correctors(dir, sigma * mu))
    }

    /// Gondzio's multiple centrality correctors (Gondzio 1996; Colombo & Gondzio 2008): aim a
    /// longer trial step, push the complementarity products that would leave [0.1, 10]·σμ
    /// (`target` = σμ) back into it, and keep the corrected direction while the steps grow.
    fn centrality_correctors(&self, mut dir: Direction, target: f64) -> Direction {
        let p = self.p;
        let (m, n, ne) = (self.lp.m, self.lp.n, self.lp.rows.len());
        for _ in 0..CENTRALITY_CORRECTORS {
            let (ap, ad) = steps(self.lp, p, &dir, self.threads);
            let (tp, td) = ((ap + 0.2).min(1.0), (ad + 0.2).min(1.0));
            let push = |v: f64| {
                if v < 0.1 * target {
                    0.1 * target - v
                } else if v > 10.0 * target {
                    (10.0 * target - v).max(-10.0 * target)
                } else {
                    0.0
                }
            };
            let xz = filled(m * n, self.threads, |j| push((p.x[j] + tp * dir.x[j]) * (p.z[j] + td * dir.z[j])));
            let sl =
                filled(m * ne, self.threads, |j| push((p.s[j] + tp * dir.s[j]) * (p.lambda[j] + td * dir.lambda[j])));
            let (p0, l, d) = (
                filled(m * ne, self.threads, |_| 0.0),
                filled(n, self.threads, |_| 0.0),
                filled(m * n, self.threads, |_| 0.0),
            );
            let (correction, error) = self.solve_full(&Rhs { p: p0, l, d, xz, sl });
            let candidate = dir.plus(&correction, self.threads);
            let (cp, cd) = steps(self.lp, p, &candidate, self.threads);
            if !(error <= NEWTON_ERROR_LIMIT) || cp + cd < 1.01 * (ap + ad) {
                break;
            }
            dir = candidate;
        }
        dir
    }
}

/// Step along `dir`: the longest steps that keep the point interior, cut to [`STEP_FRACTION`]
/// of them (at most 1), primal and dual apart.
fn take_step(lp: &BlockLp, p: &mut Point, dir: &Direction, threads: usize) {
    let (ap, ad) = steps(lp, p, dir, threads);
    let (ap, ad) = ((STEP_FRACTION * ap).min(1.0), (STEP_FRACTION * ad).min(1.0));
    axpy(ap, &dir.x, &mut p.x);
    axpy(ap, &dir.s, &mut p.s);
    axpy(ad, &dir.z, &mut p.z);
    axpy(ad, &dir.lambda, &mut p.lambda);
    axpy(ad, &dir.nu, &mut p.nu);
}

/// Raise the pivot floor one step; false when it is already at [`MAX_PIVOT_FLOOR`].
fn raise_floor(floor: &mut f64) -> bool {
    if *floor >= MAX_PIVOT_FLOOR {
        return false;
    }
    *floor *= 100.0;
    true
}

/// Items a task of a pass over `len` of them takes at least: all of them where the work stays on
/// the calling thread (`threads` 1: the caller runs several interior points side by side), else
/// `per_task`.
fn least_per_task(threads: usize, len: usize, per_task: usize) -> usize {
    if threads <= 1 {
        len.max(1)
    } else {
        per_task
    }
}

/// Outputs a task takes at least: one where the pool shares them, so that its threads take the
/// outputs as they free up (an output whose block is factorised in double-double costs several
/// times another's).
fn least_outputs(m: usize, threads: usize) -> usize {
    least_per_task(threads, m, 1)
}

/// `[f(0), …, f(m − 1)]`, the outputs shared over the pool's threads (see [`shared_outputs`]).
fn per_output<T: Send>(m: usize, threads: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    shared_outputs((0..m).into_par_iter(), threads, f)
}

/// `f` of each output `outputs` yields, in their order, shared over the pool's threads (see
/// [`least_outputs`]).
fn shared_outputs<T: Send>(
    outputs: impl IndexedParallelIterator<Item = usize>,
    threads: usize,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    let least = least_outputs(outputs.len(), threads);
    outputs.with_min_len(least).map(f).collect()
}

/// `v` (m equal parts, one per output) cut into its outputs' parts, empty where `v` is.
fn parts(v: &mut [f64], m: usize) -> Vec<&mut [f64]> {
    let len = v.len() / m.max(1);
    let mut rest = v;
    (0..m)
        .map(|_| {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            part
        })
        .collect()
}

/// The weight w (d_a² + e^{2ε} d_b²) of DP row e in I + D Gᵀ W G D.
fn row_weight(lp: &BlockLp, e: usize, w: &[f64], d: &[f64]) -> f64 {
    let (a, b) = lp.rows[e];
    w[e] * (d[a] * d[a] + lp.rho * lp.rho * d[b] * d[b])
}

/// The largest weight of a DP row in I + D Gᵀ W G D.
fn heaviest_row(lp: &BlockLp, w: &[f64], d: &[f64]) -> f64 {
    (0..lp.rows.len()).map(|e| row_weight(lp, e, w, d)).fold(0.0, f64::max)
}

/// The values of I + D Gᵀ W G D on the pattern, in the precision of `R`.
fn block_values<R: Real>(lp: &BlockLp, pattern: &Pattern, w: &[f64], d: &[f64]) -> Vec<R> {
    let mut values = vec![R::default(); pattern.row_idx.len()];
    for &pos in &pattern.diagonal {
        values[pos] = R::from_f64(1.0);
    }
    let rho = R::from_f64(lp.rho);
    for (e, &(a, b)) in lp.rows.iter().enumerate() {
        let (we, da, db) = (R::from_f64(w[e]), R::from_f64(d[a]), R::from_f64(d[b]));
        let (diag_a, diag_b) = (pattern.diagonal[a], pattern.diagonal[b]);
        values[diag_a] = values[diag_a].add(da.mul(da).mul(we));
        values[diag_b] = values[diag_b].add(db.mul(db).mul(rho).mul(rho).mul(we));
        let off = R::from_f64(-lp.rho).mul(we).mul(da).mul(db);
        let (ab, ba) = pattern.off[e];
        values[ab] = values[ab].add(off);
        values[ba] = values[ba].add(off);
    }
    values
}

/// Where one output's share of the Schur complement comes from.
enum SchurShare<'a, 's> {
    /// Its block's factor: D M⁻¹ D.
    Block(&'a SparseCholesky<'s>),
    /// Its block in the basis Q of its stiff rows' classes, through A = Qᵀ M Q's factor:
    /// D Q A⁻¹ Qᵀ D.
    Quotient(&'a Quotient),
}

/// The Schur complement Σ_k P D_k M_k⁻¹ D_k Pᵀ on and below the diagonal, in the factors' order P
/// (row-major; the entries above the diagonal are not read). Every output shares the
/// ordering, so the sum is formed by column blocks of [`WIDTH`]: a task takes one block of unit
/// vectors, solves it against every output's factor in turn (or its quotient's, [`SchurShare`])
/// and sums the solutions in a strip (|Y| × [`WIDTH`]) that stays in cache, then writes the strip
/// into its columns of the matrix once. The column blocks are shared over the threads, not the
/// outputs: the threads read the same group of factors at once, no thread waits for another's
/// outputs before the next block, and every entry is summed in the outputs' order, so the matrix
/// is the same on any number of cores. Summing output by output into the whole matrix instead
/// read and wrote all of it once per output (14 GB an iteration at |Y| = 5151).
fn form_schur(shares: &[SchurShare<'_, '_>], symbolic: &Symbolic, d: &[f64], threads: usize) -> Vec<f64> {
    let (n, m) = (symbolic.n(), shares.len());
    let perm = symbolic.perm();
    // D in the factors' order, output by output.
    let d_permuted: Vec<f64> = (0..m).flat_map(|k| perm.iter().map(move |&old| d[k * n + old])).collect();
    // Blocks of right-hand sides and strips of sums, one set per running task, reused throughout.
    let buffers: Mutex<Vec<[Vec<f64>; 3]>> = Mutex::new(Vec::new());
    let group = (SCHUR_GROUP_BYTES / (8 * symbolic.factor_nonzeros()).max(1)).max(1);
    // A column block's work is its rows below the block: the first is the heaviest. The threads
    // take the blocks in that order as they free up (the longest first), so a pass ends with
    // the lightest blocks, not with one thread alone on a heavy one.
    let column_blocks: Vec<usize> = (0..n).step_by(WIDTH).collect();
    let mut schur = zeroed(n * n, threads);
    let columns = DisjointColumns { matrix: schur.as_mut_ptr(), n };
    for group_start in (0..m).step_by(group) {
        let outputs = group_start..(group_start + group).min(m);
        in_turn(&column_blocks, threads, |first| {
            let width = WIDTH.min(n - first);
            let taken = buffers.lock().expect("no task panics holding it").pop();
            let [mut block, mut strip, mut classes] =
                taken.unwrap_or_else(|| [vec![0.0; n * WIDTH], vec![0.0; n * WIDTH], Vec::new()]);
            let sums = &mut strip[..(n - first) * WIDTH];
            sums.iter_mut().for_each(|v| *v = 0.0);
            for k in outputs.clone() {
                match shares[k] {
                    SchurShare::Block(factor) => {
                        let dk = &d_permuted[k * n..(k + 1) * n];
                        block[first * WIDTH..].iter_mut().for_each(|v| *v = 0.0);
                        let mut d_col = [0.0; WIDTH];
                        for w in 0..width {
                            block[(first + w) * WIDTH + w] = 1.0;
                            d_col[w] = dk[first + w];
                        }
                        factor.solve_block_lower(&mut block, first);
                        for r in first..n {
                            let d_row = dk[r];
                            let solved = &block[r * WIDTH..(r + 1) * WIDTH];
                            let out = &mut sums[(r - first) * WIDTH..(r - first + 1) * WIDTH];
                            for w in 0..WIDTH {
                                out[w] += d_row * solved[w] * d_col[w];
                            }
                        }
                    }
                    SchurShare::Quotient(quotient) => {
                        let factor = quotient.factor();
                        // Column j of D M⁻¹ D = D Q A⁻¹ Qᵀ D e_j: A solved for row j of D Q
                        // (in A's factor order, so the whole solve), then D Q applied.
                        classes.clear();
                        classes.resize(quotient.order() * WIDTH, 0.0);
                        for w in 0..width {
                            for &(position, v) in quotient.row(first + w) {
                                classes[position as usize * WIDTH + w] = v;
                            }
                        }
                        factor.solve_block_lower(&mut classes, 0);
                        for r in first..n {
                            let out = &mut sums[(r - first) * WIDTH..(r - first + 1) * WIDTH];
                            for &(position, v) in quotient.row(r) {
                                let solved = &classes[position as usize * WIDTH..(position as usize + 1) * WIDTH];
                                for w in 0..WIDTH {
                                    out[w] += v * solved[w];
                                }
                            }
                        }
                    }
                }
            }
            // SAFETY: this task alone touches columns first..first + width (each column block
            // is one task of this pass), and the matrix outlives the pass.
            unsafe { columns.add(first, width, sums) };
            buffers.lock().expect("no task panics holding it").push([block, strip, classes]);
        });
    }
    schur
}

/// `f` of every item, on `threads` of the pool's threads (the calling thread alone where it is
/// 1), each taking the next item in order as it frees up (so items given heaviest first end on
/// the lightest).
fn in_turn(items: &[usize], threads: usize, f: impl Fn(usize) + Sync) {
    let next = AtomicUsize::new(0);
    let work = || {
        while let Some(&item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
            f(item);
        }
    };
    if threads <= 1 {
        work();
    } else {
        rayon::scope(|scope| {
            for _ in 1..threads.min(items.len()) {
                scope.spawn(|_| work());
            }
            work();
        });
    }
}

/// `[f(0), …, f(len − 1)]` for the `len` = `order.len()` positions, taken in `order` as
/// [`in_turn`] takes items (so the heaviest first, where `order` lists them so).
fn in_turn_map<T: Send>(order: &[usize], threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let slots: Vec<Mutex<Option<T>>> = order.iter().map(|_| Mutex::new(None)).collect();
    in_turn(order, threads, |i| {
        let value = f(i);
        *slots[i].lock().expect("no task panics holding it") = Some(value);
    });
    slots
        .into_iter()
        .map(|slot| slot.into_inner().expect("no task panics holding it").expect("every position is taken once"))
        .collect()
}

/// The Schur complement (n × n, row-major) shared by tasks that each own a range of its columns.
struct DisjointColumns {
    matrix: *mut f64,
    n: usize,
}

// SAFETY: the tasks given it write disjoint columns (see `add`).
unsafe impl Sync for DisjointColumns {}

impl DisjointColumns {
    /// Add `sums` ((n − first) × [`WIDTH`], row-major) into rows first.. and columns
    /// first..first + width.
    ///
    /// # Safety
    ///
    /// No other thread reads or writes columns first..first + width meanwhile, and the matrix is
    /// alive.
    unsafe fn add(&self, first: usize, width: usize, sums: &[f64]) {
        for r in first..self.n {
            // SAFETY: r < n and first + width ≤ n keep the range inside the n × n matrix; the
            // caller guarantees that no one else touches these columns.
            let row = unsafe { std::slice::from_raw_parts_mut(self.matrix.add(r * self.n + first), width) };
            row.iter_mut().zip(&sums[(r - first) * WIDTH..]).for_each(|(a, b)| *a += b);
        }
    }
}

/// Largest steps in [0, 1] that keep the primal (x, s) and the dual (z, λ) non-negative.
fn steps(lp: &BlockLp, p: &Point, dir: &Direction, threads: usize) -> (f64, f64) {
    let ratio = |v: &[f64], dv: &[f64]| {
        v.iter().zip(dv).filter(|(_, d)| **d < 0.0).map(|(v, d)| -v / d).fold(f64::INFINITY, f64::min)
    };
    let m = lp.m;
    let (primal, dual) = (0..m)
        .into_par_iter()
        .with_min_len(least_outputs(m, threads))
        .map(|k| {
            let (rows, cols) = lp.spans(k);
            let primal =
                ratio(&p.x[cols.clone()], &dir.x[cols.clone()]).min(ratio(&p.s[rows.clone()], &dir.s[rows.clone()]));
            let dual = ratio(&p.z[cols.clone()], &dir.z[cols]).min(ratio(&p.lambda[rows.clone()], &dir.lambda[rows]));
            (primal, dual)
        })
        .reduce(|| (f64::INFINITY, f64::INFINITY), |a, b| (a.0.min(b.0), a.1.min(b.1)));
    (primal.min(1.0 / STEP_FRACTION), dual.min(1.0 / STEP_FRACTION))
}

impl Direction {
    /// A direction for m outputs, n observations and ne DP rows an output, its values
    /// unspecified (from [`recycled`]: the caller writes every one).
    fn unset(m: usize, n: usize, ne: usize) -> Direction {
        Direction {
            x: recycled::vector(m * n),
            z: recycled::vector(m * n),
            s: recycled::vector(m * ne),
            lambda: recycled::vector(m * ne),
            nu: recycled::vector(n),
        }
    }

    /// This direction plus a correction of it (on the pool's threads where `threads` > 1).
    fn plus(&self, other: &Direction, threads: usize) -> Direction {
        let add = |a: &[f64], b: &[f64]| -> Vec<f64> {
            let least = least_per_task(threads, a.len(), ELEMENTS_A_TASK);
            let mut sum = recycled::vector(a.len());
            sum.par_iter_mut().zip(a).zip(b).with_min_len(least).for_each(|((s, a), b)| *s = a + b);
            sum
        };
        Direction {
            x: add(&self.x, &other.x),
            z: add(&self.z, &other.z),
            s: add(&self.s, &other.s),
            lambda: add(&self.lambda, &other.lambda),
            nu: add(&self.nu, &other.nu),
        }
    }
}

fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// Every split output's Newton solves by Woodbury, on this thread.
        static WOODBURY_ONLY: Cell<bool> = const { Cell::new(false) };
    }

    pub(super) fn woodbury_only() -> bool {
        WOODBURY_ONLY.with(Cell::get)
    }

    #[test]
    fn one_thread_keeps_every_output_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let seen = per_output(7, 1, |k| (k, std::thread::current().id()));
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), (0..7).collect::<Vec<_>>());
        assert!(seen.iter().all(|s| s.1 == caller));
        // Several threads: the results stay in the outputs' order.
        assert_eq!(per_output(50, 2, |k| k * k), (0..50).map(|k| k * k).collect::<Vec<_>>());
    }

    /// A ring of `n` observations with a chord every 5th, and costs (i − k·n/m)² / n² normalised.
    fn ring_lp(n: usize, m: usize) -> BlockLp {
        let mut rows = Vec::new();
        for i in 0..n {
            let mut pair = |a: usize, b: usize| rows.extend([(a, b), (b, a)]);
            pair(i, (i + 1) % n);
            if i % 5 == 0 {
                pair(i, (i + n / 3) % n);
            }
        }
        let c = (0..m * n)
            .map(|j| {
                let (k, i) = (j / n, j % n);
                let centre = (k * n / m) as f64;
                ((i as f64 - centre) / n as f64).powi(2)
            })
            .collect();
        BlockLp { m, n, c, rows, rho: 0.5f64.exp() }
    }

    #[test]
    fn the_iterates_are_the_same_on_any_number_of_threads() {
        // More than one column block of the Schur complement and several outputs: a sum whose
        // order followed the threads would differ in its last bits, and so would the path.
        let lp = ring_lp(100, 7);
        let settings = |threads| Settings {
            gap_tolerance: 1e-10,
            feasibility_tolerance: 1e-10,
            end_game_gap: 1e-10,
            end_game_feasibility: 1e-10,
            max_iterations: 60,
            deadline: None,
            first_iteration_seconds: 0.0,
            on_iteration: Box::new(|_| {}),
            threads,
            stiff_allowance: stiff_allowance(lp.n, lp.m, None),
            end_game_above: stiff_allowance(lp.n, lp.m, None),
        };
        let one = solve(&lp, &settings(1));
        assert_eq!(one.ending, Ending::Converged, "gap {:e}", one.gap);
        for threads in [2, 3] {
            let several = solve(&lp, &settings(threads));
            assert_eq!(several.iterations, one.iterations, "{threads} threads");
            assert!(several.x.iter().zip(&one.x).all(|(a, b)| a.to_bits() == b.to_bits()), "{threads} threads");
            assert!(several.lambda.iter().zip(&one.lambda).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn the_end_game_stops_at_its_own_gap_once_its_rows_pass_their_threshold() {
        // (The ring whose tight rows outgrow f64 while the gap is still about 1e-7.)
        let (lp, _) = super::super::block_lp(&crate::tests::block_ipm::von_mises_ring());
        let settings = |above: u128, allowance: u128| Settings {
            gap_tolerance: 1e-10,
            feasibility_tolerance: 1e-10,
            end_game_gap: 1e-8,
            end_game_feasibility: 1e-9,
            max_iterations: 200,
            deadline: None,
            first_iteration_seconds: 0.0,
            on_iteration: Box::new(|_| {}),
            threads: 1,
            stiff_allowance: allowance,
            end_game_above: above,
        };
        let room = stiff_allowance(lp.n, lp.m, None);
        // Below their threshold the stiff rows take the interior point to its own tolerance.
        let priced = solve(&lp, &settings(room, room));
        assert_eq!(priced.ending, Ending::Converged, "gap {:e}", priced.gap);
        // A threshold of nothing but room given, the end game stops at its gap, sooner.
        let end_game = solve(&lp, &settings(0, room));
        assert_eq!(end_game.ending, Ending::EndGame, "gap {:e}", end_game.gap);
        assert!(end_game.gap <= 1e-8 && end_game.gap > priced.gap, "{:e} against {:e}", end_game.gap, priced.gap);
        assert!(end_game.iterations < priced.iterations);
        // No room at all: the rows stay in their blocks and the interior point stops at its
        // numerical limit short of the end game's gap — the room is what takes it further.
        let none = solve(&lp, &settings(0, 0));
        assert_eq!(none.ending, Ending::Stalled, "gap {:e}", none.gap);
        assert!(none.gap > 1e-8, "gap {:e}", none.gap);
    }

    #[test]
    fn the_stiff_rows_classes_and_their_augmented_system_reach_the_same_optimum() {
        // The ring whose tight rows outgrow f64: its split outputs' Newton solves through their
        // classes' basis, then by Woodbury on the rows above the split (the route of an output
        // whose classes contradict themselves).
        let (lp, _) = super::super::block_lp(&crate::tests::block_ipm::von_mises_ring());
        let settings = || Settings {
            gap_tolerance: 1e-10,
            feasibility_tolerance: 1e-10,
            end_game_gap: 1e-10,
            end_game_feasibility: 1e-10,
            max_iterations: 200,
            deadline: None,
            first_iteration_seconds: 0.0,
            on_iteration: Box::new(|_| {}),
            threads: 1,
            stiff_allowance: stiff_allowance(lp.n, lp.m, None),
            end_game_above: stiff_allowance(lp.n, lp.m, None),
        };
        let objective = |r: &IpmResult| dot(&lp.c, &r.x);
        let classes = solve(&lp, &settings());
        assert!(classes.times.stiff_rows > 0.0, "the rows were split");
        WOODBURY_ONLY.with(|only| only.set(true));
        let woodbury = solve(&lp, &settings());
        WOODBURY_ONLY.with(|only| only.set(false));
        for (route, r) in [("classes", &classes), ("Woodbury", &woodbury)] {
            assert_eq!(r.ending, Ending::Converged, "{route}: gap {:e}", r.gap);
        }
        let (a, b) = (objective(&classes), objective(&woodbury));
        assert!((a - b).abs() <= 1e-9 * a.abs(), "{a} against {b}");
    }

    #[test]
    fn parts_cut_a_vector_into_its_outputs_shares() {
        let mut v: Vec<f64> = (0..12).map(f64::from).collect();
        let cut = parts(&mut v, 3);
        assert_eq!(
            cut.iter().map(|p| p.to_vec()).collect::<Vec<_>>(),
            vec![vec![0.0, 1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0, 7.0], vec![8.0, 9.0, 10.0, 11.0]]
        );
        // No DP rows: every output's share is empty, and there is one per output.
        assert_eq!(parts(&mut [], 4).len(), 4);
    }

    #[test]
    fn in_turn_map_keeps_each_result_in_its_place_whatever_the_order_taken() {
        let order = [3, 0, 4, 1, 2];
        for threads in [1, 2, 3] {
            assert_eq!(in_turn_map(&order, threads, |i| 10 * i), vec![0, 10, 20, 30, 40]);
        }
    }

    #[test]
    fn keepers_take_the_pools_work_and_all_end_once_the_loop_does() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
        let state = pool.install(|| {
            let keepers = Keepers::new(3);
            keepers.wake();
            // Work shared over the pool while the keepers run: every item done once.
            let sum: u64 = (0..10_000u32).into_par_iter().with_min_len(1).map(|i| u64::from(i) * u64::from(i)).sum();
            assert_eq!(sum, (0..10_000u64).map(|i| i * i).sum::<u64>());
            let state = Arc::clone(&keepers.state);
            drop(keepers);
            state
        });
        let began = Instant::now();
        while state.alive.load(Ordering::Acquire) > 0 {
            assert!(began.elapsed() < std::time::Duration::from_secs(10), "a keeper outlived its loop");
            std::thread::yield_now();
        }
        assert!(state.done.load(Ordering::Acquire));
    }

    #[test]
    fn recycled_vectors_come_back_only_at_their_length() {
        recycled::clear();
        let mut v = recycled::vector(5);
        v.iter_mut().for_each(|x| *x = 7.0);
        let address = v.as_ptr();
        recycled::give(v);
        let other = recycled::vector(6);
        assert_eq!(other, vec![0.0; 6]);
        let again = recycled::vector(5);
        assert_eq!(again.as_ptr(), address);
        recycled::clear();
        assert_eq!(recycled::vector(5), vec![0.0; 5]);
    }
}
