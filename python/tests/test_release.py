"""Releases from records in Python: the same statistic, draw and ledger entry as ``ubapp release``."""

import json

import numpy as np
import pytest

import ubapp

PATIENTS = """name = "patients"
epsilon = [0.5]
[parameter]
grid = { kind = "midpoint", points = 25 }
prior = { kind = "uniform" }
[observation]
family = "binomial"
trials = 250
[loss]
kind = "squared"
"""


def _cured(n: int = 250) -> np.ndarray:
    # The same fixed records as tests/release_data.rs.
    return np.array([1 if (i * 7919 + 13) % 10 < 3 else 0 for i in range(n)], dtype=np.int64)


@pytest.fixture()
def deployment(tmp_path, cli):
    model = tmp_path / "patients.toml"
    model.write_text(PATIENTS)
    mech = tmp_path / "mech.json"
    code, _, err = cli("solve", model, "--out", mech, "--quiet")
    assert code == 0, err
    ledger = tmp_path / "ledger.db"
    code, _, err = cli("ledger", "init", "--ledger", ledger, "--dataset", "hospital-2026", "--budget", 5)
    assert code == 0, err
    return model, mech, ledger


def test_an_array_releases_what_the_cli_releases_from_the_csv(deployment, cli, tmp_path):
    model, mech, ledger = deployment
    cured = _cured()
    csv = tmp_path / "patients.csv"
    csv.write_text("id,cured\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cured)))
    m = ubapp.Mechanism.load(mech, model=model)
    entry = m.release(cured, ledger=ledger, dataset="hospital-2026", seed=3)
    code, out, err = cli(
        "release", mech, "--data", csv, "--column", "cured", "--ledger", ledger, "--dataset", "hospital-2026",
        "--seed", 3, "--model", model,
    )
    assert code == 0, err
    assert entry["value"] == out.strip()
    code, sampled, _ = cli("sample", mech, "--y", int(cured.sum()), "--seed", 3, "--model", model)
    assert entry["value"] == sampled.strip()
    assert entry["dataset"] == "hospital-2026" and entry["composition"] == "basic-pure-eps"
    assert entry["eps"] == m.certified_eps
    # A list gives the same statistic, hence the same draw.
    assert m.release(list(cured), ledger=ledger, dataset="hospital-2026", seed=3)["value"] == entry["value"]


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_series_releases_what_the_array_releases(deployment, library):
    lib = pytest.importorskip(library)
    model, mech, ledger = deployment
    m = ubapp.Mechanism.load(mech, model=model)
    cured = _cured()
    series = lib.Series("cured", cured) if library == "polars" else lib.Series(cured, name="cured")
    a = m.release(cured, ledger=ledger, dataset="hospital-2026", seed=4)
    b = m.release(series, ledger=ledger, dataset="hospital-2026", seed=4)
    assert a["value"] == b["value"]


def test_bad_records_raise_one_sentence_and_spend_nothing(deployment, cli):
    model, mech, ledger = deployment
    m = ubapp.Mechanism.load(mech, model=model)
    bad = _cured()
    bad[5] = 7
    with pytest.raises(ubapp.InputError, match=r"^data, element 5, column \"data\": 7 is outside the model's domain"):
        m.release(bad, ledger=ledger, dataset="hospital-2026")
    with pytest.raises(ubapp.InputError, match="has 249 records, but model \"patients\" is for exactly 250"):
        m.release(_cured(249), ledger=ledger, dataset="hospital-2026")
    with pytest.raises(ubapp.InputError, match="element 2"):
        m.release(np.where(np.arange(250) == 2, np.nan, 0.0), ledger=ledger, dataset="hospital-2026")
    with pytest.raises(ubapp.InputError, match="has no budget for dataset \"other\""):
        m.release(_cured(), ledger=ledger, dataset="other")
    code, out, _ = cli("ledger", "show", "--ledger", ledger, "--json")
    assert code == 0 and json.loads(out)[0]["releases"] == []
