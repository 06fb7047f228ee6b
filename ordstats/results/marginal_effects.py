r"""Average marginal effects of the regressors on each level's probability (``get_margeff``).

For regressor ``x_k`` and level ``j`` the average marginal effect is

.. math::

    \mathrm{AME}_{kj} = \frac{1}{\sum_i w_i} \sum_i w_i
    \frac{\partial P(Y_i = j \mid x_i)}{\partial x_{ik}},

statsmodels' ``get_margeff(at="overall", method="dydx")``.  In the cumulative
model with location effects only, :math:`\partial P(Y=j)/\partial x_k =
-\beta_k\,[f(\theta_j - \eta) - f(\theta_{j-1} - \eta)]`, so the effects on the
levels sum to zero.  A regressor that also enters the nominal or scale design
(the same column name) moves those parts too.  The derivative in ``x`` is a
central difference of the family's probabilities (the families give no
second-order derivatives in ``x``), and the standard errors are the delta
method, :math:`\mathrm{SE} = \sqrt{\operatorname{diag}(G V G^\top)}` with ``G``
the central-difference Jacobian of the effects in the parameters and ``V`` the
covariance in use.  Factor dummies are treated as continuous, as statsmodels'
default (``dummy=False``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray
from ordstats.errors import OrdstatsError
from ordstats.families.cumulative.prediction import threshold_matrix
from ordstats.results.state import FittedState

__all__ = ["MarginalEffects", "MarginalEffectsMethods", "average_marginal_effects"]

#: central-difference steps (relative): truncation ~1e-8, rounding ~1e-16 / step^2
_X_STEP = 1e-4
_PARAM_STEP = 1e-4


@dataclass(frozen=True)
class MarginalEffects:
    """Average marginal effects with delta-method standard errors.

    Attributes
    ----------
    margeff : pandas.DataFrame
        One row per regressor, one column per response level (``dP(Y=j)/dx``).
    margeff_se : pandas.DataFrame
        Their standard errors (same shape).
    """

    margeff: pd.DataFrame
    margeff_se: pd.DataFrame

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per (regressor, level): ``dy/dx``, ``std err``, ``z``, ``P>|z|``, interval."""
        effect = self.margeff.stack()
        se = self.margeff_se.stack()
        half = stats.norm.ppf(1.0 - alpha / 2.0) * se
        z = effect / se
        frame = pd.DataFrame(
            {
                "dy/dx": effect,
                "std err": se,
                "z": z,
                "P>|z|": 2.0 * stats.norm.sf(np.abs(z)),
                f"[{alpha / 2:g}": effect - half,
                f"{1 - alpha / 2:g}]": effect + half,
            }
        )
        frame.index.names = ["regressor", "level"]
        return frame

    def __str__(self) -> str:
        return (
            "Average marginal effects dP(Y = level)/dx (delta-method standard errors)\n"
            + self.summary_frame().to_string(float_format=lambda v: f"{v:.4g}")
        )


def _parts(names: list[str], designs: list[tuple[str, list[str]]]) -> dict[str, list[int]]:
    return {
        name: [cols.index(name) if name in cols else -1 for _, cols in designs] for name in names
    }


class MarginalEffectsMethods(FittedState):
    """``get_margeff``: average marginal effects on each level's probability."""

    def get_margeff(self) -> MarginalEffects:
        """Average marginal effects of each regressor on each level's probability.

        See :mod:`ordstats.results.marginal_effects` for the definition and the
        delta-method standard errors.  Needs the rows in memory.

        Returns
        -------
        MarginalEffects
            ``margeff`` and ``margeff_se`` (regressors by levels),
            ``summary_frame()``.
        """
        model = self.model
        params = self.params.to_numpy()
        effects, jac = average_marginal_effects(self, params)
        cov = self.covariance.matrix
        if not np.all(np.isfinite(cov)):
            raise OrdstatsError("the covariance is not available, so no standard errors")
        se = np.sqrt(np.einsum("ij,jk,ik->i", jac, cov, jac))
        names = _regressor_names(model)
        shape = (len(names), len(model.levels))
        return MarginalEffects(
            pd.DataFrame(effects.reshape(shape), index=names, columns=model.levels),
            pd.DataFrame(se.reshape(shape), index=names, columns=model.levels),
        )


def _regressor_names(model: Any) -> list[str]:
    names = list(model.exog_names)
    for other in (model.nominal_names, model.scale_names):
        names += [n for n in other if n not in names]
    return names


def _probabilities(
    model: Any, params: FloatArray, X: FloatArray, W: FloatArray, Z: FloatArray
) -> FloatArray:
    m = model
    lay = m.problem.layout
    data = m.data
    eta = X @ params[lay.beta] + data.offset
    theta = threshold_matrix(
        params[lay.thresholds],
        m.threshold_jacobian,
        W if lay.n_nominal_cols else None,
        m.threshold_offset,
    )
    scale = np.exp(Z @ params[lay.zeta]) if lay.n_zeta else None
    link = m.link
    if lay.n_lambda:
        link = link.with_lambda(float(params[lay.lam][0]))
    return m.family_spec.category_probabilities(theta, eta, scale, link=link)


def _effects(model: Any, params: FloatArray) -> FloatArray:
    """Weighted average of ``dP(Y = j)/dx_k`` (regressors by levels, flattened)."""
    m = model
    data = m.data
    X = data.X
    W = data.nominal if data.nominal.size else np.zeros((len(X), 0))
    Z = data.scale if data.scale.size else np.zeros((len(X), 0))
    columns = [
        list(m.exog_names),
        list(m.nominal_names),
        list(m.scale_names),
    ]
    weights = data.weights / data.weights.sum()
    out = []
    for name in _regressor_names(m):
        step = (
            _X_STEP * max(1.0, float(np.std(X[:, columns[0].index(name)])))
            if name in columns[0]
            else _X_STEP
        )
        shifted = []
        for sign in (1.0, -1.0):
            mats = [X.copy(), W.copy(), Z.copy()]
            for mat, cols in zip(mats, columns, strict=True):
                if name in cols:
                    mat[:, cols.index(name)] += sign * step
            shifted.append(_probabilities(m, params, *mats))
        out.append(weights @ ((shifted[0] - shifted[1]) / (2.0 * step)))
    return np.concatenate(out) if out else np.zeros(0)


def average_marginal_effects(res: FittedState, params: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Average marginal effects at ``params`` and their Jacobian in the parameters.

    Returns
    -------
    effects : ndarray, shape (n_regressors * K,)
    jacobian : ndarray, shape (n_regressors * K, n_params)
    """
    model = res.model
    effects = _effects(model, params)
    jac = np.empty((effects.size, params.size))
    for k in range(params.size):
        h = _PARAM_STEP * max(1.0, abs(params[k]))
        up, down = params.copy(), params.copy()
        up[k] += h
        down[k] -= h
        jac[:, k] = (_effects(model, up) - _effects(model, down)) / (2.0 * h)
    return effects, jac
