"""ubapp — optimal differentially private Bayes point estimators by linear programming (UBaPP).

The Python face of the ``ubapp`` Rust library and command line: load a model, solve it for each
privacy level ε, turn a solution into a certified mechanism (integer weights, exact privacy
certificate, exact sampler), save it for ``ubapp verify``, sample releases and compute posteriors,
and compare UBaPP with the estimators of the literature.

    >>> import ubapp
    >>> model = ubapp.load_model("models/bernoulli-k100.toml")
    >>> result = model.solve(eps=[1.0])[0]
    >>> result.bayes_risk, result.status, result.p.shape
    >>> mech = result.mechanism()
    >>> mech.save("coin.json")             # ubapp verify coin.json
    >>> mech.sample(37, n=1, seed=7)       # numpy array of released values

Results carry the same fields, computed by the same code, as ``ubapp solve --json`` and
``ubapp compare --json``. Errors raise :class:`InputError` (bad input the caller can fix: the
command line's exit code 2) or :class:`Error`, with the command line's one-sentence messages.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import Error, InputError

__version__: str = _native.__version__

__all__ = [
    "Error",
    "InputError",
    "Model",
    "Result",
    "Mechanism",
    "Posterior",
    "CompareRows",
    "load_model",
    "solve",
    "compare",
    "plan",
    "report",
]

PathLike = Union[str, "os.PathLike[str]"]


class Model:
    """A validated model (a model file's contents)."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Model") -> None:
        self._native = native

    @classmethod
    def load(cls, path: PathLike) -> "Model":
        """Read and validate a model file (TOML); CSV paths in it are relative to its directory."""
        return cls(_native.Model.load(os.fspath(path)))

    @classmethod
    def from_toml(cls, text: str, origin: str = "<string>") -> "Model":
        """Parse and validate a model from TOML text; ``origin`` names it in error messages."""
        return cls(_native.Model.from_toml(text, origin))

    @property
    def name(self) -> str:
        """The model's name."""
        return self._native.name

    @property
    def epsilons(self) -> List[float]:
        """The model's own privacy levels (its ``epsilon`` list)."""
        return list(self._native.epsilons)

    @property
    def parties(self) -> int:
        """How many parties hold the records (``[parties] count``; 1 without the section)."""
        return self._native.parties

    def spec(self) -> Dict[str, Any]:
        """The model as a dict (its file's fields, with CSV contents inline)."""
        return json.loads(self._native.spec_json())

    def solve(
        self,
        eps: Optional[Union[float, Sequence[float]]] = None,
        solver: str = "auto",
        gap: Optional[float] = None,
        max_seconds: Optional[float] = None,
    ) -> List["Result"]:
        """Solve the UBaPP program for each ε (default: the model's list); one :class:`Result` each.

        ``solver`` is one of the command line's ``--solver`` names (``auto``, ``chain``,
        ``clarabel``, ``highs``, ``anytime``, …). ``gap`` is the certified relative gap the anytime
        route stops at, in (0, 1) (default 1e-3): the route ``auto`` takes for a model too large
        for an exact solve. Its results have ``status == "certified-gap"``: the released
        mechanism's risk is proven at most ``relative_gap`` above the optimum, which is proven to
        lie above ``dual_bound``. ``max_seconds`` stops every route with the best certified
        mechanism found by then (``solve --max-seconds``).
        """
        return [
            Result(s)
            for s in self._native.solve(
                _eps_list(eps),
                solver,
                None if gap is None else float(gap),
                None if max_seconds is None else float(max_seconds),
            )
        ]

    def __repr__(self) -> str:
        return f"ubapp.Model({self.name!r})"


def load_model(path: PathLike) -> Model:
    """Read and validate a model file (same as :meth:`Model.load`)."""
    return Model.load(path)


def _model(model: Union[Model, PathLike]) -> Model:
    return model if isinstance(model, Model) else Model.load(model)


def _eps_list(eps: Optional[Union[float, Sequence[float]]]) -> Optional[List[float]]:
    if eps is None:
        return None
    if isinstance(eps, (int, float)):
        return [float(eps)]
    return [float(e) for e in eps]


def solve(
    model: Union[Model, PathLike],
    eps: Optional[Union[float, Sequence[float]]] = None,
    solver: str = "auto",
    gap: Optional[float] = None,
    max_seconds: Optional[float] = None,
) -> List["Result"]:
    """Solve a model (a :class:`Model` or a model file's path) for each ε; see :meth:`Model.solve`."""
    return _model(model).solve(eps=eps, solver=solver, gap=gap, max_seconds=max_seconds)


class Result:
    """One ε's optimum: the fields of ``ubapp solve --json`` as attributes, and ``p`` as an array.

    Every field of the JSON object is an attribute (``eps``, ``bayes_risk``, ``dual_bound``,
    ``relative_gap``, ``status``, ``solver``, ``checks``, ``prior_risk``, ``rmse``, …);
    :meth:`to_dict` gives them all.
    """

    __slots__ = ("_native", "_row", "_p")

    def __init__(self, native: "_native.Solution") -> None:
        self._native = native
        self._row: Dict[str, Any] = json.loads(native.row_json())
        self._p: Optional[np.ndarray] = None

    def to_dict(self) -> Dict[str, Any]:
        """The ``solve --json`` object of this ε (a copy)."""
        return json.loads(json.dumps(self._row))

    def __getattr__(self, name: str) -> Any:
        row = object.__getattribute__(self, "_row")
        if name in row:
            return row[name]
        raise AttributeError(f"ubapp.Result has no field {name!r} (fields: {', '.join(row)})")

    def __dir__(self) -> Iterable[str]:
        return list(super().__dir__()) + list(self._row)

    @property
    def p(self) -> Optional[np.ndarray]:
        """P[k, i] = Pr(release θ̃_k | y_i), shape |Θ̃| × |Y|; ``None`` for a compact chain solution."""
        if self._p is None:
            raw = self._native.p()
            if raw is None:
                return None
            values, shape = raw
            self._p = np.asarray(values, dtype=np.float64).reshape(shape)
            self._p.setflags(write=False)
        return self._p

    def mechanism(self) -> "Mechanism":
        """The certified mechanism, as ``ubapp solve --out`` writes it (repaired, quantised to
        integer weights, its ε certified exactly)."""
        return Mechanism(self._native.mechanism())

    def __repr__(self) -> str:
        return f"ubapp.Result(eps={self.eps!r}, bayes_risk={self.bayes_risk!r}, status={self.status!r})"


class Posterior:
    """The exact posterior of θ on the model's parameter grid given releases (``ubapp posterior``)."""

    __slots__ = (
        "theta",
        "probabilities",
        "posterior_mean",
        "posterior_median",
        "posterior_mode",
        "bayes_estimate",
        "bayes_rule",
        "loss",
        "level",
        "interval",
        "interval_mass",
        "box_mass",
        "region",
        "region_mass",
    )

    def __init__(self, fields: Dict[str, Any]) -> None:
        theta = np.asarray(fields["theta"], dtype=np.float64)
        one_d = theta.ndim == 2 and theta.shape[1] == 1

        def point(values: Any) -> Union[float, np.ndarray]:
            v = np.asarray(values, dtype=np.float64)
            return float(v[0]) if one_d else v

        #: Grid points θ_j (a vector for a scalar θ, else one row per point).
        self.theta: np.ndarray = theta[:, 0] if one_d else theta
        #: Pr(θ_j | releases), summing to 1.
        self.probabilities: np.ndarray = np.asarray(fields["probabilities"], dtype=np.float64)
        #: E[θ | releases] (a float for a scalar θ).
        self.posterior_mean: Union[float, np.ndarray] = point(fields["posterior_mean"])
        #: Coordinate-wise lower median of the marginal posteriors (grid values).
        self.posterior_median: Union[float, np.ndarray] = point(fields["posterior_median"])
        #: The grid point of highest posterior probability.
        self.posterior_mode: Union[float, np.ndarray] = point(fields["posterior_mode"])
        bayes = fields["bayes_estimate"]
        #: The Bayes estimate for the model's loss (mean, median, mode, …: see ``bayes_rule``).
        self.bayes_estimate: Union[float, np.ndarray] = point(bayes["value"])
        #: Which estimate ``bayes_estimate`` is, e.g. ``"posterior median (coordinate-wise)"``.
        self.bayes_rule: str = bayes["rule"]
        #: The model's loss (``"squared"``, ``"absolute"``, ``"zero-one"``, ``"matrix"``).
        self.loss: str = bayes["loss"]
        #: Credibility level of ``interval`` and ``region``.
        self.level: float = fields["level"]
        iv = np.asarray(fields["interval"], dtype=np.float64)
        #: Marginal equal-tailed credible interval (lower, upper) (one row per coordinate for a
        #: vector θ: each is marginal; their box may hold less than ``level``, see ``box_mass``).
        self.interval: Union[tuple, np.ndarray] = (float(iv[0, 0]), float(iv[0, 1])) if one_d else iv
        #: Marginal posterior mass inside each interval (≥ level; a float for a scalar θ).
        self.interval_mass: Union[float, np.ndarray] = point(fields["interval_mass"])
        #: Joint posterior mass of the box the marginal intervals span.
        self.box_mass: float = fields["box_mass"]
        #: Joint credible region: indices into ``theta`` of the highest-posterior set (mass ≥ level).
        self.region: np.ndarray = np.asarray(fields["region"]["points"], dtype=np.int64)
        #: Joint posterior mass of ``region``.
        self.region_mass: float = fields["region"]["mass"]

    def __repr__(self) -> str:
        return (
            f"ubapp.Posterior(posterior_mean={self.posterior_mean!r}, "
            f"bayes_estimate={self.bayes_estimate!r} ({self.bayes_rule}), interval={self.interval!r})"
        )


def _coords(value: Union[float, Sequence[float]]) -> List[float]:
    if isinstance(value, (int, float, np.integer, np.floating)):
        return [float(value)]
    return [float(v) for v in value]


def _column(values: Any) -> List[float]:
    """One column's records as floats (a missing value becomes NaN, refused by the library)."""
    if hasattr(values, "to_numpy"):  # pandas or polars Series
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"data must be one column of records (got an array of shape {arr.shape})")
    try:
        return [float(v) for v in arr.astype(np.float64)]
    except (TypeError, ValueError) as e:
        raise InputError(f"data holds a value that is not a number ({e})") from None


def _columns(data: Any) -> List[Any]:
    """The records as (name, values) pairs: a DataFrame's or dict's columns, else one column."""
    if isinstance(data, dict):
        return [(str(k), _column(v)) for k, v in data.items()]
    if hasattr(data, "columns") and hasattr(data, "__getitem__") and not hasattr(data, "dtype"):
        return [(str(c), _column(data[c])) for c in data.columns]
    name = getattr(data, "name", None)
    return [(str(name) if name is not None else "data", _column(data))]


class Mechanism:
    """A certified mechanism: integer weights (or the compact geometric + remap form) whose ε is
    certified exactly, and the exact sampler the command line's ``sample`` uses."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Mechanism") -> None:
        self._native = native

    @classmethod
    def load(
        cls,
        path: PathLike,
        model: Optional[PathLike] = None,
        fingerprint: Optional[str] = None,
        max_eps: Optional[float] = None,
    ) -> "Mechanism":
        """Read a mechanism file and re-derive its certificate from the weights (raises
        :class:`InputError` if it fails, as ``ubapp verify`` exits 2).

        The certificate holds for the model embedded in the file; pass the ``model`` file you
        trust, or the ``fingerprint`` you pinned with ``max_eps`` (the largest ε you deploy), to
        check that it is your model (``ubapp verify --model`` / ``--fingerprint --max-eps``).
        Without either, ``sample`` and ``posterior`` warn, and with ``UBAPP_REQUIRE_MODEL=1``
        they refuse (docs/threat-model.md)."""
        return cls(
            _native.Mechanism.load(
                os.fspath(path),
                None if model is None else os.fspath(model),
                fingerprint,
                None if max_eps is None else float(max_eps),
            )
        )

    def _warn_if_unchecked(self) -> None:
        if not self._native.trusted:
            warnings.warn(
                "this mechanism file was checked against the model embedded in it only: it proves the "
                "weights are private for that model, not that it is the model you deploy (pass model= "
                "or fingerprint= with max_eps= to Mechanism.load)",
                UserWarning,
                stacklevel=3,
            )

    def save(self, path: PathLike) -> None:
        """Write the artifact atomically (the file ``ubapp verify``, ``sample`` and ``audit`` read)."""
        self._native.save(os.fspath(path))

    def to_dict(self) -> Dict[str, Any]:
        """The artifact's JSON object."""
        return json.loads(self._native.to_json())

    @property
    def kind(self) -> str:
        """``dense`` (integer weights) or ``geometric-remap`` (compact chain form)."""
        return self._native.kind

    @property
    def eps(self) -> float:
        """The target ε."""
        return self._native.eps

    @property
    def certified_eps(self) -> float:
        """The ε certified exactly from the integer weights (≤ the target)."""
        return self._native.certified_eps

    @property
    def delta(self) -> float:
        """The target δ (0 for pure ε-DP)."""
        return self._native.delta

    @property
    def certified_delta(self) -> float:
        """The certified δ."""
        return self._native.certified_delta

    @property
    def bayes_risk(self) -> float:
        """The Bayes risk of the mechanism as it is sampled."""
        return self._native.bayes_risk

    @property
    def model_name(self) -> str:
        """The name of the model it was designed for."""
        return self._native.model_name

    def sample(
        self,
        y: Union[float, Sequence[float]],
        n: int = 1,
        seed: Optional[int] = None,
        budget: Optional[float] = None,
        allow_composition: bool = False,
    ) -> np.ndarray:
        """``n`` releases for observation ``y`` with the exact sampler.

        With a ``seed`` the draws equal ``ubapp sample FILE --y Y --n N --seed SEED`` (for tests
        only: without it the generator is seeded from the operating system, as a real release
        must be). ``n`` releases from the same data spend n·ε: pass ``budget`` ≥ n·ε or
        ``allow_composition=True``. Returns shape (n,) for a scalar output, else (n, dim).
        """
        self._warn_if_unchecked()
        draws = self._native.sample(_coords(y), int(n), seed, budget, allow_composition)
        arr = np.asarray(draws, dtype=np.float64)
        return arr[:, 0] if self._native.output_dim == 1 else arr

    def release(self, data: Any, ledger: PathLike, dataset: str, seed: Optional[int] = None) -> Dict[str, Any]:
        """One value released from records and recorded in the privacy-budget ledger before it is
        returned (``ubapp release --data ... --ledger ... --dataset ...``).

        ``data`` holds the records: a numpy array, a list, or a pandas/polars Series (one column:
        0/1 records of a binomial model, counts of a Poisson model, category indices 0..d−1 of a
        multinomial model), or a pandas/polars DataFrame or a dict of such columns (a multinomial
        model's d indicator columns). The model's statistic is computed by the same code as the
        command line's; a record outside the model's domain, a wrong number of records or a
        missing value raises :class:`InputError` naming the element and nothing is spent. The
        ledger (an SQLite file or a ``postgres://`` URL, its dataset's budget set by ``ubapp
        ledger init``) refuses a release past the budget. Returns the ledger's entry: ``value``
        (as ``ubapp release`` prints it), ``eps``, ``delta``, ``id``, ``time``, ``fingerprint``.
        """
        self._warn_if_unchecked()
        entry = json.loads(self._native.release(_columns(data), os.fspath(ledger), str(dataset), seed))
        return entry

    def verify(self, model: Optional[Union[Model, PathLike]] = None, fingerprint: Optional[str] = None) -> Dict[str, Any]:
        """Check the mechanism against what you trust (``ubapp verify --model/--fingerprint``).

        Its certificate was re-derived from the weights when it was loaded; ``model`` (a
        :class:`Model` or a model file) must define the same problem, its ε no larger, and
        ``fingerprint`` (64 hex digits) must be its model's. Raises :class:`InputError` if not;
        returns the fields of ``verify --json`` (``checked_against`` says what was checked).
        """
        trusted = None if model is None else _model(model)._native
        return json.loads(self._native.verify(trusted, fingerprint))

    def audit(self, samples: int = 200_000, seed: int = 0, alpha: float = 0.05, max_pairs: int = 1000) -> Dict[str, Any]:
        """The empirical DP test of ``ubapp audit`` (the same draws for the same seed): samples
        neighbouring columns and bounds ε (or δ) from below; raises :class:`InputError` when the
        bound contradicts the certificate. Returns the fields of ``audit --json``."""
        return json.loads(self._native.audit(int(samples), int(seed), float(alpha), int(max_pairs)))

    def posterior(self, releases: Union[float, Sequence[Any]], level: float = 0.95) -> Posterior:
        """The exact posterior of θ given one released value or a list of independent releases
        of this mechanism (``ubapp posterior``); dense mechanisms only."""
        self._warn_if_unchecked()
        if isinstance(releases, (int, float, np.integer, np.floating)):
            items: List[List[float]] = [[float(releases)]]
        elif self._native.output_dim == 1:
            items = [_coords(r) for r in releases]
        else:
            seq = list(releases)
            items = [_coords(seq)] if seq and not isinstance(seq[0], (list, tuple, np.ndarray)) else [_coords(r) for r in seq]
        fields = json.loads(self._native.posterior(items, float(level)))
        for note in fields.get("notes", []):
            # A value rounded to the nearest output: the command line's note, word for word.
            warnings.warn(note, stacklevel=2)
        return Posterior(fields)

    def __repr__(self) -> str:
        return f"ubapp.Mechanism(model={self.model_name!r}, kind={self.kind!r}, certified_eps={self.certified_eps!r})"


class CompareRows(list):
    """The rows of a comparison, each a dict with the fields of ``ubapp compare --json``;
    ``notes`` holds what the command line prints as ``note:`` lines (which methods do not apply
    and why, what a row's risk means)."""

    notes: List[str] = []

    def to_dataframe(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas, which ubapp does not require)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("CompareRows.to_dataframe needs pandas: pip install pandas") from e
        return pd.DataFrame(list(self))


def compare(
    model: Union[Model, PathLike],
    eps: Optional[Union[float, Sequence[float]]] = None,
    methods: Optional[Sequence[str]] = None,
    trials: Optional[Sequence[int]] = None,
    seed: int = 0,
    delta: float = 1e-5,
    parties: Optional[Union[int, Sequence[int]]] = None,
    solver: str = "auto",
    out: Optional[PathLike] = None,
    as_frame: bool = False,
    max_seconds: Optional[float] = None,
    gap: Optional[float] = None,
) -> Any:
    """Compare UBaPP with the baselines over ε and K (``ubapp compare``).

    ``max_seconds`` and ``gap`` reach the UBaPP solves as in :func:`solve`: a design too large
    for the exact LP (or stopped by the limit) is certified within a gap, and the notes state the
    interval the optimum lies in.

    A model with a ``[parties]`` section, or ``parties`` (a number of parties M or a list of
    them), gets the party comparison, as on the command line: each party releases with ε-DP and
    the releases are aggregated, against UBaPP run by one curator holding every record.

    Returns :class:`CompareRows` (a list of dicts with the fields of ``compare --json``, and the
    notes), or a pandas DataFrame with ``as_frame=True``. With ``out`` the directory also gets
    risk.csv, the plots and index.html, as ``compare --out`` writes them.
    """
    m = _model(model)
    if parties is not None:
        parties = [int(parties)] if isinstance(parties, (int, np.integer)) else [int(x) for x in parties]
    text = _native.compare_json(
        m._native,
        _eps_list(eps),
        None if trials is None else [int(k) for k in trials],
        None if methods is None else [str(x) for x in methods],
        int(seed),
        float(delta),
        parties,
        solver,
        None if out is None else os.fspath(out),
        None if max_seconds is None else float(max_seconds),
        None if gap is None else float(gap),
    )
    answer = json.loads(text)
    rows = CompareRows(answer["rows"])
    rows.notes = list(answer["notes"])
    return rows.to_dataframe() if as_frame else rows


def plan(
    model: Union[Model, PathLike],
    target_risk: Optional[float] = None,
    target_rmse: Optional[float] = None,
    for_: str = "eps",
    eps: Optional[float] = None,
    solver: str = "auto",
) -> Dict[str, Any]:
    """The smallest ε (to 1 %), or with ``for_="trials"`` the smallest number of trials K at
    ``eps``, whose certified optimal Bayes risk meets the target (``ubapp plan``).

    Give exactly one of ``target_risk`` and ``target_rmse`` (squared loss: risk = rmse²).
    Returns the fields of ``plan --json``.
    """
    m = _model(model)
    return json.loads(
        _native.plan_json(
            m._native,
            None if target_risk is None else float(target_risk),
            None if target_rmse is None else float(target_rmse),
            for_,
            None if eps is None else float(eps),
            solver,
        )
    )


def report(
    model: Union[Model, PathLike],
    out: PathLike,
    eps: Optional[Union[float, Sequence[float]]] = None,
    solver: str = "auto",
    seed: int = 0,
) -> Dict[str, Any]:
    """Write the report of a model into the directory ``out`` (``ubapp report``): report.html,
    report.md, the plots and the certified artifacts. ``out`` must not exist, be empty, or hold
    an earlier ubapp output. Returns what was written (``figures``, ``artifacts``, ``warnings``)."""
    m = _model(model)
    return json.loads(_native.report(m._native, os.fspath(out), _eps_list(eps), solver, int(seed)))
