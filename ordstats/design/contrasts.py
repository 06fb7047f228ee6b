"""R's default contrasts: an ordered factor predictor is coded with ``contr.poly``.

R codes an unordered factor with treatment contrasts and an *ordered* factor
with orthogonal polynomial contrasts (``options("contrasts")`` is
``c("contr.treatment", "contr.poly")``), naming the columns ``x.L``, ``x.Q``,
``x.C``, ``x^4``, ...  formulaic codes every factor with treatment contrasts.
The materializer here gives a pandas *ordered* Categorical column the
polynomial coding, as R does, and records that choice in the model spec so
that new data (ordered or not: plain strings too) are coded the same way.

A formula chooses treatment contrasts for an ordered column with
``C(x, contr.treatment)`` (names ``C(x, contr.treatment)[T.b]``), or by
passing the column as an unordered Categorical.

``from_formula(..., contrasts={"x": "contr.sum"})`` is R's ``contrasts =
list(x = "contr.sum")``: :func:`r_contrasts` turns R's names (and matrices)
into contrasts that name their columns as R does -- ``x1``, ``x2`` for sum and
Helmert contrasts and for a matrix without column names, ``x.L`` for
polynomials, ``x[T.b]`` for treatment and SAS contrasts (ordstats' spelling of
R's ``xb``) -- and :func:`requested_contrasts` hands them to the materializer
while a model is built.  The fitted spec records them, so new data are coded
the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from formulaic.materializers import PandasMaterializer
from formulaic.materializers.types import EvaluatedFactor, FactorValues, ScopedFactor, ScopedTerm
from formulaic.model_spec import ModelSpec
from formulaic.parser.types import Factor
from formulaic.transforms.contrasts import (
    Contrasts,
    CustomContrasts,
    HelmertContrasts,
    PolyContrasts,
    SASContrasts,
    SumContrasts,
    TreatmentContrasts,
    encode_contrasts,
)
from formulaic.utils.sentinels import UNSET
from interface_meta import override

from ordstats.errors import (
    DataError,
    FormulaError,
    SpecificationError,
    SpecificationWarning,
    user_stacklevel,
)

__all__ = [
    "RDefaultsMaterializer",
    "ROrderedPolyContrasts",
    "check_requested_contrasts",
    "r_contrasts",
    "requested_contrasts",
]


@dataclass
class ROrderedPolyContrasts(PolyContrasts):
    """``contr.poly`` named as R names it: ``x.L``, ``x.Q``, ``x.C``, ``x^4``, ...

    The columns are formulaic's orthogonal polynomials of the level positions
    0, 1, ..., n-1, equal to R's ``contr.poly(n)`` to a few units in the last
    place.  Without an intercept the factor gets one indicator per level
    (``x[a]``), as R's ``model.matrix`` does.
    """

    FACTOR_FORMAT_REDUCED = "{name}{field}"


class _NumberedColumns:
    """R's names of contrast columns by number: ``x1``, ``x2``, ... (reduced rank)."""

    FACTOR_FORMAT_REDUCED = "{name}{field}"

    def get_coding_column_names(
        self, levels: Sequence[Any], reduced_rank: bool = True
    ) -> Sequence[Any]:
        return list(range(1, len(levels))) if reduced_rank else levels


@dataclass
class RSumContrasts(_NumberedColumns, SumContrasts):
    """``contr.sum`` named as R names it: ``x1``, ``x2``, ... (the last level: minus their sum)."""


@dataclass
class RHelmertContrasts(_NumberedColumns, HelmertContrasts):
    """``contr.helmert`` named as R names it: ``x1``, ``x2``, ..."""


class RMatrixContrasts(CustomContrasts):
    """A contrast matrix given by the user, its columns named ``x<name>`` (R: ``x1``, ``x2``)."""

    FACTOR_FORMAT_REDUCED = "{name}{field}"

    def __init__(self, matrix: np.ndarray, names: Sequence[Any] | None, levels: Any) -> None:
        super().__init__(matrix, names=names)
        self.levels = levels  # the rows' levels, when the matrix was a labelled DataFrame

    @CustomContrasts.override
    def _get_coding_matrix(
        self, levels: Sequence[Any], reduced_rank: bool = True, sparse: bool = False
    ) -> Any:
        if self.contrasts.shape[0] != len(levels):
            raise SpecificationError(
                f"the contrast matrix has {self.contrasts.shape[0]} rows but the factor has "
                f"{len(levels)} levels ({', '.join(map(str, levels))}): give one row per level"
            )
        if self.levels is not None:
            rows = [str(level) for level in self.levels]
            absent = [level for level in levels if str(level) not in rows]
            if absent:
                raise SpecificationError(
                    f"the contrast matrix's index ({', '.join(rows)}) lacks the level(s) "
                    f"{', '.join(map(str, absent))}: index its rows by the factor's levels"
                )
            order = [rows.index(str(level)) for level in levels]
            return self.contrasts[order]
        return self.contrasts


#: R's contrast functions by name, as contrasts naming their columns as R does
_BY_R_NAME: dict[str, type[Contrasts]] = {
    "contr.treatment": TreatmentContrasts,
    "contr.SAS": SASContrasts,
    "contr.sum": RSumContrasts,
    "contr.helmert": RHelmertContrasts,
    "contr.poly": ROrderedPolyContrasts,
}
_R_CONTRASTS = (RSumContrasts, RHelmertContrasts, RMatrixContrasts, ROrderedPolyContrasts)


def _matrix_contrasts(column: str, value: Any) -> RMatrixContrasts:
    """A contrast matrix (array, nested lists or a DataFrame indexed by level) checked."""
    levels = None
    names: list[Any] | None = None
    if isinstance(value, pd.DataFrame):
        levels, names = list(value.index), list(value.columns)
        if isinstance(value.index, pd.RangeIndex):
            levels = None
        if isinstance(value.columns, pd.RangeIndex):
            names = None
    try:
        matrix = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise SpecificationError(
            f"contrasts[{column!r}] must be a contrast name or a numeric matrix: {exc}"
        ) from exc
    if matrix.ndim != 2 or matrix.shape[1] < 1 or not np.isfinite(matrix).all():
        raise SpecificationError(
            f"contrasts[{column!r}] must be a finite matrix with one row per level and at least "
            f"one column; got shape {matrix.shape}"
        )
    if names is None:
        names = list(range(1, matrix.shape[1] + 1))
    return RMatrixContrasts(matrix, names, levels)


def r_contrasts(contrasts: Any) -> dict[str, Contrasts]:
    """R's ``contrasts = list(...)`` as a mapping of column names to formulaic contrasts.

    Parameters
    ----------
    contrasts : mapping or None
        Column name to one of ``"contr.treatment"``, ``"contr.sum"``,
        ``"contr.helmert"``, ``"contr.poly"``, ``"contr.SAS"``, or a matrix
        (array or nested lists with one row per level in the factor's level
        order, or a DataFrame indexed by the levels; its column names name the
        coefficients).

    Returns
    -------
    dict

    Raises
    ------
    SpecificationError
        Not a mapping, a name that is not one of R's contrasts, or a matrix
        that is not numeric.
    """
    if contrasts is None:
        return {}
    if not isinstance(contrasts, Mapping):
        raise SpecificationError(
            "contrasts must be a dict of column name to contrast, e.g. "
            f"{{'judge': 'contr.sum'}}; got {type(contrasts).__name__}"
        )
    chosen: dict[str, Contrasts] = {}
    for column, value in contrasts.items():
        if isinstance(value, str):
            if value not in _BY_R_NAME:
                raise SpecificationError(
                    f"contrasts[{column!r}] = {value!r} is not one of R's contrasts: "
                    f"{', '.join(map(repr, _BY_R_NAME))}, or a matrix"
                )
            chosen[str(column)] = _BY_R_NAME[value]()
        else:
            chosen[str(column)] = _matrix_contrasts(str(column), value)
    return chosen


_REQUESTED: ContextVar[Mapping[str, Contrasts] | None] = ContextVar(
    "ordstats_contrasts", default=None
)


@contextmanager
def requested_contrasts(contrasts: Mapping[str, Contrasts]) -> Iterator[None]:
    """Code the factor columns named in ``contrasts`` with them while models are built here."""
    token = _REQUESTED.set(contrasts)
    try:
        yield
    finally:
        _REQUESTED.reset(token)


def check_requested_contrasts(used: Sequence[str], frame: pd.DataFrame) -> None:
    """Check the contrasts requested for a model against the columns its formulas use.

    As R: contrasts of a column no formula uses are ignored with a warning
    ("variable 'f' is absent"), and contrasts of a numeric column are an error
    ("contrasts apply only to factors").

    Raises
    ------
    DataError
        Contrasts requested for a numeric column.
    """
    for column in _REQUESTED.get() or {}:
        if column not in used:
            warnings.warn(
                f"contrasts were given for {column!r}, which is not used by the formulas "
                "(as a column): they are ignored",
                SpecificationWarning,
                stacklevel=user_stacklevel(),
            )
        elif column in frame.columns and _is_numeric(frame[column]):
            raise DataError(
                f"contrasts apply only to factors, and the column {column!r} is numeric: "
                f"make it a factor first (data[{column!r}].astype('category')) or drop it "
                "from contrasts"
            )


def _is_numeric(values: pd.Series) -> bool:
    dtype = values.dtype
    return bool(
        pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_bool_dtype(dtype)
        and not isinstance(dtype, pd.CategoricalDtype)
    )


def _is_ordered_categorical(values: Any) -> bool:
    dtype = getattr(values, "dtype", None)
    return isinstance(dtype, pd.CategoricalDtype) and bool(dtype.ordered)


def _fitted_contrasts(state: Any) -> Contrasts | None:
    """The contrasts of ours that a fitted spec coded a factor with, if any."""
    recorded = state[1].get("contrasts") if len(state) > 1 else None
    contrasts = getattr(recorded, "contrasts", None)
    # formulaic codes its own (treatment) contrasts from the state it recorded
    return contrasts if isinstance(contrasts, (*_R_CONTRASTS, SASContrasts)) else None


def _chosen_contrasts(expr: str, raw: Any, state: Any) -> Contrasts | None:
    """A factor's contrasts: those recorded at the fit, else those requested, else R's default."""
    if state is not None:
        return _fitted_contrasts(state)
    requested = (_REQUESTED.get() or {}).get(expr)
    if requested is not None:
        return requested
    return ROrderedPolyContrasts() if _is_ordered_categorical(raw) else None


def _observed_levels(values: pd.Series) -> list[Any]:
    """The levels ``values`` take, in the order of its categories (R drops unused levels)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(pd.unique(values.dropna()))
        return [level for level in values.cat.categories if level in present]
    return sorted(pd.unique(values.dropna()))


def _coded_factor(raw: Any, contrasts: Contrasts) -> FactorValues[Any]:
    """``raw`` marked as a factor coded with ``contrasts``.

    At the fit the contrasts span the levels the rows take (R's model frame
    drops unused levels before coding); new data reuse the fitted levels.
    """

    def encoder(
        values: Any,
        reduced_rank: bool,
        drop_rows: Sequence[int],
        encoder_state: dict[str, Any],
        model_spec: ModelSpec,
    ) -> Any:
        series = pd.Series(values.__wrapped__ if isinstance(values, FactorValues) else values)
        series = series.drop(index=series.index[list(drop_rows)])
        levels = encoder_state.get("categories") or _observed_levels(series)
        if isinstance(series.dtype, pd.CategoricalDtype) and list(series.cat.categories) != levels:
            # encode_contrasts recodes onto ``levels``; pandas deprecates (and will refuse)
            # recoding a Categorical onto categories that lack some of its own, used or not
            series = series.astype(object)
        return encode_contrasts(
            series,
            contrasts=contrasts,
            levels=levels,
            reduced_rank=reduced_rank,
            _state=encoder_state,
            _spec=model_spec,
        )

    return FactorValues(raw, kind="categorical", spans_intercept=True, encoder=encoder)


class RDefaultsMaterializer(PandasMaterializer):
    """formulaic's pandas materializer with R's default contrasts for ordered factors.

    A column looked up by name (``x`` in ``y ~ x``, ``x:z``) gets the contrasts
    requested for it (:func:`requested_contrasts`), else, when it or an expression
    (``ordered(x)``) is an ordered pandas Categorical, :class:`ROrderedPolyContrasts`;
    an explicit ``C(x, ...)`` keeps the contrasts it names.  With a fitted spec the
    choice recorded in the spec decides, whatever the dtype of the new column.
    """

    REGISTER_NAME = "ordstats_pandas"

    @override
    def _get_scoped_terms(
        self, terms: Iterable[Any], ensure_full_rank: bool = True
    ) -> Generator[tuple[Any, Iterable[ScopedTerm]], None, None]:
        """Code each factor of a term as R's ``model.matrix`` does, with an intercept.

        R (Chambers and Heiberger's rule, *Statistical Models in S*, p. 38):
        a factor of a term is coded by contrasts when the term without it is
        empty or contained in a preceding term, else by one indicator per
        level.  ``temp:contact`` alone thus gets four indicator products,
        the last aliased with the intercept (and dropped as R's ``clm``
        drops it), where formulaic's rule picks another basis of the same
        space.  Without an intercept, or without full rank, formulaic's own
        rule stays.
        """
        terms = list(terms)
        if not ensure_full_rank or not any(is_intercept(t) for t in terms):
            yield from super()._get_scoped_terms(terms, ensure_full_rank)
            return
        preceding: list[frozenset[str]] = []
        for term in terms:
            evaled = [
                self.factor_cache[factor.expr]
                for factor in term.factors
                if self.factor_cache[factor.expr].values.__wrapped__ is not None
            ]
            if not evaled:
                yield term, []
                continue
            constant = Factor.Kind.CONSTANT
            variables = frozenset(f.expr for f in evaled if f.metadata.kind is not constant)
            scale: Any = 1
            factors = []
            for factor in evaled:
                if factor.metadata.kind is constant:
                    scale = scale * factor.values
                    continue
                rest = variables - {factor.expr}
                by_contrasts = not rest or any(rest <= earlier for earlier in preceding)
                reduced = bool(factor.metadata.spans_intercept) and by_contrasts
                factors.append(ScopedFactor(factor, reduced=reduced))
            preceding.append(variables)
            yield term, [ScopedTerm(factors=factors, scale=scale)]

    @override
    def _evaluate_factor(
        self, factor: Factor, spec: ModelSpec, drop_rows: set[int]
    ) -> EvaluatedFactor:
        evaluated: EvaluatedFactor = super()._evaluate_factor(factor, spec, drop_rows)
        raw = evaluated.values.__wrapped__
        one_value = np.isscalar(raw) or (isinstance(raw, np.ndarray) and raw.ndim == 0)
        if factor.eval_method.value != "literal" and one_value:
            raise _one_value_term(factor.expr)
        return evaluated

    @override
    def _encode_evaled_factor(
        self,
        factor: EvaluatedFactor,
        spec: ModelSpec,
        drop_rows: Sequence[int],
        reduced_rank: bool = False,
    ) -> dict[str, Any]:
        metadata = factor.values.__formulaic_metadata__
        if (
            factor.factor.eval_method.value in ("lookup", "python")
            and metadata.encoder is None
            and metadata.kind is Factor.Kind.CATEGORICAL
        ):
            raw = factor.values.__wrapped__
            chosen = _chosen_contrasts(factor.expr, raw, spec.encoder_state.get(factor.expr))
            if chosen is not None:
                factor = EvaluatedFactor(
                    factor=factor.factor,
                    values=_coded_factor(raw, chosen),
                    variables=factor.variables,
                )
        encoded: dict[str, Any] = super()._encode_evaled_factor(
            factor, spec, drop_rows, reduced_rank
        )
        if metadata.kind is Factor.Kind.CATEGORICAL:
            return _missing_as_nan(encoded, factor.values.__wrapped__, drop_rows)
        return encoded


def _one_value_term(expr: str) -> FormulaError:
    """The error for a term that evaluates to one value rather than one per row (R refuses it)."""
    return FormulaError(
        f"the term {expr!r} gives one value, not one per row; as in R (whose model.frame "
        "refuses it: 'variable lengths differ'), a summary of a column such as mean() or sd() "
        "cannot be a term by itself. Use it within a per-row expression, e.g. "
        "I(x - mean(x)) or I(x / sd(x)); a constant column would be aliased with the "
        "thresholds and dropped"
    )


def _missing_as_nan(encoded: dict[str, Any], raw: Any, drop_rows: Sequence[int]) -> dict[str, Any]:
    """The columns of a factor with NaN in the rows where the factor is missing.

    formulaic codes a missing level as a row of zeros, the reference level's coding.
    A data column's missing rows are dropped before; a factor made by an expression
    (``cut(x, c(0, 10))`` of x = 20, ``factor(x, levels = ...)`` of another value) is
    missing where R's is NA, and its rows are then dropped or predicted as NaN.
    """
    missing = np.delete(np.asarray(pd.isna(raw), dtype=bool).ravel(), sorted(drop_rows))
    if not missing.any():
        return encoded
    return {
        name: np.where(missing, np.nan, column.astype(float))
        if isinstance(column, np.ndarray) and column.shape == missing.shape
        else column
        for name, column in encoded.items()
    }


def is_intercept(term: Any) -> bool:
    """Whether a formulaic ``term`` is the intercept (the one term of degree 0)."""
    return getattr(term, "degree", None) == 0


def factor_kinds(spec: ModelSpec) -> dict[str, str]:
    """Each factor of a formula as ``"numeric"``, ``"treatment"`` or ``"coded"``.

    ``"treatment"`` is a categorical factor coded as R's ``contr.treatment``
    (first level the reference); ``"coded"`` one with other contrasts (R's
    ``contr.poly`` of an ordered factor, ``contr.sum``, a matrix, ...).
    """
    kinds = {}
    for name, (kind, state) in spec.encoder_state.items():
        if kind.value == "numerical":
            kinds[name] = "numeric"
        elif kind.value == "categorical":
            coding = state.get("contrasts") if isinstance(state, dict) else None
            coding = getattr(coding, "contrasts", coding)  # formulaic's ContrastsState
            plain = isinstance(coding, TreatmentContrasts) and (
                type(coding) is TreatmentContrasts and coding.base is UNSET
            )
            kinds[name] = "treatment" if plain else "coded"
    return kinds
