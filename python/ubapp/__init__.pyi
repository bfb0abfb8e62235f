# Type stubs of the public API (python/ubapp/__init__.py).
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._native import Error as Error, InputError as InputError

__version__: str

PathLike = Union[str, os.PathLike[str]]
Eps = Optional[Union[float, Sequence[float]]]

class Model:
    @classmethod
    def load(cls, path: PathLike) -> Model: ...
    @classmethod
    def from_toml(cls, text: str, origin: str = "<string>") -> Model: ...
    @property
    def name(self) -> str: ...
    @property
    def epsilons(self) -> List[float]: ...
    @property
    def parties(self) -> int: ...
    def spec(self) -> Dict[str, Any]: ...
    def solve(
        self, eps: Eps = None, solver: str = "auto", gap: Optional[float] = None, max_seconds: Optional[float] = None
    ) -> List[Result]: ...

def load_model(path: PathLike) -> Model: ...
def solve(
    model: Union[Model, PathLike],
    eps: Eps = None,
    solver: str = "auto",
    gap: Optional[float] = None,
    max_seconds: Optional[float] = None,
) -> List[Result]: ...

class Result:
    # The fields of `ubapp solve --json` (every one is an attribute; these are always there).
    eps: float
    bayes_risk: float
    dual_bound: Optional[float]
    dual_bound_exact: bool
    relative_gap: Optional[float]
    status: str
    solver: str
    seconds: float
    prior_risk: Optional[float]
    non_private_risk: Optional[float]
    rmse: Optional[float]
    def to_dict(self) -> Dict[str, Any]: ...
    def __getattr__(self, name: str) -> Any: ...
    @property
    def p(self) -> Optional[npt.NDArray[np.float64]]: ...
    def mechanism(self) -> Mechanism: ...

class Posterior:
    theta: npt.NDArray[np.float64]
    probabilities: npt.NDArray[np.float64]
    posterior_mean: Union[float, npt.NDArray[np.float64]]
    posterior_median: Union[float, npt.NDArray[np.float64]]
    posterior_mode: Union[float, npt.NDArray[np.float64]]
    bayes_estimate: Union[float, npt.NDArray[np.float64]]
    bayes_rule: str
    loss: str
    level: float
    interval: Union[Tuple[float, float], npt.NDArray[np.float64]]
    interval_mass: Union[float, npt.NDArray[np.float64]]
    box_mass: float
    region: npt.NDArray[np.int64]
    region_mass: float

class Mechanism:
    @classmethod
    def load(
        cls,
        path: PathLike,
        model: Optional[PathLike] = None,
        fingerprint: Optional[str] = None,
        max_eps: Optional[float] = None,
    ) -> Mechanism: ...
    def save(self, path: PathLike) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @property
    def kind(self) -> str: ...
    @property
    def eps(self) -> float: ...
    @property
    def certified_eps(self) -> float: ...
    @property
    def delta(self) -> float: ...
    @property
    def certified_delta(self) -> float: ...
    @property
    def bayes_risk(self) -> float: ...
    @property
    def model_name(self) -> str: ...
    def sample(
        self,
        y: Union[float, Sequence[float]],
        n: int = 1,
        seed: Optional[int] = None,
        budget: Optional[float] = None,
        allow_composition: bool = False,
    ) -> npt.NDArray[np.float64]: ...
    def release(self, data: Any, ledger: PathLike, dataset: str, seed: Optional[int] = None) -> Dict[str, Any]: ...
    def verify(self, model: Optional[Union[Model, PathLike]] = None, fingerprint: Optional[str] = None) -> Dict[str, Any]: ...
    def audit(self, samples: int = 200000, seed: int = 0, alpha: float = 0.05, max_pairs: int = 1000) -> Dict[str, Any]: ...
    def posterior(self, releases: Union[float, Sequence[Any]], level: float = 0.95) -> Posterior: ...

class CompareRows(List[Dict[str, Any]]):
    notes: List[str]
    def to_dataframe(self) -> Any: ...

def compare(
    model: Union[Model, PathLike],
    eps: Eps = None,
    methods: Optional[Sequence[str]] = None,
    trials: Optional[Sequence[int]] = None,
    seed: int = 0,
    delta: float = 1e-5,
    parties: Optional[Union[int, Sequence[int]]] = None,
    solver: str = "auto",
    out: Optional[PathLike] = None,
    as_frame: bool = False,
) -> Any: ...
def plan(
    model: Union[Model, PathLike],
    target_risk: Optional[float] = None,
    target_rmse: Optional[float] = None,
    for_: str = "eps",
    eps: Optional[float] = None,
    solver: str = "auto",
) -> Dict[str, Any]: ...
def report(
    model: Union[Model, PathLike],
    out: PathLike,
    eps: Optional[Union[float, Sequence[float]]] = None,
    solver: str = "auto",
    seed: int = 0,
) -> Dict[str, Any]: ...
