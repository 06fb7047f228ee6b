r"""Checks that fitted models may be compared, and that one is nested in another.

Two fits can be compared by likelihood only if they model the same response on
the same rows with the same weights.  A likelihood-ratio test further needs the
restricted model to be a special case of the full one.  For cumulative link
models with the same link that holds when every cumulative linear predictor the
restricted model can produce,

.. math:: \theta_j(w_i) - x_i^\top\beta - o_i, \qquad i = 1..n,\; j = 1..K-1,

is one the full model can produce, and the same for the log-scale predictor
:math:`z_i^\top\zeta`.  Both are linear in the parameters, so nesting is a
column-space inclusion: the stacked "cumulative design" of the restricted
model (and the difference of the offsets) must lie in the span of the full
model's.  This covers added terms, interactions, nominal effects that relax
location effects, and threshold structures (``equidistant`` within
``flexible``) in one test, without trusting formula strings.

A standard link is nested in a flexible family that contains it as a special
case (:data:`LINK_NESTING`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.core.linalg import weighted_gram
from ordstats.core.thresholds import cut_point_design
from ordstats.data.chunks import ColumnPlan
from ordstats.errors import SpecificationError, SpecificationWarning, user_stacklevel
from ordstats.estimation.evaluators import ChunkedEvaluator, DataRemovedEvaluator
from ordstats.inference.describe import formula_with_parts

if TYPE_CHECKING:
    from ordstats.results.fitted import OrdinalResults
    from ordstats.results.protocols import FittedModel

__all__ = ["LINK_NESTING", "LinkNesting", "check_comparable", "check_nested", "link_nesting"]

#: Residual norm, relative to a column's norm, below which a column counts as
#: lying in a span (the projection keeps rounding near 1e-8 of the norm).
_SPAN_TOL = 1e-6
#: Rows per block of the stacked design (bounds the memory of the QR).
_BLOCK_ROWS = 20_000


@dataclass(frozen=True)
class LinkNesting:
    """How a standard link sits inside a flexible link family.

    Attributes
    ----------
    family : str
        Name of the flexible link.
    value : float
        Value of the family's parameter ``lambda`` that gives the standard link.
    boundary : bool
        Whether that value is on the boundary of the parameter space (then the
        LR statistic is a 50:50 mixture of chi-square 0 and 1, Self & Liang 1987).
    """

    family: str
    value: float
    boundary: bool


#: Standard links as special cases of flexible families: Aranda-Ordaz
#: ``F(x) = 1 - (1 + lambda e^x)^(-1/lambda)``, lambda > 0, is the logit at 1
#: and tends to the cloglog as lambda -> 0 (a boundary); the log-gamma family
#: (Genter & Farewell 1985) is the probit at 0, the cloglog at 1, the loglog at -1.
LINK_NESTING: dict[str, tuple[LinkNesting, ...]] = {
    "logit": (LinkNesting("aranda-ordaz", 1.0, False),),
    "cloglog": (LinkNesting("aranda-ordaz", 0.0, True), LinkNesting("log-gamma", 1.0, False)),
    "probit": (LinkNesting("log-gamma", 0.0, False),),
    "loglog": (LinkNesting("log-gamma", -1.0, False),),
}


def link_nesting(restricted: str, full: str) -> LinkNesting | None:
    """How link ``restricted`` is nested in link ``full`` (None if it is not).

    Examples
    --------
    >>> link_nesting("cloglog", "aranda-ordaz").boundary
    True
    >>> link_nesting("logit", "probit") is None
    True
    """
    for nesting in LINK_NESTING.get(restricted.lower(), ()):
        if nesting.family == full.lower():
            return nesting
    return None


def _describe(res: OrdinalResults) -> str:
    return f"'{formula_with_parts(res)}' ({res.model.link.name})"


def _rows_removed(model: FittedModel) -> bool:
    """Whether ``remove_data()`` dropped the model's rows (only summaries are left)."""
    return isinstance(model.evaluator, DataRemovedEvaluator)


def _source_gone(model: FittedModel) -> bool:
    """Whether the model read its rows in chunks from a source it no longer has (unpickled)."""
    evaluator = model.evaluator
    return not (evaluator.keeps_rows or _rows_removed(model)) and model.source is None


def _where(model: FittedModel) -> str:
    if _rows_removed(model):
        return "a fit whose data were removed (remove_data())"
    if _source_gone(model):
        return "a saved fit of data read in chunks"
    return "a fit of data read in chunks" if model.source is not None else "a fit of data in memory"


def check_comparable(first: OrdinalResults, second: OrdinalResults) -> None:
    """Refuse two fits whose likelihoods are not of the same data.

    Fits whose rows are in memory are compared row by row (rows used,
    response, weights).  Without the rows (data read in chunks, or removed by
    ``remove_data()``) the kept summaries are compared: rows used, the sum of
    the weights and the weighted count of each response level (R's
    ``anova.clm`` compares only the number of rows).

    Raises
    ------
    SpecificationError
        With the reason: a different kind of model, response, levels, rows or weights.
    """
    a, b = first.model, second.model
    if type(a) is not type(b):
        raise SpecificationError(
            f"cannot compare a {type(a).__name__} fit with a {type(b).__name__} fit"
        )
    if a.endog_name != b.endog_name or a.levels != b.levels:
        raise SpecificationError(
            f"the models have different responses ({a.endog_name!r} with levels {a.levels} "
            f"vs {b.endog_name!r} with levels {b.levels}); likelihoods of different "
            "responses cannot be compared"
        )
    if _rows_removed(a) or _rows_removed(b):
        _check_same_summaries(a, b, "their data were removed (remove_data()), so only")
        return
    if _source_gone(a) or _source_gone(b):  # a saved chunked fit keeps only its summaries
        _check_same_summaries(a, b, "a saved fit of data read in chunks keeps no rows, so only")
        return
    if (a.source is None) != (b.source is None):
        raise SpecificationError(
            f"cannot compare {_where(a)} with {_where(b)}: fit both models the same way "
            "(both from a DataFrame, or both from the same files or Dask data)"
        )
    if a.source is not None:  # chunked fits: rows are not in memory
        _check_comparable_chunked(a, b)
        return
    if a.n_rows == b.n_rows and not a.design.row_index.equals(b.design.row_index):
        raise SpecificationError(
            f"the models were fitted to rows with different labels (both {a.n_rows} rows; "
            f"first labels {list(a.design.row_index[:3])} and {list(b.design.row_index[:3])}): "
            "fit both on the same DataFrame (or give both the same index)"
        )
    if a.n_rows != b.n_rows:
        raise SpecificationError(
            f"the models were fitted to different rows ({a.n_rows} vs {b.n_rows} used): "
            "missing values in terms used by only one model are dropped from that model "
            "alone. Refit both on the same complete rows (e.g. data.dropna(subset=...))"
        )
    if not np.array_equal(a.data.y, b.data.y):
        raise SpecificationError(
            "the models' responses differ on the same rows; were they fitted to different data?"
        )
    if not np.allclose(a.data.weights, b.data.weights, rtol=1e-12, atol=0.0):
        raise SpecificationError(
            "the models were fitted with different weights; refit both with the same weights"
        )


def _chunk_plan(model: FittedModel) -> ColumnPlan:
    evaluator = model.evaluator
    assert isinstance(evaluator, ChunkedEvaluator)
    return evaluator.spec.plan


def _check_same_summaries(a: FittedModel, b: FittedModel, why: str) -> None:
    """Models without rows in memory: the same rows used, weights sum and level counts."""
    same = (
        a.n_rows == b.n_rows
        and a.nobs == b.nobs
        and np.array_equal(a.response_counts, b.response_counts)
    )
    if not same:
        raise SpecificationError(
            f"the models were fitted to different rows or weights ({a.n_rows} vs "
            f"{b.n_rows} rows used, nobs {a.nobs:g} vs {b.nobs:g}); {why} these summaries "
            "can be compared. Refit both on the same complete rows with the same weights"
        )


def _check_comparable_chunked(a: Any, b: Any) -> None:
    """Chunked fits are comparable when they read the same rows with the same weights."""
    _check_same_summaries(a, b, "for data read in chunks")
    if _chunk_plan(a).weights != _chunk_plan(b).weights:
        raise SpecificationError(
            f"the models were fitted with different weights ({_chunk_plan(a).weights!r} vs "
            f"{_chunk_plan(b).weights!r}); refit both with the same weights"
        )


def _offset_key(model: FittedModel) -> object:
    """What identifies a model's offset without its rows (None: no offset)."""
    if model.source is not None:
        return _chunk_plan(model).offset
    return model.design.offset_name if model.has_offset else None


def _missing_by_name(restricted: OrdinalResults, full: OrdinalResults) -> list[str]:
    """Parts of the restricted model whose columns the full model does not name.

    A location column may also be among the full model's nominal columns (a
    nominal effect with flexible thresholds relaxes a location effect).
    """
    r, f = restricted.model, full.model
    relaxing = set(f.nominal_names) if f.threshold == "flexible" else set()
    missing = [n for n in r.exog_names if n not in set(f.exog_names) | relaxing]
    missing += [f"nominal {n}" for n in r.nominal_names if n not in set(f.nominal_names)]
    missing += [f"scale {n}" for n in r.scale_names if n not in set(f.scale_names)]
    if r.threshold != f.threshold and f.threshold != "flexible":
        missing.append(f"threshold={r.threshold!r}")
    if _offset_key(r) != _offset_key(f) and (r.has_offset or f.has_offset):
        missing.append("offset")
    if r.design.scale_offset_name != f.design.scale_offset_name:
        missing.append("scale offset")
    return missing


def _check_nested_by_name(restricted: OrdinalResults, full: OrdinalResults) -> None:
    """Without the rows, nesting is judged by column name.

    For data read in chunks a column of the restricted model that the full one
    does not name is an error (the data can be loaded to check by the
    designs); for results whose rows were removed it is a warning, since the
    designs cannot be rebuilt and names differ under reparametrisation (R's
    ``anova`` does not check nesting at all).
    """
    missing = _missing_by_name(restricted, full)
    if not missing:
        return
    text = (
        f"{_describe(restricted)} cannot be shown to be nested in {_describe(full)}: "
        f"{', '.join(map(repr, missing))} is not part of the full model by name"
    )
    if any(m.source is not None or _source_gone(m) for m in (full.model, restricted.model)):
        raise SpecificationError(
            f"{text}. For data read in chunks, nesting is checked by column name: the full "
            "model must contain every column of the restricted one"
        )
    warnings.warn(
        f"{text}. Their data were removed (remove_data()), so nesting can only be checked "
        "by column name: the LR test is valid only if the restricted model is a special "
        "case of the full one",
        SpecificationWarning,
        stacklevel=user_stacklevel(),
    )


def _nominal(res: OrdinalResults) -> FloatArray:
    data = res.model.data
    return data.nominal if data.nominal.size else np.empty((data.n_obs, 0))


def _scale(res: OrdinalResults) -> FloatArray:
    data = res.model.data
    return data.scale if data.scale.size else np.empty((data.n_obs, 0))


def _scale_offset(res: OrdinalResults) -> FloatArray:
    data = res.model.data
    return np.zeros(data.n_obs) if data.scale_offset is None else data.scale_offset


def _cumulative_blocks(
    full: OrdinalResults, restricted: OrdinalResults, offset_diff: FloatArray | None
) -> Iterator[FloatArray]:
    """Row blocks of ``[D_full, D_restricted, offset difference]`` over all cut-points."""
    n = full.model.data.n_obs
    n_cuts = full.model.data.n_levels - 1
    for cut in range(n_cuts):
        for start in range(0, n, _BLOCK_ROWS):
            rows = slice(start, min(start + _BLOCK_ROWS, n))
            parts = []
            for res in (full, restricted):
                parts.append(
                    cut_point_design(res.model.threshold_jacobian, _nominal(res)[rows], cut)
                )
                parts.append(res.model.data.X[rows])
            if offset_diff is not None:
                parts.append(offset_diff[rows, None])
            yield np.hstack(parts)


def _gram(blocks: Iterator[FloatArray]) -> FloatArray:
    """``D'D`` accumulated over row blocks of ``D`` (BLAS ``syrk``)."""
    total: FloatArray | None = None
    for block in blocks:
        product = weighted_gram(block)
        total = product if total is None else total + product
    return total if total is not None else np.zeros((0, 0))


def _residual_shares(gram_blocks: Callable[[], Iterator[FloatArray]], n_span: int) -> FloatArray:
    """Return the squared residuals of the later columns on the span of the first ones.

    Each is relative to the column's squared norm; "the first ones" are the
    first ``n_span`` columns.

    Two passes over the row blocks (Cholesky QR, repeated once for accuracy):
    the first forms the Gram matrix of the unit-scaled columns and the
    Cholesky factor ``R`` of its leading block; the second works with
    ``Q = D_span R^{-1}``, whose columns are orthonormal up to rounding, so the
    residuals are not swamped by the condition number of the span.
    """
    gram = _gram(gram_blocks())
    norms = np.sqrt(np.diag(gram))
    scale = np.where(norms > 0, norms, 1.0)
    gram = gram / np.outer(scale, scale)
    r_span = linalg.cholesky(gram[:n_span, :n_span], lower=False)
    r_inverse = linalg.solve_triangular(r_span, np.eye(n_span))
    n_rest = gram.shape[0] - n_span
    qq, qc, cc = np.zeros((n_span, n_span)), np.zeros((n_span, n_rest)), np.zeros(n_rest)
    for block in gram_blocks():
        block = block / scale
        q = block[:, :n_span] @ r_inverse
        rest = block[:, n_span:]
        qq += weighted_gram(q)
        qc += q.T @ rest
        cc += np.einsum("ij,ij->j", rest, rest)
    explained = np.einsum("ij,ij->j", qc, linalg.solve(qq, qc, assume_a="pos"))
    shares = (cc - explained) / np.where(cc > 0, cc, 1.0)
    return np.where(norms[n_span:] > 0, shares, 0.0)


def _outside_span(blocks: Callable[[], Iterator[FloatArray]], n_span: int) -> list[int]:
    """Return the later columns (counted from ``n_span``) outside the span of the first."""
    if n_span == 0:
        gram = _gram(blocks())
        return [j for j, value in enumerate(np.diag(gram)) if value > 0]
    try:
        shares = _residual_shares(blocks, n_span)
    except linalg.LinAlgError:  # the full model's own design is (nearly) singular
        return []
    return [j for j, share in enumerate(shares) if share > _SPAN_TOL**2]


def _check_link(restricted: OrdinalResults, full: OrdinalResults) -> LinkNesting | None:
    r_link, f_link = restricted.model.link.name, full.model.link.name
    if r_link == f_link:
        return None
    nesting = link_nesting(r_link, f_link)
    if nesting is None:
        raise SpecificationError(
            f"the models use different links ({r_link!r} and {f_link!r}), which are not "
            "nested: an LR test between them is not valid (R's anova() reports one anyway). "
            "Compare links with ordstats.compare_links (AIC, BIC and Vuong's test)"
        )
    return nesting


def _check_family(restricted: OrdinalResults, full: OrdinalResults) -> None:
    """Models of different families (or directions) are never nested in each other."""
    r_family, f_family = restricted.model.family_spec, full.model.family_spec
    if (r_family.name, r_family.reverse) != (f_family.name, f_family.reverse):
        raise SpecificationError(
            f"the models are of different families ({r_family.label!r} and "
            f"{f_family.label!r}), which are not nested: an LR test between them is not "
            "valid. Compare them with AIC/BIC or ordstats.vuong_test"
        )


def check_nested(restricted: OrdinalResults, full: OrdinalResults) -> LinkNesting | None:
    """Refuse a pair of fits in which ``restricted`` is not a special case of ``full``.

    Parameters
    ----------
    restricted, full : OrdinalResults

    Returns
    -------
    LinkNesting or None
        How the restricted link sits in the full one, when they differ.

    Raises
    ------
    SpecificationError
        Saying why: not comparable (:func:`check_comparable`), the order of the
        arguments, different families, non-nested links, or the restricted
        parameters that describe effects the full model cannot represent.
    """
    check_comparable(restricted, full)
    _check_family(restricted, full)
    if restricted.k_params >= full.k_params:
        swap = " (pass the smaller model first)" if restricted.k_params > full.k_params else ""
        raise SpecificationError(
            f"the restricted model {_describe(restricted)} has {restricted.k_params} "
            f"parameters and the full model {_describe(full)} {full.k_params}: a nested "
            f"model must have fewer parameters{swap}"
        )
    nesting = _check_link(restricted, full)
    if full.model.source is not None or any(
        _rows_removed(m) or _source_gone(m) for m in (full.model, restricted.model)
    ):
        _check_nested_by_name(restricted, full)
        return nesting
    offset_diff = restricted.model.data.offset - full.model.data.offset
    has_offset_diff = bool(np.any(offset_diff != 0.0))
    lay_f, lay_r = full.model.problem.layout, restricted.model.problem.layout
    n_full = lay_f.n_threshold_block + lay_f.n_beta
    outside = _outside_span(
        lambda: _cumulative_blocks(full, restricted, offset_diff if has_offset_diff else None),
        n_full,
    )
    names = list(restricted.params.index[: lay_r.n_threshold_block + lay_r.n_beta])
    names += ["offset"] if has_offset_diff else []
    bad = [names[j] for j in outside]
    # the restricted log scale z'zeta + q must be one of the full model's too
    scale_offset_diff = _scale_offset(restricted) - _scale_offset(full)
    has_scale_offset_diff = bool(np.any(scale_offset_diff != 0.0))
    zeta_r = _scale(restricted)
    if has_scale_offset_diff:
        zeta_r = np.column_stack([zeta_r, scale_offset_diff])
    if zeta_r.shape[1]:
        scale_names = list(restricted.params.index[lay_r.zeta])
        scale_names += ["scale offset"] if has_scale_offset_diff else []
        stacked = np.hstack([_scale(full), zeta_r])
        outside_scale = _outside_span(lambda: iter([stacked]), _scale(full).shape[1])
        bad += [scale_names[j] for j in outside_scale]
    if bad:
        raise SpecificationError(
            f"{_describe(restricted)} is not nested in {_describe(full)}: its parameter(s) "
            f"{', '.join(map(repr, bad))} describe effects the full model cannot represent. "
            "An LR test needs the full model to contain every term of the restricted one; "
            "for non-nested models use ordstats.vuong_test or compare AIC/BIC"
        )
    return nesting
