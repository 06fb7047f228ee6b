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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from formulaic.materializers import PandasMaterializer
from formulaic.materializers.types import EvaluatedFactor, FactorValues
from formulaic.model_spec import ModelSpec
from formulaic.parser.types import Factor
from formulaic.transforms.contrasts import PolyContrasts, encode_contrasts
from interface_meta import override

__all__ = ["RDefaultsMaterializer", "ROrderedPolyContrasts"]


@dataclass
class ROrderedPolyContrasts(PolyContrasts):
    """``contr.poly`` named as R names it: ``x.L``, ``x.Q``, ``x.C``, ``x^4``, ...

    The columns are formulaic's orthogonal polynomials of the level positions
    0, 1, ..., n-1, equal to R's ``contr.poly(n)`` to a few units in the last
    place.  Without an intercept the factor gets one indicator per level
    (``x[a]``), as R's ``model.matrix`` does.
    """

    FACTOR_FORMAT_REDUCED = "{name}{field}"


def _is_ordered_categorical(values: Any) -> bool:
    dtype = getattr(values, "dtype", None)
    return isinstance(dtype, pd.CategoricalDtype) and bool(dtype.ordered)


def _fitted_with_polynomials(state: Any) -> bool | None:
    """Whether a fitted spec coded a factor with R's polynomials (None: not fitted yet)."""
    if state is None:
        return None
    contrasts = state[1].get("contrasts") if len(state) > 1 else None
    return isinstance(getattr(contrasts, "contrasts", None), ROrderedPolyContrasts)


def _observed_levels(values: pd.Series) -> list[Any]:
    """The levels ``values`` take, in the order of its categories (R drops unused levels)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = set(pd.unique(values.dropna()))
        return [level for level in values.cat.categories if level in present]
    return sorted(pd.unique(values.dropna()))


def _polynomial_factor(raw: Any) -> FactorValues[Any]:
    """``raw`` marked as a factor coded with R's ``contr.poly``.

    At the fit the polynomials span the levels the rows take (R's model frame
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
        return encode_contrasts(
            series,
            contrasts=ROrderedPolyContrasts(),
            levels=levels,
            reduced_rank=reduced_rank,
            _state=encoder_state,
            _spec=model_spec,
        )

    return FactorValues(raw, kind="categorical", spans_intercept=True, encoder=encoder)


class RDefaultsMaterializer(PandasMaterializer):
    """formulaic's pandas materializer with R's default contrasts for ordered factors.

    A column looked up by name (``x`` in ``y ~ x``, ``x:z``) or an expression
    (``ordered(x)``) that is an ordered pandas Categorical gets
    :class:`ROrderedPolyContrasts`; an explicit
    ``C(x, ...)`` keeps the contrasts it names.  With a fitted spec the choice
    recorded in the spec decides, whatever the dtype of the new column.
    """

    REGISTER_NAME = "ordstats_pandas"

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
            fitted = _fitted_with_polynomials(spec.encoder_state.get(factor.expr))
            if fitted if fitted is not None else _is_ordered_categorical(raw):
                factor = EvaluatedFactor(
                    factor=factor.factor, values=_polynomial_factor(raw), variables=factor.variables
                )
        encoded: dict[str, Any] = super()._encode_evaled_factor(
            factor, spec, drop_rows, reduced_rank
        )
        if metadata.kind is Factor.Kind.CATEGORICAL:
            return _missing_as_nan(encoded, factor.values.__wrapped__, drop_rows)
        return encoded


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
