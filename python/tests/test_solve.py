"""Python's optimum is the command line's: the same fields, equal to the last digit."""

import numpy as np
import pytest

import ubapp

def _strip(row):
    """Every field but wall-clock times (`seconds`, `assembly_seconds`, …, and the command line's
    phase breakdown `phases` with its `threads`), which differ between runs."""
    return {k: v for k, v in row.items() if not k.endswith("seconds") and k not in ("phases", "threads")}


@pytest.mark.parametrize("model_file", ["bernoulli-k100.toml", "bernoulli-k100-paper-grid.toml"])
def test_paper_model_optimum_equals_cli_json(models, cli_json, model_file):
    path = models / model_file
    cli_rows = cli_json("solve", path)
    results = ubapp.solve(str(path))
    assert len(results) == len(cli_rows)
    for r, c in zip(results, cli_rows):
        assert _strip(r.to_dict()) == _strip(c)
        # ==, not approx: the same serialisation on both sides.
        assert r.bayes_risk == c["bayes_risk"]
        assert r.dual_bound == c["dual_bound"]
        assert r.relative_gap == c["relative_gap"]
        assert r.status == c["status"]


def test_p_is_a_column_stochastic_numpy_array_with_the_reported_risk(models):
    model = ubapp.load_model(models / "bernoulli-k100.toml")
    (r,) = model.solve(eps=1.0)
    assert isinstance(r.p, np.ndarray)
    assert r.p.shape == (100, 101)
    # Each column is a distribution over the outputs (independent of the solver's own checks).
    np.testing.assert_allclose(r.p.sum(axis=0), 1.0, atol=1e-7)
    # ε-DP between neighbouring columns y ~ y+1, up to the reported violation.
    ratio_ok = r.p[:, 1:] <= np.exp(1.0) * r.p[:, :-1] + 1e-7
    assert ratio_ok.all()
    # Bayes risk recomputed from P in numpy: Σ_j π_j Σ_i q(y_i|θ_j) Σ_k P[k,i] (θ_j − θ̃_k)².
    from math import comb

    theta = (np.arange(100) + 0.5) / 100
    y = np.arange(101)
    q = np.array([[comb(100, i) * t**i * (1 - t) ** (100 - i) for i in y] for t in theta])
    loss = (theta[:, None] - theta[None, :]) ** 2  # [j, k]
    risk = np.mean(np.einsum("ji,ki,jk->j", q, r.p, loss))
    assert risk == pytest.approx(r.bayes_risk, rel=1e-7)


def test_model_from_toml_solves_like_the_file(models):
    text = (models / "bernoulli-k100.toml").read_text()
    a = ubapp.Model.from_toml(text).solve(eps=[0.1])[0]
    b = ubapp.load_model(models / "bernoulli-k100.toml").solve(eps=[0.1])[0]
    assert a.bayes_risk == b.bayes_risk
    assert a.eps == 0.1


def test_unknown_field_is_an_attribute_error(models):
    (r,) = ubapp.solve(models / "bernoulli-k100.toml", eps=[1.0])
    with pytest.raises(AttributeError, match="bayes_risk"):
        r.no_such_field


def test_the_anytime_route_brackets_the_exact_optimum_and_stops_at_the_gap(models):
    path = models / "vote-share-3way-small.toml"
    (exact,) = ubapp.solve(path, eps=1.0)
    (anytime,) = ubapp.solve(path, eps=1.0, solver="anytime", gap=0.05, max_seconds=60)
    assert anytime.status in ("certified-gap", "optimal")
    assert anytime.relative_gap <= 0.05
    # The certified interval [dual_bound, bayes_risk] holds the exact route's optimum.
    optimum = exact.bayes_risk
    assert anytime.dual_bound <= optimum * (1 + 1e-9)
    assert anytime.bayes_risk >= optimum * (1 - 1e-9)
    assert anytime.mechanism().eps == 1.0


@pytest.mark.parametrize("kwargs, name", [({"gap": 1.5}, "gap"), ({"gap": 0.0}, "gap"), ({"max_seconds": 0}, "max_seconds")])
def test_gap_and_max_seconds_out_of_range_name_the_keyword(models, kwargs, name):
    with pytest.raises(ubapp.InputError, match=name):
        ubapp.solve(models / "bernoulli-k100.toml", eps=1.0, **kwargs)
