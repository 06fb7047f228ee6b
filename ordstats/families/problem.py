"""The arrays every family's likelihood is defined on, and the parameter layout.

:class:`CLMData` holds the response codes, designs, weights, offset, link and
threshold Jacobian of one model, whatever its family; :class:`ParamLayout`
says where each parameter block sits in the parameter vector, in R's order
``[thresholds, nominal effects, location, scale, link parameter]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link

__all__ = ["CLMData", "FamilyEvaluation", "ParamLayout", "Problem", "ScaledRows", "row_scales"]


class ScaledRows(Protocol):
    """Rows with a scale design ``Z`` and a known part ``q`` of their log scale."""

    @property
    def scale(self) -> FloatArray:
        """``Z``, one row per row."""

    @property
    def scale_offset(self) -> FloatArray | None:
        """``q`` (None: zero)."""


def row_scales(rows: ScaledRows, zeta: FloatArray) -> FloatArray | None:
    """Each row's scale ``exp(z'zeta + q)``; None where every scale is one.

    Every scale is one without scale coefficients and without a scale offset;
    a scale offset alone (R's ``scale = ~ offset(q)``) gives ``exp(q)``.
    """
    if zeta.size == 0 and rows.scale_offset is None:
        return None
    linear: FloatArray = rows.scale @ zeta
    return np.exp(linear if rows.scale_offset is None else linear + rows.scale_offset)


@dataclass(frozen=True)
class CLMData:
    """Arrays that define a cumulative link model likelihood.

    Attributes
    ----------
    y : ndarray of int, shape (n,)
        Category codes ``0, ..., K - 1``.
    n_levels : int
        ``K``, the number of response levels.
    X : ndarray, shape (n, p)
        Location design without an intercept column.
    weights : ndarray, shape (n,)
        Positive frequency (case) weights.
    offset : ndarray, shape (n,)
        Known part of the location predictor ``o``.
    link : Link
        The distribution ``F``.
    threshold_jacobian : ndarray, shape (K - 1, q)
        ``J`` with ``theta = J a``.
    nominal : ndarray, shape (n, r)
        Nominal-effect design without an intercept column (``r`` may be 0).
    scale : ndarray, shape (n, s)
        Log-scale design without an intercept column (``s`` may be 0).
    threshold_offset : ndarray, shape (K - 1,), optional
        ``c`` in ``theta = J a + c`` (fixed cut-points); zero by default.
    scale_offset : ndarray, shape (n,), optional
        Known part ``q`` of the log scale, ``s = exp(z'zeta + q)`` (R's ``offset()``
        term of a scale formula); ``None`` when there is none (``q = 0``).
    y_low : ndarray of int, shape (n,), optional
        For a censored response: the lowest level each row may be in, so that
        row ``i`` is known to lie in levels ``y_low[i], ..., y[i]`` and its
        likelihood term is ``F(theta_{y_i} - eta_i) - F(theta_{y_low_i - 1} - eta_i)``
        (see :mod:`ordstats.families.cumulative.censoring`). ``None`` when
        every row is exact (``y_low == y``).
    """

    y: IntArray
    n_levels: int
    X: FloatArray
    weights: FloatArray
    offset: FloatArray
    link: Link
    threshold_jacobian: FloatArray
    nominal: FloatArray = field(default_factory=lambda: np.empty((0, 0)))
    scale: FloatArray = field(default_factory=lambda: np.empty((0, 0)))
    threshold_offset: FloatArray | None = None
    y_low: IntArray | None = None
    scale_offset: FloatArray | None = None

    @property
    def censored(self) -> bool:
        """Whether some row is known only to lie in a range of levels."""
        return self.y_low is not None

    @property
    def lower_codes(self) -> IntArray:
        """``y_low``, or ``y`` for exact rows: the level whose lower cut-point bounds each row."""
        return self.y if self.y_low is None else self.y_low

    def log_scale(self, zeta: FloatArray) -> FloatArray:
        """Each row's log scale ``z'zeta + q`` at the scale coefficients ``zeta``."""
        linear: FloatArray = self.scale @ zeta
        return linear if self.scale_offset is None else linear + self.scale_offset

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return int(self.y.shape[0])

    def take(self, rows: npt.NDArray[np.bool_] | IntArray) -> CLMData:
        """The same model on a subset of the rows (a boolean mask or positions)."""
        return replace(
            self,
            y=self.y[rows],
            y_low=None if self.y_low is None else self.y_low[rows],
            X=self.X[rows],
            weights=self.weights[rows],
            offset=self.offset[rows],
            nominal=self.nominal[rows] if self.nominal.size else self.nominal,
            scale=self.scale[rows] if self.scale.size else self.scale,
            scale_offset=None if self.scale_offset is None else self.scale_offset[rows],
        )

    @staticmethod
    def joined(parts: Sequence[CLMData]) -> CLMData:
        """The rows of ``parts`` (chunks of the same model's rows), one after another."""
        if any(part.y_low is not None for part in parts):  # some chunk has a censored row
            parts = [replace(part, y_low=part.lower_codes) for part in parts]
        if any(part.scale_offset is not None for part in parts):
            parts = [replace(part, scale_offset=_scale_offset(part)) for part in parts]

        def rows(name: str) -> Any:
            values = [getattr(part, name) for part in parts]
            if values[0] is None or (name in ("nominal", "scale") and not values[0].size):
                return values[0]  # the same in every part: none, or no such columns
            return np.concatenate(values)

        names = ("y", "y_low", "X", "weights", "offset", "nominal", "scale", "scale_offset")
        return replace(parts[0], **{name: rows(name) for name in names})


def _scale_offset(data: CLMData) -> FloatArray:
    """The known part of the rows' log scale (zeros where there is none)."""
    return np.zeros(data.n_obs) if data.scale_offset is None else data.scale_offset


@dataclass(frozen=True)
class ParamLayout:
    """Where each parameter block sits in the parameter vector.

    Attributes
    ----------
    n_alpha : int
        Free threshold parameters ``q``.
    n_nominal_cols : int
        Columns ``r`` of the nominal design; ``q * r`` nominal parameters.
    n_beta : int
        Location coefficients ``p``.
    n_zeta : int
        Log-scale coefficients ``s``.
    n_lambda : int
        1 for a flexible link (its shape parameter is last), else 0.
    """

    n_alpha: int
    n_nominal_cols: int
    n_beta: int
    n_zeta: int
    n_lambda: int = 0

    @property
    def n_threshold_block(self) -> int:
        """Parameters that enter the thresholds: ``q * (1 + r)``."""
        return self.n_alpha * (1 + self.n_nominal_cols)

    @property
    def alpha(self) -> slice:
        """Free threshold parameters ``a_0``."""
        return slice(0, self.n_alpha)

    @property
    def nominal(self) -> slice:
        """Nominal effects ``a_1, ..., a_r`` (each of length ``q``)."""
        return slice(self.n_alpha, self.n_threshold_block)

    @property
    def thresholds(self) -> slice:
        """Everything that enters the thresholds (``a_0`` and nominal effects)."""
        return slice(0, self.n_threshold_block)

    @property
    def beta(self) -> slice:
        """Location coefficients."""
        start = self.n_threshold_block
        return slice(start, start + self.n_beta)

    @property
    def zeta(self) -> slice:
        """Log-scale coefficients."""
        start = self.n_threshold_block + self.n_beta
        return slice(start, start + self.n_zeta)

    @property
    def lam(self) -> slice:
        """The flexible link's parameter (empty for a standard link)."""
        start = self.n_threshold_block + self.n_beta + self.n_zeta
        return slice(start, start + self.n_lambda)

    @property
    def n_params(self) -> int:
        """Length of the parameter vector."""
        return self.n_threshold_block + self.n_beta + self.n_zeta + self.n_lambda


class Problem(Protocol):
    """A family's likelihood prepared on its arrays (what ``Family.prepare`` returns)."""

    @property
    def data(self) -> CLMData:
        """The arrays the problem was prepared from."""
        ...

    @property
    def layout(self) -> ParamLayout:
        """Where each parameter block sits."""
        ...


class FamilyEvaluation(Protocol):
    """One evaluation of a family's negative log-likelihood (what ``Family.evaluate`` returns).

    The solver needs ``nll``, ``gradient`` and ``hessian``; results also read
    the ``link`` at the estimates (a flexible link carries its fitted
    ``lambda``), the per-row log-probabilities and the per-row scores.
    """

    nll: float

    @property
    def gradient(self) -> FloatArray:
        """Gradient of the negative log-likelihood, shape ``(k,)``."""
        ...

    @property
    def hessian(self) -> FloatArray:
        """Hessian of the negative log-likelihood, shape ``(k, k)``."""
        ...

    @property
    def link(self) -> Link:
        """The link at the evaluated parameters."""
        ...

    @property
    def log_prob(self) -> FloatArray:
        """Per-row ``log P(Y_i = y_i)``, shape ``(n,)``."""
        ...

    def observation_scores(self) -> FloatArray:
        """Per-row gradient of the log-likelihood, shape ``(n, k)``."""
        ...
