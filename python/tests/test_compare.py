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


def test_compare_passes_the_gap_and_time_limit_and_checks_them(models):
    # The anytime route stopped at a 5 % gap: the notes state the interval the optimum lies in.
    path = models / "vote-share-3way-small.toml"
    rows = ubapp.compare(path, eps=[1.0], solver="anytime", gap=0.05, max_seconds=60)
    assert [r["method"] for r in rows][0] == "ubapp"
    assert any("is certified within a gap of" in n for n in rows.notes), rows.notes
    for kwargs, name in [({"gap": 1.5}, "gap"), ({"max_seconds": 0}, "max_seconds")]:
        with pytest.raises(ubapp.InputError, match=name):
            ubapp.compare(path, eps=[1.0], **kwargs)
