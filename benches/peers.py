#!/usr/bin/env python3
"""Side-by-side timings of `ubapp solve` and the tools a user would pick instead, on the same LP.

The peers solve the UBaPP linear program built here from its definition (README, docs/design/lp.md):

    min sum_{k,i} c[k,i] P[k,i]   s.t.  sum_k P[k,i] = 1,  P[k,a] <= e^eps P[k,b] for neighbours a ~ b,  P >= 0
    c[k,i] = sum_j pi_j q_j(y_i) L(theta_j, out_k)

with SciPy's HiGHS interior point (`linprog(method="highs-ipm")`), HiGHS's own interior points through
highspy without SciPy — HiPO (`solver="hipo"`, highspy-extras) and IPX (`solver="ipx"`), each with
crossover off, the fastest way either reaches an optimum to its tolerance — and CVXPY + Clarabel (the
source paper's tool chain). `ubapp` gets the matching model file and runs `ubapp solve --json` (route `auto`).
Each tool runs in its own process, `--reps` times; the table reports medians, the optimum each found,
and the ratio of the fastest peer's median to ubapp's.

Cases:
  multinomial D K R [A]  Dirichlet(2,..,2) prior (or Dirichlet(A) with A written 1-2-3: no symmetry
                         when the weights differ) on the simplex lattice of resolution R, K records,
                         squared-Euclidean loss, neighbours = move one record between categories
  poisson N CAP M        N records clipped at CAP, rate in [0, 4] on M midpoints, Beta(2, 5) prior,
                         absolute loss, neighbours = sums differing by 1..CAP
  grid2d S M             two independent counts of S - 1 trials (success theta and theta^2), uniform
                         prior on M midpoints, squared loss: the table family on the S x S grid graph
  binomial K M           K Bernoulli trials, uniform prior on M midpoints of [0, 1], squared loss,
                         chain neighbours: the peer is numpy's vectorised truncated geometric
                         mechanism followed by the Bayes remap (the chain optimum's form), timed
                         from the model's definition to the risk, like ubapp's whole process

Usage:
  python3 benches/peers.py [--ubapp target/release/ubapp] [--reps 3] [--eps 0.5] [--peers P1,P2] [CASE ...]
  python3 benches/peers.py --toml multinomial 3 20 10      (print the model file only)
  python3 benches/peers.py --one SOLVER CASE               (internal: one timed run, one JSON line)

CASE is written with colons, e.g. multinomial:3:20:10 or poisson:60:3:60. Without CASE: the
default table (multinomial 3/20/10, poisson 60/3/60, binomial 1000/1000). `make bench-peers` sets up the virtual
environment (numpy, scipy, cvxpy, clarabel) and runs the default table.
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

DEFAULT_CASES = ["multinomial:3:20:10", "poisson:60:3:60", "binomial:1000:1000"]
PEERS = ["scipy-highs-ipm", "highs-hipo", "highs-ipx", "cvxpy-clarabel"]


def compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in compositions(total - first, parts - 1):
            yield (first,) + rest


def multinomial(d, K, R, eps, alpha=None):
    import numpy as np
    from scipy.special import gammaln

    alpha = [2.0] * d if alpha is None else alpha
    if len(alpha) != d:
        sys.exit(f"benches/peers.py: a Dirichlet prior on {d} categories needs {d} weights, got {len(alpha)}")

    comps = list(compositions(R, d))
    # The simplex lattice's interior points, as ubapp's `simplex` grid places them.
    th = np.array([[(n + 0.5) / (R + d / 2) for n in c] for c in comps])
    logd = ((np.array(alpha) - 1) * np.log(th)).sum(axis=1)
    pi = np.exp(logd - logd.max())
    pi /= pi.sum()
    ys = list(compositions(K, d))
    q = np.array([[math.exp(gammaln(K + 1) - sum(gammaln(n + 1) for n in y)
                            + sum(n * math.log(t) for n, t in zip(y, row))) for y in ys] for row in th])
    L = ((th[:, None, :] - th[None, :, :]) ** 2).sum(axis=2)
    idx = {y: i for i, y in enumerate(ys)}
    edges = []
    for a, y in enumerate(ys):
        for s in range(d):
            for t in range(d):
                if s != t and y[s] > 0:
                    z = list(y)
                    z[s] -= 1
                    z[t] += 1
                    edges.append((a, idx[tuple(z)]))
    suffix = "" if alpha == [2.0] * d else "-a" + "-".join(f"{a:g}" for a in alpha)
    weights = ", ".join(f"{float(a)}" for a in alpha)
    toml = f'''name = "peer-multinomial-d{d}-k{K}-r{R}{suffix}"
epsilon = [{eps}]
[parameter]
grid = {{ kind = "simplex", resolution = {R} }}
prior = {{ kind = "dirichlet", alpha = [{weights}] }}
[observation]
family = "multinomial"
categories = {d}
records = {K}
[output]
grid = "parameter"
[loss]
kind = "squared-euclidean"
'''
    return (q, pi, L), edges, toml


def poisson_band(N, cap, m, eps):
    import numpy as np
    from scipy.stats import beta as beta_dist
    from scipy.stats import poisson

    lo, hi = 0.0, 4.0
    th = np.array([lo + (j + 0.5) * (hi - lo) / m for j in range(m)])
    pi = beta_dist.pdf((th - lo) / (hi - lo), 2.0, 5.0)
    pi /= pi.sum()
    q = []
    for lam in th:
        one = np.array([poisson.pmf(k, lam) for k in range(cap)] + [1 - poisson.cdf(cap - 1, lam)])
        dd = np.array([1.0])
        for _ in range(N):
            dd = np.convolve(dd, one)
        q.append(dd)
    q = np.array(q)
    n_obs = q.shape[1]
    L = np.abs(th[:, None] - th[None, :])
    edges = [(a, b) for a in range(n_obs) for b in range(n_obs) if 1 <= abs(a - b) <= cap]
    toml = f'''name = "peer-poisson-n{N}-cap{cap}-m{m}"
epsilon = [{eps}]
[parameter]
lower = 0.0
upper = 4.0
grid = {{ kind = "midpoint", points = {m} }}
prior = {{ kind = "beta", a = 2.0, b = 5.0 }}
[observation]
family = "poisson"
records = {N}
cap = {cap}
[loss]
kind = "absolute"
'''
    return (q, pi, L), edges, toml


def unit_parameter(M):
    """The [parameter] table of theta in [0, 1] on M midpoints with a uniform prior."""
    return f'''[parameter]
lower = 0.0
upper = 1.0
grid = {{ kind = "midpoint", points = {M} }}
prior = {{ kind = "uniform" }}
'''


def grid2d(S, M, eps):
    """Two independent counts y = (y1, y2) of S - 1 trials each, with success probabilities theta and
    theta^2 (theta in [0, 1] on M midpoints, uniform prior, squared loss): S^2 observations whose
    neighbours form the S x S grid graph (one trial's outcome changes one count by 1). A table-family
    model with no symmetry and no chain."""
    import numpy as np
    from scipy.stats import binom

    th = (np.arange(M) + 0.5) / M
    pi = np.full(M, 1.0 / M)
    k = np.arange(S)
    q1 = binom.pmf(k[None, :], S - 1, th[:, None])
    q2 = binom.pmf(k[None, :], S - 1, th[:, None] ** 2)
    q = (q1[:, :, None] * q2[:, None, :]).reshape(M, S * S)  # observation index y1 * S + y2
    q /= q.sum(axis=1, keepdims=True)
    L = (th[:, None] - th[None, :]) ** 2
    pairs = [(a * S + b, a * S + b + 1) for a in range(S) for b in range(S - 1)]
    pairs += [(a * S + b, (a + 1) * S + b) for a in range(S - 1) for b in range(S)]
    edges = pairs + [(b, a) for a, b in pairs]
    rows = ",\n".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in q)
    nb = ", ".join(f"[{a}, {b}]" for a, b in pairs)
    toml = f'''name = "peer-grid2d-s{S}-m{M}"
epsilon = [{eps}]
{unit_parameter(M)}[observation]
family = "table"
likelihood = [{rows}]
neighbours = [{nb}]
[loss]
kind = "squared"
'''
    return (q, pi, L), edges, toml


def binomial_toml(K, M, eps):
    return f'''name = "peer-binomial-k{K}-m{M}"
epsilon = [{eps}]
{unit_parameter(M)}[observation]
family = "binomial"
trials = {K}
[output]
grid = "parameter"
[loss]
kind = "squared"
'''


def numpy_geometric_remap(K, M, eps):
    """Risk of the truncated geometric mechanism on y in {0..K} (Ghosh, Roughgarden & Sundararajan
    2009) followed by the Bayes remap to the output grid, vectorised."""
    import numpy as np
    from scipy.stats import binom

    th = (np.arange(M) + 0.5) / M
    pi = np.full(M, 1.0 / M)
    y = np.arange(K + 1)
    q = binom.pmf(y[None, :], K, th[:, None])  # M x (K+1)
    a = math.exp(-eps)
    dist = np.abs(y[:, None] - y[None, :])
    g = a ** dist * ((1 - a) / (1 + a))
    g[:, 0] = a ** dist[:, 0] / (1 + a)  # the ends collect the tails
    g[:, K] = a ** dist[:, K] / (1 + a)
    joint = (pi[:, None] * q) @ g  # Pr(theta_j, z)
    m0, m1, m2 = joint.sum(0), th @ joint, (th ** 2) @ joint
    # Expected squared loss of answering out_k after z: out_k^2 m0 - 2 out_k m1 + m2; remap = argmin.
    costs = th[:, None] ** 2 * m0[None, :] - 2 * th[:, None] * m1[None, :] + m2[None, :]
    return float(costs.min(0).sum())


def build(case, eps):
    kind, *args = case.split(":")
    if kind == "multinomial" and len(args) == 4:
        # multinomial:D:K:R:A1-A2-..: a Dirichlet(A1, A2, ..) prior (no symmetry when they differ)
        alpha = [float(a) for a in args.pop().split("-")]
        return multinomial(*[int(a) for a in args], eps, alpha=alpha)
    args = [int(a) for a in args]
    if kind == "multinomial":
        return multinomial(*args, eps)
    if kind == "poisson":
        return poisson_band(*args, eps)
    if kind == "grid2d":
        return grid2d(*args, eps)
    if kind == "binomial":
        return None, None, binomial_toml(*args, eps)
    sys.exit(f"benches/peers.py: unknown case kind {kind!r} (multinomial or poisson)")


def dp_and_sum_matrix(edges, nk, ni, rho):
    """The LP's matrix in CSC, variable x[i*nk + k] = P[k, i]: the ni column-sum rows, then one DP row
    P[k, a] - e^eps P[k, b] <= 0 per directed edge (a, b) and output k."""
    import numpy as np
    from scipy.sparse import coo_matrix

    E = np.asarray(edges)
    ne, nv = len(E), nk * ni
    ks = np.tile(np.arange(nk), ne)
    rows = np.r_[np.repeat(np.arange(ni), nk), ni + np.repeat(np.arange(ne * nk), 2)]
    cols = np.r_[np.arange(nv), np.stack([np.repeat(E[:, 0], nk) * nk + ks, np.repeat(E[:, 1], nk) * nk + ks], axis=1).ravel()]
    vals = np.r_[np.ones(nv), np.tile([1.0, -rho], ne * nk)]
    return coo_matrix((vals, (rows, cols)), shape=(ni + ne * nk, nv)).tocsc(), ni + ne * nk


def solve_peer(solver, case, eps):
    """One timed run of a peer: LP assembly from the model's definition plus the solve."""
    import numpy as np
    from scipy.sparse import coo_matrix

    t0 = time.perf_counter()
    if solver == "numpy-geometric-remap":
        K, M = (int(a) for a in case.split(":")[1:])
        value = numpy_geometric_remap(K, M, eps)
        return dict(value=value, status="closed form", seconds=time.perf_counter() - t0, variables=(K + 1) * M)
    (q, pi, L), edges, _ = build(case, eps)
    C = L.T @ (pi[:, None] * q)  # c[k, i]
    nk, ni = C.shape
    rho = math.exp(eps)
    scale = 1.0 / C.max()
    if solver == "cvxpy-clarabel":
        import cvxpy as cp

        P = cp.Variable((nk, ni), nonneg=True)
        A = np.array([e[0] for e in edges])
        B = np.array([e[1] for e in edges])
        cons = [cp.sum(P, axis=0) == 1, P[:, A] <= rho * P[:, B]]
        prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(C * scale, P))), cons)
        prob.solve(solver="CLARABEL")
        value, status = prob.value / scale, prob.status
    elif solver in ("highs-hipo", "highs-ipx"):
        import highspy

        A, nrows = dp_and_sum_matrix(edges, nk, ni, rho)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "hipo" if solver == "highs-hipo" else "ipx")
        h.setOptionValue("run_crossover", "off")
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = nk * ni, nrows
        lp.col_cost_ = C.T.reshape(-1) * scale
        lp.col_lower_ = np.zeros(nk * ni)
        lp.col_upper_ = np.full(nk * ni, highspy.kHighsInf)
        lp.row_lower_ = np.r_[np.ones(ni), np.full(nrows - ni, -highspy.kHighsInf)]
        lp.row_upper_ = np.r_[np.ones(ni), np.zeros(nrows - ni)]
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
        h.passModel(lp)
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        value = h.getInfo().objective_function_value / scale if status == "Optimal" else float("nan")
    elif solver == "scipy-highs-ipm":
        from scipy.optimize import linprog

        nv = nk * ni
        rows, cols, vals = [], [], []
        r = 0
        for (x, y) in edges:
            for k in range(nk):
                rows += [r, r]
                cols += [x * nk + k, y * nk + k]
                vals += [1.0, -rho]
                r += 1
        Aub = coo_matrix((vals, (rows, cols)), shape=(r, nv)).tocsr()
        Aeq = coo_matrix((np.ones(nv), (np.repeat(np.arange(ni), nk), np.arange(nv))), shape=(ni, nv)).tocsr()
        res = linprog(C.T.reshape(-1) * scale, A_ub=Aub, b_ub=np.zeros(r), A_eq=Aeq, b_eq=np.ones(ni),
                      bounds=(0, None), method="highs-ipm")
        value = res.fun / scale if res.status == 0 else float("nan")
        status = res.message[:40]
    else:
        sys.exit(f"benches/peers.py: unknown peer {solver!r}")
    return dict(value=value, status=status, seconds=time.perf_counter() - t0,
                variables=nk * ni, dp_rows=len(edges) * nk)


def run_ubapp(ubapp, case, eps):
    _, _, toml = build(case, eps)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.toml")
        with open(path, "w") as f:
            f.write(toml)
        t0 = time.perf_counter()
        out = subprocess.run([ubapp, "solve", path, "--json"], capture_output=True, text=True)
        seconds = time.perf_counter() - t0
    if out.returncode != 0:
        return dict(value=float("nan"), status=f"exit {out.returncode}: {out.stderr.strip()[:80]}", seconds=seconds)
    row = json.loads(out.stdout)[0]
    return dict(value=row["bayes_risk"], status=row["status"], seconds=seconds, solver=row["solver"],
                gap=row.get("relative_gap"), bound=row.get("dual_bound"))


def one_run(tool, case, eps, ubapp):
    """Each timed run in a fresh process, so imports and caches are paid the same way each time."""
    cmd = [sys.executable, __file__, "--one", tool, case, "--eps", str(eps), "--ubapp", ubapp]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return dict(value=float("nan"), status=f"failed: {out.stderr.strip()[-80:]}", seconds=float("nan"))
    return json.loads(out.stdout)


def main():
    argv = sys.argv[1:]
    opts = {"--ubapp": "target/release/ubapp", "--reps": "3", "--eps": "0.5", "--peers": ",".join(PEERS)}
    rest = []
    i = 0
    one = None
    while i < len(argv):
        a = argv[i]
        if a in opts:
            opts[a] = argv[i + 1]
            i += 2
        elif a == "--one":
            one = argv[i + 1]
            i += 2
        elif a == "--toml":
            print(build(":".join(argv[i + 1:]), float(opts["--eps"]))[2], end="")
            return
        elif a in ("-h", "--help"):
            print(__doc__)
            return
        else:
            rest.append(a)
            i += 1
    eps = float(opts["--eps"])
    if one is not None:
        result = run_ubapp(opts["--ubapp"], rest[0], eps) if one == "ubapp" else solve_peer(one, rest[0], eps)
        print(json.dumps(result))
        return
    cases = rest or DEFAULT_CASES
    reps = int(opts["--reps"])
    print(f"# eps = {eps}, {reps} run(s) each, medians; ratio = fastest peer / ubapp")
    print("| case | tool | median s | optimum | status |")
    print("|---|---|---|---|---|")
    for case in cases:
        medians = {}
        peers = ["numpy-geometric-remap"] if case.startswith("binomial") else opts["--peers"].split(",")
        for tool in ["ubapp"] + peers:
            runs = [one_run(tool, case, eps, opts["--ubapp"]) for _ in range(reps)]
            med = statistics.median(r["seconds"] for r in runs)
            medians[tool] = med
            last = runs[-1]
            label = tool if tool != "ubapp" else f"ubapp ({last.get('solver', '?')}, gap {last.get('gap')})"
            print(f"| {case} | {label} | {med:.2f} | {last['value']:.12e} | {last['status']} |", flush=True)
        fastest = min(medians[p] for p in peers)
        print(f"| {case} | **ratio** | {fastest / medians['ubapp']:.1f}x | | |", flush=True)


if __name__ == "__main__":
    main()
