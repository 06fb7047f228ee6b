"""Where a model's rows live, and how its likelihood is evaluated over them.

An :class:`~ordstats.OrdinalModel` holds one evaluator (composition, not a
subclass per data source):

- :class:`InMemoryEvaluator`: the rows are arrays in memory; one evaluation is
  the family's likelihood on them.
- :class:`ChunkedEvaluator`: the rows are read in chunks from files, a
  DataFrame, a pyarrow dataset or a Dask DataFrame (one task per partition, on
  any scheduler).  Each evaluation is one pass of
  :func:`ordstats.data.chunks.arrays_totals` over the chunks' arrays, kept after
  the first pass that builds them (in memory while they fit, then on disk, or
  on the Dask workers: :mod:`ordstats.data.spill`; with the ``chunk_cache``
  option set to a directory, memory stays bounded by the chunk size), and
  the Newton iterations, estimates and covariance are those of the in-memory
  fit.

Both satisfy :class:`Evaluator`, the contract the model and its results rely on.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ordstats._typing import FloatArray
from ordstats.config import is_interactive
from ordstats.core.linalg import (
    ColumnMoments,
    ShiftedBasis,
    ShiftedColumns,
    basis_of_moments,
    shifted_basis,
)
from ordstats.core.links import Link
from ordstats.core.solver import NewtonOptions, NewtonResult, newton
from ordstats.core.thresholds import Structure, threshold_jacobian, threshold_offset
from ordstats.data.chunks import (
    ChunkSpec,
    ChunkSummary,
    ColumnPlan,
    LevelScan,
    PassTotals,
    apply_summary,
    arrays_totals,
    count_missing,
    empty_data,
    fix_levels,
    fixed_side_terms,
    on_arrays,
    reduce_arrays,
    reduce_chunk,
    refuse_no_complete_row,
    skeleton_design,
    terms_without_levels,
)
from ordstats.data.prediction import SOURCE_NOT_KEPT
from ordstats.data.reservoir import (
    Reservoir,
    SampledScan,
    SampleLimits,
    SummaryWithTotals,
    scan_and_sample,
    summarize_arrays_at,
)
from ordstats.data.rows import UsedRows, reduce_model_frame_rows, reduce_used_rows
from ordstats.data.scores import ScoreSums, chunk_score_sums
from ordstats.data.sources import open_source
from ordstats.data.spill import (
    ScanWriter,
    open_disk_spill,
    open_scan_writer,
    scan_and_spill,
    spill_chunk,
)
from ordstats.design import (
    Design,
    DesignOptions,
    categorical_variables,
    formula_variables,
    refuse_repeated_columns,
    side_formulas,
    warn_numbers_gone_astray,
)
from ordstats.design.censored import parse_censored
from ordstats.design.core import unusable_dtype
from ordstats.design.r_functions import is_call
from ordstats.errors import (
    DataError,
    FormulaError,
    NotFittedError,
    SpecificationError,
)
from ordstats.estimation.context import FormulaContext
from ordstats.estimation.last_step import LastStepPredictor
from ordstats.estimation.warm_start import MIN_ROWS as WARM_START_ROWS
from ordstats.estimation.warm_start import (
    MIN_ROWS_PER_LEVEL,
    RESERVOIR_ROWS,
    WarmStart,
    start_from_subsample,
    subsample_size,
)
from ordstats.families import Family
from ordstats.families.cumulative.banded import BandedEvaluation, banded_newton_step
from ordstats.families.cumulative.likelihood import Evaluation, prepare
from ordstats.families.cumulative.sparse_block import SparseBlockEvaluation
from ordstats.families.cumulative.start import initial_params, start_without_scale
from ordstats.families.problem import CLMData, FamilyEvaluation
from ordstats.families.shifted import ShiftedEvaluation

__all__ = [
    "BANDED_MIN_THRESHOLDS",
    "ChunkedEvaluator",
    "DataRemovedEvaluator",
    "Evaluator",
    "InMemoryEvaluator",
    "PassEvaluation",
    "SourceReader",
    "build_chunked",
    "model_jacobian",
    "release_source_cache",
    "separation_check_due",
]

#: Run the separation LP on every fit with at most this many rows; larger data
#: sets are checked only when the fit shows signs of divergence, and only up to
#: ``_SEPARATION_MAX_ROWS`` rows (beyond that the LP costs more than the fit).
_SEPARATION_ALWAYS_ROWS = 5000
_SEPARATION_MAX_ROWS = 200_000
#: A location effect larger than this many standard deviations of its column
#: (on the linear-predictor scale) is a sign of divergence.
_DIVERGENCE_STD_EFFECT = 15.0
#: With more thresholds than this (flexible, no nominal effects) the threshold
#: Jacobian is stored sparse and the Hessian is handled as tridiagonal plus a
#: dense border (:mod:`ordstats.families.cumulative.banded`) unless ``fit(banded=False)``.
BANDED_MIN_THRESHOLDS = 50

IterationCallback = Callable[[int, float, float], None]


class Evaluator(Protocol):
    """What a model needs from the place its rows live.

    Attributes
    ----------
    family : Family
        The family whose likelihood is evaluated.
    problem : object
        The family's prepared problem; for chunked data one with no rows, which
        still gives the parameter layout (``problem.layout``).
    keeps_rows : bool
        Whether the rows are in memory (:attr:`data` is available).
    """

    family: Family
    problem: Any
    keeps_rows: bool

    @property
    def data(self) -> CLMData:
        """The likelihood arrays (raises where the rows are not kept)."""
        ...

    @property
    def nobs(self) -> float:
        """Sum of the weights."""
        ...

    @property
    def n_rows(self) -> int:
        """Rows used in the fit."""
        ...

    @property
    def response_counts(self) -> FloatArray:
        """Weighted count of each response level."""
        ...

    @property
    def has_offset(self) -> bool:
        """Whether any offset is non-zero."""
        ...

    @property
    def has_weights(self) -> bool:
        """Whether any weight differs from one."""
        ...

    def evaluate(self, params: FloatArray, *, banded: bool = False) -> FamilyEvaluation:
        """Negative log-likelihood, gradient and Hessian at ``params``."""
        ...

    def newton(
        self,
        start: FloatArray,
        options: NewtonOptions,
        *,
        callback: IterationCallback | None,
        progress: bool,
        banded: bool,
        initial_hessian: FloatArray | None = None,
    ) -> NewtonResult:
        """Run Newton's method from ``start`` (``initial_hessian``: see :func:`newton`)."""
        ...

    def diverging(self, solution: NewtonResult) -> list[int]:
        """Indices of parameters that diverge because of separation."""
        ...

    def start_params(self) -> FloatArray:
        """The family's default starting values."""
        ...

    def without_location(self) -> Evaluator:
        """The same rows with thresholds alone: no location, nominal or scale effects.

        The null model (offsets kept); the ``df_model`` of its likelihood-ratio
        test counts every effect the model has.
        """
        ...

    def with_family(self, family: Family) -> Evaluator:
        """The same rows and columns for another family object (e.g. another link)."""
        ...

    def reduce_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(arrays, *args)`` summed over the rows' likelihood arrays.

        ``func`` takes a :class:`~ordstats.families.problem.CLMData` and returns
        something that adds up (a number or an array); in memory it sees all
        rows at once, in chunks one chunk at a time.
        """
        ...

    def reduce_internal_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """:meth:`reduce_rows` on the rows in the evaluator's ``basis`` (its centred columns).

        The same as :meth:`reduce_rows` where the evaluator has no basis.
        """
        ...

    def fitted_rows(self) -> UsedRows | None:
        """What selects the rows of a chunk of the source that the fit used (None in memory)."""
        ...


def model_jacobian(threshold: Structure, n_thresholds: int, family: Family) -> Any:
    """Return the threshold Jacobian: a sparse identity for many flexible thresholds."""
    sparse_ok = family.capabilities.banded and threshold == "flexible"
    if sparse_ok and n_thresholds > BANDED_MIN_THRESHOLDS:
        return sp.eye_array(n_thresholds, format="csr")
    return threshold_jacobian(threshold, n_thresholds)


# ---------------------------------------------------------------------------
# rows in memory


class InMemoryEvaluator:
    """The family's likelihood on rows held in memory.

    Parameters
    ----------
    family : Family
    data : CLMData
        The likelihood arrays.
    moments : ColumnMoments, optional
        Means and standard deviations of ``data.X``'s columns if known (the
        design layer's aliasing check computes them); otherwise computed here.
    """

    keeps_rows = True

    @staticmethod
    def fitted_rows() -> None:
        """None: the fitted rows are in memory (see :meth:`ChunkedEvaluator.fitted_rows`)."""
        return None

    def __init__(self, family: Family, data: CLMData, moments: ColumnMoments | None = None) -> None:
        self.family = family
        self._data = data
        self._moments = moments
        self.problem = family.prepare(data)
        #: centred/rescaled columns (x + 1e8, x * 1e-200): the likelihood is
        #: evaluated and solved in the well-conditioned basis, reported in the user's
        self.basis, self._internal = self._shifted_problem()

    def _shifted_problem(self) -> tuple[ShiftedBasis | None, Any]:
        """The basis and problem on transformed columns, when some column needs them."""
        data, layout = self._data, self.problem.layout
        if not self.family.capabilities.latent_variable or layout.n_beta == 0:
            return None, None
        basis = shifted_basis(
            data.X, data.threshold_jacobian, layout.alpha, layout.beta.start, self._moments
        )
        if basis is None:
            return None, None
        X = ShiftedColumns.of(basis, layout.beta.start).apply(data.X)
        internal = self.family.prepare(replace(data, X=X))
        # the change of basis must leave the likelihood unchanged: checked at the
        # start values with effects of order one on the linear predictor
        q = basis.to_internal(self.family.initial_params(self.problem))
        q[basis.beta] = 0.5 / np.maximum(1.0, np.abs(basis.shift) / basis.scale)
        direct = self.family.evaluate(self.problem, basis.to_external(q)).nll
        shifted = self.family.evaluate(internal, q).nll
        if not np.isclose(direct, shifted, rtol=1e-9, atol=1e-9):
            return None, None
        return basis, internal

    @classmethod
    def from_design(
        cls,
        design: Design,
        family: Family,
        jacobian: Any,
        threshold_offset: FloatArray | None = None,
    ) -> InMemoryEvaluator:
        """Build the likelihood arrays of ``design`` for ``family`` (fixed cut-points ``c``)."""
        n = len(design.response.codes)
        data = CLMData(
            y=design.response.codes,
            n_levels=len(design.response.levels),
            X=design.location.matrix,
            weights=design.weights,
            offset=design.offset,
            link=family.link,
            threshold_jacobian=jacobian,
            nominal=design.nominal.matrix if design.nominal else np.empty((n, 0)),
            scale=design.scale.matrix if design.scale else np.empty((n, 0)),
            threshold_offset=threshold_offset,
            y_low=design.response.lower_codes,
            scale_offset=design.scale_offset,
        )
        return cls(family, data, design.location.moments)

    @property
    def data(self) -> CLMData:
        """The likelihood arrays."""
        return self._data

    @property
    def nobs(self) -> float:
        """Sum of the weights (R's ``nobs``)."""
        return float(self._data.weights.sum())

    @property
    def n_rows(self) -> int:
        """Rows used in the fit."""
        return self._data.n_obs

    @property
    def response_counts(self) -> FloatArray:
        """Weighted count of each response level."""
        data = self._data
        return np.bincount(data.y, weights=data.weights, minlength=data.n_levels).astype(float)

    @property
    def has_offset(self) -> bool:
        """Whether any offset is non-zero."""
        return bool(np.any(self._data.offset))

    @property
    def has_weights(self) -> bool:
        """Whether any weight differs from one."""
        return bool(np.any(self._data.weights != 1.0))

    def evaluate(self, params: FloatArray, *, banded: bool = False) -> FamilyEvaluation:
        """Negative log-likelihood, gradient and Hessian at ``params``.

        With ``banded=True`` the Hessian is a
        :class:`~ordstats.families.cumulative.banded.BandedHessian`, which only
        the banded Newton step reads.
        """
        if self.basis is not None:
            internal = self.family.evaluate(self._internal, self.basis.to_internal(params))
            return ShiftedEvaluation(internal, self.basis)
        evaluation: FamilyEvaluation = self.family.evaluate(self.problem, params)
        if not banded:
            return evaluation
        assert isinstance(evaluation, Evaluation)  # banded: the cumulative family only
        if self._data.censored:  # interval-censored rows: the threshold block may be sparse
            return cast(FamilyEvaluation, SparseBlockEvaluation(evaluation))
        return cast(FamilyEvaluation, BandedEvaluation(evaluation))

    def newton(
        self,
        start: FloatArray,
        options: NewtonOptions,
        *,
        callback: IterationCallback | None = None,
        progress: bool = False,
        banded: bool = False,
        initial_hessian: FloatArray | None = None,
    ) -> NewtonResult:
        """Run Newton's method from ``start`` (``progress`` is not used in memory).

        With a :attr:`basis` the iterations run in its internal parameters,
        where the Hessian is well conditioned, and the result is mapped back
        (an ``initial_hessian``, in the external parameters, is then not taken).
        """
        if self.basis is not None:
            if initial_hessian is not None:
                raise ValueError("initial_hessian is not taken with a shifted basis")
            basis, problem = self.basis, self._internal
            result = newton(
                lambda q: self.family.evaluate(problem, q),
                basis.to_internal(start),
                options,
                callback,
            )
            self.family.release_workspace(problem, result.evaluation)
            return replace(
                result,
                x=basis.to_external(result.x),
                evaluation=ShiftedEvaluation(result.evaluation, basis),
            )
        result = newton(
            lambda x: self.evaluate(x, banded=banded),
            start,
            options,
            callback,
            linear_solve=banded_newton_step if banded else None,
            initial_hessian=initial_hessian,
        )
        # the fitted model keeps the final evaluation, not the fit's work arrays
        self.family.release_workspace(self.problem, result.evaluation)
        return result

    def start_params(self) -> FloatArray:
        """The family's default starting values."""
        return self.family.initial_params(self.problem)

    def diverging(self, solution: NewtonResult) -> list[int]:
        """Indices of the parameters that diverge because of separation, if any."""
        data, layout = self._data, self.problem.layout
        n_rows = data.n_obs
        if layout.n_params == layout.n_alpha or n_rows > _SEPARATION_MAX_ROWS:
            return []  # beyond _SEPARATION_MAX_ROWS the LP costs more than the fit
        # the design's column moments when the aliasing check left them (no pass over X)
        spread = self._moments.sd if self._moments is not None else data.X.std(axis=0)
        with np.errstate(over="ignore", under="ignore"):  # x * 1e200: the spread is inf
            effect = np.abs(solution.x[layout.beta]) * spread
        if self.basis is not None:  # the spread in the basis where the fit was solved
            internal = np.abs(self.basis.to_internal(solution.x)[layout.beta])
            effect = internal * self._internal.data.X.std(axis=0)
        if not separation_check_due(n_rows, effect, solution.converged):
            return []
        # the LP on the shifted columns (x + 1e8 would separate to rounding): the same
        # span, so the same separation, with the same positions of the location effects
        problem = self.problem if self.basis is None else self._internal
        return list(self.family.diverging_parameters(problem))

    def without_location(self) -> InMemoryEvaluator:
        """The same rows with thresholds alone (offsets kept)."""
        none = np.empty((self.n_rows, 0))
        return InMemoryEvaluator(self.family, replace(self._data, X=none, nominal=none, scale=none))

    def with_family(self, family: Family) -> InMemoryEvaluator:
        """The same rows for another family object (e.g. with another link)."""
        return InMemoryEvaluator(family, replace(self._data, link=family.link))

    def reduce_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(arrays, *args)`` on all rows."""
        return func(self._data, *args)

    def reduce_internal_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(arrays, *args)`` on all rows, with the :attr:`basis`'s columns if any."""
        return func(self._data if self.basis is None else self._internal.data, *args)


def separation_check_due(n_rows: int, effect: FloatArray, converged: bool) -> bool:
    """Whether a fit's separation linear programme is worth running.

    Always on at most ``_SEPARATION_ALWAYS_ROWS`` rows; on more, only where
    the fit shows signs of divergence (it did not converge, or an effect is
    over ``_DIVERGENCE_STD_EFFECT`` standard deviations of its column:
    ``effect`` is ``|beta| * sd(x)``); never beyond ``_SEPARATION_MAX_ROWS``.
    """
    if n_rows > _SEPARATION_MAX_ROWS:
        return False
    return shows_divergence(effect, converged) or n_rows <= _SEPARATION_ALWAYS_ROWS


def shows_divergence(effect: FloatArray, converged: bool) -> bool:
    """Whether a fit did not converge or has an effect over ``_DIVERGENCE_STD_EFFECT`` SDs.

    ``effect`` is ``|beta| * sd(x)`` per location column.
    """
    return (not converged) or bool(np.any(effect > _DIVERGENCE_STD_EFFECT))


# ---------------------------------------------------------------------------
# rows read in chunks


class SourceReader:
    """Reads passes over a data source, counts them, and keeps the decoded chunks.

    Parameters
    ----------
    source : ArrowSource, FrameSource, DaskSource or SparkSource

    Attributes
    ----------
    n_passes : int
        Passes over the rows (from the source or the store).
    n_reads : int
        Those that read the source.
    store : DiskSpill, DaskArrays or None
        The chunks' arrays kept by the first pass that built them
        (:mod:`ordstats.data.spill`).
    """

    def __init__(self, source: Any) -> None:
        self.source = source
        self.n_passes = 0
        self.n_reads = 0
        #: the random subsample of the first pass (the warm start's rows), if kept
        self.sample: Reservoir | None = None
        self.store: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # results travel to Dask workers for prediction; the source stays behind
        return {**self.__dict__, "source": None, "sample": None, "store": None}

    def read_pass(self, func: Callable[..., Any], *args: Any) -> Any:
        """Map ``func`` over the chunks and add up the results (one pass)."""
        if self.source is None:
            raise NotFittedError(SOURCE_NOT_KEPT)
        self.n_passes += 1
        self.n_reads += 1
        plan = args[0] if isinstance(args[0], ColumnPlan) else args[0].plan
        return self.source.map_reduce(func, *args, columns=plan.read_columns)

    def read_arrays(self, func: Callable[..., Any], spec: ChunkSpec, *args: Any) -> Any:
        """One pass of ``func(arrays, spec, *args)`` over the chunks' arrays (None: no rows).

        From the store where it holds the arrays ``spec`` builds, otherwise
        from the source.
        """
        store = self.store
        if store is not None and store.serves(spec):
            self.n_passes += 1
            return store.map_reduce(func, spec, *args)
        return self.read_pass(on_arrays, spec, func, *args)

    def keep_arrays(
        self, spec: ChunkSpec, n_rows: int, func: Callable[..., Any], *args: Any
    ) -> Any:
        """:meth:`read_arrays` that also keeps the arrays in a store where it can.

        ``n_rows`` (the rows of the source) sizes the store: on local disk
        for sources read in this process, in the workers' memory for Dask on
        a cluster, none where they would not fit or the ``chunk_cache``
        option is off.
        """
        if self.store is not None and self.store.serves(spec):  # written by the first pass
            return self.read_arrays(func, spec, *args)
        self.drop_store()
        source = self.source
        if getattr(source, "reads_locally", False):
            spill = open_disk_spill(spec, n_rows)
            if spill is not None:
                try:
                    total = self.read_pass(spill_chunk, spec, spill, func, *args)
                except BaseException:
                    spill.close()
                    raise
                spill.finish()
                self.store = spill
                return total
        elif hasattr(source, "keep_arrays") and source is not None:
            self.store = source.keep_arrays(spec, n_rows)
            if self.store is not None:
                self.n_reads += int(self.store.read_source)  # False: from the first pass's frames
                try:
                    return self.read_arrays(func, spec, *args)
                except BaseException:
                    self.drop_store()
                    raise
        return self.read_arrays(func, spec, *args)

    def keep_store_for(self, spec: ChunkSpec) -> None:
        """Drop the store unless it serves ``spec`` (the fit's final one)."""
        if self.store is not None and not self.store.serves(spec):
            self.drop_store()

    def drop_store(self) -> None:
        """Remove the kept arrays (files, or the workers' copies)."""
        if self.store is not None:
            self.store.close()
        self.store = None


class PassEvaluation:
    """One pass over the data: negative log-likelihood, gradient and Hessian.

    Parameters
    ----------
    totals : PassTotals or None
        None when no chunk had usable rows.
    link : Link
        The model's link (what results read as the link at the estimates).
    complete : callable, optional
        For totals without a Hessian (a pass that evaluated the gradient
        alone): makes a pass with it, run the first time :attr:`hessian` is read.
    """

    #: whether the evaluation comes from the quadratic model of the last pass's
    #: (:mod:`ordstats.estimation.last_step`), not from a pass of its own
    predicted = False

    def __init__(
        self,
        totals: PassTotals | None,
        link: Link,
        complete: Callable[[], PassTotals | None] | None = None,
    ) -> None:
        self.link = link
        if totals is None:
            raise DataError("no chunk has usable rows")
        self.nll = float(totals.nll) if np.isfinite(totals.nll) else np.inf
        self.gradient = totals.gradient
        self._hessian = totals.hessian
        self._complete = complete
        self.n_rows = totals.n_rows

    @property
    def has_hessian(self) -> bool:
        """Whether the Hessian is at hand (reading :attr:`hessian` otherwise costs a pass)."""
        return self._hessian is not None

    @property
    def hessian(self) -> Any:
        """The Hessian's sums (made by a pass of their own if this pass did not make them)."""
        if self._hessian is None:
            totals = self._complete() if self._complete is not None else None
            if totals is None or totals.hessian is None:
                raise RuntimeError("this pass evaluated no Hessian")  # pragma: no cover
            self._hessian = totals.hessian
        return self._hessian

    @hessian.setter
    def hessian(self, value: Any) -> None:
        self._hessian = value

    def observation_scores(self) -> FloatArray:
        """Not available: the rows of chunked data are not kept."""
        raise NotFittedError(
            "per-observation scores need the rows in memory; a chunked fit keeps only sums"
        )

    @property
    def log_prob(self) -> FloatArray:
        """Not available: the rows of chunked data are not kept."""
        raise NotFittedError(
            "per-row log-probabilities need the rows in memory; a chunked fit keeps only sums"
        )


class ChunkedEvaluator:
    """The cumulative likelihood summed chunk by chunk over data read at every pass.

    Parameters
    ----------
    family : Family
        The cumulative family (the only one that streams so far).
    source : ArrowSource, FrameSource or DaskSource
        Where the rows are read from.
    spec : ChunkSpec
        Turns any chunk into arrays (same columns and levels for all chunks).
    summary : ChunkSummary
        Rows used, response counts and more from the summary pass.

    Attributes
    ----------
    n_passes : int
        Passes over the data so far (levels, summary, and one per evaluation).
    """

    keeps_rows = False

    def __init__(
        self, family: Family, reader: SourceReader, spec: ChunkSpec, summary: ChunkSummary
    ) -> None:
        self.family = family
        self.reader = reader
        self.spec = spec
        self.summary = summary
        self.problem = prepare(empty_data(spec))
        #: the warm start fitted before the summary pass and the sums that pass made at it
        self.first_evaluation: tuple[WarmStart, PassTotals] | None = None
        #: centred/rescaled location columns (x + 1e7): the passes evaluate the
        #: likelihood in this basis's internal parameters, as in memory
        self.basis: ShiftedBasis | None = None
        self._internal_spec = spec
        self._moments: ColumnMoments | None = None

    def use_shifted_basis(self, moments: ColumnMoments) -> None:
        """Evaluate and solve in the basis that centres the badly placed columns, if any.

        Parameters
        ----------
        moments : ColumnMoments
            Means and standard deviations of the location columns (all rows used).
        """
        self._moments = moments
        layout = self.problem.layout
        if not self.family.capabilities.latent_variable or layout.n_beta == 0:
            return
        basis = basis_of_moments(moments, self.spec.jacobian, layout.alpha, layout.beta.start)
        if basis is None:
            return
        shifted = ShiftedColumns.of(basis, layout.beta.start)
        self.basis, self._internal_spec = basis, replace(self.spec, shifted=shifted)
        # the summary pass's sums at the warm start are in the user's parameters, where
        # the Hessian of such columns is singular to rounding: the first Newton pass
        # evaluates the start again, in the basis
        self.first_evaluation = None

    @property
    def source(self) -> Any:
        """Where the rows are read from (None after unpickling)."""
        return self.reader.source

    @property
    def n_passes(self) -> int:
        """Passes over the data so far (levels, summary, and one per evaluation)."""
        return self.reader.n_passes

    @property
    def n_reads(self) -> int:
        """Those of :attr:`n_passes` that read the source (the others read the kept chunks)."""
        return self.reader.n_reads

    @property
    def data(self) -> CLMData:
        """Not available: the rows are read at each pass."""
        raise NotFittedError(
            "a chunked model keeps no rows in memory; use its summaries (nobs, "
            "response_counts) or read the data yourself"
        )

    @property
    def nobs(self) -> float:
        """Sum of the weights."""
        return float(self.summary.sum_weights)

    @property
    def n_rows(self) -> int:
        """Rows used in the fit."""
        return int(self.summary.n_used)

    @property
    def response_counts(self) -> FloatArray:
        """Weighted count of each response level."""
        return np.asarray(self.summary.counts, dtype=float)

    @property
    def has_offset(self) -> bool:
        """Whether any offset is non-zero."""
        return bool(self.summary.any_offset)

    @property
    def has_weights(self) -> bool:
        """Whether any weight differs from one."""
        return bool(self.summary.non_unit_weights)

    def evaluate(self, params: FloatArray, *, banded: bool = False) -> FamilyEvaluation:
        """One pass over the data: log-likelihood, gradient and Hessian at ``params``.

        At the warm start the summary pass has made that evaluation already.
        """
        if self.basis is not None:
            internal = self._internal_evaluation(self.basis.to_internal(params))
            return cast(FamilyEvaluation, ShiftedEvaluation(internal, self.basis))
        first = self.first_evaluation
        if first is not None and not banded and np.array_equal(params, first[0].params):
            point = np.array(params, dtype=float)
            return PassEvaluation(
                first[1],
                self.spec.link,
                lambda: self.reader.read_arrays(arrays_totals, self.spec, point),
            )
        totals = self.reader.read_arrays(arrays_totals, self.spec, params, banded)
        return PassEvaluation(totals, self._link_at(params))

    def _internal_evaluation(self, internal: FloatArray) -> FamilyEvaluation:
        """One pass at the internal parameters ``q`` of :attr:`basis`, in ``q``."""
        totals = self.reader.read_arrays(arrays_totals, self._internal_spec, internal)
        return cast(FamilyEvaluation, PassEvaluation(totals, self._link_at(internal)))

    def _link_at(self, params: FloatArray) -> Link:
        """The link at ``params``: a flexible link carries its ``lambda``."""
        layout, link = self.problem.layout, self.spec.link
        if not layout.n_lambda:
            return link
        lam = float(np.asarray(params)[layout.lam][0])
        return link.with_lambda(lam) if link.in_domain(lam) else link  # type: ignore[attr-defined]

    def newton(
        self,
        start: FloatArray,
        options: NewtonOptions,
        *,
        callback: IterationCallback | None = None,
        progress: bool = True,
        banded: bool = False,
        initial_hessian: FloatArray | None = None,
    ) -> NewtonResult:
        """Run Newton's method, one pass per evaluation (the last check predicted if certain).

        On 20,000 rows or more (where the warm start is automatic), the check
        pass after the last step is skipped where Newton's quadratic convergence
        certifies it (:mod:`ordstats.estimation.last_step`).  With a :attr:`basis`
        the iterations run in its internal parameters and the result is mapped
        back, as in memory (an ``initial_hessian`` is then not taken).
        """
        basis = self.basis
        if basis is not None:
            banded, initial_hessian, start = False, None, basis.to_internal(start)
        with PassProgress(enabled=progress and is_interactive()) as bar:

            def one_pass(x: FloatArray) -> FamilyEvaluation:
                evaluation = (
                    self.evaluate(x, banded=banded)
                    if basis is None
                    else self._internal_evaluation(x)
                )
                bar.tick(evaluation)
                return evaluation

            # on many rows the last step's check pass is predicted where Newton's
            # convergence allows; fewer rows are cheap to check with a pass
            shortcut = not banded and self.n_rows >= WARM_START_ROWS
            objective = LastStepPredictor(one_pass, options) if shortcut else one_pass

            result = newton(
                objective,
                start,
                options,
                callback,
                linear_solve=banded_newton_step if banded else None,
                initial_hessian=initial_hessian,
            )
        if basis is None:
            return result
        return replace(
            result,
            x=basis.to_external(result.x),
            evaluation=ShiftedEvaluation(result.evaluation, basis),
        )

    def start_params(self) -> FloatArray:
        """Marginal thresholds and zero effects, from the response counts.

        With scale effects, the other parameters start at the fit without them
        (passes with the scale effects held at zero), as in memory.
        """
        summary = self.summary
        mean_offset = summary.offset_sum / summary.sum_weights if summary.sum_weights else 0.0
        start = initial_params(self.problem, counts=self.response_counts, mean_offset=mean_offset)
        if self.problem.layout.n_zeta:
            start = start_without_scale(self.evaluate, self.problem.layout, start)
        return start

    def diverging(self, solution: NewtonResult) -> list[int]:
        """Indices of the parameters that diverge because of separation, if any.

        Checked where the fit shows signs of divergence (it did not converge,
        or an effect is over ``_DIVERGENCE_STD_EFFECT`` standard deviations of
        its column) on at most ``_SEPARATION_MAX_ROWS`` rows: one more pass
        gathers the rows for the separation LP, as in memory.
        """
        layout = self.problem.layout
        if layout.n_params == layout.n_alpha or self.n_rows > _SEPARATION_MAX_ROWS:
            return []
        effect = np.zeros(layout.n_beta)
        if self._moments is not None:
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                effect = np.abs(solution.x[layout.beta]) * self._moments.sd
        if not shows_divergence(effect, solution.converged):
            return []
        # in the basis's columns where there is one (x + 1e8 would separate to rounding):
        # the same span, so the same separation, with the location effects in place
        rows = CLMData.joined(self.reduce_internal_rows(_in_a_list))
        return list(self.family.diverging_parameters(prepare(rows)))

    def with_family(self, family: Family) -> ChunkedEvaluator:
        """The same source and columns for another family object (e.g. another link)."""
        _check_streamable(family)
        spec = replace(self.spec, link=family.link)
        return self._with_same_basis(ChunkedEvaluator(family, self.reader, spec, self.summary))

    def with_location_columns(self, kept: list[int]) -> ChunkedEvaluator:
        """The same rows with only the location columns at positions ``kept``."""
        terms = replace(self.spec.terms, names=[self.spec.terms.names[j] for j in kept])
        other = ChunkedEvaluator(
            self.family, self.reader, replace(self.spec, terms=terms), self.summary
        )
        if self._moments is not None:
            other.use_shifted_basis(self._moments.take(kept))
        return other

    def dichotomized(self, cut: int) -> ChunkedEvaluator:
        """The same rows with the binary response ``Y > level cut`` (flexible threshold)."""
        counts = self.summary.counts
        spec = replace(
            self.spec,
            binary_cut=cut,
            jacobian=model_jacobian("flexible", 1, self.family),
            threshold_offset=None,
        )
        summary = replace(
            self.summary, counts=np.array([counts[: cut + 1].sum(), counts[cut + 1 :].sum()])
        )
        return self._with_same_basis(ChunkedEvaluator(self.family, self.reader, spec, summary))

    def with_censored_levels(self, levels: Any, labels: list[str]) -> ChunkedEvaluator:
        """The same rows with a censored response coded by other levels (flexible thresholds).

        Parameters
        ----------
        levels : CensoredLevels
            Other innermost intervals of this response's as the levels
            (``CensoredLevels.with_cells``).
        labels : list of str
            Their labels.

        The chunks are coded again (the kept arrays hold this spec's codes); the
        level counts behind the start values are those of the intervals that were
        levels, with a small share for the others.
        """
        old, kept = self.spec.censoring.kept_cells, levels.kept_cells
        counts = np.zeros(kept.size)
        counts[old] = self.summary.counts
        counts = counts[kept]
        counts = np.where(counts > 0, counts, 1e-3 * counts.sum() / counts.size)
        spec = replace(
            self.spec,
            censoring=levels,
            level_codes={label: j for j, label in enumerate(labels)},
            jacobian=model_jacobian("flexible", len(labels) - 1, self.family),
        )
        summary = replace(self.summary, counts=counts)
        return self._with_same_basis(ChunkedEvaluator(self.family, self.reader, spec, summary))

    def _with_same_basis(self, other: ChunkedEvaluator) -> ChunkedEvaluator:
        """``other`` (the same rows) evaluated in this evaluator's basis, if it has one."""
        if self._moments is not None:
            other.use_shifted_basis(self._moments)
        return other

    def reduce_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(arrays, *args)`` summed over the chunks (one pass)."""
        return self._reduce(self.spec, func, *args)

    def reduce_internal_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """:meth:`reduce_rows` with the :attr:`basis`'s columns, if any."""
        return self._reduce(self._internal_spec, func, *args)

    def _reduce(self, spec: ChunkSpec, func: Callable[..., Any], *args: Any) -> Any:
        total = self.reader.read_arrays(reduce_arrays, spec, func, *args)
        if total is None:
            raise DataError("no chunk has usable rows")
        return total

    def subsample(self, size: int) -> tuple[CLMData, bool] | None:
        """Likelihood arrays of the first pass's random subsample (for the warm start).

        Parameters
        ----------
        size : int
            Rows wanted (each response level is topped up to a few rows).

        Returns
        -------
        (CLMData, topped_up) or None
            None when no subsample was kept (an unpickled model) or it has no
            usable rows; ``topped_up`` says whether some level got extra rows.
        """
        sample = self.reader.sample
        if sample is None or not len(sample):
            return None
        rows, topped_up = sample.draw(size)
        data: CLMData | None = reduce_chunk(rows, self.spec, _the_arrays)
        return None if data is None else (data, topped_up)

    def score_sums(self, params: FloatArray, groups: str | None = None) -> ScoreSums:
        """One pass: the score sums of a sandwich covariance at ``params``.

        ``sum_i w_i s_i s_i'`` over the rows used and, with ``groups`` (a
        column of cluster labels), the score sums of each cluster
        (:mod:`ordstats.data.scores`).  With a :attr:`basis`, the scores are
        those of its internal parameters (where the bread is well conditioned).
        """
        spec = self._internal_spec
        if self.basis is not None:
            params = self.basis.to_internal(params)
        if groups is not None:
            spec = replace(spec, plan=replace(spec.plan, extra=(groups,)))
        sums: ScoreSums = self.reader.read_pass(chunk_score_sums, spec, params, groups)
        return sums

    def reduce_frames(
        self,
        func: Callable[..., Any],
        *args: Any,
        columns: tuple[str, ...] = (),
        model_frame: bool = False,
    ) -> Any:
        """``func(rows, *args)`` summed over the chunks (one pass), ``rows`` a chunk's used rows.

        ``rows`` is a DataFrame of the rows the fit used, with the model's
        columns and ``columns`` (e.g. a ``by=`` column of the margins);
        ``model_frame``: with the complete rows of zero weight, as R's model frame.
        """
        source = self.source
        if source is None:
            raise NotFittedError(SOURCE_NOT_KEPT)
        missing = [c for c in columns if c not in source.columns]
        if missing:
            raise DataError(
                f"{', '.join(map(repr, missing))} is not a column of the data the model was "
                f"fitted on (columns: {', '.join(map(repr, source.columns))})"
            )
        self.reader.n_passes += 1
        read = list(dict.fromkeys([*self.spec.plan.read_columns, *columns]))
        reducer = reduce_model_frame_rows if model_frame else reduce_used_rows
        return source.map_reduce(reducer, self.spec, func, *args, columns=read)

    def fitted_rows(self) -> UsedRows:
        """Selects the rows of any chunk of the source that the fit used."""
        return UsedRows(self.spec)

    def without_location(self) -> ChunkedEvaluator:
        """The same source with thresholds alone (offsets kept)."""
        terms = replace(self.spec.terms, names=[])
        spec = replace(self.spec, terms=terms, nominal=None, scale=None)
        return ChunkedEvaluator(self.family, self.reader, spec, self.summary)


def _factors_seen_later(
    scanned: SampledScan, plan: ColumnPlan, scan: LevelScan
) -> tuple[ColumnPlan, LevelScan]:
    """Add the columns that hold text in some chunk (but not the first) to the factors.

    A Dask partition (or a chunk of a DataFrame) whose text column has only
    missing values has a number type, so the first chunk may not show that
    the column is a factor.
    """
    late = sorted(set(scanned.text) - set(plan.factors))
    if not late:
        return plan, scan
    mixed = [c for c in late if c in scanned.numbers]
    if mixed:
        raise DataError(
            f"the column(s) {', '.join(map(repr, mixed))} hold numbers in some chunks or "
            "partitions and text in others; store each column with one type"
        )
    values = {**scan.values, **{c: scanned.text[c] for c in late}}
    return replace(plan, factors=sorted([*plan.factors, *late])), replace(scan, values=values)


def _in_a_list(data: CLMData) -> list[CLMData]:
    """A chunk's likelihood arrays in a list: the chunks' lists add up to all of them."""
    return [data]


def _the_arrays(data: CLMData) -> CLMData:
    """A chunk's likelihood arrays as they are (for :func:`reduce_chunk`)."""
    return data


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _column_plan(
    source: Any, response: str, variables: set[str], weights: str | None, offset: str | None
) -> ColumnPlan:
    columns = list(source.columns)
    roles = (("response", response), ("weights column", weights), ("offset column", offset))
    if response not in columns and is_call(response) and parse_censored(response) is None:
        raise FormulaError(
            f"the response {response!r} is an expression; with data read in chunks the "
            "response must be a column: store it as a column first (an ordered column, or "
            "numbers with levels=[...])"
        )
    for role, name in roles:
        if name is not None and name not in columns:
            close = difflib.get_close_matches(name, columns, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise FormulaError(
                f"the {role} {name!r} is not a column of the data.{hint}{_one_column_hint(columns)}"
            )
    used = [response, *sorted(v for v in variables if v in columns)]
    refuse_repeated_columns(columns, [*used, *(c for c in (weights, offset) if c is not None)])
    return ColumnPlan(response=response, columns=used, factors=[], weights=weights, offset=offset)


def _censored_bounds(source: Any, response: str) -> tuple[str, str] | None:
    """The bound columns of a response ``Censored(lower, upper)`` read in chunks, or None."""
    bounds = parse_censored(response)
    if bounds is None:
        return None
    if hasattr(source, "check_response"):  # Spark
        raise SpecificationError(
            "a censored response (Censored(lower, upper)) is not available for Spark data "
            "yet; read the data in chunks from files or a DataFrame, or load it into memory"
        )
    missing = [b for b in bounds if b.strip("`") not in list(source.columns)]
    if missing:
        raise FormulaError(
            f"with data read in chunks, the bounds of {response!r} must be columns of the data "
            f"({', '.join(map(repr, missing))} is not): add the bound as a column (e.g. upper = "
            "time where the event was seen, inf where it was censored)"
        )
    lower, upper = (b.strip("`") for b in bounds)
    return lower, upper


def _one_column_hint(columns: list[str]) -> str:
    """What to do when a CSV file was read as one column named like ``a;b;c``."""
    if len(columns) != 1 or not any(mark in columns[0] for mark in ";\t|"):
        return ""
    return (
        f" The data have one column, {columns[0][:60]!r}: a CSV file read in chunks must be "
        "comma-separated; read another separator with pandas (pd.read_csv(path, sep=';')) "
        "and fit the DataFrame, or pass a pyarrow dataset with its parse options"
    )


def _check_streamable(family: Family) -> None:
    if not family.capabilities.chunked:
        raise SpecificationError(
            f"the {family.name!r} family is not available for data read in chunks yet; "
            "fit a cumulative link model, or load the data into memory"
        )


def _caller_arrays_error(names: list[str]) -> FormulaError:
    return FormulaError(
        f"the formula uses {', '.join(map(repr, names))} from the calling scope, an array "
        "or Series with one value per row; data read in chunks take every variable from "
        "their own columns: add it to the data as a column"
    )


def _refuse_rounded_integers(values: list[Any], name: str) -> None:
    """Refuse response levels that a CSV reader turned from integers into floats.

    pyarrow reads a CSV column of integers as ``int64`` unless a value is
    beyond its range (``2**63`` or more), and then as floats, whose spacing
    there (2048) merges distinct labels.
    """
    limit = 2.0**63
    if any(isinstance(v, float) and abs(v) >= limit for v in values):
        raise DataError(
            f"the response {name!r} holds whole numbers of 2**63 or more, which reading a CSV "
            "file in chunks stores as floating-point numbers: labels closer than about 2000 "
            "would merge. Store the response as text and pass levels=[...] (lowest first), "
            "or as integers in a Parquet file, or read the CSV with pandas (uint64) and fit "
            "it in memory"
        )


def build_chunked(
    formula: str,
    data: Any,
    *,
    family: Family,
    threshold: Structure,
    design_options: DesignOptions,
    weights: Any,
    offset: Any,
    nominal: Any,
    scale: Any,
    context: Any,
    chunksize: int | None,
) -> tuple[Design, ChunkedEvaluator]:
    """Describe chunked data (two passes: levels, then a summary) and its evaluator.

    Parameters are those of :meth:`ordstats.OrdinalModel.from_formula`;
    ``weights`` and ``offset`` must be column names.  Families other than the
    cumulative are not available for chunked data yet.

    Returns
    -------
    design : Design
        The design without its rows (names, levels, formula).
    evaluator : ChunkedEvaluator
    """
    _check_streamable(family)
    for role, value in (("weights", weights), ("offset", offset)):
        if value is not None and not isinstance(value, str):
            raise DataError(
                f"with data read in chunks, {role} must name a column; got {type(value).__name__}"
            )
    source = open_source(data, chunksize)
    if hasattr(source, "begin_fit"):  # Spark: the passes of this fit may keep a cache
        source.begin_fit()
    try:
        return _describe_source(
            formula,
            source,
            family=family,
            threshold=threshold,
            design_options=design_options,
            weights=weights,
            offset=offset,
            nominal=nominal,
            scale=scale,
            context=context,
        )
    except BaseException:
        release_source_cache(source)
        raise


def release_source_cache(source: Any) -> None:
    """Let a data source delete what it kept for a fit (a Spark fit's partition cache)."""
    release = getattr(source, "release_cache", None)
    if release is not None:
        release()


def _describe_source(
    formula: str,
    source: Any,
    *,
    family: Family,
    threshold: Structure,
    design_options: DesignOptions,
    weights: str | None,
    offset: str | None,
    nominal: Any,
    scale: Any,
    context: Any,
) -> tuple[Design, ChunkedEvaluator]:
    """:func:`build_chunked` on an opened source."""
    response, variables = formula_variables(formula)
    sides, side_variables = side_formulas(response, nominal, scale)
    variables |= side_variables
    censored = _censored_bounds(source, response)
    if hasattr(source, "check_absent_columns"):  # files: a column only some files have
        read = set(censored) if censored is not None else {response}
        named = {*read, *variables, *(c for c in (weights, offset) if isinstance(c, str))}
        source.check_absent_columns(sorted(named - set(source.columns)))
    if censored is None:
        plan = _column_plan(source, response, variables, weights, offset)
    else:  # the response is a column made for each chunk from its bounds
        plan = replace(
            _column_plan(source, censored[0], variables, weights, offset),
            censored=censored,
        )
        plan = replace(plan, response=response, columns=[response, *plan.columns[1:]])
    if hasattr(source, "check_columns"):
        source.check_columns(plan.read_columns)
    # the caller's per-row values are refused here, so every other name of the
    # context (a function, a list of levels) serves the chunks as it is; a name that
    # is also a column is the column's (data take precedence, as in memory)
    read = set(plan.read_columns)
    ctx = FormulaContext(
        {k: v for k, v in dict(context or {}).items() if k in variables and k not in read},
        row_names=(),
    )
    per_row = sorted(set(getattr(context, "row_names", None) or ()) & set(ctx))
    if per_row:  # recorded when a DataFrame is read in chunks
        raise _caller_arrays_error(per_row)
    sample = source.first_chunk(plan.read_columns)
    for name in plan.read_columns:
        reason = unusable_dtype(name, sample[name].dtype) if name in sample else None
        if reason is not None:
            raise DataError(reason)
    factors = {
        name
        for rhs in [formula, *(f"{response} ~ {side}" for side in sides.values())]
        for name in categorical_variables(rhs, sample, ctx)
    } | {c for c in plan.columns if c != response and not _is_numeric(sample[c])}
    plan = replace(plan, factors=sorted(factors))
    reader = SourceReader(source)
    writer = _scan_writer(source, plan, formula, sides, ctx, family)
    if hasattr(source, "keep_scan_arrays"):  # Spark: the first pass's tasks keep the arrays
        source.keep_scan_arrays(_layout_without_levels(plan, formula, sides, ctx, family))
    # chunks read in this process, in order: a chunk drops the rows that the sample of the
    # chunks before it rules out (on the pool's threads, not in the ordered step)
    board = SampleLimits() if getattr(source, "reads_locally", False) else None
    try:
        scanned: SampledScan = (
            reader.read_pass(scan_and_sample, plan, RESERVOIR_ROWS, MIN_ROWS_PER_LEVEL, None, board)
            if writer is None
            else reader.read_pass(
                scan_and_spill, plan, RESERVOIR_ROWS, MIN_ROWS_PER_LEVEL, writer, board
            )
        )
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    scan, reader.sample = scanned.scan, scanned.sample
    if scan.n_rows and not scan.values.get(response):
        # no complete row: one more pass counts the missing values, to name the columns
        refuse_no_complete_row(reader.read_pass(count_missing, plan))
    plan, scan = _factors_seen_later(scanned, plan, scan)
    # text columns (not Categoricals) that may be numbers with a stray text, as in memory
    warn_numbers_gone_astray(
        {
            c: pd.Series(list(scan.values[c]), dtype=object)
            for c in plan.factors
            if c in scan.values and c not in scan.categories
        }
    )
    if getattr(source, "reads_text", False):
        _refuse_rounded_integers(list(scan.values.get(response, ())), response)
    if hasattr(source, "check_response"):  # Spark: its text columns are never categorical
        source.check_response(scan, plan, design_options.levels, design_options.many_levels)
    encoded, fitted_formula, terms = fix_levels(
        scan,
        plan,
        formula,
        ctx,
        levels=design_options.levels,
        many_levels=design_options.many_levels,
    )
    side_terms = fixed_side_terms(scan, plan, sides, ctx)
    spec = ChunkSpec(
        plan=plan,
        terms=terms,
        level_codes={label: j for j, label in enumerate(encoded.levels)},
        link=family.link,
        jacobian=model_jacobian(threshold, len(encoded.levels) - 1, family),
        context=ctx,
        nominal=side_terms.get("nominal"),
        scale=side_terms.get("scale"),
        censoring=encoded.censoring,
    )
    if writer is not None:  # the first pass wrote the arrays: the summary reads them
        reader.store = writer.finish(spec)
    elif hasattr(source, "scan_store"):
        reader.store = source.scan_store(spec)
    # a censored response starts from its level counts: the subsample's levels differ
    started = None if censored else _start_before_summary(reader, spec, family, scan.n_rows)
    warm, warm_weight = (None, 0.0) if started is None else started
    # the summary pass (which also makes the first Newton evaluation at the warm
    # start) keeps the chunks' arrays for the passes after it, where they fit
    params = None if warm is None else warm.params
    # with the subsample's Hessian for the first step, the pass needs the gradient alone
    # (the Hessian at the start is then made only if the solver asks for it)
    with_hessian = warm is None or warm.hessian is None
    both: SummaryWithTotals = reader.keep_arrays(
        spec, scan.n_rows, summarize_arrays_at, params, with_hessian
    )
    summary, first_totals = both.summary, both.totals
    layout_before = (list(spec.terms.names), spec.n_levels)
    spec, encoded = apply_summary(
        summary,
        spec,
        encoded,
        missing=design_options.missing,
        collinear=design_options.collinear,
    )
    if spec.n_levels != len(summary.counts):
        spec = replace(spec, jacobian=model_jacobian(threshold, spec.n_levels - 1, family))
        summary = replace(summary, counts=summary.counts[summary.counts > 0])
    if isinstance(threshold, tuple):  # fixed cut-points c of theta = J a + c
        spec = replace(spec, threshold_offset=threshold_offset(threshold, spec.n_levels - 1))
    reader.keep_store_for(spec)  # a dropped column or level changes every chunk's arrays
    evaluator = ChunkedEvaluator(family, reader, spec, summary)
    if warm is not None and first_totals is not None:
        if layout_before == (list(spec.terms.names), spec.n_levels):  # no column or level dropped
            weight = float(summary.sum_weights)
            evaluator.first_evaluation = (_scaled_to(warm, weight, warm_weight), first_totals)
    evaluator.use_shifted_basis(_location_moments(summary, layout_before[0], spec.terms.names))
    return skeleton_design(encoded, spec, fitted_formula, summary), evaluator


def _location_moments(
    summary: ChunkSummary, names_read: list[str], names_kept: list[str]
) -> ColumnMoments:
    """Means and standard deviations (divisor ``n``) of the kept location columns.

    ``summary`` has the moments of the columns ``names_read`` (the location
    columns first), some of which may since have been dropped as aliased.
    """
    moments = summary.moments
    columns = [names_read.index(name) for name in names_kept]
    n = max(moments.n, 1.0)
    variance = np.maximum(np.diag(moments.m2)[columns], 0.0) / n
    return ColumnMoments(moments.means[columns], np.sqrt(variance))


def _scan_writer(
    source: Any,
    plan: ColumnPlan,
    formula: str,
    sides: dict[str, str],
    ctx: Any,
    family: Family,
) -> ScanWriter | None:
    """A writer of the chunks' arrays for the first pass, where the design needs no levels.

    Only for sources read in this process, a response that is a column and no
    factors: the terms are then those :func:`fix_levels` will build.  None
    otherwise, or where the terms cannot be built here (the general path
    reports why after the first pass).
    """
    if not getattr(source, "reads_locally", False):
        return None
    spec = _layout_without_levels(plan, formula, sides, ctx, family)
    return None if spec is None else open_scan_writer(spec)


def _layout_without_levels(
    plan: ColumnPlan, formula: str, sides: dict[str, str], ctx: Any, family: Family
) -> ChunkSpec | None:
    """The chunks' layout of a model whose design needs no levels (its level codes unused).

    A response that is a column and no factors: the terms are then those
    :func:`fix_levels` will build.  None otherwise, or where the terms cannot
    be built here (the general path reports why after the first pass).
    """
    if plan.censored is not None or plan.factors:
        return None
    try:
        side_terms = terms_without_levels(plan, formula, sides, ctx)
    except (ValueError, TypeError, KeyError, NameError, SyntaxError):
        return None
    return ChunkSpec(
        plan=plan,
        terms=side_terms["location"],
        level_codes={},
        link=family.link,
        jacobian=None,
        context=ctx,
        nominal=side_terms.get("nominal"),
        scale=side_terms.get("scale"),
    )


def _start_before_summary(
    reader: SourceReader, spec: ChunkSpec, family: Family, n_read: int
) -> tuple[WarmStart, float] | None:
    """The warm start, fitted to the first pass's subsample before the summary pass.

    Fitted here (with default Newton options), the summary pass can also make
    the first Newton evaluation at it, so that a warm-started fit costs one
    pass less.  With a subsample of :data:`QUASI_FIRST_STEP_ROWS` rows, the
    first Newton step takes its Hessian scaled to the full data, as in memory
    (:func:`_scaled_to`, once the summary pass has the full data's weight), so
    that pass evaluates the gradient alone; with a smaller subsample, or levels
    topped up, it evaluates the Hessian too.  Returns the warm start (its
    Hessian the subsample's, unscaled) and the subsample's weight; None where
    the fit will not start there: fewer than 20,000 rows, many thresholds
    (banded), or a subsample fit that fails.
    """
    sample, size = reader.sample, min(subsample_size(n_read), RESERVOIR_ROWS)
    if sample is None or n_read < WARM_START_ROWS or size >= n_read:
        return None
    if spec.n_levels - 1 > BANDED_MIN_THRESHOLDS:
        return None
    rows, topped_up = sample.draw(size)
    data: CLMData | None = reduce_chunk(rows, spec, _the_arrays)
    if data is None:
        return None
    try:
        start = family.initial_params(family.prepare(data))
    except (ArithmeticError, ValueError, np.linalg.LinAlgError):
        return None
    # the subsample's own Hessian (its weight as the total), scaled once the summary
    # pass has the full data's weight: see _scaled_to
    weight = float(np.sum(data.weights))
    quasi = size >= QUASI_FIRST_STEP_ROWS and not topped_up
    warm = start_from_subsample(family, data, weight, start, NewtonOptions(), with_hessian=quasi)
    return (warm, weight) if warm.n_rows else None


#: Subsample rows from which the first Newton step of a chunked fit takes the
#: subsample's scaled Hessian instead of the full data's.  That step is about
#: twice as far from the estimates as the exact one (10^6 x 20, 50,000 rows:
#: 3.2e-4 against 1.7e-4 relative; 10^7, 200,000 rows: 1.2e-4 against
#: 6e-5), which the next exact step squares; from a subsample this large the
#: step after that is still small enough for the last one to be predicted
#: (:mod:`ordstats.estimation.last_step`; 9.7e-9 at 10^7), so the fit makes as
#: many passes and its first evaluates the gradient alone (the 10^7 summary
#: pass 1.55 -> 0.86 s).  At 50,000 rows it was not (1.2e-7: one pass more).
QUASI_FIRST_STEP_ROWS = RESERVOIR_ROWS


def _scaled_to(warm: WarmStart, total_weight: float, subsample_weight: float) -> WarmStart:
    """The warm start with its subsample's Hessian scaled to the full data's weight."""
    if warm.hessian is None or not subsample_weight > 0:
        return replace(warm, hessian=None)
    scaled = warm.hessian * (total_weight / subsample_weight)
    return replace(warm, hessian=scaled if np.all(np.isfinite(scaled)) else None)


class PassProgress:
    """A tqdm bar with one tick per pass, showing the log-likelihood and max|grad|.

    Parameters
    ----------
    enabled : bool
        False gives a silent object with the same interface.
    """

    def __init__(self, enabled: bool) -> None:
        self.bar: Any = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # pragma: no cover - tqdm is optional
                return
            self.bar = tqdm(desc="Newton passes", unit="pass", leave=True)

    def __enter__(self) -> PassProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()

    def tick(self, evaluation: FamilyEvaluation) -> None:
        """Advance by one pass."""
        if self.bar is None:
            return
        grad = np.asarray(evaluation.gradient)
        self.bar.set_postfix(
            loglik=f"{-evaluation.nll:.8g}",
            max_grad=f"{float(np.max(np.abs(grad))) if grad.size else 0.0:.2e}",
            refresh=False,
        )
        self.bar.update(1)


# ---------------------------------------------------------------------------
# rows removed (``results.remove_data()``)

_REMOVED = (
    "this needs the rows of the data, which were removed from the model (remove_data(), "
    "or save(..., remove_data=True)): refit the model on the data. Predictions for new "
    "rows (predict(newdata)) still work"
)


class DataRemovedEvaluator:
    """What remains of an evaluator after :meth:`OrdinalResults.remove_data`.

    Keeps the sizes, counts and the parameter layout (a problem with no rows),
    so that predictions on new data, the summary and saved statistics work;
    anything that needs the rows raises :class:`~ordstats.errors.NotFittedError`.
    """

    keeps_rows = False
    source = None

    @staticmethod
    def fitted_rows() -> None:
        """None: the data were removed."""
        return None

    def __init__(self, evaluator: Evaluator) -> None:
        self.family = evaluator.family
        template = evaluator.problem.data
        self.problem = self.family.prepare(
            replace(
                template,
                y=np.empty(0, dtype=np.intp),
                X=np.empty((0, template.X.shape[1])),
                weights=np.empty(0),
                offset=np.empty(0),
                nominal=np.empty((0, template.nominal.shape[1])),
                scale=np.empty((0, template.scale.shape[1])),
            )
        )
        self.nobs = float(evaluator.nobs)
        self.n_rows = int(evaluator.n_rows)
        self.response_counts = np.asarray(evaluator.response_counts, dtype=float)
        self.has_offset = bool(evaluator.has_offset)
        self.has_weights = bool(evaluator.has_weights)

    @property
    def data(self) -> CLMData:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def evaluate(self, params: FloatArray, *, banded: bool = False) -> FamilyEvaluation:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def newton(
        self,
        start: FloatArray,
        options: NewtonOptions,
        *,
        callback: IterationCallback | None = None,
        progress: bool = True,
        banded: bool = False,
        initial_hessian: FloatArray | None = None,
    ) -> NewtonResult:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def start_params(self) -> FloatArray:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def diverging(self, solution: NewtonResult) -> list[int]:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def without_location(self) -> Evaluator:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def with_family(self, family: Family) -> Evaluator:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    def reduce_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """Not available: the rows were removed."""
        raise NotFittedError(_REMOVED)

    reduce_internal_rows = reduce_rows
