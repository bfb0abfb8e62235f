"""Certified mechanisms from Python: the files the command line verifies, and its sampler."""

import json
import warnings

import numpy as np
import pytest

import ubapp


@pytest.fixture(scope="module")
def mechanism(models):
    (r,) = ubapp.solve(models / "bernoulli-k100.toml", eps=[1.0])
    return r.mechanism()


def test_saved_mechanism_verifies_with_the_cli(mechanism, cli_json, tmp_path):
    path = tmp_path / "coin.json"
    mechanism.save(path)
    report = cli_json("verify", path)
    assert report["certified_eps"] == mechanism.certified_eps
    assert mechanism.certified_eps <= 1.0
    loaded = ubapp.Mechanism.load(path)
    assert loaded.certified_eps == mechanism.certified_eps
    assert loaded.bayes_risk == mechanism.bayes_risk


def test_seeded_sample_is_reproducible_and_equals_the_cli(mechanism, models, cli_json, tmp_path):
    path = tmp_path / "coin.json"
    mechanism.save(path)
    a = mechanism.sample(37, n=50, seed=11, allow_composition=True)
    b = ubapp.Mechanism.load(path, model=models / "bernoulli-k100.toml").sample(37, n=50, seed=11, allow_composition=True)
    assert isinstance(a, np.ndarray) and a.shape == (50,)
    np.testing.assert_array_equal(a, b)
    cli = cli_json("sample", path, "--y", 37, "--n", 50, "--seed", 11, "--allow-composition")
    np.testing.assert_array_equal(a, np.asarray(cli))
    # A different seed gives different draws (50 draws of a 100-point output).
    assert not np.array_equal(a, mechanism.sample(37, n=50, seed=12, allow_composition=True))


def test_composition_needs_a_budget(mechanism):
    with pytest.raises(ubapp.InputError, match="basic composition"):
        mechanism.sample(37, n=5)
    assert mechanism.sample(37, n=5, budget=5.0, seed=1).shape == (5,)
    with pytest.raises(ubapp.InputError, match="not an observation"):
        mechanism.sample(101.5)


def test_posterior_equals_the_cli(mechanism, cli_json, tmp_path):
    path = tmp_path / "coin.json"
    mechanism.save(path)
    released = mechanism.sample(80, n=3, seed=5, allow_composition=True)
    post = mechanism.posterior(list(released), level=0.9)
    args = ["posterior", path, "--level", 0.9]
    for v in released:
        args += ["--release", repr(float(v))]
    cli = cli_json(*args)
    assert post.posterior_mean == cli["posterior_mean"]
    assert list(post.interval) == cli["interval"]
    np.testing.assert_array_equal(post.probabilities, cli["probabilities"])
    assert post.probabilities.sum() == pytest.approx(1.0, abs=1e-12)


def test_tampered_file_is_refused_like_verify(mechanism, cli, tmp_path):
    path = tmp_path / "coin.json"
    mechanism.save(path)
    doc = json.loads(path.read_text())
    doc["eps"] = doc["eps"] / 10  # claims ten times more privacy than the weights give
    path.write_text(json.dumps(doc))
    code, _, err = cli("verify", path)
    assert code == 2
    with pytest.raises(ubapp.InputError) as e:
        ubapp.Mechanism.load(path)
    assert str(e.value) == err.strip().removeprefix("error: ")


def test_an_unchecked_file_warns_and_the_deployment_mode_refuses(mechanism, models, tmp_path, monkeypatch):
    import warnings

    path = tmp_path / "coin.json"
    mechanism.save(path)
    loaded = ubapp.Mechanism.load(path)
    with pytest.warns(UserWarning, match="embedded in it only"):
        loaded.sample(37, seed=1)
    checked = ubapp.Mechanism.load(path, model=models / "bernoulli-k100.toml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checked.sample(37, seed=1)
        mechanism.sample(37, seed=1)  # solved in this process from the model in hand
    with pytest.raises(ubapp.InputError, match="max_eps"):
        ubapp.Mechanism.load(path, fingerprint="0" * 64)
    fingerprint = json.loads(path.read_text())["model_fingerprint"]
    with pytest.raises(ubapp.InputError, match="more than the bound"):
        ubapp.Mechanism.load(path, fingerprint=fingerprint, max_eps=0.5)
    pinned = ubapp.Mechanism.load(path, fingerprint=fingerprint, max_eps=1.0)
    monkeypatch.setenv("UBAPP_REQUIRE_MODEL", "1")
    with pytest.warns(UserWarning), pytest.raises(ubapp.InputError, match="UBAPP_REQUIRE_MODEL"):
        loaded.sample(37, seed=1)
    assert pinned.sample(37, seed=1).shape == (1,)


def test_a_vector_posterior_says_which_interval_is_marginal_and_gives_the_joint_region(models, cli_json, tmp_path):
    (r,) = ubapp.solve(models / "vote-share-3way-small.toml", eps=[1.0])
    mech = r.mechanism()
    path = tmp_path / "poll.json"
    mech.save(path)
    # A mechanism solved in this session is the model's own: no warning about an unchecked file.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = mech.posterior([[0.6, 0.2, 0.2]], level=0.9)
    cli = cli_json("posterior", path, "--release", "0.6,0.2,0.2", "--level", 0.9)
    np.testing.assert_array_equal(post.interval, cli["interval"])
    np.testing.assert_array_equal(post.interval_mass, cli["interval_mass"])
    assert post.box_mass == cli["box_mass"]
    np.testing.assert_array_equal(post.region, cli["region"]["points"])
    assert post.region_mass == cli["region"]["mass"] >= 0.9
    assert post.probabilities[post.region].sum() == pytest.approx(post.region_mass, abs=1e-12)
    assert post.bayes_rule == "posterior mean" and post.loss == "squared"
    np.testing.assert_array_equal(post.bayes_estimate, post.posterior_mean)


def test_rounded_and_half_way_releases_say_what_the_cli_says(models, cli, tmp_path):
    import warnings

    text = (models / "bernoulli-k100.toml").read_text()
    (r,) = ubapp.solve(models / "bernoulli-k100.toml", eps=[1.0])
    mech = r.mechanism()
    path = tmp_path / "coin.json"
    mech.save(path)
    assert "midpoint" in text
    # 0.3751 rounds to 0.375 with the command line's note; 0.37 lies half-way between 0.365 and 0.375.
    code, _, err = cli("posterior", path, "--release", "0.3751")
    assert code == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mech.posterior(0.3751)
    notes = [str(w.message) for w in caught if "taken as the output" in str(w.message)]
    assert notes == ["note: release 0.3751 taken as the output 0.375 (the nearest; within half a grid step)"]
    assert "note: --release 0.3751 taken as the output 0.375 (the nearest; within half a grid step)" in err
    code, _, err = cli("posterior", path, "--release", "0.37")
    assert code == 2 and "--release 0.37 lies half-way between the outputs 0.365 and 0.375" in err
    with pytest.raises(ubapp.InputError, match="releases 0.37 lies half-way between the outputs 0.365 and 0.375"):
        mech.posterior(0.37)


def test_releases_are_numbers_as_people_write_them(tmp_path):
    model = ubapp.Model.from_toml(
        'name = "t"\nepsilon = [3.0]\n[parameter]\nlower = 0.0\nupper = 1.0\n'
        'grid = { kind = "midpoint", points = 40 }\nprior = { kind = "uniform" }\n'
        '[observation]\nfamily = "binomial"\ntrials = 10\n[loss]\nkind = "squared"\n'
    )
    (r,) = ubapp.solve(model)
    draws = r.mechanism().sample(0, n=200, seed=1, allow_composition=True)
    # The grid's double for 0.0875 is 0.08750000000000001; the release reads 0.0875.
    assert 0.0875 in set(draws.tolist())
    assert all(len(repr(float(v))) <= 6 for v in draws)
