r"""Averages over the estimation rows of fits read in chunks (files, Dask): one streaming pass.

Every average the verbs form is a ratio of sums over rows,

.. math:: \hat b_g = \frac{\sum_{i \in g} w_i v_i(\theta)}{\sum_{i \in g} w_i},\qquad
          \nabla \hat b_g = \frac{\sum_{i \in g} w_i \nabla v_i(\theta)}{\sum_{i \in g} w_i},

so a fit whose rows are not in memory gets them in one pass: each chunk's used
rows run the verb with :data:`AVERAGER` set to a :class:`_Recorder`, which
keeps, for every average the verb forms, the sums of ``w v``, ``w dv/dtheta``
and ``w`` per group (:func:`block_sums`); the chunks' sums add up by group
label (:class:`StreamedSums`).  The verb is then run once more on one row
with :data:`AVERAGER` replaying the totals' means (:class:`_Replay`), so the
non-linear steps after averaging (a ratio of two averages, a hypothesis, the
interval) are the in-memory verb's own code.  The numbers are the in-memory
ones up to the order of the additions.

Numeric contrasts that need the whole column (``"sd"``, ``"2sd"``, ``"iqr"``,
``"minmax"``) get its summary from passes before the averaging one: one for
the moments and extremes, a few for the exact quartiles
(:func:`column_summaries`).  ``predictions(variables=...)`` of a numeric
predictor without values is refused with a message saying what to pass.
Factor levels are the fit's own (:meth:`StreamingFit._margins_factor_levels`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ordstats._typing import FloatArray
from ordstats.errors import OrdstatsError, PredictionWarning, user_stacklevel
from ordstats.results.effect_rows import bracket_pass, values_by_passes
from ordstats.results.margins.jacobian import RowTerms
from ordstats.results.margins.protocol import DesignRows, MarginsFit, Predicted

__all__ = [
    "AVERAGER",
    "DOUBTFUL",
    "StreamedSums",
    "StreamingFit",
    "WeightTally",
    "block_sums",
    "column_summaries",
    "means",
    "newdata_fit",
    "stream_average",
    "streams",
]

#: replaces the in-memory average of the verbs while a streaming pass runs (None: in memory)
AVERAGER: ContextVar[Callable[..., Any] | None] = ContextVar("margins_averager", default=None)
#: Set while a verb runs on one chunk (or replays the totals): the rows that a
#: rank-deficient fit cannot estimate are counted here instead of warned of per
#: chunk, and :func:`stream_average` warns once of their total.
DOUBTFUL: ContextVar[list[int] | None] = ContextVar("margins_doubtful_rows", default=None)

#: numeric contrasts that need a summary of the whole column before the pass
_SUMMARY_CONTRASTS = ("sd", "2sd", "iqr", "minmax")

Averaged = tuple[pd.DataFrame, FloatArray, FloatArray | None]


@runtime_checkable
class StreamingFit(Protocol):
    """What a fit whose rows are read in chunks provides to stream the margins' averages."""

    def _margins_in_memory(self) -> bool:
        """Whether the estimation rows are in memory (else they are streamed)."""
        ...

    def _margins_factor_levels(self) -> dict[str, list[Any]]:
        """The levels of each factor predictor, as the fit encodes them."""
        ...

    def _margins_stream(
        self, func: Callable[..., Any], *args: Any, columns: tuple[str, ...] = ()
    ) -> Any:
        """``func(rows, *args)`` summed over the chunks of estimation rows (one pass)."""
        ...


def streams(fit: Any, newdata: Any) -> bool:
    """Whether a verb on ``fit`` with ``newdata`` averages over rows read in chunks."""
    return newdata is None and isinstance(fit, StreamingFit) and not fit._margins_in_memory()


# -- sums by group ----------------------------------------------------------------------------


def _codes(labels: pd.DataFrame, keys: list[str], n: int) -> tuple[np.ndarray, pd.DataFrame]:
    """Group codes (sorted by the keys, as the in-memory average) and one label row per group."""
    if not keys:
        return np.zeros(n, dtype=np.intp), pd.DataFrame(index=range(1))
    frame = labels[keys]
    codes = frame.groupby(keys, sort=True, observed=True, dropna=False).ngroup().to_numpy()
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    return codes, frame.iloc[first].reset_index(drop=True)


def _sum_within(codes: np.ndarray, n_groups: int, *arrays: Any) -> list[Any]:
    """Column sums of each array within the groups ``codes`` (None stays None)."""
    if n_groups == 1:
        return [None if a is None else np.sum(a, axis=0, keepdims=True) for a in arrays]
    indicator = sp.csr_matrix(
        (np.ones(len(codes)), (codes, np.arange(len(codes)))), shape=(n_groups, len(codes))
    )
    return [None if a is None else indicator @ a for a in arrays]


def block_sums(
    block: Any, weights: FloatArray, by: list[str]
) -> tuple[pd.DataFrame, FloatArray, FloatArray | None, FloatArray]:
    """Sums of ``w v``, ``w dv/dtheta`` and ``w`` per ``by`` value and group (NaN skipped).

    Parameters
    ----------
    block : object
        Per-row estimates with ``labels`` (m rows), ``values`` (m, g),
        ``jacobian`` (m, g, k), :class:`RowTerms` or None and ``groups``
        (the verbs' ``_Block``).
    weights : ndarray, shape (m,)
    by : list of str
        The averaging columns (``term`` and ``contrast`` are always kept).

    Returns
    -------
    labels : pandas.DataFrame
        In long form, group-major, the keys sorted within a group.
    sums : ndarray, shape (n,)
    jacobian_sums : ndarray, shape (n, k), or None
    totals : ndarray, shape (n,)
    """
    m, g = block.values.shape
    labels = block.labels
    front = [c for c in ("term", "contrast") if c in labels.columns]
    keys = [c for c in by if c not in front]
    if m:  # a block is one term and contrast: group by the by columns only
        codes, out_labels = _codes(labels, keys, m)
        for position, column in enumerate(front):
            out_labels.insert(position, column, labels[column].iloc[0])
    else:
        codes, out_labels = _codes(labels, front + keys, m)
    n_keys = len(out_labels)
    usable = np.isfinite(block.values)
    every = bool(usable.all())
    if every:  # one weight per row for all groups (a view, no (m, g) copy)
        w = np.broadcast_to(weights[:, None], (m, g))
    else:
        w = np.where(usable, weights[:, None], 0.0)  # (m, g)
    weighted_jac = None
    if block.jacobian is not None and not isinstance(block.jacobian, RowTerms):
        weighted = w[:, :, None] * np.where(usable[:, :, None], block.jacobian, 0.0)
        weighted_jac = weighted.reshape(m, -1)
    if every and n_keys == 1:  # one average: weighted sums as products
        totals = np.full((1, g), weights.sum())
        sums, jac_sums = (weights @ block.values)[None, :], None
        if weighted_jac is not None:
            jac_sums = weighted_jac.sum(axis=0, keepdims=True)
    else:
        totals, sums, jac_sums = _sum_within(
            codes, n_keys, w, np.where(usable, w * block.values, 0.0), weighted_jac
        )
    if isinstance(block.jacobian, RowTerms):  # sums of products, no (m, g, k) array
        jac_sums = block.jacobian.weighted_sums(w, codes, n_keys)
    if jac_sums is not None:
        jac_sums = jac_sums.reshape(n_keys, g, -1).transpose(1, 0, 2).reshape(g * n_keys, -1)
    long_labels = pd.concat([out_labels] * g, ignore_index=True)
    if g > 1:
        group = pd.Categorical(np.repeat(block.groups, n_keys), block.groups)
        long_labels.insert(len(front), "group", group)
    return long_labels, sums.T.reshape(-1), jac_sums, totals.T.reshape(-1)


def means(
    labels: pd.DataFrame, sums: FloatArray, jac_sums: FloatArray | None, totals: FloatArray
) -> Averaged:
    """``sums / totals`` (NaN for a group without usable rows)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        jac = None if jac_sums is None else jac_sums / totals[:, None]
        return labels, sums / totals, jac


# -- what one pass keeps --------------------------------------------------------------------


@dataclass
class _Entry:
    """The sums of one average of the verb (one ``rows.average`` call)."""

    labels: pd.DataFrame
    sums: FloatArray
    jac_sums: FloatArray | None
    totals: FloatArray

    def __add__(self, other: _Entry) -> _Entry:
        labels = pd.concat([self.labels, other.labels], ignore_index=True)
        codes, out_labels = _codes(labels, list(labels.columns), len(labels))
        n_groups = int(codes.max()) + 1 if codes.size else 0
        jac = None
        if self.jac_sums is not None and other.jac_sums is not None:
            jac = np.vstack([self.jac_sums, other.jac_sums])
        sums, jac_sums, totals = _sum_within(
            codes,
            n_groups,
            np.concatenate([self.sums, other.sums]),
            jac,
            np.concatenate([self.totals, other.totals]),
        )
        return _Entry(out_labels, sums, jac_sums, totals)


@dataclass(frozen=True)
class WeightTally:
    """What the check of ``wts=`` needs to know of some rows' weights; adds over chunks.

    Attributes
    ----------
    nonfinite : int
        Missing or infinite weights.
    negative : int
        Negative weights.
    smallest : float
        The smallest finite weight (inf without one).
    total : float
        The sum of the finite weights.
    """

    nonfinite: int = 0
    negative: int = 0
    smallest: float = np.inf
    total: float = 0.0

    @classmethod
    def of(cls, weights: FloatArray) -> WeightTally:
        """The tally of the weights ``weights``."""
        finite = weights[np.isfinite(weights)]
        return cls(
            int(weights.size - finite.size),
            int(np.count_nonzero(finite < 0)),
            float(finite.min()) if finite.size else np.inf,
            float(finite.sum()),
        )

    def __add__(self, other: WeightTally) -> WeightTally:
        return WeightTally(
            self.nonfinite + other.nonfinite,
            self.negative + other.negative,
            min(self.smallest, other.smallest),
            self.total + other.total,
        )

    def problem(self) -> str | None:
        """What is wrong with the weights (None: finite, non-negative, not all zero)."""
        if self.nonfinite:
            return f"{self.nonfinite} missing or infinite values"
        if self.negative:
            return f"{self.negative} negative values (smallest {self.smallest:g})"
        if not self.total > 0:
            return "only zeros"
        return None

    def check(self, what: str) -> None:
        """Raise an error naming ``what`` (the weights) if :meth:`problem` finds one.

        Raises
        ------
        OrdstatsError
        """
        problem = self.problem()
        if problem is not None:
            raise OrdstatsError(
                f"{what} has {problem}; weights must be finite, non-negative and not all zero"
            )


@dataclass
class StreamedSums:
    """The sums of every average of a verb over some chunks, and one of their rows.

    Attributes
    ----------
    entries : list or None
        One per average the verb forms, in the order it forms them (None: no
        chunk was averaged, as every chunk's ``wts=`` had a problem or only
        zeros).
    sample : pandas.DataFrame
        One used row (the verb's final run replays the sums on it).
    """

    entries: list[_Entry] | None
    sample: pd.DataFrame
    #: rows evaluated that the fit cannot estimate (a rank-deficient fit)
    doubtful: int = 0
    #: the chunks' ``wts=`` column (None: no weights column)
    weights: WeightTally | None = None

    def __add__(self, other: StreamedSums | None) -> StreamedSums:
        if other is None:
            return self
        doubtful = self.doubtful + other.doubtful
        weights = _added_tallies(self.weights, other.weights)
        if self.entries is None or other.entries is None:  # a chunk the verb did not run on
            entries = other.entries if self.entries is None else self.entries
            return StreamedSums(entries, self.sample, doubtful, weights)
        if len(other.entries) != len(self.entries):  # the same verb on every chunk
            raise OrdstatsError("chunks gave different sets of averages; refit the model")
        entries = [a + b for a, b in zip(self.entries, other.entries, strict=True)]
        return StreamedSums(entries, self.sample, doubtful, weights)

    __radd__ = __add__


class _Recorder:
    """An averager that keeps each average's sums and gives the chunk's own means."""

    def __init__(self) -> None:
        self.entries: list[_Entry] = []

    def __call__(self, block: Any, rows: Any) -> Averaged:
        out_labels, sums, jac_sums, totals = block_sums(block, rows.weights, rows.by)
        self.entries.append(_Entry(out_labels, sums, jac_sums, totals))
        return means(out_labels, sums, jac_sums, totals)


class _Replay:
    """An averager that gives the means of the streamed sums, in the order they were formed."""

    def __init__(self, entries: list[_Entry]) -> None:
        self.entries = list(entries)

    def __call__(self, *ignored: Any) -> Averaged:
        entry = self.entries.pop(0)
        return means(entry.labels, entry.sums, entry.jac_sums, entry.totals)


# -- the fit as the chunks see it ----------------------------------------------------------------


class _ChunkFit:
    """The fit, with its factor levels standing in for the estimation rows.

    The verbs read a predictor's levels (and nothing else) of ``margins_data``
    when newdata is given; a numeric column is absent, so they use the chunk's
    own (only for the design step of a slope, which cancels).
    """

    def __init__(
        self,
        fit: MarginsFit,
        levels: dict[str, list[Any]],
        summaries: dict[str, dict[str, float]] | None = None,
    ) -> None:
        self.fit = fit
        self.summaries = summaries or {}
        size = max((len(values) for values in levels.values()), default=0)
        self.reference = pd.DataFrame(
            {
                name: pd.Categorical(np.resize(np.array(values, dtype=object), size), values)
                for name, values in levels.items()
                if values
            }
        )

    def with_levels(self, rows: pd.DataFrame) -> pd.DataFrame:
        """``rows`` with factor columns that know all the fit's levels (a chunk may lack some)."""
        factors = {
            name: _with_categories(rows[name], self.reference[name].cat.categories)
            for name in self.reference.columns
            if name in rows.columns
        }
        return rows.assign(**factors) if factors else rows

    def margins_params(self) -> FloatArray:
        return self.fit.margins_params()

    def margins_covariance(self) -> FloatArray:
        return self.fit.margins_covariance()

    def margins_levels(self) -> list[str]:
        return self.fit.margins_levels()

    def margins_types(self) -> tuple[str, ...]:
        return self.fit.margins_types()

    def margins_data(self) -> pd.DataFrame:
        return self.reference

    def margins_variables(self) -> list[str]:
        return self.fit.margins_variables()

    def margins_rows(self, data: pd.DataFrame) -> DesignRows:
        return self.fit.margins_rows(data)

    def margins_term_codings(self) -> list[list[tuple[str, bool]]]:
        return self.fit.margins_term_codings()

    def margins_predict(self, params: FloatArray, rows: DesignRows, type: str) -> Predicted:
        return self.fit.margins_predict(params, rows, type)

    def margins_slope(
        self, params: FloatArray, rows: DesignRows, direction: DesignRows, type: str
    ) -> Predicted:
        return self.fit.margins_slope(params, rows, direction, type)

    def _margins_row_terms(
        self, params: FloatArray, rows: DesignRows, type: str, direction: DesignRows | None = None
    ) -> Predicted | None:
        hook = getattr(self.fit, "_margins_row_terms", None)
        return None if hook is None else cast(Any, hook(params, rows, type, direction))

    def _margins_column_summary(self, name: str) -> dict[str, float] | None:
        """The summary of a numeric column over all rows (from the first pass), if made."""
        return self.summaries.get(name)

    def _margins_estimability(self, data: pd.DataFrame, part: str | None = None) -> Any:
        """The fit's check of what it can estimate at ``data`` (None: it has none)."""
        hook = getattr(self.fit, "_margins_estimability", None)
        return None if hook is None else hook(data, part)

    def _margins_scale_variables(self) -> list[str] | None:
        """The columns of the fit's scale formula (None: it does not say)."""
        hook = getattr(self.fit, "_margins_scale_variables", None)
        return None if hook is None else cast(Any, hook())

    # the fit's optional shortcuts (none: the verbs' general path)

    def _margins_set_terms(self, *args: Any) -> Predicted | None:
        hook = getattr(self.fit, "_margins_set_terms", None)
        return None if hook is None else cast(Any, hook(*args))

    def _margins_linear_columns(self, rows: DesignRows) -> tuple[DesignRows, dict[str, int]]:
        hook = getattr(self.fit, "_margins_linear_columns", None)
        return (rows, {}) if hook is None else cast(Any, hook(rows))

    def _margins_rows_set(
        self, rows: DesignRows, data: pd.DataFrame, name: str, values: Any
    ) -> DesignRows | None:
        hook = getattr(self.fit, "_margins_rows_set", None)
        return None if hook is None else cast(Any, hook(rows, data, name, values))


def _with_categories(column: pd.Series, categories: pd.Index) -> pd.Categorical:
    """``column`` as a Categorical of ``categories``; values outside them missing.

    As ``pd.Categorical(column, categories=...)`` does, without its deprecation
    (pandas 3 warns, and will raise, where values lie outside the categories:
    an unused category of the data that the fit dropped, say).
    """
    values = column.astype(object)
    return pd.Categorical(values.where(values.isin(categories)), categories=categories)


def _added_tallies(a: WeightTally | None, b: WeightTally | None) -> WeightTally | None:
    return a if b is None else b if a is None else a + b


def _weight_tally(rows: pd.DataFrame, wts: Any) -> WeightTally | None:
    """The tally of a chunk's ``wts=`` column (None: no column, or not numbers: the verb says)."""
    if not isinstance(wts, str) or wts not in rows.columns:
        return None
    try:
        return WeightTally.of(np.asarray(rows[wts], dtype=float))
    except (TypeError, ValueError):
        return None


def _chunk_sums(
    rows: pd.DataFrame, verb: Callable[..., Any], fit: _ChunkFit, options: dict[str, Any]
) -> StreamedSums:
    """The per-chunk step: the verb on a chunk's used rows, keeping its averages' sums.

    The chunk's ``wts=`` are tallied, so that a problem is reported once, of
    all rows (:func:`stream_average`); a chunk with a problem, or only zero
    weights (which add nothing), is not averaged.
    """
    tally = _weight_tally(rows, options.get("wts"))
    if tally is not None and tally.problem() is not None:
        return StreamedSums(None, rows.iloc[:1], 0, tally)
    recorder = _Recorder()
    token, doubtful = AVERAGER.set(recorder), DOUBTFUL.set([])
    try:
        verb(fit, fit.with_levels(rows), **options)
        found = sum(DOUBTFUL.get() or [])
    finally:
        AVERAGER.reset(token)
        DOUBTFUL.reset(doubtful)
    return StreamedSums(recorder.entries, rows.iloc[:1], found, tally)


# -- the entry point ---------------------------------------------------------------------------


def _checked_options(
    fit: MarginsFit, levels: dict[str, list[Any]], options: dict[str, Any]
) -> dict[str, Any]:
    """Refuse what needs a whole column before the pass; give predictions' factors their levels."""
    by, wts = options.get("by"), options.get("wts")
    if by is None or by is False:
        raise OrdstatsError(
            "the fitted rows of a model read in chunks (files, Dask, chunksize=) are not in "
            "memory, so there are no per-row results over them: use the avg_ verb (which "
            "streams over the chunks) or pass the rows you want as newdata"
        )
    if wts is not None and not isinstance(wts, str):
        raise OrdstatsError(
            "wts= of an average over rows read in chunks must name a column of the data"
        )
    variables = options.get("variables")
    spec = variables if isinstance(variables, dict) else None
    if options.get("_counterfactual") and variables is not None:
        names = [variables] if isinstance(variables, str) else list(variables)
        chosen = dict(spec or {})
        for name in names:
            if chosen.get(name) is not None:
                continue
            if name not in levels:
                raise OrdstatsError(
                    f"variables: {name!r} is numeric, and its five-number summary needs the "
                    "whole column of rows read in chunks; give its values, e.g. "
                    f"variables={{{name!r}: [lo, hi]}}"
                )
            chosen[name] = levels[name]
        options = dict(options, variables=chosen)
    return {k: v for k, v in options.items() if k != "_counterfactual"}


# -- summaries of whole columns, before the pass (numeric contrasts "sd", "iqr", ...) ----------


def _summary_names(options: dict[str, Any], levels: dict[str, list[Any]]) -> list[str]:
    """The numeric predictors whose contrast needs a summary of the whole column."""
    variables = options.get("variables")
    if not isinstance(variables, dict):
        return []
    return [
        name
        for name, contrast in variables.items()
        if isinstance(contrast, str) and contrast in _SUMMARY_CONTRASTS and name not in levels
    ]


@dataclass
class _Moments:
    """Count, mean, sum of squared deviations, minimum and maximum of columns, over chunks.

    Chunks combine by Chan et al.'s pairwise update, so the SD has no
    cancellation (the in-memory one is also from deviations about the mean).
    """

    n: float
    mean: FloatArray
    m2: FloatArray
    low: FloatArray
    high: FloatArray

    def __add__(self, other: _Moments | None) -> _Moments:
        if other is None or other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        return _Moments(
            n,
            self.mean + delta * (other.n / n),
            self.m2 + other.m2 + delta**2 * (self.n * other.n / n),
            np.minimum(self.low, other.low),
            np.maximum(self.high, other.high),
        )

    __radd__ = __add__


def _numbers(rows: pd.DataFrame, names: list[str]) -> FloatArray:
    return np.column_stack([np.asarray(rows[name], dtype=float) for name in names])


def _moments_pass(rows: pd.DataFrame, names: list[str]) -> _Moments:
    """One chunk's :class:`_Moments` of the columns ``names``."""
    values = _numbers(rows, names)
    if not len(values):
        empty = np.zeros(len(names))
        return _Moments(0.0, empty, empty, empty + np.inf, empty - np.inf)
    mean = values.mean(axis=0)
    m2 = ((values - mean) ** 2).sum(axis=0)
    return _Moments(float(len(values)), mean, m2, values.min(axis=0), values.max(axis=0))


def _bracket_pass(
    rows: pd.DataFrame, names: list[str], chosen: list[int], lo: FloatArray, hi: FloatArray
) -> Any:
    """One chunk's sums for exact order statistics of some columns (effect_rows.bracket_pass)."""
    values = _numbers(rows, [names[c] for c in chosen])
    return bracket_pass(values, np.ones(len(values)), lo, hi)


def _interpolated(low: float, high: float, fraction: float) -> float:
    """``low + (high - low) fraction`` as ``numpy.quantile`` forms it (from the nearer end)."""
    diff = high - low
    return high - diff * (1.0 - fraction) if fraction >= 0.5 else low + diff * fraction


def column_summaries(fit: Any, names: list[str]) -> dict[str, dict[str, float]]:
    """Mean, SD, quartiles, median, minimum and maximum of numeric columns read in chunks.

    One pass for the moments and extremes, then exact quartiles (linear
    interpolation between order statistics, as ``numpy.quantile``) by
    narrowing brackets with histograms (:func:`~ordstats.results.effect_rows.values_by_passes`,
    a few passes).  The same numbers as :func:`~ordstats.results.margins.verbs.numeric_summary`
    of the column in memory, up to the order of the additions.
    """
    if not names:
        return {}
    moments: _Moments = fit._margins_stream(_moments_pass, names)
    n = moments.n
    # the order statistics around positions (n - 1) p of the quartiles (0-based)
    positions = [(n - 1.0) * p for p in (0.25, 0.5, 0.75)]
    ranks = sorted({min(int(np.floor(h)) + step, int(n) - 1) for h in positions for step in (0, 1)})
    columns = [c for c in range(len(names)) for _ in ranks]
    targets = np.array([rank + 1.0 for _ in names for rank in ranks])

    def run(chosen: list[int], lo: FloatArray, hi: FloatArray) -> Any:
        return fit._margins_stream(_bracket_pass, names, [columns[c] for c in chosen], lo, hi)

    found = values_by_passes(
        run,
        moments.low[columns],
        moments.high[columns],
        targets,
        n,
        what="quartiles",
        instead="give the contrast as two values [lo, hi]",
    ).reshape(len(names), len(ranks))
    out = {}
    for c, name in enumerate(names):
        order = dict(zip(ranks, found[c], strict=True))
        quartiles = []
        for h in positions:
            k = int(np.floor(h))
            quartiles.append(_interpolated(order[k], order[min(k + 1, int(n) - 1)], h - k))
        out[name] = {
            "mean": float(moments.mean[c]),
            "sd": float(np.sqrt(moments.m2[c] / (n - 1.0))) if n > 1 else float("nan"),
            "q1": quartiles[0],
            "median": quartiles[1],
            "q3": quartiles[2],
            "min": float(moments.low[c]),
            "max": float(moments.high[c]),
        }
    return out


def newdata_fit(fit: MarginsFit, newdata: Any, options: dict[str, Any]) -> MarginsFit:
    """The fit a verb reads ``newdata`` against: its own levels and column summaries.

    A verb on ``newdata`` reads the estimation rows for a factor's levels (a
    comparison's contrasts) and a numeric column's SD, quartiles or range
    (``"sd"``, ``"iqr"``, ``"minmax"`` contrasts), never ``newdata``'s.  For a
    fit whose rows are read in chunks they come from the fit's encoding and
    from passes over the chunks, as for the averages; a fit that no longer
    holds its rows (pickled, ``remove_data()``) has its levels but refuses
    the column summaries.  A fit with its rows in memory (or other
    ``newdata``: ``None``, ``"mean"``) is returned as it is.

    Raises
    ------
    OrdstatsError
        A contrast needs a summary of a column the fit no longer holds.
    """
    if not isinstance(newdata, pd.DataFrame) or not isinstance(fit, StreamingFit):
        return fit
    levels = fit._margins_factor_levels()
    needed = _summary_names(options, levels)
    if not fit._margins_in_memory():
        return _ChunkFit(fit, levels, column_summaries(fit, needed))
    try:
        fit.margins_data()
    except OrdstatsError as gone:
        if needed:
            contrasts = ", ".join(f"{n!r}: {options['variables'][n]!r}" for n in needed)
            raise OrdstatsError(
                f"the contrasts {{{contrasts}}} are statistics of a column over the estimation "
                "rows, which this fit no longer holds (it was pickled or built from a design, "
                "or remove_data() was called): give each as a number (a gap) or as [lo, hi]"
            ) from gone
        return _ChunkFit(fit, levels)
    return fit


def stream_average(verb: Callable[..., Any], fit: MarginsFit, options: dict[str, Any]) -> Any:
    """Run an averaging verb over the estimation rows of a fit read in chunks (one pass).

    Parameters
    ----------
    verb : callable
        :func:`~ordstats.results.margins.verbs.predictions`, ``comparisons``
        or ``slopes`` (called as ``verb(fit, rows, **options)``).
    fit : MarginsFit
        A fit that is a :class:`StreamingFit` with its rows out of memory.
    options : dict
        The verb's keyword arguments; ``_counterfactual=True`` marks
        ``predictions`` (whose ``variables`` are value grids).

    Returns
    -------
    MarginsTable
        The in-memory verb's table over the same rows.
    """
    assert isinstance(fit, StreamingFit)
    levels = fit._margins_factor_levels()
    options = _checked_options(fit, levels, options)
    summaries = column_summaries(fit, _summary_names(options, levels))
    chunk_fit = _ChunkFit(fit, levels, summaries)
    by = options["by"]
    extra = [by] if isinstance(by, str) else [] if by is True else list(by)
    if isinstance(options.get("wts"), str):
        extra.append(options["wts"])
    known = set(fit.margins_variables())
    columns = tuple(dict.fromkeys(c for c in extra if c not in known and c != "group"))
    # a hypothesis compares the averages, so the chunks need not form it
    per_chunk = dict(options, hypothesis=None)
    total: StreamedSums = fit._margins_stream(
        _chunk_sums, verb, chunk_fit, per_chunk, columns=columns
    )
    if total.weights is not None:  # the in-memory check, of every chunk's weights
        total.weights.check(f"wts={options['wts']!r} (a column of the data)")
    token, doubtful = AVERAGER.set(_Replay(total.entries or [])), DOUBTFUL.set([])
    try:
        table = verb(chunk_fit, chunk_fit.with_levels(total.sample), **dict(options, wts=None))
    finally:
        AVERAGER.reset(token)
        DOUBTFUL.reset(doubtful)
    if total.doubtful:
        warn_doubtful(getattr(verb, "__name__", "the verb"), total.doubtful)
    return _by_columns_as_read(table, total.sample, extra)


def _by_columns_as_read(table: Any, sample: pd.DataFrame, names: list[str]) -> Any:
    """``table`` with its ``by=`` columns of the data's dtypes, as the in-memory verbs give.

    The chunks' factors are made Categoricals of every level (a chunk may lack
    some); a column that is not one in the data is given back its own dtype.
    """
    for name in names:
        if name not in table.columns or name not in sample.columns:
            continue
        dtype = sample[name].dtype
        if not isinstance(dtype, pd.CategoricalDtype) and isinstance(
            table[name].dtype, pd.CategoricalDtype
        ):
            table[name] = table[name].astype(dtype)
    return table


def warn_doubtful(verb: str, n_rows: int, shown: str = "") -> None:
    """Warn that ``n_rows`` rows ``verb`` evaluated are not estimable from a rank-deficient fit.

    R's ``predict`` warns of such "doubtful cases"; emmeans marks them ``nonEst``.
    """
    named = f" ({shown})" if shown else ""
    warnings.warn(
        f"{verb}: {n_rows} row(s) of the data evaluated{named} are not estimable from this "
        "fit: its design dropped aliased columns, and their predictions depend on which one "
        "was dropped (R's predict warns of such doubtful cases; emmeans() marks them nonEst). "
        "Keep to the cells the fitted data cover, or refit without the aliased terms",
        PredictionWarning,
        stacklevel=user_stacklevel(),
    )
