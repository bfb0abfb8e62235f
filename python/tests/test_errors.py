"""Bad input raises ubapp.InputError with the command line's one-sentence message."""

import pytest

import ubapp

GOOD = """
name = "coin"
epsilon = [1.0]
[parameter]
grid = { kind = "midpoint", points = 10 }
prior = { kind = "uniform" }
[observation]
family = "binomial"
trials = 20
[loss]
kind = "squared"
"""


def test_input_error_is_an_error():
    assert issubclass(ubapp.InputError, ubapp.Error)
    assert issubclass(ubapp.Error, Exception)


@pytest.mark.parametrize(
    "old,new,field",
    [
        ("epsilon = [1.0]", "epsilon = [-1.0]", "epsilon"),
        ("trials = 20", "trials = 0", "observation.trials"),
        ("points = 10", "points = \"ten\"", "parameter.grid"),
        ('kind = "squared"', 'kind = "cubic"', "loss"),
    ],
)
def test_malformed_model_names_the_field(old, new, field):
    with pytest.raises(ubapp.InputError) as e:
        ubapp.Model.from_toml(GOOD.replace(old, new), "mine.toml")
    assert field in str(e.value)
    assert "mine.toml" in str(e.value)


def test_malformed_model_file_has_the_cli_message(tmp_path, cli):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace("trials = 20", "trials = 0"))
    code, _, err = cli("solve", path)
    assert code == 2
    with pytest.raises(ubapp.InputError) as e:
        ubapp.load_model(path)
    assert str(e.value) == err.strip().removeprefix("error: ")


def test_bad_arguments_are_input_errors():
    model = ubapp.Model.from_toml(GOOD)
    with pytest.raises(ubapp.InputError, match="solver"):
        model.solve(solver="simplex-by-hand")
    with pytest.raises(ubapp.InputError, match="eps"):
        model.solve(eps=[0.0])
    with pytest.raises(ubapp.InputError):
        ubapp.load_model("/no/such/model.toml")


def test_a_malformed_memory_limit_is_refused_naming_it(tmp_path, cli, monkeypatch):
    # The command line refuses UBAPP_MEMORY_LIMIT=lots before any work (exit 2); so does every
    # call of the package that reads, solves or certifies, in the same sentence.
    path = tmp_path / "coin.toml"
    path.write_text(GOOD)
    model = ubapp.Model.from_toml(GOOD)
    monkeypatch.setenv("UBAPP_MEMORY_LIMIT", "lots")
    code, _, err = cli("solve", path)
    assert code == 2
    with pytest.raises(ubapp.InputError) as e:
        ubapp.load_model(path)
    assert "UBAPP_MEMORY_LIMIT" in str(e.value)
    assert str(e.value) == err.strip().removeprefix("error: ")
    with pytest.raises(ubapp.InputError, match="UBAPP_MEMORY_LIMIT"):
        model.solve()
    monkeypatch.setenv("UBAPP_MEMORY_LIMIT", str(1 << 34))
    assert model.solve()[0].status == "optimal"
