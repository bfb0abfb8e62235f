"""Python at parity with the command line: parties in compare, plan, report, audit and verify
against a trusted model, each answer equal to the CLI's; messages name Python's arguments."""

import json

import pytest

import ubapp

PARTY_MODEL = "hospitals-5-parties.toml"


def test_compare_on_a_party_model_equals_the_cli(models, cli_json):
    path = models / PARTY_MODEL
    rows = ubapp.compare(path, eps=[0.5])
    cli = cli_json("compare", path, "--eps", "0.5")
    assert list(rows) == cli["rows"]
    assert rows.notes == cli["notes"]
    assert {r["method"] for r in rows} >= {"ubapp", "ubapp-local", "geometric-shares"}
    assert any(r["parties"] == 5 for r in rows)


def test_compare_parties_as_a_list_or_a_number(models, cli_json):
    path = models / "bernoulli-k100.toml"
    cli = cli_json("compare", path, "--eps", "1", "--parties", "5", "--methods", "ubapp-local,geometric-shares")
    for parties in (5, [5]):
        rows = ubapp.compare(path, eps=[1.0], parties=parties, methods=["ubapp-local", "geometric-shares"])
        assert list(rows) == cli["rows"]
        assert {r["method"] for r in rows} == {"ubapp-local", "geometric-shares"}


def test_a_party_method_without_parties_is_an_input_error(models):
    with pytest.raises(ubapp.InputError, match="parties="):
        ubapp.compare(models / "bernoulli-k100.toml", eps=[1.0], methods=["ubapp-local"])


def test_messages_name_python_arguments(models):
    with pytest.raises(ubapp.InputError) as e:
        ubapp.compare(models / "bernoulli-k100.toml", eps=[-1.0], methods=["ubapp"])
    assert "eps[0]" in str(e.value) and "--" not in str(e.value)


def test_plan_equals_the_cli(models, cli_json):
    path = models / "bernoulli-k100.toml"
    py = ubapp.plan(path, target_rmse=0.06)
    cli = cli_json("plan", path, "--target-rmse", "0.06")
    assert py == cli
    assert py["bayes_risk"] <= 0.06**2


def test_plan_trials_equals_the_cli(models, cli_json):
    path = models / "bernoulli-k100.toml"
    py = ubapp.plan(path, target_risk=0.005, for_="trials", eps=1.0)
    assert py == cli_json("plan", path, "--target-risk", "0.005", "--for", "trials", "--eps", "1")


def test_plan_unreachable_target_names_the_argument(models):
    with pytest.raises(ubapp.InputError, match="target_rmse") as e:
        ubapp.plan(models / "bernoulli-k100.toml", target_rmse=0.001)
    assert "--" not in str(e.value)


def test_report_equals_the_cli(models, cli, tmp_path):
    path = models / "bernoulli-k100.toml"
    py = ubapp.report(path, tmp_path / "py", eps=[1.0])
    code, _, err = cli("report", path, "--eps", "1", "--out", tmp_path / "cli")
    assert code == 0, err
    assert py["artifacts"] == ["artifacts/mechanism-eps1.json"]
    assert (tmp_path / "py" / "risk.csv").read_text() == (tmp_path / "cli" / "risk.csv").read_text()
    a, b = (json.loads((tmp_path / d / "artifacts/mechanism-eps1.json").read_text()) for d in ("py", "cli"))
    assert (a["columns"], a["certified_eps"], a["bayes_risk"]) == (b["columns"], b["certified_eps"], b["bayes_risk"])


def test_report_on_a_party_model_has_the_party_comparison(models, tmp_path):
    ubapp.report(models / PARTY_MODEL, tmp_path / "r", eps=[0.5])
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Several data holders" in html


def test_audit_equals_the_cli(models, cli_json, tmp_path):
    path = models / "bernoulli-k100.toml"
    mech = ubapp.solve(path, eps=[1.0])[0].mechanism()
    file = tmp_path / "m.json"
    mech.save(file)
    py = mech.audit(samples=2000, seed=3, max_pairs=20)
    cli = cli_json("audit", file, "--samples", "2000", "--seed", "3", "--max-pairs", "20")
    cli.pop("checked_against")
    assert py == cli


def test_verify_against_a_trusted_model_equals_the_cli(models, cli_json, tmp_path):
    path = models / "bernoulli-k100.toml"
    file = tmp_path / "m.json"
    ubapp.solve(path, eps=[1.0])[0].mechanism().save(file)
    mech = ubapp.Mechanism.load(file)
    py = mech.verify(model=path)
    cli = cli_json("verify", file, "--model", path)
    assert py["checked_against"] == f"the trusted model {path}"
    cli.pop("file")
    assert py == cli
    assert mech.verify(fingerprint=py["fingerprint"])["checked_against"] == "the pinned fingerprint"
    with pytest.raises(ubapp.InputError):
        mech.verify(model=models / "bernoulli-k100-fine-output.toml")
    assert mech.verify()["checked_against"] == "embedded model only"
