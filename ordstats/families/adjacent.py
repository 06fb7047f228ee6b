r"""The adjacent-category logit model (VGAM's ``acat``).

Each linear predictor compares two neighbouring levels (Agresti 2010, *Analysis
of Ordinal Categorical Data*, sec. 4.1; Tutz 2012, sec. 9.3):

.. math:: \eta_j = \log \frac{P(Y = j + 1)}{P(Y = j)}, \qquad j = 1, \dots, K - 1,

so ``P(Y = k) \propto \exp(S_k)`` with ``S_1 = 0`` and ``S_k = \eta_1 + \dots +
\eta_{k-1}``: a multinomial logit whose scores are cumulative sums.  A positive
slope raises every ``P(Y = j + 1) / P(Y = j)``: **higher** levels.  With
``reverse=True``, :math:`\eta_j = \log P(Y = j) / P(Y = j + 1)` and every sign
flips (positive = **lower** levels).

With ``P(Y > j) = T_j`` and ``P(Y \le j) = C_j`` the derivatives of
``log P(Y = c)`` are

.. math:: \frac{\partial}{\partial \eta_j} = [c > j] - T_j, \qquad
          \frac{\partial^2}{\partial \eta_j \partial \eta_k} = -C_{\min(j,k)} T_{\max(j,k)},

(the covariance of the indicators ``[Y > j]``), computed from tail sums of the
probabilities so that nothing cancels.  The Hessian does not depend on the
response, so the observed and expected information coincide.
"""

from __future__ import annotations

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.families.base import StepFamily
from ordstats.families.capabilities import Capabilities
from ordstats.families.pointwise import Pointwise, SemiseparableCurvature, cumsum_columns

__all__ = ["AdjacentCategory"]


def _log_scores(eta: FloatArray) -> FloatArray:
    """``S_k - log sum_m exp(S_m)``: log-probabilities of every level, (n, K)."""
    scores = cumsum_columns(np.column_stack([np.zeros(eta.shape[0]), eta]))
    scores -= scores.max(axis=1, keepdims=True)  # the largest term is exp(0) = 1
    with np.errstate(under="ignore"):
        return scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))


class _AdjacentPointwise(Pointwise):
    """Level probabilities of every row, with the derivatives of ``log P(Y = c)``."""

    def __init__(self, eta: FloatArray, codes: IntArray) -> None:
        self.codes = codes
        self.log_probs = _log_scores(eta)
        self.log_prob = self.log_probs[np.arange(eta.shape[0]), codes]

    def derivatives(self) -> tuple[FloatArray, SemiseparableCurvature]:
        prob = np.exp(self.log_probs)
        below = cumsum_columns(prob[:, :-1])  # C_j = P(Y <= j)
        above = cumsum_columns(prob[:, 1:], reverse=True)  # T_j = P(Y > j)
        steps = np.arange(below.shape[1])
        g = np.where(self.codes[:, None] > steps[None, :], below, -above)  # [c > j] - T_j
        return g, SemiseparableCurvature(below, above)


class AdjacentCategory(StepFamily):
    """Adjacent-category logit model (VGAM ``acat``): ``eta_j = log P(Y = j+1) / P(Y = j)``."""

    name = "acat"
    title = "Adjacent-Category Logit Model"
    CAPABILITIES = Capabilities(
        nominal=True,
        scale=False,
        flexible_links=False,
        links=("logit",),
        banded=False,
        chunked=False,
        reverse=True,
        threshold_structures=False,
        ordered_cutpoints=False,
        latent_variable=False,
        positive_effect="higher",
        nominal_sign=1,
        absent_step_sign=-1,
        summed_steps=True,
    )

    @property
    def definition(self) -> str:  # noqa: D102
        if self.reverse:
            return "eta_j = log P(Y = j) / P(Y = j+1)"
        return "eta_j = log P(Y = j+1) / P(Y = j)"

    @property
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        if self.reverse:
            return "odds of level j rather than level j+1, P(Y = j) / P(Y = j+1), for every j"
        return "odds of level j+1 rather than level j, P(Y = j+1) / P(Y = j), for every j"

    def _forward_pointwise(self, eta: FloatArray, codes: IntArray) -> _AdjacentPointwise:
        return _AdjacentPointwise(eta, codes)

    def _forward_log_probabilities(self, eta: FloatArray) -> FloatArray:
        return _log_scores(eta)

    def _forward_constraints(self, codes: IntArray, n_steps: int) -> tuple[IntArray, FloatArray]:
        # S_c - S_m must not fall for any other level m: sum of d eta over [m, c)
        n = len(codes)
        obs = np.repeat(np.arange(n), n_steps + 1)
        other = np.tile(np.arange(n_steps + 1), n)
        keep = other != codes[obs]
        obs, other = obs[keep], other[keep]
        steps = np.arange(n_steps)[None, :]
        own = codes[obs][:, None]
        m = other[:, None]
        rows = ((steps >= m) & (steps < own)).astype(float) - ((steps >= own) & (steps < m))
        return obs, rows

    def _forward_intercepts(self, counts: FloatArray) -> FloatArray:
        return np.log(counts[1:]) - np.log(counts[:-1])
