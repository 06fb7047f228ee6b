"""Likelihood-ratio tests of relaxing a model term by term, as R's ``nominal_test``.

``nominal_test`` asks, for each location term, whether its effect differs
between cut-points: the term is moved from the location part to the nominal
part (one effect per threshold), the model is refitted, and the two fits are
compared by a likelihood-ratio test.  A small p-value means the
proportional-odds (parallel lines) assumption fails for that term; the
remedy is to keep it as a nominal effect (``nominal="~ term"``).

``scale_test`` asks, for each location term, whether it also changes the spread
of the latent variable: the term is added as a log-scale effect
(``scale="~ term"``).  A small p-value means the categories are more (or less)
dispersed at some values of the term.

Both refit on the very same rows, weights, link and threshold structure, so the
models are nested and the LR statistic is asymptotically chi-squared with the
difference in parameter counts as degrees of freedom.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import CollinearAction, FloatArray
from ordstats.core.linalg import equilibrate
from ordstats.design import TermsDesign, formula_terms, term_columns, term_label
from ordstats.design.r_functions import dot_as
from ordstats.errors import (
    ConvergenceWarning,
    DataError,
    FormulaError,
    OrdstatsError,
    SpecificationError,
    user_stacklevel,
)
from ordstats.families.cumulative.prediction import crossing_rows, threshold_matrix
from ordstats.families.problem import CLMData
from ordstats.results.state import FittedState

if TYPE_CHECKING:
    from ordstats.results.protocols import FittedModel, RefitResult

__all__ = ["TermTestMethods", "add1", "drop1", "mixed_drop1", "nominal_test", "scale_test"]

_COLUMNS = ["Df", "logLik", "AIC", "LRT", "Pr(>Chi)"]
#: Newton codes after which a refit may have stopped short of its maximum: iteration
#: limit, step halving failed, Hessian not positive definite too often.  R's clm
#: judges the end point instead (``conv.check``: its codes -1 and -2, a large
#: gradient or a clearly negative curvature); :func:`_reached_maximum` does too.
_FAILED_CODES = frozenset({2, 3, 4})
#: Curvatures (eigenvalues of the equilibrated Hessian) below this fraction of the
#: largest count as flat: directions the data do not determine.
_FLAT_CURVATURE = 1e-6
#: Largest log-likelihood gain left that still counts as at the maximum: it moves
#: the LR statistic by at most ``2e-6``.
_GAIN_TOL = 1e-6


def _lr_row(lrt: float, df: int) -> tuple[float, float]:
    """``LRT`` and ``Pr(>Chi)`` of a term test row, as R's ``pchisq(LRT, Df, lower.tail = FALSE)``.

    At ``Df`` 0 the term adds no parameter (it is spanned by the formula it joins),
    so the refit is the same model and ``LRT`` is 0 up to the precision of the two
    maximisations: within :data:`_GAIN_TOL` of each it is reported as 0, with R's
    ``pchisq(0, 0, lower.tail = FALSE)`` = 1.  A larger ``LRT`` (one fit missed the
    maximum) gets R's ``pchisq`` at ``Df`` 0 of a positive value: 0.

    Parameters
    ----------
    lrt : float
        ``2 (logLik refit - logLik fitted)``.
    df : int
        Parameters the refit adds.

    Returns
    -------
    tuple of float
        ``(LRT, Pr(>Chi))``.
    """
    if df:
        return lrt, float(stats.chi2.sf(lrt, df))
    if lrt <= 2.0 * _GAIN_TOL:
        return 0.0, 1.0
    return lrt, 0.0


def _with_columns(target: TermsDesign | None, moved: TermsDesign) -> TermsDesign:
    if target is None:
        return moved
    return replace(
        target,
        matrix=np.column_stack([target.matrix, moved.matrix]),
        names=target.names + moved.names,
        spec=None,
        moments=None,
    )


def _relaxed_model(model: FittedModel, columns: list[int], part: str) -> FittedModel:
    """The model with some location columns added to the nominal or scale part."""
    design = model.design
    location = design.location
    moved = TermsDesign(
        matrix=location.matrix[:, columns], names=[location.names[j] for j in columns]
    )
    changes: dict[str, TermsDesign] = {part: _with_columns(getattr(design, part), moved)}
    if part == "nominal":  # a nominal effect contains the location shift
        keep = [j for j in range(len(location.names)) if j not in set(columns)]
        changes["location"] = replace(
            location,
            matrix=location.matrix[:, keep],
            names=[location.names[j] for j in keep],
            moments=None if location.moments is None else location.moments.take(keep),
        )
    return model.with_changes(
        location=changes.get("location"), nominal=changes.get("nominal"), scale=changes.get("scale")
    )


@dataclass(frozen=True)
class NominalPatterns:
    """The distinct rows of a nominal design with its non-dummy columns set to zero.

    Adds up over chunks: a chunk zeroes the columns that are not 0/1 in its
    own rows, and the sum zeroes those that are not 0/1 in any chunk, so the
    patterns stay few (at most ``2^r``) and the result is that of all rows.
    """

    numeric: np.ndarray
    patterns: FloatArray

    @classmethod
    def of(cls, data: CLMData) -> NominalPatterns:
        """The patterns of one chunk's (or all rows') nominal design."""
        W = np.array(data.nominal, dtype=float)
        numeric = ~np.all((W == 0.0) | (W == 1.0), axis=0)
        W[:, numeric] = 0.0
        return cls(numeric, np.unique(W, axis=0))

    def __add__(self, other: NominalPatterns) -> NominalPatterns:
        return NominalPatterns(
            self.numeric | other.numeric,
            np.unique(np.vstack([self.patterns, other.patterns]), axis=0),
        )

    def final(self) -> FloatArray:
        """The patterns with every non-dummy column zero."""
        patterns = self.patterns.copy()
        patterns[:, self.numeric] = 0.0
        return np.unique(patterns, axis=0)


def _r_crossing(res: RefitResult) -> bool:
    """Whether the cut-points cross where R's clm checks them (its code -3).

    R (``getThetamat``) checks the thresholds of every combination of the
    nominal factors with the terms that involve numeric variables left out;
    here: the distinct rows of the nominal design with its non-dummy (not 0/1)
    columns set to zero (one pass for data read in chunks).
    """
    model = res.model
    lay = model.problem.layout
    if not lay.n_nominal_cols or not model.family_spec.ordered_cutpoints:
        return False
    patterns = model.evaluator.reduce_rows(NominalPatterns.of).final()
    params = res.params.to_numpy()
    theta = threshold_matrix(params[lay.thresholds], model.threshold_jacobian, patterns)
    return bool(crossing_rows(theta).size)


def _reached_maximum(res: RefitResult) -> bool:
    """Whether a refit that stopped early is nevertheless at its maximum.

    R's clm keeps a fit whose gradient is small at the end however its Newton
    iterations stopped, also with a singular Hessian (its code 1: parameters not
    uniquely determined), and rejects one with a clearly negative curvature.
    Here, with the Hessian ``H`` of the negative log-likelihood at the estimates
    equilibrated (units removed): no curvature below ``-1e-6`` times the largest,
    and the Newton step with every curvature raised to at least that fraction of
    the largest (flat directions, which the data do not determine, get no large
    step) predicts a log-likelihood gain of at most :data:`_GAIN_TOL`.
    """
    if not np.isfinite(res.llf):
        return False
    try:
        evaluation = res.model.evaluate(res.params.to_numpy())
        gradient = np.asarray(evaluation.gradient, dtype=float)
        hessian = np.asarray(evaluation.hessian, dtype=float)
    except (OrdstatsError, TypeError, ValueError):
        return False
    if not (np.all(np.isfinite(gradient)) and np.all(np.isfinite(hessian))):
        return False
    if gradient.size == 0:
        return True
    scale = equilibrate(hessian)
    eig, vectors = np.linalg.eigh(hessian / np.outer(scale, scale))
    floor = _FLAT_CURVATURE * max(float(eig[-1]), 0.0)
    if floor == 0.0 or eig[0] < -floor:
        return False
    along = vectors.T @ (gradient / scale)
    gain = 0.5 * float(np.sum(along**2 / np.maximum(eig, floor)))
    return gain <= _GAIN_TOL


def _term_labels(terms: TermsDesign | None) -> dict[str, str]:
    """The formula's term labels (R's ``attr(terms, "term.labels")``), intercept left out.

    Each label (as R prints it: ``Solar.R``) maps to the term as formula text
    (a name that is not a Python name in backticks), for the refits' formulas.
    """
    if terms is None or terms.spec is None:
        return {}
    return {
        _term_label(t): _term_text(t) for t in terms.spec.terms if getattr(t, "degree", None) != 0
    }


def _updated(terms: TermsDesign | None, term: str) -> str:
    """R's ``update(old, ~ . + term)`` of a one-sided formula."""
    old = terms.formula if terms is not None and terms.formula else None
    return f"~ {old} + {term}" if old else f"~ {term}"


def _side_formulas(res: FittedState) -> dict[str, str | None]:
    """The model's nominal and scale formulas (``"~ ..."``, None without), for its refits."""
    design = res.model.design
    return {
        part: f"~ {terms.formula}" if terms is not None and terms.formula else None
        for part, terms in (("nominal", design.nominal), ("scale", design.scale))
    }


def _relaxation_collinear(res: FittedState, part: str) -> CollinearAction | None:
    """The rule for aliased columns under which adding a term to ``part`` relaxes the fit.

    With ``threshold="symmetric2"`` a nominal effect moves only the spacings,
    not the thresholds' centre, so it does not contain the term's location
    effect: the relaxed model keeps both (``collinear="keep"``).  R's
    ``nominal_test`` drops the location effect as aliased, so its row compares
    two models neither of which contains the other (``Df`` one less than the
    parameters added, ``LRT`` of either sign).
    """
    if part == "nominal" and res.model.threshold == "symmetric2":
        return "keep"
    return None  # the model's own


def _formula_term_table(res: FittedState, part: str) -> pd.DataFrame | None:
    """R's rules: refit with the term added to the nominal (scale) formula; None without data.

    ``nominal_test`` tries every term of the location and scale formulas that is
    not yet nominal, ``scale_test`` every location term not yet in the scale
    formula; each refit recodes the term in its new formula and drops aliased
    columns, so ``Df`` counts the parameters that are estimable.  A refit that
    fails gets an ``NA`` row, as R gives for its failed refits (R's iterations may
    succeed where these stop, and the reverse).  As R's, a refit whose iterations
    stopped early (on the iteration limit, failed step halving or a Hessian that is
    not positive definite) keeps its row when it ended at the maximum
    (:func:`_reached_maximum`), with a warning: R keeps a refit whose Hessian is
    singular (parameters not all determined) if its gradient is small.
    """
    model = res.model
    design = model.design
    if not model.family_spec.capabilities.latent_variable or not model.can_refit_formulas:
        return None  # the step families follow VGAM; models without their DataFrame
    scope = _term_labels(design.location)
    if part == "nominal":
        for label, text in _term_labels(design.scale).items():
            scope.setdefault(label, text)
    done = set(_term_labels(getattr(design, part)))
    rows = {"<none>": [np.nan, res.llf, res.aic, np.nan, np.nan]}
    failed: list[str] = []
    unreliable: list[str] = []
    undetermined: list[tuple[str, str]] = []
    for term in [t for t in scope if t not in done]:
        formulas = _side_formulas(res)
        formulas[part] = _updated(getattr(design, part), scope[term])
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                relaxed = model.refit_formulas(
                    nominal=formulas["nominal"],
                    scale=formulas["scale"],
                    collinear=_relaxation_collinear(res, part),
                )
                assert relaxed is not None
                fitted = relaxed.fit()
        except OrdstatsError:
            failed.append(term)
            rows[term] = [np.nan] * 5
            continue
        if relaxed.n_rows != model.n_rows:
            raise DataError(
                f"adding {term!r} to the {part} formula changes the rows used "
                f"({model.n_rows} -> {relaxed.n_rows}): remove the missing values first"
            )
        # R's NA rows: convergence codes < 0 (a large gradient or a clearly negative
        # curvature at the end, crossing thresholds: -3), judged at the end point
        # whichever way the iterations stopped; a singular Hessian (R's code 1)
        # keeps the row.  A relaxed model contains the fitted one, so a lower
        # maximum is a failed fit too.
        info = fitted.fit_info
        stopped = info.code in _FAILED_CODES and not info.diverging
        at_maximum = stopped and _reached_maximum(fitted)
        if (
            (stopped and not at_maximum)
            or _r_crossing(fitted)
            or fitted.llf < res.llf - 1e-6 * max(1.0, abs(res.llf))
        ):
            failed.append(term)
            rows[term] = [np.nan] * 5
            continue
        if at_maximum:
            undetermined.append((term, info.message))
        elif not fitted.converged or any(
            issubclass(w.category, ConvergenceWarning) for w in caught
        ):
            unreliable.append(term)
        df = fitted.k_params - res.k_params
        # a term already spanned by the formula adds no parameter: Df 0 (see _lr_row)
        lrt, pvalue = _lr_row(max(2.0 * (fitted.llf - res.llf), 0.0), df)
        rows[term] = [df, fitted.llf, fitted.aic, lrt, pvalue]
    if failed:
        warnings.warn(
            f"the fit adding {', '.join(map(repr, failed))} to the {part} formula failed "
            "(an error, iterations that stopped short of the maximum, crossing "
            "thresholds, or a maximum below the fitted model's); its row is NA, as R's "
            "is for a refit that fails (R's Newton may get further on the same refit "
            "and keep the row)",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    if undetermined:
        stops = "; ".join(f"{term!r}: {message}" for term, message in undetermined)
        warnings.warn(
            f"the iterations of the fit adding a term to the {part} formula stopped early "
            f"({stops}), but at the maximum of its log-likelihood, so its row is kept, as "
            "R keeps a refit that ends at its maximum; where its Hessian is singular or "
            "not positive definite, its parameters are not all determined by the data",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    _warn_unreliable(unreliable)
    return pd.DataFrame.from_dict(rows, orient="index", columns=_COLUMNS)


def _warn_unreliable(terms: list[str]) -> None:
    if terms:
        warnings.warn(
            f"the fit relaxing {', '.join(map(repr, terms))} did not converge or is "
            "invalid (diverging estimates from separation, or crossing thresholds); its "
            "log-likelihood is a supremum at best, so read its row with care",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _term_table(res: FittedState, part: str) -> pd.DataFrame:
    formula_table = _formula_term_table(res, part)
    if formula_table is not None:
        return formula_table
    model = res.model
    rows = {"<none>": [np.nan, res.llf, res.aic, np.nan, np.nan]}
    unreliable = []
    already = set(getattr(model.design, part).names) if getattr(model.design, part) else set()
    names = model.exog_names
    for term, column_names in term_columns(model.design.location).items():
        columns = [names.index(c) for c in column_names]
        if part == "scale" and set(column_names) <= already:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            relaxed = _relaxed_model(model, columns, part).fit()
        if not relaxed.converged or any(issubclass(w.category, ConvergenceWarning) for w in caught):
            unreliable.append(term)
        df = relaxed.k_params - res.k_params
        lrt, pvalue = _lr_row(2.0 * (relaxed.llf - res.llf), df)
        rows[term] = [df, relaxed.llf, relaxed.aic, lrt, pvalue]
    _warn_unreliable(unreliable)
    return pd.DataFrame.from_dict(rows, orient="index", columns=_COLUMNS)


def nominal_test(res: FittedState) -> pd.DataFrame:
    """LR test of the proportional-odds assumption for each location term.

    For the sratio, cratio and acat families the same test asks whether a
    term's slope differs between the steps (VGAM's ``parallel = FALSE ~ term``
    against ``parallel = TRUE``).

    Parameters
    ----------
    res : OrdinalResults

    Returns
    -------
    pandas.DataFrame
        As R's ``nominal_test(fit)``: a row ``<none>`` (the fitted model) and one
        per term with ``Df``, ``logLik``, ``AIC``, ``LRT`` and ``Pr(>Chi)``.
    """
    return _term_table(res, "nominal")


def scale_test(res: FittedState) -> pd.DataFrame:
    """LR test of adding each location term as a log-scale effect.

    Scale effects exist for the cumulative family only.

    Parameters
    ----------
    res : OrdinalResults

    Returns
    -------
    pandas.DataFrame
        As R's ``scale_test(fit)``; terms already in the scale part are skipped.
    """
    return _term_table(res, "scale")


# ---------------------------------------------------------------------------
# drop1 and add1: R's term-wise refits of the location formula

_TESTS = {"none": False, "chisq": True, "chi": True, "lrt": True}


def _wants_test(test: str) -> bool:
    try:
        return _TESTS[str(test).lower()]
    except KeyError:
        raise SpecificationError(
            f"test={test!r}: use 'none' (Df and AIC, R's default) or 'Chisq' (with the "
            "likelihood-ratio test)"
        ) from None


def _factor_set(term: Any) -> frozenset[str]:
    return frozenset(str(f.expr) for f in term.factors)


def _term_text(term: Any) -> str:
    """A formulaic term as formula text (names that are not Python names in backticks)."""
    return ":".join(
        f"`{f.expr}`"
        if f.eval_method.value == "lookup" and not str(f.expr).isidentifier()
        else str(f.expr)
        for f in term.factors
    )


def _term_label(term: Any) -> str:
    """A term's name in the tables, as R's (``MPG.city``, ``Infl:Type``, ``I(x^2)``)."""
    return term_label(term)


def _location_terms(res: FittedState, what: str) -> list[Any]:
    model = res.model
    location = model.design.location
    if not model.can_refit_formulas or location is None or location.spec is None:
        raise SpecificationError(
            f"{what} refits the model from its formula and data: it needs a model built "
            "with from_formula in this session (not from arrays, after remove_data() or "
            "from a saved file)"
        )
    return [t for t in location.spec.terms if t.degree != 0]


def information_criterion(res: Any, k: float) -> float:
    """``-2 llf + k edf``: R's ``extractAIC(fit, k = k)[2]`` (AIC for 2, BIC for log n)."""
    return float(res.aic + (k - 2.0) * res.k_params)


def check_penalty_k(k: Any) -> float:
    """``k``, the penalty per parameter of R's ``extractAIC``, checked."""
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)):
        raise SpecificationError(
            f"k is the penalty per parameter (2 for AIC, log(nobs) for BIC); got {k!r}"
        )
    if not np.isfinite(k) or k < 0:
        raise SpecificationError(f"k must be a finite number >= 0 (2 for AIC); got {k!r}")
    return float(k)


def _model_with_terms(res: FittedState, terms: list[Any], what: str) -> Any:
    """The model with the location ``terms`` (nominal and scale kept), not fitted."""
    location = " + ".join(_term_text(t) for t in terms) or "1"
    sides = _side_formulas(res)
    try:
        other = res.model.refit_formulas(
            location=location, nominal=sides["nominal"], scale=sides["scale"]
        )
    except FormulaError as exc:  # the term names no column or function: say so
        raise FormulaError(f"{what}: {exc}") from exc
    assert other is not None
    return other


def _check_same_rows(res: FittedState, other: Any, what: str) -> None:
    if other.n_rows != res.model.n_rows:
        raise DataError(
            f"{what} changes the rows used ({res.model.n_rows} -> {other.n_rows}): remove the "
            "missing values of every variable first (R: 'number of rows in use has changed')"
        )


def refit_with_terms(res: FittedState, terms: list[Any], what: str) -> Any:
    """The model refitted with the location ``terms`` (nominal, scale and options kept).

    Warnings of the refit reach the caller.

    Raises
    ------
    FormulaError
        When a term names no column or function (the message starts with ``what``).
    DataError
        When the new formula uses other rows (R: "number of rows in use has changed").
    """
    other = _model_with_terms(res, terms, what)
    _check_same_rows(res, other, what)
    return other.fit()


def _refit_row(
    res: FittedState, terms: list[Any], what: str, larger: bool, k: float = 2.0
) -> tuple[list[float], bool]:
    """The refit with the location ``terms``: (Df, AIC, LRT, p) and whether it failed."""
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            other = _model_with_terms(res, terms, what)
            fitted = other.fit()
        except FormulaError:
            raise
        except OrdstatsError:
            return [np.nan] * 4, True
    _check_same_rows(res, other, what)
    big, small = (fitted, res) if larger else (res, fitted)
    df = big.k_params - small.k_params
    lrt = max(2.0 * (big.llf - small.llf), 0.0)
    p = float(stats.chi2.sf(lrt, df)) if df else 1.0
    return [float(df), information_criterion(fitted, k), lrt, p], not fitted.converged


def _table(
    res: FittedState, rows: dict[str, list[float]], failed: list[str], test: bool, k: float = 2.0
) -> pd.DataFrame:
    if failed:
        warnings.warn(
            f"the refits for {', '.join(map(repr, failed))} failed or did not converge; read "
            "their rows with care (NA where the refit failed)",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    table = pd.DataFrame.from_dict(
        {"<none>": [np.nan, information_criterion(res, k), np.nan, np.nan], **rows},
        orient="index",
        columns=["Df", "AIC", "LRT", "Pr(>Chi)"],
    )
    return table if test else table[["Df", "AIC"]]


def drop1(
    res: FittedState, test: str = "none", *, scope: Any = None, k: float = 2.0
) -> pd.DataFrame:
    """Refit without each location term that can be dropped, as R's ``drop1``.

    Without ``scope`` a term can be dropped when no other term contains it
    (R's ``drop.scope``: ``a`` stays while ``a:b`` is in the model).  Each refit
    keeps the nominal and scale formulas, weights, offset, link and thresholds.

    Parameters
    ----------
    res : OrdinalResults
    test : {"none", "Chisq"}
        ``"Chisq"`` adds the likelihood-ratio statistic and its p-value.
    scope : str or list of str, optional
        The terms to drop, each a term of the model (``"~ a + b"`` or a list); as
        in R, given terms are tried even where a larger term contains them.
    k : float
        The penalty per parameter in the ``AIC`` column, ``-2 llf + k edf`` (R's
        ``k``: 2 for AIC, ``log(nobs)`` for BIC).

    Returns
    -------
    pandas.DataFrame
        Rows ``<none>`` and one per term; ``Df`` (parameters removed), ``AIC`` of the
        refit, and with ``test="Chisq"`` ``LRT`` and ``Pr(>Chi)``.
    """
    wanted = _wants_test(test)
    k = check_penalty_k(k)
    terms = _location_terms(res, "drop1")
    chosen = None if scope is None else _drop_scope_terms(scope, terms)

    def refit(term: Any, label: str) -> tuple[list[float], bool]:
        others = [t for t in terms if t is not term]
        return _refit_row(res, others, f"dropping {label!r}", larger=False, k=k)

    return _table(res, *_drop_rows(terms, refit, chosen), wanted, k)


def _drop_scope_terms(scope: Any, terms: list[Any]) -> list[Any]:
    """The model's terms that ``scope`` names (R: 'scope is not a subset of term labels')."""
    by_factors = {_factor_set(t): t for t in terms}
    chosen = []
    for term in _scope_terms(scope, terms):
        if _factor_set(term) not in by_factors:
            raise SpecificationError(
                f"scope={scope!r} names {_term_label(term)!r}, which is not a term of the "
                f"model ({', '.join(_term_label(t) for t in terms) or 'none'}): drop1 can only "
                "drop the model's own terms (R: 'scope is not a subset of term labels')"
            )
        chosen.append(by_factors[_factor_set(term)])
    return chosen


def _drop_rows(
    terms: list[Any],
    refit: Callable[[Any, str], tuple[list[float], bool]],
    chosen: list[Any] | None = None,
) -> tuple[dict[str, list[float]], list[str]]:
    """``refit(term, label)`` of each term R's ``drop.scope`` (or ``chosen``) allows."""
    rows: dict[str, list[float]] = {}
    failed: list[str] = []
    for term in terms:
        if chosen is not None and not any(term is c for c in chosen):
            continue
        if chosen is None and any(_factor_set(term) < _factor_set(other) for other in terms):
            continue  # R's drop.scope: a margin of a term still in the model
        label = _term_label(term)
        rows[label], bad = refit(term, label)
        failed += [label] if bad else []
    return rows, failed


def _without_columns(terms: TermsDesign, dropped: set[str]) -> TermsDesign:
    """The design without the columns named in ``dropped`` (no longer rebuilt from a formula)."""
    keep = [j for j, name in enumerate(terms.names) if name not in dropped]
    return replace(
        terms,
        matrix=terms.matrix[:, keep],
        names=[terms.names[j] for j in keep],
        spec=None,
        moments=None if terms.moments is None else terms.moments.take(keep),
    )


def _mixed_refit_row(res: Any, dropped: set[str]) -> tuple[list[float], bool]:
    """The clmm refit without some fixed-effects columns: (Df, AIC, LRT, p), failed."""
    model = res.model
    design = model.design
    fixed = replace(design.fixed, location=_without_columns(design.fixed.location, dropped))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            smaller = type(model)(replace(design, fixed=fixed), model.options)
            fitted = smaller.fit(nagq=res.nagq)
        except OrdstatsError:
            return [np.nan] * 4, True
    df = res.k_params - fitted.k_params
    lrt = max(2.0 * (res.llf - fitted.llf), 0.0)
    p = float(stats.chi2.sf(lrt, df)) if df else 1.0
    return [float(df), fitted.aic, lrt, p], not fitted.converged


def mixed_drop1(res: Any, test: str = "none") -> pd.DataFrame:
    """R's ``drop1`` of a clmm: refit without each fixed-effects term that can be dropped.

    As ``stats::drop1.default`` on a clmm (``update()`` of the fixed formula,
    then ``extractAIC``/``logLik``): the random terms, weights, offset, link,
    thresholds and quadrature (``nagq``) stay; a term is dropped only when no
    other term contains it.  The refits use the fit's rows and the design
    columns of the remaining terms (dropping a term that is in no other term
    leaves the others' coding as a refit of the formula would).

    Parameters
    ----------
    res : MixedResults
    test : {"none", "Chisq"}

    Returns
    -------
    pandas.DataFrame
        Rows ``<none>`` and one per term: ``Df``, ``AIC`` and with
        ``test="Chisq"`` ``LRT`` and ``Pr(>Chi)``.
    """
    wanted = _wants_test(test)
    location = res.model.design.fixed.location
    if location.spec is None:
        raise SpecificationError("drop1 needs a mixed model built from a formula")
    terms = [t for t in location.spec.terms if t.degree != 0]
    columns = term_columns(location)

    def refit(term: Any, label: str) -> tuple[list[float], bool]:
        return _mixed_refit_row(res, set(columns.get(term_label(term), [])))

    return _table(res, *_drop_rows(terms, refit), wanted)


def _scope_terms(scope: Any, current: list[Any]) -> list[Any]:
    if isinstance(scope, str):
        text = scope.split("~", 1)[1] if "~" in scope else scope
    elif isinstance(scope, (list, tuple)) and all(isinstance(t, str) for t in scope):
        text = " + ".join(scope)
    else:
        raise SpecificationError(
            "scope= is a one-sided formula of the terms to try ('~ x + z', R's upper scope; "
            "'~ . + x' keeps the model's) or a list of terms; got "
            f"{type(scope).__name__}"
        )
    dot = " + ".join(_term_text(t) for t in current) or "1"
    text = dot_as(text.strip(), dot)
    try:
        return formula_terms(text)
    except FormulaError as exc:
        raise SpecificationError(f"cannot read scope={scope!r}: {exc}") from exc


def add1(res: FittedState, scope: Any, test: str = "none", *, k: float = 2.0) -> pd.DataFrame:
    """Refit with each term of ``scope`` added to the location formula, as R's ``add1``.

    A term is tried when it is not in the model and every lower-order term it
    contains (``a`` and ``b`` for ``a:b``) is (R's ``add.scope``).

    Parameters
    ----------
    res : OrdinalResults
    scope : str or list of str
        The terms to try: a one-sided formula (``"~ x + z"``, or ``"~ . + x + z"``)
        or a list of terms.
    test : {"none", "Chisq"}
    k : float
        The penalty per parameter in the ``AIC`` column (R's ``k``; see :func:`drop1`).

    Returns
    -------
    pandas.DataFrame
        Rows ``<none>`` and one per term tried; ``Df`` (parameters added), ``AIC`` of
        the refit, and with ``test="Chisq"`` ``LRT`` and ``Pr(>Chi)``.
    """
    wanted = _wants_test(test)
    k = check_penalty_k(k)
    current = _location_terms(res, "add1")
    have = {_factor_set(t) for t in current}
    candidates = _scope_terms(scope, current)
    rows: dict[str, list[float]] = {}
    failed: list[str] = []
    for term in candidates:
        factors = _factor_set(term)
        margins = [_factor_set(t) for t in candidates if _factor_set(t) < factors]
        if factors in have or not all(m in have for m in margins):
            continue
        label = _term_label(term)
        rows[label], bad = _refit_row(res, [*current, term], f"adding {label!r}", larger=True, k=k)
        failed += [label] if bad else []
    if not rows:
        raise SpecificationError(
            f"scope={scope!r} has no term to add (each is in the model, or needs a lower-"
            "order term that is not)"
        )
    return _table(res, rows, failed, wanted, k)


class TermTestMethods(FittedState):
    """Term-wise LR tests of proportional odds and of scale effects (refit the model)."""

    def nominal_test(self) -> pd.DataFrame:
        """LR test of proportional odds for each location term (R's ``nominal_test``).

        Each term in turn becomes a nominal effect (one effect per cut-point)
        and the refit is compared with this model.  A small ``Pr(>Chi)`` says the
        term's effect differs between cut-points: keep it as ``nominal="~ term"``.
        A term the nominal formula already spans adds no parameter: as R, its row
        has ``Df`` 0, ``LRT`` 0 and ``Pr(>Chi)`` 1 (R's ``pchisq(0, 0, lower.tail =
        FALSE)``).  See :mod:`ordstats.results.term_tests`.

        Returns
        -------
        pandas.DataFrame
            Rows ``<none>`` and one per term; ``Df``, ``logLik``, ``AIC``, ``LRT``,
            ``Pr(>Chi)``.
        """
        return nominal_test(self)

    def scale_test(self) -> pd.DataFrame:
        """LR test of adding each location term as a scale effect (R's ``scale_test``).

        A small ``Pr(>Chi)`` says the spread of the latent variable changes with
        the term: add it as ``scale="~ term"``.  See :mod:`ordstats.results.term_tests`.

        Returns
        -------
        pandas.DataFrame
            As :meth:`nominal_test`.
        """
        return scale_test(self)

    def drop1(self, test: str = "none", *, scope: Any = None, k: float = 2.0) -> pd.DataFrame:
        """Refit without each location term that can be dropped (R's ``drop1``).

        See :func:`ordstats.results.term_tests.drop1`.

        Parameters
        ----------
        test : {"none", "Chisq"}
            ``"Chisq"`` adds ``LRT`` and ``Pr(>Chi)``.
        scope : str or list of str, optional
            The model's terms to try dropping (default: those no other term contains).
        k : float
            Penalty per parameter in the ``AIC`` column (2: AIC; ``log(nobs)``: BIC).

        Returns
        -------
        pandas.DataFrame
        """
        return drop1(self, test, scope=scope, k=k)

    def add1(self, scope: Any, test: str = "none", *, k: float = 2.0) -> pd.DataFrame:
        """Refit with each term of ``scope`` added to the location formula (R's ``add1``).

        See :func:`ordstats.results.term_tests.add1`.

        Parameters
        ----------
        scope : str or list of str
            ``"~ x + z"`` (or ``"~ . + x + z"``), or a list of terms.
        test : {"none", "Chisq"}
        k : float
            Penalty per parameter in the ``AIC`` column (2: AIC; ``log(nobs)``: BIC).

        Returns
        -------
        pandas.DataFrame
        """
        return add1(self, scope, test, k=k)
