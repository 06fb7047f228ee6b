r"""The contract between a fit and the margins verbs (predictions, comparisons, slopes).

The verbs of :mod:`ordstats.results.margins.verbs` never look at a model class:
they read a fit through :class:`MarginsFit`, which every results class
implements (:class:`~ordstats.OrdinalResults` in
:mod:`ordstats.results.margins.ordinal`).  A fit provides

* its parameter vector ``theta`` (``margins_params``) and their covariance
  ``V`` (``margins_covariance``), in the same order;
* the labels of the response levels (``margins_levels``) and the prediction
  types it has a meaning for (``margins_types``);
* the data it was estimated on, as a DataFrame with the predictor columns and
  the fitted rows' index (``margins_data``; raises an ordstats error saying
  why when the rows are not available, e.g. after ``remove_data()``);
* the predictor columns the formulas read (``margins_variables``);
* its design rows for a DataFrame (``margins_rows``), a :class:`DesignRows`
  whose float arrays are linear in nothing in particular but can be
  differenced (the verbs form ``(rows(x + h) - rows(x - h)) / 2h`` of a
  variable's design columns only, which is exact for columns linear or
  quadratic in the variable, and pass it as the *direction* of a slope);
* ``margins_predict(params, rows, type)``: the values of ``type`` at every
  row and their **analytic** Jacobian in ``params``;
* ``margins_slope(params, rows, direction, type)``: the derivative of the
  same values along the design direction, ``sum_c (d value / d x_c) dx_c``,
  and its Jacobian in ``params`` (second derivatives).  A fit without second
  derivatives may implement it with :func:`central_slope`, the documented
  fallback (a central difference in ``x`` of ``margins_predict``, whose
  Jacobian stays analytic in the parameters).

Types (``type=``), each a :class:`Predicted` with one column per *group*:

``"prob"``
    ``P(Y = k)``, groups = the level labels.
``"cumprob"``
    ``P(Y <= k)`` for the first ``K - 1`` levels (groups = those labels).
``"exceedance"``
    ``P(Y >= k)`` for the last ``K - 1`` levels (groups = those labels).
``"expected"``
    ``sum_k s_k P(Y = k)`` with the level values as scores when they are
    numbers, else ``1, ..., K`` (one group, ``""``).
``"class"``
    The most probable level's position ``0, ..., K - 1`` (no Jacobian).
``"linear"``
    The ``K - 1`` linear predictors the probabilities are functions of
    (groups = the cut names ``"1|2"``, ...).
``"latent"``
    The mean of the latent variable, ``x'beta + o`` minus the mean cut-point
    (emmeans' ``mode = "latent"``); only for families with a latent scale.

A type a fit has no meaning for raises :class:`~ordstats.errors.OrdstatsError`
naming the types it has (:func:`check_type`).

A new results class (e.g. a mixed model's) implements the nine methods; the
verbs, their tests of bad input and the output tables then work unchanged.

Optional shortcuts, asked for with ``getattr`` (a fit without them takes the
general path above, with the same numbers; clm-type fits have them, in
:mod:`ordstats.results.margins.ordinal`):

* ``_margins_fitted_rows()``: the design of ``margins_data()`` as fitted;
* ``_margins_rows_set(rows, data, name, values)``: the design of ``data``
  with one column changed, from its design ``rows``, or None;
* ``_margins_linear_columns(rows)``: a unit shift of the linear predictor and
  the predictors that only shift it (their slope is ``b dy/d eta``);
* ``_margins_row_terms(params, rows, type, direction=None)``: predictions or
  slopes whose Jacobian is kept as row terms
  (:mod:`ordstats.results.margins.jacobian`) for averages, or None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.errors import OrdstatsError

__all__ = [
    "OFFSET_COLUMN",
    "PREDICTION_TYPES",
    "PROBABILITY_TYPES",
    "ROW_VERBS",
    "DesignRows",
    "MarginsFit",
    "Predicted",
    "central_slope",
    "check_type",
]

#: marginaleffects' verbs on rows of data (``hypotheses`` works on parameters instead)
ROW_VERBS = (
    "predictions",
    "avg_predictions",
    "comparisons",
    "avg_comparisons",
    "slopes",
    "avg_slopes",
)
#: every ``type=`` the verbs know
#: the column of a rows DataFrame holding each row's location offset as values (a fit's
#: ``margins_data`` when the offset was given as values; emmeans' grid: the mean offset)
OFFSET_COLUMN = "(offset)"

PREDICTION_TYPES = ("prob", "cumprob", "exceedance", "expected", "class", "linear", "latent")
#: the types whose values are probabilities (intervals on the logit scale by default)
PROBABILITY_TYPES = ("prob", "cumprob", "exceedance")


@dataclass(frozen=True)
class DesignRows:
    """The design of some rows, as a fit needs it to predict.

    Attributes
    ----------
    arrays : mapping of str to ndarray
        Float arrays with one row per data row (e.g. the location, nominal and
        scale designs and the offset).  Differences of two ``DesignRows`` of
        the same rows are taken array by array (:meth:`direction`).
    index : pandas.Index
        The labels of the rows (the DataFrame's index).
    extra : mapping
        Anything else the fit needs that is not differenced (e.g. group codes).
    """

    arrays: Mapping[str, FloatArray]
    index: pd.Index
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return len(self.index)

    def direction(self, down: DesignRows, step: FloatArray | float) -> DesignRows:
        """``(self - down) / (2 step)``: the derivative of the design in one variable.

        Parameters
        ----------
        down : DesignRows
            The same rows with the variable lowered by ``step`` (``self`` has it
            raised by ``step``).
        step : float or ndarray, shape (n_rows,)

        Returns
        -------
        DesignRows
        """
        width = 2.0 * np.asarray(step, dtype=float)
        arrays = {}
        for name, up in self.arrays.items():
            scale = width if np.ndim(width) == 0 or up.ndim == 1 else width[:, None]
            arrays[name] = (up - down.arrays[name]) / scale
        return replace(self, arrays=arrays)

    def take(self, positions: Sequence[int] | FloatArray) -> DesignRows:
        """The rows at ``positions``."""
        chosen = np.asarray(positions, dtype=np.intp)
        arrays = {name: a[chosen] for name, a in self.arrays.items()}
        return replace(self, arrays=arrays, index=self.index[chosen])


@dataclass(frozen=True)
class Predicted:
    """Values of one prediction type at some rows, with their Jacobian in the parameters.

    Attributes
    ----------
    values : ndarray, shape (m, g)
        One column per group (level, cut, or a single ``""``).
    jacobian : ndarray, shape (m, g, k), or None
        ``d values / d params``; None where it has no meaning (``"class"``).
        (The optional ``_margins_row_terms`` gives it as
        :class:`~ordstats.results.margins.jacobian.RowTerms` instead, for
        averages only.)
    groups : list of str
        The column labels.
    """

    values: FloatArray
    jacobian: FloatArray | None
    groups: list[str]


@runtime_checkable
class MarginsFit(Protocol):
    """What a fit provides to the margins verbs (see the module docstring)."""

    def margins_params(self) -> FloatArray:
        """The parameter vector, shape ``(k,)``."""
        ...

    def margins_covariance(self) -> FloatArray:
        """The covariance of the parameters, shape ``(k, k)`` (robust if the fit is)."""
        ...

    def margins_levels(self) -> list[str]:
        """The response level labels, lowest first."""
        ...

    def margins_types(self) -> tuple[str, ...]:
        """The types of :data:`PREDICTION_TYPES` this fit has a meaning for."""
        ...

    def margins_data(self) -> pd.DataFrame:
        """The estimation rows (predictor columns, fitted index); raises if unavailable."""
        ...

    def margins_variables(self) -> list[str]:
        """The data columns the model's formulas read (the predictors)."""
        ...

    def margins_rows(self, data: pd.DataFrame) -> DesignRows:
        """The design rows of ``data`` (raises an ordstats error for unusable rows)."""
        ...

    def margins_term_codings(self) -> list[list[tuple[str, bool]]]:
        """The location formula's terms: each variable and whether contrasts code it.

        (``True``: by contrasts, R's ``1`` in a terms object's ``factors``;
        ``False``: by every level, R's ``2``.)  emmeans reads nesting from it.
        """
        ...

    def margins_predict(self, params: FloatArray, rows: DesignRows, type: str) -> Predicted:
        """Values of ``type`` at ``rows`` and their analytic Jacobian in ``params``."""
        ...

    def margins_slope(
        self, params: FloatArray, rows: DesignRows, direction: DesignRows, type: str
    ) -> Predicted:
        """Derivative of ``type`` along ``direction`` in the design, and its Jacobian."""
        ...


def check_type(type: object, allowed: Sequence[str], what: str) -> str:
    """Return ``type`` if it is one of ``allowed``, else raise a clear error.

    Parameters
    ----------
    type : object
        The user's ``type=``.
    allowed : sequence of str
        The types this fit has a meaning for.
    what : str
        The fit's kind, for the message (e.g. ``"the 'sratio' family"``).

    Returns
    -------
    str
    """
    if type in allowed:
        return str(type)
    if type in PREDICTION_TYPES:
        raise OrdstatsError(
            f"type={type!r} has no meaning for {what} (it has no latent scale); use one of "
            + ", ".join(map(repr, allowed))
        )
    raise OrdstatsError(f"type must be one of {', '.join(map(repr, allowed))}; got {type!r}")


def central_slope(
    predict: Callable[[FloatArray, DesignRows, str], Predicted],
    params: FloatArray,
    rows: DesignRows,
    direction: DesignRows,
    type: str,
    step: float = 1e-5,
) -> Predicted:
    """A slope by a central difference in ``x`` (the fallback for fits without second derivatives).

    ``(v(x + h d) - v(x - h d)) / 2h`` for the values and their (analytic)
    Jacobians, with ``d`` the design direction; the truncation error is
    ``O(h^2)`` (about 1e-10 relative at the default step for smooth links).

    Parameters
    ----------
    predict : callable
        The fit's ``margins_predict``.
    params : ndarray
    rows, direction : DesignRows
    type : str
    step : float

    Returns
    -------
    Predicted
    """

    def moved(sign: float) -> DesignRows:
        arrays = {name: a + sign * step * direction.arrays[name] for name, a in rows.arrays.items()}
        return replace(rows, arrays=arrays)

    up, down = predict(params, moved(1.0), type), predict(params, moved(-1.0), type)
    values = (up.values - down.values) / (2.0 * step)
    jacobian = None
    if up.jacobian is not None and down.jacobian is not None:
        jacobian = (up.jacobian - down.jacobian) / (2.0 * step)
    return Predicted(values, jacobian, up.groups)
