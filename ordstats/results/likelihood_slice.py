r"""Slices of the log-likelihood through the estimates (R ``ordinal``'s ``slice``).

Along parameter :math:`k` the other parameters stay at their estimates
:math:`\hat\theta` and

.. math::

    s_k(v) = \ell(\hat\theta + (v - \hat\theta_k) e_k) - \ell(\hat\theta),
    \qquad v \in \hat\theta_k \pm \lambda c_k, \quad c_k = H_{kk}^{-1/2},

where :math:`H` is the observed information (the Hessian of the negative
log-likelihood) at the estimates.  The quadratic approximation is
:math:`-(v - \hat\theta_k)^2 / (2 c_k^2)`; where a slice departs from it the
Wald intervals mislead, and a slice that keeps rising shows that the fit did
not reach the maximum.  Unlike a profile (:mod:`~ordstats.results.profile`) the
other parameters are not re-optimised, so a slice costs one evaluation of the
likelihood per point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ordstats.errors import OrdstatsError, SpecificationError, is_real_number
from ordstats.results.arguments import parameter_index
from ordstats.results.figures import checked_axes, pyplot
from ordstats.results.persistence import rows_removed_error
from ordstats.results.state import FittedState

__all__ = ["SliceMethods", "plot_slice"]


def _chosen_parameters(parm: Any, names: Sequence[str]) -> list[int]:
    """Positions of the parameters ``parm`` names (names, R's too, or 0-based positions)."""
    if parm is None:
        return list(range(len(names)))
    chosen = [parm] if isinstance(parm, str) or np.ndim(parm) == 0 else list(parm)
    if not chosen:
        raise SpecificationError("parm names no parameter; give one or more names, or None")
    positions = []
    for item in chosen:
        if isinstance(item, str):
            positions.append(parameter_index(item, names))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= item < len(names):
                raise SpecificationError(
                    f"parm: position {item} is out of range for {len(names)} parameters "
                    "(positions count from 0)"
                )
            positions.append(int(item))
        else:
            raise SpecificationError(f"parm must hold parameter names or positions; got {item!r}")
    if len(set(positions)) < len(positions):
        raise SpecificationError("parm names a parameter more than once")
    return positions


def _check_width(lambda_: Any) -> float:
    if not (is_real_number(lambda_) and 0 < float(lambda_) < math.inf):
        raise SpecificationError(f"lambda_ must be a positive finite number; got {lambda_!r}")
    return float(lambda_)


def _check_grid(grid: Any) -> int:
    if not (is_real_number(grid) and 1 <= float(grid) < math.inf):
        raise SpecificationError(f"grid must be a number of points, at least 1; got {grid!r}")
    return round(float(grid))


class SliceMethods(FittedState):
    """Slices of the log-likelihood through the estimates (R ``ordinal``'s ``slice``)."""

    def slice(
        self,
        parm: Any = None,
        lambda_: float = 3.0,
        grid: int = 100,
        quad_approx: bool = True,
    ) -> pd.DataFrame:
        """The log-likelihood along each parameter, the others at their estimates.

        R ``ordinal``'s ``slice(fit, parm, lambda, grid, quad.approx)``: for
        each parameter, ``grid`` values evenly spaced over ``estimate +- lambda_
        * c``, with ``c = 1 / sqrt(H_kk)`` from the observed information ``H``,
        and the log-likelihood there minus its maximum.

        Parameters
        ----------
        parm : str, int or sequence of them, optional
            Parameter names (``"1|2"``, ``"temp[T.warm]"``, or R's ``"tempwarm"``)
            or positions from 0; default all.
        lambda_ : float
            Half-width of each slice in units of ``c`` (R's ``lambda``).
        grid : int
            Points per slice.
        quad_approx : bool
            Add the quadratic approximation ``-(value - estimate)^2 / (2 c^2)``.

        Returns
        -------
        pandas.DataFrame
            One row per point: ``parameter``, ``value``, ``logLik`` (relative to
            the maximum; ``-inf`` where the thresholds would be disordered) and
            ``quad``.  Plot it with :meth:`plot_slice`.
        """
        names = list(self.params.index)
        chosen = _chosen_parameters(parm, names)
        width, points = _check_width(lambda_), _check_grid(grid)
        if not isinstance(quad_approx, (bool, np.bool_)):
            raise SpecificationError(f"quad_approx must be True or False; got {quad_approx!r}")
        if self.data_removed:
            raise rows_removed_error("slice()")
        x = self.params.to_numpy(dtype=float)
        evaluation = self.model.evaluate(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            curvature = 1.0 / np.sqrt(np.diag(np.asarray(evaluation.hessian, dtype=float)))
        maximum = -float(evaluation.nll)
        frames = []
        for k in chosen:
            if not np.isfinite(curvature[k]):
                raise OrdstatsError(
                    f"cannot slice {names[k]!r}: the observed information's diagonal there is "
                    "not positive, so the slice has no width (the fit is not at a maximum)"
                )
            values = np.linspace(x[k] - width * curvature[k], x[k] + width * curvature[k], points)
            frame = pd.DataFrame(
                {
                    "parameter": names[k],
                    "value": values,
                    "logLik": [self._loglik_along(x, k, v) - maximum for v in values],
                }
            )
            if quad_approx:
                frame["quad"] = -((values - x[k]) ** 2) / curvature[k] ** 2 / 2.0
            frames.append(frame)
        table = pd.concat(frames, ignore_index=True)
        table.attrs.update(estimates={names[k]: float(x[k]) for k in chosen})
        return table

    def _loglik_along(self, x: np.ndarray, k: int, value: float) -> float:
        moved = x.copy()
        moved[k] = value
        return -float(self.model.evaluate(moved).nll)

    def plot_slice(
        self,
        parm: Any = None,
        axes: Any = None,
        lambda_: float = 3.0,
        grid: int = 100,
    ) -> np.ndarray:
        """Plot :meth:`slice`: one panel per parameter, the quadratic approximation dashed.

        Parameters
        ----------
        parm, lambda_, grid
            As for :meth:`slice`.
        axes : matplotlib Axes or sequence of them, optional
            One per parameter; a new figure if omitted.

        Returns
        -------
        ndarray of matplotlib.axes.Axes
        """
        return plot_slice(self.slice(parm, lambda_=lambda_, grid=grid), axes=axes)


def plot_slice(table: pd.DataFrame, axes: Any = None) -> np.ndarray:
    """Plot a table from ``slice()``: one panel per parameter.

    Parameters
    ----------
    table : pandas.DataFrame
        From :meth:`SliceMethods.slice`.
    axes : matplotlib Axes or sequence of them, optional
        One per parameter; a new figure if omitted.

    Returns
    -------
    ndarray of matplotlib.axes.Axes
    """
    if not {"parameter", "value", "logLik"} <= set(table.columns):
        raise OrdstatsError("plot_slice needs the DataFrame returned by slice()")
    parameters = list(dict.fromkeys(table["parameter"]))
    panels = _slice_axes(axes, len(parameters))
    estimates = table.attrs.get("estimates", {})
    for ax, name in zip(panels, parameters, strict=True):
        part = table[table["parameter"] == name]
        ax.plot(part["value"], part["logLik"], color="C0", label="log-likelihood")
        if "quad" in part.columns:
            ax.plot(part["value"], part["quad"], color="C1", linestyle="--", label="quadratic")
        if name in estimates:
            ax.axvline(estimates[name], color="grey", linewidth=0.8)
        ax.set_xlabel(name)
        ax.set_ylabel("relative log-likelihood")
    panels[0].legend()
    return panels


def _slice_axes(axes: Any, n_panels: int) -> np.ndarray:
    """The panels to draw on: ``axes`` (one per parameter) or a new figure's."""
    if axes is None:
        plt = pyplot()
        n_columns = min(n_panels, 3)
        n_rows = -(-n_panels // n_columns)
        figure, grid = plt.subplots(
            n_rows, n_columns, figsize=(4 * n_columns, 3 * n_rows), squeeze=False
        )
        for extra in grid.ravel()[n_panels:]:
            figure.delaxes(extra)
        return grid.ravel()[:n_panels]
    panels = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
    if len(panels) != n_panels:
        raise OrdstatsError(
            f"axes must be {n_panels} matplotlib Axes, one per parameter sliced; got "
            f"{len(panels)} object(s)"
        )
    argument = "axes" if np.ndim(axes) == 0 else "each of axes"
    return np.array([checked_axes(ax, argument) for ax in panels], dtype=object)
