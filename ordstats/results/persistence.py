"""Saving, loading and slimming fitted results (statsmodels' ``save``, ``load``, ``remove_data``).

Results and models pickle: the formula context keeps only the names the formulas
use, modules by name (:class:`~ordstats.estimation.context.FormulaContext`).
:meth:`PersistenceMethods.save` writes a pickle, :func:`load` (also
``OrdinalResults.load``) reads one back, and :meth:`PersistenceMethods.remove_data`
drops every per-row array, so that a result saved with ``remove_data=True`` is as
small as its parameters while still predicting on new data (the result in memory
keeps its rows: a stripped copy is saved).

Pickles run code when loaded: load only files you trust.
"""

from __future__ import annotations

import contextlib
import copy
import os
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TypeVar

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.links import Link
from ordstats.errors import NotFittedError, OrdstatsError
from ordstats.families.problem import FamilyEvaluation
from ordstats.results.state import FittedState

__all__ = ["PersistenceMethods", "SlimEvaluation", "load", "rows_removed_error"]

_Result = TypeVar("_Result", bound="PersistenceMethods")

#: Cached statistics computed before the rows are removed (each needs them).
_KEEP_BEFORE_REMOVING = ("llnull", "bse", "zvalues", "pvalues", "thresholds", "pseudo_rsquared")
#: Cached per-row values, dropped with the rows.
_PER_ROW_CACHES = ("resid_prob",)


def rows_removed_error(what: str) -> NotFittedError:
    """The error for ``what`` (a method or a quantity) on a result without its rows."""
    return NotFittedError(
        f"{what} needs the rows of the data, which were removed from this result "
        "(remove_data(), or save(..., remove_data=True)); refit the model on the data"
    )


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
        raise rows_removed_error(repr(name))


class PersistenceMethods(FittedState):
    """``save``, ``remove_data`` (statsmodels' names); :func:`load` reads a saved result."""

    _evaluation: FamilyEvaluation | SlimEvaluation

    def save(self, fname: str | os.PathLike[str], remove_data: bool = False) -> None:
        """Pickle the result (with its model) to ``fname``.

        Parameters
        ----------
        fname : str or path
        remove_data : bool
            Save a copy without the rows (statsmodels' keyword; see
            :meth:`remove_data`), so that the file holds no per-row arrays.
            Unlike statsmodels, the result itself keeps its rows: everything
            that needs them still works on it after saving.

        See Also
        --------
        ordstats.load : Read the result back (also ``OrdinalResults.load``).
        """
        if not isinstance(remove_data, (bool, np.bool_)):
            raise OrdstatsError(f"remove_data must be True or False; got {remove_data!r}")
        saved = self
        if remove_data and not self.data_removed:
            saved = copy.copy(self)  # remove_data rebinds attributes of the copy only
            saved.remove_data()
        with _opened(fname, "wb") as handle:
            pickle.dump(saved, handle, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls: type[_Result], fname: str | os.PathLike[str]) -> _Result:
        """:func:`ordstats.load` as statsmodels' classmethod ``Results.load``.

        Parameters
        ----------
        fname : str or path
            A file written by :meth:`save` (unpickling runs code: only files
            you trust).

        Returns
        -------
        OrdinalResults
            Refused, with an :class:`~ordstats.errors.OrdstatsError`, if the
            file holds anything but a result of this class.
        """
        obj = load(fname)
        if not isinstance(obj, cls):
            raise OrdstatsError(
                f"{os.fspath(fname)!r} holds a {type(obj).__name__}, not a {cls.__name__}; "
                "read it with ordstats.load"
            )
        return obj

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
        for name in _PER_ROW_CACHES:  # else saved, and served from the cache only
            self.__dict__.pop(name, None)
        ev = self._evaluation
        self._evaluation = SlimEvaluation(
            float(ev.nll), np.asarray(ev.gradient), np.asarray(ev.hessian), ev.link
        )
        self.model = self.model.without_data()

    @property
    def data_removed(self) -> bool:
        """Whether :meth:`remove_data` dropped the rows."""
        return isinstance(getattr(self, "_evaluation", None), SlimEvaluation)


def load(fname: str | os.PathLike[str]) -> FittedState:
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
    with _opened(fname, "rb") as handle:
        try:
            obj = pickle.load(handle)
        except (pickle.UnpicklingError, EOFError, ValueError) as exc:
            raise OrdstatsError(
                f"{os.fspath(fname)!r} is not a saved ordstats result (it cannot be unpickled: "
                f"{exc}); save one with res.save(path)"
            ) from None
        except (AttributeError, ImportError) as exc:
            raise OrdstatsError(
                f"{os.fspath(fname)!r} refers to something this Python session does not have "
                f"({exc}), e.g. a function a formula calls, defined in the script that saved "
                "it: define or import it (in the same module) before loading"
            ) from None
    if not isinstance(obj, PersistenceMethods):
        raise OrdstatsError(
            f"{os.fspath(fname)!r} holds a {type(obj).__name__}, not an ordstats result"
        )
    return obj


@contextlib.contextmanager
def _opened(fname: object, mode: str) -> Iterator[IO[bytes]]:
    """``fname`` (a path) opened in ``mode``, or an ordstats error that says why not.

    Only a ``str`` or path-like is opened: ``open()`` reads an integer as a
    file descriptor (``save(1)`` would write into standard output).
    """
    if isinstance(fname, bytes) or not isinstance(fname, (str, os.PathLike)):
        raise OrdstatsError(f"the file must be a path (a str or pathlib.Path); got {fname!r:.80}")
    try:
        handle = open(fname, mode)
    except OSError as exc:
        doing = "write" if "w" in mode else "read"
        raise OrdstatsError(f"cannot {doing} {os.fspath(fname)!r}: {exc.strerror or exc}") from exc
    with handle:
        yield handle
