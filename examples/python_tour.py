# %% [markdown]
# # ubapp from Python: design, certify, release, compare
#
# A notebook-style tour (cells marked `# %%` open as cells in Jupyter/VS Code; or run it with
# `python examples/python_tour.py` from the repository root after `pip install .`).

# %%
import tempfile
from pathlib import Path

import numpy as np

import ubapp

# %% [markdown]
# ## A model and its optimal private estimators
# The UBaPP paper's example: a coin's bias θ from K = 100 tosses, uniform prior, squared loss.

# %%
model = ubapp.load_model("models/bernoulli-k100.toml")
results = model.solve(eps=[0.1, 1.0, 5.0])
for r in results:
    # The same fields as `ubapp solve --json`: risk, certified lower bound, gap, status, …
    print(f"ε = {r.eps:<4}  Bayes risk {r.bayes_risk:.6e}  dual bound {r.dual_bound:.6e}  status {r.status}")

# %% [markdown]
# `p` is the mechanism itself: P[k, i] = Pr(release θ̃_k | y_i), as a numpy array.

# %%
r = results[1]
p = r.p  # None only for a very large chain model solved in compact form
assert p is not None
print(p.shape, "columns sum to", p.sum(axis=0).min().round(12), "…", p.sum(axis=0).max().round(12))
# Where does y = 37 successes send its probability mass?
top = np.argsort(p[:, 37])[::-1][:3]
print("most likely releases for y = 37:", [(round(float(k + 0.5) / 100, 3), round(float(p[k, 37]), 3)) for k in top])

# %% [markdown]
# ## A certified mechanism
# Repaired, quantised to integer weights and certified exactly; saved in the format
# `ubapp verify` checks. Loading re-derives the certificate from the weights.

# %%
mech = r.mechanism()
print(mech)
with tempfile.TemporaryDirectory() as d:
    path = Path(d) / "coin.json"
    mech.save(path)
    again = ubapp.Mechanism.load(path)  # re-verifies
    assert again.certified_eps == mech.certified_eps

# %% [markdown]
# ## Releasing and reading releases
# A real release uses fresh OS randomness (no seed). Several releases from the same data spend
# n·ε, so say so.

# %%
released = mech.sample(37)
print("one release for y = 37:", released)
draws = mech.sample(37, n=4, budget=4 * mech.certified_eps)
post = mech.posterior(list(draws), level=0.9)
print(f"posterior mean {post.posterior_mean:.3f}, 90% interval {post.interval}")

# %% [markdown]
# ## Against the literature's estimators

# %%
rows = ubapp.compare(model, eps=[0.5, 2.0], methods=["ubapp", "lbapp", "laplace-count-clamped", "geometric"])
for row in rows:
    print(f"{row['method']:<22} ε = {row['eps']:<4} Bayes risk {row['bayes_risk']:.4e}")
try:
    frame = rows.to_dataframe()  # needs pandas
    print(frame.pivot(index="method", columns="eps", values="bayes_risk"))
except ImportError:
    print("(install pandas for rows.to_dataframe())")

# %% [markdown]
# ## Errors
# Bad input raises `ubapp.InputError` with the command line's one-sentence message.

# %%
try:
    ubapp.Model.from_toml(Path("models/bernoulli-k100.toml").read_text().replace("trials = 100", "trials = 0"), "mine.toml")
except ubapp.InputError as e:
    print("InputError:", e)
