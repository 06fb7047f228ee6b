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
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    OrdstatsWarning,
    SpecificationError,
    user_stacklevel,
)
from ordstats.estimation.survey_refits import ChordFactor, ReplicateGradients, chord_refits
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
        hessian = getattr(evaluation, "hessian", None)
        replicates = replicate_estimates(
            model,
            design,
            params,
            positions,
            disp,
            hessian=hessian,
            scores=evaluation.observation_scores if isinstance(hessian, np.ndarray) else None,
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
    scores: Any = None,
) -> Any:
    """The estimates refitted under each replicate weight, one row per replicate.

    Each refit converges as the full fit's Newton iterations (``max|gradient| <
    1e-6``, relative step below ``1e-6``) from the full-sample estimates, on
    every row the model used with the replicate's weights (zero for the rows a
    replicate drops).  Where the model has batched gradients
    (:class:`~ordstats.estimation.survey_refits.ReplicateGradients`: cumulative
    models without nominal or scale effects) and the full-sample Hessian is
    given, the replicates are refitted together by chord iterations on that
    Hessian, factorised once (:mod:`ordstats.estimation.survey_refits`; in
    threads, as the ``threads`` option allows).  The others, and replicates
    whose chord iteration does not contract, are refitted by Newton's method,
    starting at the one-step estimate (below), else at the full-sample
    estimates; the designs are built once for all replicates where the family
    can share them, or if such a refit fails, on the rows of positive weight.

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
        The full-sample Hessian of the negative log-likelihood: scaled by the
        replicate's total weight relative to the full sample's, it approximates
        each replicate's Hessian (the chord iterations' and Newton's first step).
    scores : ndarray, shape (n, k), or callable returning it, optional
        Per-row scores of the log-likelihood at ``params`` (rows used, unweighted):
        with ``hessian`` they give every Newton-refitted replicate's gradient at
        ``params`` in one product, and those refits start at the one-step
        estimates ``params + (c_r H)^{-1} S' w_r`` without evaluating the
        likelihood there.  A callable is only called if a Newton refit needs it.

    Returns
    -------
    ndarray, shape (R, k)
    """
    if not model.evaluator.keeps_rows:
        raise SpecificationError("replicate designs need the data in memory")
    data: CLMData = model.data
    family = model.family_spec
    dense = isinstance(hessian, np.ndarray) and hessian.shape == (params.size, params.size)
    total = float(data.weights.sum())
    n_rep = design.n_replicates
    out = np.empty((n_rep, params.size))
    show = _show_progress(disp)
    shared = family.prepare(data)
    pending = np.arange(n_rep)
    if dense:
        chord = _chord_estimates(family, shared, design, positions, params, hessian, total, show)
        if chord is not None:
            estimates, converged = chord
            out[converged] = estimates[converged]
            pending = np.flatnonzero(~converged)
    failed = _newton_estimates(
        model,
        shared,
        design.repweights[np.ix_(positions, pending)],
        (params, hessian if dense else None, scores),
        out,
        pending,
        show,
    )
    if show:
        print(file=sys.stderr)
    if failed:
        warnings.warn(
            f"{failed} of {n_rep} replicate fits did not converge; their "
            "estimates enter the variance as they stopped",
            OrdstatsWarning,
            stacklevel=user_stacklevel(),
        )
    return out


def _chord_estimates(
    family: Any,
    problem: Any,
    design: Any,
    positions: Any,
    params: Any,
    hessian: Any,
    total: float,
    show: bool,
) -> tuple[Any, Any] | None:
    """All replicates by the chord iterations, and which converged; None without them."""
    gradients = ReplicateGradients.of(family, problem, design.repweights, positions)
    if gradients is None:
        return None
    try:
        factor = ChordFactor(hessian)
    except (np.linalg.LinAlgError, ValueError):
        return None
    n_rep = design.n_replicates
    ratios = gradients.column_totals() / total

    def progress(done: int) -> None:
        print(f"\rreplicate {done}/{n_rep}", end="", file=sys.stderr)

    options = NewtonOptions()
    return chord_refits(
        gradients,
        factor,
        params,
        ratios,
        options.grad_tol,
        options.rel_tol,
        progress if show else None,
    )


def _newton_estimates(
    model: Any,
    shared: Any,
    weights: Any,
    full_sample: tuple[Any, Any, Any],
    out: Any,
    replicates: Any,
    show: bool,
) -> int:
    """Refit ``replicates`` (columns of ``weights``) by Newton into ``out``; count failures.

    ``full_sample`` holds the estimates, the Hessian (or None) and the scores
    (array, callable or None) of :func:`replicate_estimates`.
    """
    if not replicates.size:
        return 0
    data: CLMData = model.data
    family = model.family_spec
    params, hessian, scores = full_sample
    options = NewtonOptions(final_hessian=False)
    ratios = weights.sum(axis=0) / float(data.weights.sum())
    if hessian is not None and callable(scores):
        scores = scores()
    one_step = (
        None if hessian is None else _one_step_starts(params, hessian, scores, weights, ratios)
    )
    done = out.shape[0] - replicates.size
    failed = 0
    for j, r in enumerate(replicates):
        w = weights[:, j]
        starts = [(params, hessian * ratios[j] if hessian is not None else None)]
        if one_step is not None and np.all(np.isfinite(one_step[j])):
            starts.insert(0, (one_step[j], None))
        solution = None
        if hasattr(shared, "with_weights"):
            # every row, zero weights included: the designs are built once for all replicates
            shared = shared.with_weights(w)
            solution = _refit(family, shared, starts, options, may_fail=True)
        if solution is None or (not solution.converged and np.any(w == 0)):
            # zero-weight rows left out (one whose probability underflows makes 0 * log 0 nan)
            keep = np.flatnonzero(w > 0)
            subset = data if keep.size == data.n_obs else data.take(keep)
            problem = family.prepare(replace(subset, weights=w[keep]))
            solution = _refit(family, problem, starts, options)
        if not solution.converged:
            failed += 1
        out[r] = solution.x
        if show:
            print(f"\rreplicate {done + j + 1}/{out.shape[0]}", end="", file=sys.stderr)
    return failed


def _one_step_starts(params: Any, hessian: Any, scores: Any, weights: Any, ratios: Any) -> Any:
    """``params + (c_r H)^{-1} S' w_r`` for every replicate ``r`` (rows), or None."""
    if scores is None or scores.shape != (weights.shape[0], params.size):
        return None
    totals = weights.T @ scores  # (R, k): each replicate's score total at params
    try:
        steps = np.linalg.solve(hessian, totals.T).T
    except np.linalg.LinAlgError:
        return None
    # a replicate without weight on the fitted rows (ratio 0) gets no one-step start
    with np.errstate(divide="ignore", invalid="ignore"):
        return params + steps / ratios[:, None]


def _refit(
    family: Any, problem: Any, starts: list[tuple[Any, Any]], options: Any, may_fail: bool = False
) -> Any:
    """Newton's method from the first of ``(start, initial_hessian)`` that converges.

    Returns the last solution if none converges; ``None`` (with ``may_fail``)
    or the error if the likelihood is not finite at every start.
    """
    solution, error = None, None
    for start, initial_hessian in starts:
        try:
            solution = newton(
                functools.partial(_evaluate, family, problem),
                start,
                options,
                initial_hessian=initial_hessian,
            )
        except OrdstatsError as err:
            error = err
            continue
        if solution.converged:
            return solution
    if solution is None and not may_fail:
        assert error is not None
        raise error
    return solution
