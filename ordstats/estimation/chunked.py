"""The cumulative link model fitted pass by pass over data read in chunks.

:class:`ChunkedOrdinalModel` is what :meth:`OrdinalModel.from_formula` returns
for a path, glob, list of files, :class:`pyarrow.dataset.Dataset`, Dask
DataFrame, or a DataFrame with ``chunksize=``.  It fits by the same Newton
iterations as the in-memory model, each evaluation being one pass of
:func:`ordstats.data.chunks.chunk_totals` over the chunks, and returns the same
:class:`~ordstats.results.fitted.OrdinalResults`.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.links import Link
from ordstats.core.solver import NewtonOptions, NewtonResult, newton
from ordstats.core.thresholds import threshold_parameter_names
from ordstats.data.chunks import (
    ChunkSpec,
    ChunkSummary,
    ColumnPlan,
    PassTotals,
    apply_summary,
    chunk_totals,
    empty_data,
    fix_levels,
    scan_levels,
    skeleton_design,
    summarize_chunk,
)
from ordstats.data.sources import open_source
from ordstats.design import categorical_variables, check_choice, formula_variables
from ordstats.errors import (
    DataError,
    FormulaError,
    MissingDataWarning,
    NotFittedError,
    OrdstatsError,
    SpecificationError,
)
from ordstats.estimation.model import OrdinalModel, _jacobian
from ordstats.families import Family, get_family
from ordstats.families.cumulative.banded import banded_newton_step
from ordstats.families.cumulative.likelihood import CLMData, prepare
from ordstats.families.cumulative.start import initial_params

__all__ = ["ChunkedOrdinalModel", "PassEvaluation", "predict_source"]


class PassEvaluation:
    """One pass over the data: negative log-likelihood, gradient and Hessian.

    Parameters
    ----------
    totals : PassTotals or None
        None when no chunk had usable rows.
    link : Link
        The model's link (what results read as the link at the estimates).
    """

    def __init__(self, totals: PassTotals | None, link: Link) -> None:
        self.link = link
        if totals is None:
            raise DataError("no chunk has usable rows")
        self.nll = float(totals.nll) if np.isfinite(totals.nll) else np.inf
        self.gradient = totals.gradient
        self.hessian = totals.hessian
        self.n_rows = totals.n_rows

    def observation_scores(self) -> FloatArray:
        """Not available: the rows of chunked data are not kept."""
        raise NotFittedError(
            "per-observation scores need the rows in memory; a chunked fit keeps only sums"
        )


class ChunkedOrdinalModel(OrdinalModel):
    """A cumulative link model whose data are read in chunks at every pass.

    Created by :meth:`OrdinalModel.from_formula` for out-of-core or Dask data;
    it has the in-memory model's attributes except :attr:`data` (the rows are
    never all in memory), and :meth:`fit` returns the same results.

    Attributes
    ----------
    source : ArrowSource, FrameSource or DaskSource
        Where the rows are read from.
    chunk_spec : ordstats.data.chunks.ChunkSpec
        Turns any chunk into arrays (same columns and levels for all chunks).
    summary : ordstats.data.chunks.ChunkSummary
        Rows used, response counts and more from the summary pass.
    n_passes : int
        Passes over the data so far (levels, summary, and one per evaluation).
    """

    source: Any = None

    @classmethod
    def from_source(
        cls,
        formula: str,
        data: Any,
        *,
        chunksize: int | None = None,
        link: str | Link = "logit",
        weights: Any = None,
        offset: Any = None,
        threshold: str = "flexible",
        levels: Any = None,
        missing: Any = "drop",
        collinear: Any = "drop",
        many_levels: bool = False,
        context: Any = None,
        nominal: str | None = None,
        scale: str | None = None,
        family: Family | None = None,
    ) -> ChunkedOrdinalModel:
        """Build the model from a formula and chunked data (two passes over the data).

        Parameters are those of :meth:`OrdinalModel.from_formula`; ``weights`` and
        ``offset`` must be column names.  Nominal and scale effects and flexible
        links are not available for chunked data yet.
        """
        family = family or get_family("cumulative", link=link)
        link_obj = family.link
        unsupported = [
            what
            for what, used in (
                (f"the {family.name!r} family", not family.capabilities.chunked),
                ("nominal effects", nominal is not None),
                ("scale effects", scale is not None),
                (f"the flexible link {link_obj.name!r}", hasattr(link_obj, "nested_link")),
            )
            if used
        ]
        if unsupported:
            raise SpecificationError(
                f"{' and '.join(unsupported)} are not available for data read in chunks yet; "
                "fit a cumulative location-only model with a standard link, or load the data "
                "into memory"
            )
        check_choice("missing", missing, ("drop", "raise"))
        check_choice("collinear", collinear, ("drop", "raise"))
        for role, value in (("weights", weights), ("offset", offset)):
            if value is not None and not isinstance(value, str):
                raise DataError(
                    f"with data read in chunks, {role} must name a column; "
                    f"got {type(value).__name__}"
                )
        source = open_source(data, chunksize)
        response, variables = formula_variables(formula)
        plan = _column_plan(source, response, variables, weights, offset)
        if hasattr(source, "check_columns"):
            source.check_columns(plan.read_columns)
        ctx = {k: v for k, v in dict(context or {}).items() if k in variables}
        sample = source.first_chunk(plan.read_columns)
        factors = categorical_variables(formula, sample, ctx) | {
            c for c in plan.columns if c != response and not _is_numeric(sample[c])
        }
        plan = replace(plan, factors=sorted(factors))
        model = cls.__new__(cls)
        model.source, model.n_passes = source, 0
        scan = model._pass(scan_levels, plan)
        encoded, fitted_formula, terms = fix_levels(
            scan, plan, formula, ctx, levels=levels, many_levels=many_levels
        )
        spec = ChunkSpec(
            plan=plan,
            terms=terms,
            level_codes={label: j for j, label in enumerate(encoded.levels)},
            link=link_obj,
            jacobian=_jacobian(threshold, len(encoded.levels) - 1),
            context=ctx,
        )
        summary: ChunkSummary = model._pass(summarize_chunk, spec)
        spec, encoded = apply_summary(summary, spec, encoded, missing=missing, collinear=collinear)
        if spec.n_levels != len(summary.counts):
            spec = replace(spec, jacobian=_jacobian(threshold, spec.n_levels - 1))
            summary = replace(summary, counts=summary.counts[summary.counts > 0])
        model.family_spec = family
        model._setup_chunked(spec, encoded, fitted_formula, summary, threshold, ctx)
        return model

    def _setup_chunked(
        self,
        spec: ChunkSpec,
        encoded: Any,
        formula: str,
        summary: ChunkSummary,
        threshold: str,
        context: dict[str, Any],
    ) -> None:
        self.chunk_spec = spec
        self.summary = summary
        self.family = self.family_spec.name
        self.reverse = self.family_spec.reverse
        self.design = skeleton_design(encoded, spec, formula, summary)
        self.link = spec.link
        self.threshold = threshold
        self.formula_context = context
        self.threshold_jacobian = spec.jacobian
        self.problem = prepare(empty_data(spec))
        self.threshold_param_names = threshold_parameter_names(threshold, encoded.levels)
        self.exog_names = list(spec.terms.names)
        self.nominal_names: list[str] = []
        self.scale_names: list[str] = []
        self.param_names = self.threshold_param_names + self.exog_names

    def __getstate__(self) -> dict[str, Any]:
        # results travel to Dask workers for prediction; the source stays behind
        return {**self.__dict__, "source": None}

    # -- what the in-memory model reads from its rows -------------------------

    @property
    def data(self) -> CLMData:  # type: ignore[override]
        """Not available: the rows of a chunked model are read at each pass."""
        raise NotFittedError(
            "a chunked model keeps no rows in memory; use its summaries (nobs, "
            "response_counts) or read the data yourself"
        )

    @property
    def nobs(self) -> float:
        """Number of observations: the sum of the weights."""
        return float(self.summary.sum_weights)

    @property
    def n_rows(self) -> int:
        """Rows used in the fit."""
        return int(self.summary.n_used)

    @property
    def response_counts(self) -> FloatArray:
        """Weighted number of observations per response level."""
        return np.asarray(self.summary.counts, dtype=float)

    @property
    def has_offset(self) -> bool:
        """Whether the model has a non-zero offset."""
        return bool(self.summary.any_offset)

    @property
    def has_weights(self) -> bool:
        """Whether any weight differs from one."""
        return bool(self.summary.non_unit_weights)

    @property
    def start_params(self) -> FloatArray:
        """Default starting values (marginal thresholds, zero effects)."""
        return initial_params(self.problem, counts=self.response_counts)

    def __repr__(self) -> str:
        return (
            f"ChunkedOrdinalModel({self.design.formula!r}, link={self.link.name!r}, "
            f"nobs={self.nobs:g}, source={self.source!r})"
        )

    # -- passes ---------------------------------------------------------------

    def _pass(self, func: Callable[..., Any], *args: Any) -> Any:
        if self.source is None:
            raise NotFittedError("this model was unpickled without its data source")
        self.n_passes += 1
        plan = args[0] if isinstance(args[0], ColumnPlan) else args[0].plan
        return self.source.map_reduce(func, *args, columns=plan.read_columns)

    def evaluate(self, params: Any, *, banded: bool = False) -> PassEvaluation:  # type: ignore[override]
        """One pass over the data: log-likelihood, gradient and Hessian at ``params``."""
        params = self._check_params(params)
        totals = self._pass(chunk_totals, self.chunk_spec, params, banded)
        return PassEvaluation(totals, self.link)

    def _newton(
        self, start: FloatArray, options: NewtonOptions, *, disp: bool, banded: bool
    ) -> NewtonResult:
        with PassProgress(enabled=disp is not False and _interactive()) as progress:

            def objective(x: FloatArray) -> PassEvaluation:
                ev = self.evaluate(x, banded=banded)
                progress.tick(ev)
                return ev

            return newton(
                objective,
                start,
                options,
                linear_solve=banded_newton_step if banded else None,
            )

    def _diverging(self, solution: NewtonResult) -> list[str]:
        # the separation LP needs the rows in memory; a diverging fit still warns
        # through the convergence code
        return []

    def null_loglike(self) -> float:
        """Log-likelihood of the thresholds-only model on the same rows and weights."""
        if self.threshold == "flexible" and not self.has_offset:
            return super().null_loglike()
        null = ChunkedOrdinalModel.__new__(ChunkedOrdinalModel)
        null.source, null.n_passes, null.family_spec = self.source, 0, self.family_spec
        terms = replace(self.chunk_spec.terms, names=[])
        null._setup_chunked(
            replace(self.chunk_spec, terms=terms),
            self.design.response,
            self.design.formula or "",
            self.summary,
            self.threshold,
            self.formula_context,
        )
        solution = null._newton(null.start_params, NewtonOptions(), disp=False, banded=False)
        return -float(solution.evaluation.nll)


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _column_plan(
    source: Any, response: str, variables: set[str], weights: str | None, offset: str | None
) -> ColumnPlan:
    columns = list(source.columns)
    roles = (("response", response), ("weights column", weights), ("offset column", offset))
    for role, name in roles:
        if name is not None and name not in columns:
            import difflib

            close = difflib.get_close_matches(name, columns, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise FormulaError(f"the {role} {name!r} is not a column of the data.{hint}")
    used = [response, *sorted(v for v in variables if v in columns)]
    return ColumnPlan(response=response, columns=used, factors=[], weights=weights, offset=offset)


def _interactive() -> bool:
    """Tell whether a terminal or a notebook is watching."""
    if "ipykernel" in sys.modules:
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


class PassProgress:
    """A tqdm bar with one tick per pass, showing the log-likelihood and max|grad|.

    Parameters
    ----------
    enabled : bool
        False gives a silent object with the same interface.
    """

    def __init__(self, enabled: bool) -> None:
        self.bar = None
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

    def tick(self, ev: PassEvaluation) -> None:
        """Advance by one pass."""
        if self.bar is None:
            return
        grad = np.asarray(ev.gradient)
        self.bar.set_postfix(
            loglik=f"{-ev.nll:.8g}",
            max_grad=f"{float(np.max(np.abs(grad))) if grad.size else 0.0:.2e}",
            refresh=False,
        )
        self.bar.update(1)


def predict_source(results: Any, source: Any, which: str, offset: Any = None) -> Any:
    """Predict chunk by chunk over a large source.

    Returns a pandas object for files or frames (rows in file order, numbered
    from 0) and a lazy Dask object for a Dask DataFrame.
    """
    if offset is not None:
        raise OrdstatsError("with data read in chunks, the offset must be a column of the data")
    src = open_source(source, getattr(source, "chunksize", None))
    if hasattr(src, "map_partitions"):
        return src.map_partitions(lambda part: results.predict(part, which=which))
    with warnings.catch_warnings():
        # one warning for all chunks instead of one per chunk
        warnings.simplefilter("ignore", MissingDataWarning)
        parts = [results.predict(chunk, which=which) for _, chunk in src.chunks()]
    out = pd.concat(parts, ignore_index=not hasattr(src, "frame"))
    missing = int(pd.DataFrame(out).isna().any(axis=1).sum())
    if missing:
        warnings.warn(
            f"{missing} row(s) of the data have missing or non-finite predictor values; "
            "their predictions are NaN",
            MissingDataWarning,
            stacklevel=3,
        )
    return out
