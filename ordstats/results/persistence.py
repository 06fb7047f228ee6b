"""Saving, loading and slimming fitted results (statsmodels' ``save``, ``load``, ``remove_data``).

Results and models pickle: the formula context keeps only the names the formulas
use, modules by name (:class:`~ordstats.estimation.context.FormulaContext`).
:meth:`PersistenceMethods.save` writes a pickle, :func:`load` reads one back, and
:meth:`PersistenceMethods.remove_data` drops every per-row array first, so a saved
result is as small as its parameters while still predicting on new data.

Pickles run code when loaded: load only files you trust.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.links import Link
from ordstats.errors import NotFittedError, OrdstatsError
from ordstats.results.state import FittedState

if TYPE_CHECKING:
    from ordstats.results.fitted import OrdinalResults

__all__ = ["PersistenceMethods", "SlimEvaluation", "load"]

#: Cached statistics computed before the rows are removed (each needs them).
_KEEP_BEFORE_REMOVING = ("llnull", "bse", "zvalues", "pvalues", "thresholds")


@dataclass(frozen=True)
class SlimEvaluation:
    """The evaluation at the estimates without its rows: ``nll``, gradient, Hessian, link.

    Anything that needs the rows (robust covariance, residuals) raises
    :class:`~ordstats.errors.NotFittedError`.
    """

    nll: float
    gradient: FloatArray
    hessian: FloatArray
    link: Link

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotFittedError(
            f"{name!r} needs the rows of the data, which remove_data() dropped; refit the "
            "model on the data"
        )


class PersistenceMethods(FittedState):
    """``save``, ``remove_data`` (statsmodels' names); :func:`load` reads a saved result."""

    def save(self, fname: str | os.PathLike[str], remove_data: bool = False) -> None:
        """Pickle the result (with its model) to ``fname``.

        Parameters
        ----------
        fname : str or path
        remove_data : bool
            Call :meth:`remove_data` first (statsmodels' keyword), so that the
            file holds no per-row arrays.

        See Also
        --------
        ordstats.load : Read the result back.
        """
        if remove_data:
            self.remove_data()
        with open(fname, "wb") as handle:
            pickle.dump(self, handle, protocol=pickle.HIGHEST_PROTOCOL)

    def remove_data(self) -> None:
        """Drop the rows of the data from the result and its model, in place.

        Estimates, standard errors, tests from them, the summary and predictions
        on new data (``predict(newdata)``, ``get_prediction(newdata)``) still
        work; the statistics that need the rows (``llnull``, standard errors,
        the cut-points) are computed first.  Refits (profiles, term tests),
        robust covariances, residuals and predictions without ``newdata``
        raise :class:`~ordstats.errors.NotFittedError` afterwards.
        """
        for name in _KEEP_BEFORE_REMOVING:
            getattr(self, name)
        ev = self._evaluation  # type: ignore[has-type]
        self._evaluation = SlimEvaluation(
            float(ev.nll), np.asarray(ev.gradient), np.asarray(ev.hessian), ev.link
        )
        self.model = self.model.without_data()

    @property
    def data_removed(self) -> bool:
        """Whether :meth:`remove_data` dropped the rows."""
        return isinstance(getattr(self, "_evaluation", None), SlimEvaluation)


def load(fname: str | os.PathLike[str]) -> OrdinalResults:
    """Read a result saved by :meth:`OrdinalResults.save` (statsmodels' ``load``).

    Unpickling runs code: load only files you trust.

    Parameters
    ----------
    fname : str or path

    Returns
    -------
    OrdinalResults

    Raises
    ------
    OrdstatsError
        If the file does not hold an ordstats result.
    """
    with open(fname, "rb") as handle:
        obj = pickle.load(handle)
    if not isinstance(obj, PersistenceMethods):
        raise OrdstatsError(
            f"{os.fspath(fname)!r} holds a {type(obj).__name__}, not an ordstats result"
        )
    return obj  # type: ignore[return-value]  # the one PersistenceMethods class
