"""Fitting an ordinal model to survey data: the design's covariance after the weighted fit.

``OrdinalModel.fit`` of a model built with ``design=`` fits the pseudo-likelihood
(the weighted fit, as for frequency weights) and comes here for the covariance:
linearisation for a :class:`~ordstats.data.survey.SurveyDesign`, refits under
each replicate weight (warm-started at the full-sample estimates) for a
:class:`~ordstats.data.survey.ReplicateDesign`.
"""

from __future__ import annotations

import functools
import sys
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from ordstats.core.solver import NewtonOptions, newton
from ordstats.data.survey import ReplicateDesign, SurveyDesign
from ordstats.design.random import has_random_terms
from ordstats.errors import ConvergenceWarning, OrdstatsWarning, SpecificationError
from ordstats.families.problem import CLMData
from ordstats.results.survey import (
    SurveyResults,
    design_rows,
    linearization_covariance,
    replicate_covariance,
)
from ordstats.results.survey_variance import replicate_variance

__all__ = ["replicate_estimates", "survey_data", "survey_results"]


def survey_data(
    design: Any, data: Any, weights: Any, chunksize: Any, formula: str
) -> tuple[Any, Any]:
    """The data and weights a formula model fits with ``design=`` (checked).

    Returns
    -------
    (pandas.DataFrame, ndarray)
        The design's rows (its domain's, after ``subset``) and their sampling weights.
    """
    if not isinstance(design, (SurveyDesign, ReplicateDesign)):
        raise SpecificationError(
            "design= takes an ordstats.SurveyDesign or ordstats.ReplicateDesign; got "
            f"{type(design).__name__}"
        )
    if data is not None:
        raise SpecificationError(
            "with design=, the data are the design's: pass data=None (or leave it out)"
        )
    if weights is not None:
        raise SpecificationError(
            "with design=, the weights are the design's sampling weights: leave out weights="
        )
    if chunksize is not None:
        raise SpecificationError("survey designs need the data in memory: leave out chunksize=")
    if has_random_terms(formula):
        raise SpecificationError("survey designs do not support random effects (bar terms)")
    return design.fit_data(), design.weights[design.domain]


def survey_results(
    model: Any, fitted: Any, kind: str = "nonrobust", disp: bool | None = None
) -> SurveyResults:
    """The survey results of a weighted fit: its design-based covariance.

    Parameters
    ----------
    model : OrdinalModel
        A model built with ``design=``.
    fitted : OrdinalResults
        Its fit with the sampling weights.
    kind : str
        The ``cov_type`` asked of ``fit``: only the default is accepted.
    disp : bool, optional
        Replicate designs: show progress (default when a terminal is watching).

    Returns
    -------
    SurveyResults
    """
    if kind != "nonrobust":
        raise SpecificationError(
            "a survey fit's covariance is the design's (linearisation or replicate weights); "
            "leave out cov_type="
        )
    design = model.survey_design
    params = fitted.params.to_numpy()
    evaluation = fitted._evaluation
    nonrobust = fitted.nonrobust_covariance
    positions = design_rows(model, design)
    if design.kind == "replicate":
        replicates = replicate_estimates(
            model, design, params, positions, disp, hessian=getattr(evaluation, "hessian", None)
        )
        matrix = replicate_variance(replicates, params, design.scale, design.rscales, design.mse)
        covariance = replicate_covariance(matrix, nonrobust)
    else:
        covariance = linearization_covariance(
            nonrobust, evaluation, model.data.weights, positions, design
        )
    with warnings.catch_warnings():  # a singular Hessian was reported by the fit
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = SurveyResults(model, params, evaluation, fitted.fit_info, covariance=covariance)
    if design.kind == "replicate":
        results.replicates = replicates  # type: ignore[attr-defined]
    return results


def _show_progress(disp: bool | None) -> bool:
    if disp is not None:
        return bool(disp)
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def _evaluate(family: Any, problem: Any, params: Any) -> Any:
    return family.evaluate(problem, params)


def replicate_estimates(
    model: Any,
    design: Any,
    params: Any,
    positions: Any,
    disp: bool | None = None,
    hessian: Any = None,
) -> Any:
    """The estimates refitted under each replicate weight, one row per replicate.

    Each refit starts at the full-sample estimates and uses the rows of
    positive replicate weight (a jackknife replicate drops a PSU's rows).

    Parameters
    ----------
    model : OrdinalModel
    design : ReplicateDesign
    params : ndarray
        The full-sample estimates (the warm start).
    positions : ndarray of int
        Positions in the design's data of the rows the model used.
    disp : bool, optional
        Print progress to stderr (default: when stderr is a terminal).
    hessian : ndarray, optional
        The full-sample Hessian: scaled by the replicate's total weight, it takes
        the first (quasi-Newton) step of each refit, so that the refits compute
        one Hessian fewer; the final Hessian is not computed either (the
        estimates are all a refit keeps).

    Returns
    -------
    ndarray, shape (R, k)
    """
    if not model.evaluator.keeps_rows:
        raise SpecificationError("replicate designs need the data in memory")
    data: CLMData = model.data
    family = model.family_spec
    weights = design.repweights[positions]
    options = NewtonOptions(final_hessian=False)
    dense = isinstance(hessian, np.ndarray) and hessian.shape == (params.size, params.size)
    total = float(data.weights.sum())
    out = np.empty((design.n_replicates, params.size))
    show = _show_progress(disp)
    failed = 0
    for r in range(design.n_replicates):
        keep = np.flatnonzero(weights[:, r] > 0)
        subset = data if keep.size == data.n_obs else data.take(keep)
        rows = replace(subset, weights=weights[keep, r])
        problem = family.prepare(rows)
        start_hessian = hessian * (float(weights[keep, r].sum()) / total) if dense else None
        solution = newton(
            functools.partial(_evaluate, family, problem),
            params,
            options,
            initial_hessian=start_hessian,
        )
        if not solution.converged:
            failed += 1
        out[r] = solution.x
        if show:
            print(f"\rreplicate {r + 1}/{design.n_replicates}", end="", file=sys.stderr)
    if show:
        print(file=sys.stderr)
    if failed:
        warnings.warn(
            f"{failed} of {design.n_replicates} replicate fits did not converge; their "
            "estimates enter the variance as they stopped",
            OrdstatsWarning,
            stacklevel=3,
        )
    return out
