"""The negative log-likelihood of a :class:`~ordstats.families.base.StepFamily`.

The chain rule from the per-row derivatives in ``eta`` (see
:mod:`ordstats.families.pointwise`) to the parameters ``[alpha, gamma, b]``,
as written out in :mod:`ordstats.families.base`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.cached import cached_property
from ordstats.core.linalg import weighted_gram
from ordstats.families.pointwise import Curvature, Pointwise, outer_columns
from ordstats.families.problem import CLMData, ParamLayout

__all__ = ["StepEvaluation", "StepRows"]


class _PointwiseFamily(Protocol):
    def pointwise(self, eta: FloatArray, codes: IntArray) -> Pointwise: ...


class StepRows(Protocol):
    """What :class:`StepEvaluation` reads of its problem (a ``StepProblem``).

    A protocol, so that this module does not import :mod:`ordstats.families.base`,
    which imports it.
    """

    @property
    def data(self) -> CLMData:  # noqa: D102
        ...

    @property
    def layout(self) -> ParamLayout:  # noqa: D102
        ...

    @property
    def family(self) -> _PointwiseFamily:  # noqa: D102
        ...

    @property
    def Z(self) -> FloatArray:  # noqa: D102
        ...


class StepEvaluation:
    """The negative log-likelihood of a :class:`StepFamily` at one parameter vector.

    The same interface as :class:`ordstats.families.cumulative.likelihood.Evaluation`: ``nll`` on
    construction; ``gradient``, ``hessian`` (of the *negative* log-likelihood)
    and :meth:`observation_scores` when first used.

    Parameters
    ----------
    problem : StepProblem (see :class:`StepRows`)
    params : ndarray, shape (n_params,)
    """

    def __init__(self, problem: StepRows, params: FloatArray) -> None:
        self.problem = problem
        self.params = np.asarray(params, dtype=float)
        data, lay = problem.data, problem.layout
        self.link = data.link
        self.location = data.X @ self.params[lay.beta] + data.offset
        coefs = self.params[lay.thresholds].reshape(1 + lay.n_nominal_cols, lay.n_alpha)
        self.eta = problem.Z @ coefs + self.location[:, None]
        with np.errstate(invalid="ignore", over="ignore"):
            self._pointwise = problem.family.pointwise(self.eta, data.y)
        self.log_prob = self._pointwise.log_prob
        total = float(data.weights @ self.log_prob)
        self.nll = -total if np.isfinite(total) else np.inf

    @property
    def fitted(self) -> FloatArray:
        """Probability of each observation's own category."""
        return np.exp(self.log_prob)

    @cached_property
    def _derivatives(self) -> tuple[FloatArray, Curvature]:
        return self._pointwise.derivatives()

    @cached_property
    def gradient(self) -> FloatArray:
        """Gradient of the negative log-likelihood, shape ``(n_params,)``."""
        data, lay, Z = self.problem.data, self.problem.layout, self.problem.Z
        g, _ = self._derivatives
        wg = data.weights[:, None] * g
        grad = np.empty(lay.n_params)
        grad[lay.thresholds] = (Z.T @ wg).ravel()
        grad[lay.beta] = data.X.T @ wg.sum(axis=1)
        return -grad

    @cached_property
    def hessian(self) -> FloatArray:
        """Hessian of the negative log-likelihood, shape ``(n_params, n_params)``."""
        data, lay, Z = self.problem.data, self.problem.layout, self.problem.Z
        X = data.X
        _, curvature = self._derivatives
        w = data.weights
        th, be = lay.thresholds, lay.beta
        hess = np.empty((lay.n_params, lay.n_params))
        row_sums = curvature.row_sums()  # sum_k h_ijk
        hess[th, th] = curvature.step_gram(Z, w)
        # d2l / d gamma_tj d b = sum_i w_i z_it x_i sum_k h_ijk
        hess[th, be] = outer_columns(Z * w[:, None], row_sums).T @ X
        hess[be, th] = hess[th, be].T
        # minus the slope block is X' diag(c) X with c >= 0 (log-concave families)
        hess[be, be] = -weighted_gram(X, -w * row_sums.sum(axis=1))
        return -hess

    def observation_scores(self) -> FloatArray:
        """Per-row gradients of ``log P_i`` (unweighted), shape ``(n, n_params)``.

        The sum of ``weights[:, None] * scores`` is minus :attr:`gradient`.
        """
        lay, Z, X = self.problem.layout, self.problem.Z, self.problem.data.X
        g, _ = self._derivatives
        scores = np.empty((X.shape[0], lay.n_params))
        scores[:, lay.thresholds] = outer_columns(Z, g)
        scores[:, lay.beta] = X * g.sum(axis=1, keepdims=True)
        return scores
