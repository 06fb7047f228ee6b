"""scikit-learn, imported when a scikit-learn-facing name is used; what the estimators share."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any, ClassVar, Literal

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.errors import SpecificationError

__all__ = ["PREDICTIONS", "ClearParameters", "Prediction", "class_index", "require_sklearn"]

INSTALL_HINT = (
    "ordstats.learn needs scikit-learn; install it with `pip install ordstats[sklearn]` "
    "(or `pip install scikit-learn`)"
)

#: The class rules of ``predict(X, kind=...)``.
Prediction = Literal["mode", "median", "expected"]
PREDICTIONS = ("mode", "median", "expected")

#: Why ``prediction=`` is no longer a constructor parameter (issue 29).
_PREDICTION_MOVED = (
    "prediction= is no longer a parameter: predict(X) returns the most probable class, the "
    "argmax of predict_proba, as scikit-learn requires of a classifier; the median or "
    "expected class is predict(X, kind='median') or predict(X, kind='expected')"
)


def require_sklearn() -> ModuleType:
    """The ``sklearn`` module, or an ImportError naming the ``ordstats[sklearn]`` extra.

    Returns
    -------
    module
        :mod:`sklearn`.

    Raises
    ------
    ImportError
        If scikit-learn is not installed.
    """
    try:
        import sklearn
    except ImportError as exc:  # pragma: no cover - exercised with sklearn hidden
        raise ImportError(INSTALL_HINT) from exc
    return sklearn


def class_index(prob: FloatArray, kind: str) -> IntArray:
    """Index of the predicted class of each row of ``prob`` by the rule ``kind``.

    Parameters
    ----------
    prob : ndarray, shape (n, K)
        ``P(Y = j)``, classes lowest first.
    kind : {"mode", "median", "expected"}
        The most probable class; the first class with ``P(Y <= j) >= 1/2``
        (it minimises the expected absolute error in classes); or the class
        nearest the expected class index ``sum_j j P(Y = j)``.

    Returns
    -------
    ndarray of int, shape (n,)
    """
    if kind == "mode":
        return np.asarray(np.argmax(prob, axis=1), dtype=np.intp)
    if kind == "median":
        return np.asarray(np.argmax(np.cumsum(prob, axis=1) >= 0.5 - 1e-12, axis=1), dtype=np.intp)
    if kind == "expected":
        expected = np.rint(prob @ np.arange(prob.shape[1]))
        return np.clip(expected, 0, prob.shape[1] - 1).astype(np.intp)
    raise SpecificationError(f"kind must be one of {PREDICTIONS}; got {kind!r}")


class ClearParameters:
    """Unknown keyword arguments and ``set_params`` names get an error that says what to do.

    scikit-learn estimators declare their parameters in ``__init__`` (no
    ``**kwargs``: ``get_params``, ``clone`` and the estimator checks read its
    signature); Python's own ``TypeError`` for another keyword does not say
    where it belongs.  ``__new__`` sees the same keywords before ``__init__``
    binds them, so it refuses an undeclared one with an error that names
    ``_parameter_hint`` (e.g. a booster's ``params=``); ``__init__`` stays
    scikit-learn's plain one.
    """

    #: Where settings that are not parameters go ("{name}" and "{value}" are filled in).
    _parameter_hint: ClassVar[str] = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Refuse undeclared keyword arguments (see the class docstring)."""
        own = set(cls._get_param_names())  # type: ignore[attr-defined]
        cls._refuse_unknown({k: v for k, v in kwargs.items() if k not in own})
        return super().__new__(cls)

    @classmethod
    def _refuse_unknown(cls, unknown: Mapping[str, Any]) -> None:
        if not unknown:
            return
        if "prediction" in unknown:
            raise SpecificationError(_PREDICTION_MOVED)
        name, value = next(iter(unknown.items()))
        names = ", ".join(map(repr, unknown))
        hint = cls._parameter_hint.format(name=name, value=value)
        own = ", ".join(cls._get_param_names())  # type: ignore[attr-defined]
        raise SpecificationError(
            f"{cls.__name__} has no parameter {names}.{' ' + hint if hint else ''} Its "
            f"parameters are: {own}"
        )

    def set_params(self, **params: Any) -> Any:
        """Set parameters as scikit-learn does; an unknown name gets a clear error.

        Parameters
        ----------
        **params
            Parameter values by name.

        Returns
        -------
        self
        """
        own = set(type(self)._get_param_names())  # type: ignore[attr-defined]
        self._refuse_unknown({k: v for k, v in params.items() if k.split("__")[0] not in own})
        return super().set_params(**params)  # type: ignore[misc]
