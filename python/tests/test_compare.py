"""compare from Python: the rows of `ubapp compare --json`."""

import pytest

import ubapp

METHODS = ["ubapp", "lbapp", "geometric"]


def test_compare_rows_equal_the_cli(models, cli_json, tmp_path):
    path = models / "bernoulli-k100.toml"
    rows = ubapp.compare(path, eps=[0.5, 2.0], methods=METHODS, out=tmp_path / "cmp")
    cli = cli_json("compare", path, "--eps", "0.5,2", "--methods", ",".join(METHODS))
    assert list(rows) == cli
    assert {r["method"] for r in rows} == set(METHODS)
    assert (tmp_path / "cmp" / "risk.csv").exists()
    # UBaPP is the Bayes-optimal ε-DP estimator on its grids: no worse than LBaPP at each ε.
    for eps in (0.5, 2.0):
        by = {r["method"]: r["bayes_risk"] for r in rows if r["eps"] == eps}
        assert by["ubapp"] <= by["lbapp"]


def test_compare_bad_method_is_an_input_error(models):
    with pytest.raises(ubapp.InputError, match="no-such-method"):
        ubapp.compare(models / "bernoulli-k100.toml", eps=[1.0], methods=["no-such-method"])


def test_compare_dataframe_when_pandas_is_installed(models):
    pd = pytest.importorskip("pandas")
    frame = ubapp.compare(models / "bernoulli-k100.toml", eps=[1.0], methods=["ubapp", "lbapp"], as_frame=True)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["method"]) == ["ubapp", "lbapp"]
