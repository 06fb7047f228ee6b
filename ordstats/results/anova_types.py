"""Type I, II and III Wald tests of the location terms of one fit, as R's ``anova(fit, type=)``.

R's ``ordinal`` (``anova.clm`` with one model) tests, for each term of the
location formula, a set of linear hypotheses ``L beta = 0`` on the regression
coefficients by a Wald chi-square statistic, ``(L b)' (L V L')^+ (L b)`` on
``rank(L V L')`` degrees of freedom.  The types differ in ``L`` (the
contrasts of lmerTest, which ``ordinal`` shares; ``X`` is the location design
with an intercept column, unweighted):

- **Type I** (sequential): the rows of the term's columns in the transposed
  unit lower factor of the Doolittle decomposition of ``X'X`` -- each term
  adjusted for the terms before it in the formula.
- **Type II**: a term that no other term contains is tested by its own
  coefficients; another is tested adjusted for every term that does not
  contain it (Type I with those terms moved before it).  A term contains
  another when it has all of the other's variables and more, and the same
  numeric ones.
- **Type III**: the term's coefficients in the model coded with treatment
  contrasts (R's default for unordered factors), mapped to the coding of the
  fit (``beta_treatment = X_treatment^+ X beta``); with treatment contrasts
  that is the term's own coefficients.
- **marginal**: the term's own coefficients in the fit's coding
  (:meth:`~ordstats.results.wald.WaldMethods.wald_test_terms`).

With ``test="LR"`` the types II and III are likelihood-ratio tests instead, as
``car::Anova`` of a polr fit: Type III refits without the term's columns; Type
II without the term and every term that contains it (all its variables and
more), against the model without those containing terms only; ``Df`` is the
number of the term's columns.  car refits ``polr(y ~ X[, -columns])`` with
polr's default logit link and no offset whatever the fit's; these refits keep
the link, thresholds, offsets and the nominal and scale parts of the fit.

Fits that read their rows in chunks (files, Dask, Spark) give the same tables:
``X'X`` is a sum over the rows (one pass), and the LR refits drop the term's
columns from the chunks read.  Type III with a factor coded by other than
treatment contrasts needs both designs' rows and is refused there.
"""

from __future__ import annotations

import warnings
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray
from ordstats.design import column_labels, term_label
from ordstats.design.contrasts import factor_kinds
from ordstats.errors import ConvergenceWarning, OrdstatsError, SpecificationError, user_stacklevel
from ordstats.families.problem import CLMData
from ordstats.results.state import FittedState
from ordstats.results.term_tests import _without_columns

__all__ = ["lr_anova", "wald_anova"]

_TYPES = {
    "I": "1",
    "II": "2",
    "III": "3",
    "1": "1",
    "2": "2",
    "3": "3",
    "marginal": "marginal",
    "2b": "2b",
}
_HEADINGS = {
    "1": "Type I",
    "2": "Type II",
    "2b": "Type IIb",
    "3": "Type III",
    "marginal": "Marginal",
}
#: R's ``doolittle(eps = 1e-6)``: pivots and factors below this are zero.
_DOOLITTLE_EPS = 1e-6


def _check_type(kind: Any) -> str:
    key = str(kind) if not isinstance(kind, bool) else None
    if key not in _TYPES:
        raise SpecificationError(
            f"type={kind!r}: use 'I' (R's default), 'II', 'III' (or 1, 2, 3), 'marginal' or '2b'"
        )
    return _TYPES[key]


class _Layout:
    """The location design of a fit: columns (intercept first) and its terms."""

    def __init__(self, model: Any) -> None:
        location = model.design.location
        if location is None or location.spec is None or not model.can_refit_formulas:
            raise SpecificationError(
                "anova(fit, type=...) reads the formula's terms and the design of the rows: it "
                "needs a model built with from_formula in this session (not from arrays, after "
                "remove_data() or from a saved file)"
            )
        self.model = model
        self.location = location
        self.names = ["(Intercept)", *location.names]
        spec = location.spec
        self.terms = [t for t in spec.terms if getattr(t, "degree", None) != 0]
        self.labels = [term_label(t) for t in self.terms]
        position = {name: j for j, name in enumerate(self.names)}
        names = column_labels(spec)
        self.columns = {
            label: [position[names[i]] for i in spec.term_indices[term] if names[i] in position]
            for label, term in zip(self.labels, self.terms, strict=True)
        }
        self.kinds = factor_kinds(spec)
        # R's dataClasses "numeric": one column (poly(), ns() give "nmatrix.k", not numeric)
        self.numeric = {
            name
            for name, kind in self.kinds.items()
            if kind == "numeric" and not any(f"{name}[" in c for c in spec.column_names)
        }

    @property
    def in_memory(self) -> bool:
        """Whether the design's rows are in memory (else the fit reads them in chunks)."""
        return bool(self.location.matrix.shape[0] == self.model.n_rows)

    @property
    def matrix(self) -> FloatArray:
        """The design with its intercept column (rows in memory only)."""
        if not self.in_memory:
            raise SpecificationError(
                "type III tests recode the factors with treatment contrasts and map the "
                "coefficients through the rows of both designs, which a model reading its data "
                "in chunks does not hold: use type='marginal' (the same tests when every "
                "factor has treatment contrasts), 'II' or test='LR'"
            )
        return np.column_stack([np.ones(self.location.matrix.shape[0]), self.location.matrix])

    @cached_property
    def gram(self) -> FloatArray:
        """``X'X`` of the design with its intercept column, rows unweighted.

        A sum over the rows, so a fit reading its data in chunks (files,
        Dask, Spark) streams it in one pass.
        """
        if self.in_memory:
            return self.matrix.T @ self.matrix
        return np.asarray(self.model.evaluator.reduce_rows(design_gram), dtype=float)

    def variables_of(self, label: str) -> set[str]:
        """Every variable of the term (car's nonzero entries of ``attr(terms, "factors")``)."""
        return {str(f.expr) for f in self.terms[self.labels.index(label)].factors}

    def variables(self, label: str) -> set[str]:
        """The variables marked 1 in R's ``attr(terms, "factors")`` column of the term.

        R marks a variable 1 when the term without it is in the model (or is the
        intercept) and 2 otherwise (coded by indicators); only the 1s count.
        """
        term = self.terms[self.labels.index(label)]
        names = {str(f.expr) for f in term.factors}
        present = {frozenset(str(f.expr) for f in t.factors) for t in self.terms}
        return {v for v in names if not names - {v} or frozenset(names - {v}) in present}

    def containing(self, label: str) -> list[str]:
        """The terms that contain ``label`` (R's ``containment``), in formula order.

        As R's ``term_contain``: the other term's variables include this one's
        (as :meth:`variables` reads them), it has more, and the same numeric ones.
        """
        inner = self.variables(label)
        out = []
        for other in self.labels:
            if other == label:
                continue
            outer = self.variables(other)
            if inner <= outer and outer - inner and inner & self.numeric == outer & self.numeric:
                out.append(other)
        return out


def design_gram(data: CLMData) -> FloatArray:
    """``[1 X]'[1 X]`` of the rows' location design (unweighted): adds up over chunks."""
    matrix = np.column_stack([np.ones(data.X.shape[0]), data.X])
    return matrix.T @ matrix


def doolittle_upper(gram: FloatArray) -> FloatArray:
    """``t(L)`` of R's ``doolittle(gram)``: the transposed unit lower LU factor, small values 0."""
    n = gram.shape[0]
    lower = np.eye(n)
    upper = np.zeros((n, n))
    for i in range(n):
        upper[i] = gram[i] - lower[i, :i] @ upper[:i]
        if i + 1 < n:
            column = gram[i + 1 :, i] - lower[i + 1 :, :i] @ upper[:i, i]
            pivot = upper[i, i]
            lower[i + 1 :, i] = 0.0 if abs(pivot) < _DOOLITTLE_EPS else column / pivot
    lower[np.abs(lower) < _DOOLITTLE_EPS] = 0.0
    return lower.T


def _type1(layout: _Layout) -> dict[str, FloatArray]:
    upper = doolittle_upper(layout.gram)
    return {label: upper[cols] for label, cols in layout.columns.items()}


def _marginal(layout: _Layout) -> dict[str, FloatArray]:
    identity = np.eye(len(layout.names))
    return {label: identity[cols] for label, cols in layout.columns.items()}


def _type2(layout: _Layout, unfolded: bool = True) -> dict[str, FloatArray]:
    """R's ``get_contrasts_type2_unfolded``: marginal unless contained, then type 2.

    ``unfolded=False`` is R's ``get_contrasts_type2`` (type ``"2b"``): every term
    adjusted for the terms not containing it, contained or not.
    """
    out = _marginal(layout)
    for label in layout.labels:
        containing = layout.containing(label)
        if unfolded and not containing:
            continue
        last = [j for name in [label, *containing] for j in layout.columns[name]]
        order = [j for j in range(len(layout.names)) if j not in last] + last
        upper = doolittle_upper(layout.gram[np.ix_(order, order)])
        rows = [order.index(j) for j in layout.columns[label]]
        contrast = np.zeros((len(rows), len(order)))
        contrast[:, order] = upper[rows]
        out[label] = contrast
    return out


def _zapsmall(values: FloatArray, digits: int = 7) -> FloatArray:
    """R's ``zapsmall``: round to ``digits`` significant digits of the largest value."""
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest <= 0:
        return np.round(values, digits)
    return np.round(values, max(0, digits - int(np.ceil(np.log10(largest)))))


def _type3(res: FittedState, layout: _Layout) -> dict[str, FloatArray]:
    """The terms' coefficients under treatment contrasts, in the fit's coding."""
    coded = [name for name, kind in layout.kinds.items() if kind != "numeric"]
    if all(layout.kinds[name] == "treatment" for name in coded):
        return _marginal(layout)
    matrix = layout.matrix  # before the refit: a fit reading its rows in chunks cannot map
    treated = _treatment_layout(res, layout, coded)
    mapping = _zapsmall(np.linalg.pinv(treated.matrix) @ matrix)
    return {
        label: mapping[treated.columns[treated_label]]
        for label, treated_label in zip(layout.labels, treated.labels, strict=True)
    }


def _treatment_layout(res: FittedState, layout: _Layout, coded: list[str]) -> _Layout:
    """The layout of the same model with every factor column coded by treatment contrasts."""
    columns = [name for name in coded if name.isidentifier()]
    if len(columns) < len(coded):
        explicit = sorted(set(coded) - set(columns))
        raise SpecificationError(
            f"type III tests recode the factors with treatment contrasts, which cannot be done "
            f"for {', '.join(map(repr, explicit))} (coded in the formula): give the factor as a "
            "column and its contrasts with contrasts={...}, or use type='marginal'"
        )
    location = res.model.design.location
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # aliased columns are dropped as at the fit
        other = res.model.refit_formulas(
            location=location.formula,
            contrasts=dict.fromkeys(columns, "contr.treatment"),
        )
    assert other is not None

    treated = _Layout(other)
    if treated.matrix.shape[0] != layout.matrix.shape[0] or len(treated.labels) != len(
        layout.labels
    ):
        raise OrdstatsError("type III tests: the model recoded with treatment contrasts differs")
    return treated


def _wald_row(contrast: FloatArray, beta: FloatArray, covariance: FloatArray) -> tuple[int, float]:
    """R's ``contestMD``: the statistic on the positive eigen-directions of ``L V L'``."""
    if contrast.shape[0] == 0:
        return 0, np.nan
    values, vectors = np.linalg.eigh(contrast @ covariance @ contrast.T)
    values, vectors = values[::-1], vectors[:, ::-1]
    tol = max(np.sqrt(np.finfo(float).eps) * values[0], 0.0)
    keep = values > tol
    if not keep.any():
        return 0, np.nan
    projected = vectors[:, keep].T @ contrast @ beta
    return int(keep.sum()), float(np.sum(projected**2 / values[keep]))


def wald_anova(res: FittedState, kind: Any = "I") -> pd.DataFrame:
    """Wald tests of each location term, as R's ``anova(fit, type = "I")`` of a clm.

    See :mod:`ordstats.results.anova_types` for the hypotheses of each type.

    Parameters
    ----------
    res : OrdinalResults
        A fit built with ``from_formula``, its rows in memory or read in
        chunks (files, Dask, Spark: ``X'X`` streams in one pass).
    kind : {"I", "II", "III", "marginal", "2b"} or {1, 2, 3}
        ``"I"`` is the default of R's ``anova.clm`` (its ``single_anova`` alone
        defaults to ``"III"``).

    Returns
    -------
    pandas.DataFrame
        One row per location term: ``Df``, ``Chisq``, ``Pr(>Chisq)`` (R's names);
        ``attrs["heading"]`` names the type.  A term whose columns were all
        dropped as aliased has NaN.

    Raises
    ------
    SpecificationError
        Another type, a model not built from a formula in this session, a
        covariance with non-finite values, or type III of a fit read in chunks
        with a factor not coded by treatment contrasts (the recoding maps the
        coefficients through both designs' rows).
    """
    kind = heading = _check_type(kind)
    layout = _Layout(res.model)
    matrix = np.asarray(res.covariance.matrix)
    if not np.all(np.isfinite(matrix)):
        raise SpecificationError(
            "anova table not available with non-finite values in the covariance (as R)"
        )
    if len(layout.names) <= 1 or len(layout.labels) <= 1:
        kind = "1"  # R: one term (or one column) takes the Type I contrasts
    builders = {
        "1": _type1,
        "2": _type2,
        "2b": lambda layout: _type2(layout, unfolded=False),
        "marginal": _marginal,
    }
    contrasts = _type3(res, layout) if kind == "3" else builders[kind](layout)
    names = layout.names[1:]
    position = {name: j for j, name in enumerate(res.params.index)}
    columns = [position[name] for name in names]
    beta = res.params.to_numpy()[columns]
    block = matrix[np.ix_(columns, columns)]
    rows = {}
    for label in layout.labels:
        df, statistic = _wald_row(contrasts[label][:, 1:], beta, block)
        rows[label] = (
            df if df else np.nan,
            statistic,
            float(stats.chi2.sf(statistic, df)) if df else np.nan,
        )
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["Df", "Chisq", "Pr(>Chisq)"])
    title = "Analysis of Deviance Table with Wald chi-square tests"
    table.attrs["heading"] = f"{_HEADINGS[heading]} {title}"
    return table


def _deviance_without(res: FittedState, layout: _Layout, dropped: list[str]) -> float:
    """``-2 llf`` of the fit refitted without the columns of the terms ``dropped``."""
    names = {layout.names[j] for label in dropped for j in layout.columns[label]}
    location = _without_columns(layout.location, names)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            refit = res.model.with_changes(location=location).fit()
        except OrdstatsError as exc:
            raise SpecificationError(
                f"the refit without {' + '.join(dropped)} failed ({exc}); the LR tests need "
                "every refit"
            ) from exc
    if not refit.converged or any(issubclass(w.category, ConvergenceWarning) for w in caught):
        warnings.warn(
            f"the refit without {' + '.join(dropped)} did not converge: read its row with care",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return -2.0 * float(refit.llf)


def lr_anova(res: FittedState, kind: Any = "II") -> pd.DataFrame:
    """Likelihood-ratio tests of each location term, as ``car::Anova`` of a polr fit.

    See :mod:`ordstats.results.anova_types`.

    Parameters
    ----------
    res : OrdinalResults
        A fit built with ``from_formula``, its rows in memory or read in
        chunks (the refits without a term's columns read the same chunks).
    kind : {"II", "III"} or {2, 3}

    Returns
    -------
    pandas.DataFrame
        One row per location term: ``LR Chisq``, ``Df``, ``Pr(>Chisq)`` (car's
        names); ``attrs["heading"]`` names the type.
    """
    kind = _check_type(kind)
    if kind not in ("2", "3"):
        raise SpecificationError(
            f"test='LR' has types 'II' (car::Anova's default) and 'III'; got type={kind!r}"
        )
    layout = _Layout(res.model)
    full = -2.0 * float(res.llf)
    rows = {}
    for label in layout.labels:
        if kind == "3":
            statistic = _deviance_without(res, layout, [label]) - full
        else:
            within = layout.variables_of(label)
            relatives = [
                other
                for other in layout.labels
                if other != label and within <= layout.variables_of(other)
            ]
            smaller = _deviance_without(res, layout, [label, *relatives])
            larger = _deviance_without(res, layout, relatives) if relatives else full
            statistic = smaller - larger
        df = len(layout.columns[label])
        rows[label] = (statistic, df, float(stats.chi2.sf(statistic, df)) if df else np.nan)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["LR Chisq", "Df", "Pr(>Chisq)"])
    table.attrs["heading"] = f"Analysis of Deviance Table ({_HEADINGS[kind]} tests)"
    return table
