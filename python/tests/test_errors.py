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
