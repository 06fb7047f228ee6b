"""Ordinal regression models: specification and fitting.

:class:`OrdinalModel` holds a checked design (from a formula or from arrays) and
fits it by Newton-Raphson with analytic derivatives.  Fitting returns a new
:class:`~ordstats.results.fitted.OrdinalResults`; the model itself never changes.  The
cumulative link model is the default family; the sequential and
adjacent-category families live in :mod:`ordstats.families`.
"""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import BoolArray, CollinearAction, FloatArray, IntArray
from ordstats.core.links import Link, get_link
from ordstats.core.prefit import canonical_method, prefit
from ordstats.core.solver import NewtonOptions, NewtonResult, newton
from ordstats.core.threads import numeric_threads
from ordstats.core.thresholds import Structure, threshold_offset
from ordstats.data.sources import is_source, open_source
from ordstats.design import (
    Design,
    TermsDesign,
    capture_context,
    check_formula_text,
    design_from_arrays,
    design_from_formula,
    r_label,
)
from ordstats.design.censored import levels_labels, recode_censored, refuse_censored
from ordstats.design.contrasts import r_contrasts, requested_contrasts
from ordstats.design.core import with_text_column_names
from ordstats.design.r_functions import (
    dotted_names,
    expand_dot,
    has_dot,
    quote_dotted_columns,
    update_formula,
    update_one_sided,
)
from ordstats.design.random import has_random_terms
from ordstats.design.response import EncodedResponse, encode_response
from ordstats.design.subset import subset_mask, subset_source
from ordstats.design.threshold_groups import ThresholdGroups, split_threshold_groups
from ordstats.errors import (
    CollinearityWarning,
    ConvergenceWarning,
    FormulaError,
    NotFittedError,
    ResponseError,
    SeparationWarning,
    SpecificationError,
    user_stacklevel,
)
from ordstats.estimation import bayes, penalized
from ordstats.estimation.bayes_thresholds import (
    grouped_threshold_model,
    refuse_threshold_groups_ml,
)
from ordstats.estimation.context import FormulaContext, used_context
from ordstats.estimation.evaluators import (
    _REMOVED,
    BANDED_MIN_THRESHOLDS,
    ChunkedEvaluator,
    DataRemovedEvaluator,
    Evaluator,
    InMemoryEvaluator,
    build_chunked,
    model_jacobian,
    release_source_cache,
)
from ordstats.estimation.mixed import OrdinalMixedModel
from ordstats.estimation.options import ModelOptions, newton_options, print_iteration
from ordstats.estimation.survey import survey_data, survey_results
from ordstats.estimation.warm_start import MIN_ROWS as WARM_START_ROWS
from ordstats.estimation.warm_start import (
    RESERVOIR_ROWS,
    WarmStart,
    start_from_subsample,
    subsample_size,
    subsample_start,
)
from ordstats.families import DEFAULT_FAMILY
from ordstats.families.cumulative.banded import banded_applicable
from ordstats.families.cumulative.likelihood import evaluate, prepare
from ordstats.families.cumulative.prediction import (
    crossing_positions,
    crossing_rows,
    threshold_matrix,
)
from ordstats.families.cumulative.start import initial_params
from ordstats.families.problem import FamilyEvaluation
from ordstats.results.arguments import check_flag
from ordstats.results.covariance import canonical_cov_type
from ordstats.results.fitted import FitInfo, OrdinalResults
from ordstats.results.regularized import CVResult, PenalizedResults, RegularizationPath

__all__ = ["OrdinalModel"]


@contextmanager
def _source_cache_released(source: object) -> Iterator[None]:
    """Let the model's data source delete what it kept for a fit, however the fit ends.

    A Spark fit spills its partitions to the executors' disks during the fit
    (:mod:`ordstats.data.spark_cache`); results methods read the DataFrame.  A context
    manager, not a decorator, so that the fit's warnings name the caller's line.
    """
    try:
        yield
    finally:
        release_source_cache(source)


class OrdinalModel:
    r"""Regression model for an ordinal response: cumulative, sequential or adjacent.

    Cumulative as R's ``ordinal::clm``; sequential and adjacent-category as
    VGAM's ``sratio``, ``cratio`` and ``acat``.  The default cumulative link model is

    .. math::

        P(Y \le j \mid x, w, z) = F\!\left(\frac{\theta_j + w^\top\gamma_j
        - x^\top \beta - o}{\exp(z^\top \zeta)}\right), \quad j = 1, \dots, K - 1

    with thresholds ``theta_1 < ... < theta_{K-1}`` (``theta = J alpha`` for a
    threshold structure), location effects ``beta`` (a positive ``beta`` moves
    probability to higher categories), optional nominal effects ``gamma_j``
    (category-specific: partial proportional odds) and log-scale effects
    ``zeta``, offset ``o`` and the link's distribution ``F`` (for the flexible
    links its shape parameter ``lambda`` is estimated too).

    The other families have ``K - 1`` linear predictors with intercepts
    ``alpha_j`` (named ``"1:2"``, ``"2:3"``, ... after the levels of the step, VGAM's
    ``(Intercept):j``) and shared slopes ``b``, ``eta_j = alpha_j + x'b + o``,
    exactly as VGAM with ``parallel = TRUE``, so the coefficients equal VGAM's.
    **Their signs differ between families**:

    ============  =======================================  ==========================
    family        ``reverse=False``                        ``reverse=True``
    ============  =======================================  ==========================
    ``sratio``    ``F(eta_j) = P(Y = j | Y >= j)``:        ``P(Y = j+1 | Y <= j+1)``:
                  positive slope = **lower** levels        positive = higher levels
    ``cratio``    ``F(eta_j) = P(Y > j | Y >= j)``:        ``P(Y <= j | Y <= j+1)``:
                  positive slope = **higher** levels       positive = lower levels
    ``acat``      ``eta_j = log P(Y = j+1) / P(Y = j)``:   ``log P(Y = j) / P(Y = j+1)``:
                  positive slope = **higher** levels       positive = lower levels
    ============  =======================================  ==========================

    Parameters
    ----------
    endog : array-like, pandas.Series or pandas.Categorical
        The ordinal response: an ordered Categorical (its order), numbers
        (sorted order), or labels with ``levels`` giving their order.
    exog : array-like or pandas.DataFrame, optional
        Numeric regressors *without* a constant column: the thresholds act as
        intercepts.  ``None`` fits the thresholds only.
    nominal, scale : array-like or pandas.DataFrame, optional
        Numeric regressors of nominal and log-scale effects (no constant).
        For sratio, cratio and acat, ``nominal`` gives category-specific
        (non-parallel) effects: ``eta_j = alpha_j + w'gamma_j + x'b`` (VGAM's
        ``parallel = FALSE ~ w``); scale effects are cumulative-only.
    weights : array-like, optional
        Non-negative frequency (case) weights, as R's ``weights=``.
    offset : array-like, optional
        Known term added to ``x'beta``.

    **options
        The model options: ``family`` (``"cumulative"``, ``"sratio"``,
        ``"cratio"``, ``"acat"``), ``reverse``, ``link`` (``"logit"``,
        ``"probit"``, ``"cloglog"``, ``"loglog"``, ``"cauchit"``,
        ``"aranda-ordaz"``, ``"log-gamma"``), ``threshold``, ``levels``,
        ``missing``, ``collinear``, ``many_levels``; each is described, with
        its default and allowed values, in :class:`~ordstats.ModelOptions`.

    See Also
    --------
    OrdinalModel.from_formula : Build the model from a formula and a DataFrame.

    Examples
    --------
    >>> import ordstats
    >>> wine = ordstats.datasets.load("wine")
    >>> res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    >>> round(res.llf, 4)
    -86.4919
    >>> res.params.round(3).tolist()
    [-1.344, 1.251, 3.467, 5.006, 2.503, 1.528]
    """

    #: The groups of ``y | thres(gr = g) ~ ...`` (:mod:`ordstats.design.threshold_groups`).
    threshold_groups: ThresholdGroups | None = None

    def __init__(
        self,
        endog: object,
        exog: object = None,
        *,
        nominal: object = None,
        scale: object = None,
        weights: object = None,
        offset: object = None,
        **options: object,
    ) -> None:
        with numeric_threads():  # the design's checks are BLAS products too
            opts = ModelOptions.from_keywords(options)
            design = design_from_arrays(
                endog,
                exog,
                nominal=nominal,
                scale=scale,
                weights=weights,
                offset=offset,
                options=opts.design_options(),
            )
            self._setup(design, opts)

    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: object = None,
        *,
        nominal: str | None = None,
        scale: str | None = None,
        weights: object = None,
        offset: object = None,
        context: object = None,
        chunksize: int | None = None,
        design: object = None,
        subset: object = None,
        contrasts: Mapping[str, object] | None = None,
        **options: object,
    ) -> OrdinalModel:
        """Build a model from an R-style formula and a DataFrame (or data too large for memory).

        Factors get treatment contrasts with the first level as reference, so
        coefficient names (``"temp[T.warm]"``) and values match R's ``clm``.

        Parameters
        ----------
        formula : str
            ``"response ~ terms"``, e.g. ``"rating ~ temp * contact"``.
            ``"rating | thres(gr = judge) ~ temp"`` gives each level of ``judge``
            its own thresholds (brms' group-specific thresholds; Bayesian fits
            only, :mod:`ordstats.estimation.bayes_thresholds`).
        data : pandas.DataFrame, str, path, list of paths, pyarrow dataset or dask DataFrame
            A DataFrame is fitted in memory.  A Parquet/CSV/Arrow file, directory
            or glob (``"ratings/*.parquet"``), a :class:`pyarrow.dataset.Dataset`
            or a Dask DataFrame is read in chunks at every Newton pass, so memory
            stays bounded by ``chunksize``; the result is the in-memory fit
            (cumulative family: nominal and scale effects, flexible links and
            every threshold structure included).
        nominal : str, optional
            One-sided formula of nominal effects, e.g. ``"~ contact"``:
            category-specific ("partial proportional odds") effects on the
            thresholds of the cumulative model, non-parallel effects
            ``gamma_j`` on ``eta_j`` for sratio, cratio and acat.
        scale : str, optional
            One-sided formula of log-scale effects, e.g. ``"~ temp"``
            (cumulative family only).
        weights, offset : str or array-like, optional
            Column names of ``data`` or one value per row.
        context : mapping, optional
            Names that formula expressions may use (defaults to the caller's
            variables), e.g. ``{"np": numpy}``.
        chunksize : int, optional
            Rows per chunk for data read in chunks (default 100,000); with a
            DataFrame, fit it chunk by chunk too.
        design : SurveyDesign or ReplicateDesign, optional
            A complex survey design (R's ``svyolr(formula, design)``): the data
            and the sampling weights are the design's (pass ``data=None``); the
            fit maximises the weighted pseudo-likelihood and its covariance is
            design-based (:class:`~ordstats.results.survey.SurveyResults`).
        subset : str, boolean Series or array, or callable, optional
            The rows to fit (R's ``subset=``): a query string evaluated on the
            data as :meth:`pandas.DataFrame.query` (``'contact == "yes"'``), a
            boolean Series paired with the rows by index label, a boolean array
            in the rows' order, or a function of the data returning one.  A
            missing value selects nothing.  As in R, stateful transforms
            (``scale(x)``, ``poly(x, 2)``) learn from every row of the data;
            weights and offsets given per row are subset with the rows.  A
            DataFrame read with ``chunksize=`` takes every form; a Dask
            DataFrame a Dask boolean Series or a query that selects each row
            from its own values (applied partition by partition); data read
            from files or Spark are refused (filter them first).
        contrasts : dict, optional
            Contrasts of factor columns (R's ``contrasts = list(f = "contr.sum")``):
            column name to ``"contr.treatment"``, ``"contr.sum"``,
            ``"contr.helmert"``, ``"contr.poly"``, ``"contr.SAS"`` or a matrix
            (one row per level, one column per coefficient).  Coefficients are
            named as R names them: ``f1``, ``f2`` for sum and Helmert
            contrasts, ``f.L``, ``f.Q`` for polynomials, ``f[T.b]`` for
            treatment-like ones (:mod:`ordstats.design.contrasts`).
        **options
            ``family``, ``reverse``, ``link``, ``threshold``, ``levels``,
            ``missing``, ``collinear``, ``many_levels``: as for
            :class:`OrdinalModel` (declared in
            :class:`~ordstats.ModelOptions`).

        Returns
        -------
        OrdinalModel
            Or, when the formula has random terms ``(expr | group)`` (R's ``clmm``), an
            :class:`~ordstats.estimation.mixed.OrdinalMixedModel`.
        """
        check_formula_text(formula)
        opts = ModelOptions.from_keywords(options)
        caller = capture_context(1) if context is None else context
        if subset is not None and design is not None:
            raise SpecificationError(
                "subset= is not available with a survey design: for a survey domain use "
                "design.subset(...)"
            )
        formula, nominal, scale = _with_r_column_names(  # R's "y ~ ." and "y ~ Solar.R"
            formula, nominal, scale, data if design is None else design, chunksize
        )

        formula, thres_by = split_threshold_groups(formula)
        if thres_by is not None and (subset is not None or contrasts is not None):
            raise SpecificationError(
                "subset= and contrasts= are not available with thres(gr = ...): subset the "
                "data first, and code the factors with C(x, contr.sum) in the formula"
            )
        given = data  # the caller's name for it (summary's data: line), also when subset
        if subset is not None and (chunksize is not None or is_source(data)):
            # data read in chunks: the selected rows become the data (row-wise selections)
            data, subset = subset_source(subset, data, caller), None
        if thres_by is not None:  # y | thres(gr = g) ~ ...: a nominal effect of g
            return grouped_threshold_model(
                cls,
                formula,
                data,
                thres_by,
                nominal=nominal,
                scale=scale,
                weights=weights,
                offset=offset,
                context=caller,
                chunksize=chunksize,
                design=design,
                **options,
            )
        if design is not None:
            data, weights = survey_data(design, data, weights, chunksize, formula)
        coding = r_contrasts(contrasts)
        if isinstance(data, pd.DataFrame):
            subset = subset_mask(subset, data, caller)
        # after capturing the caller's frame: a decorator would hide it
        with numeric_threads(), requested_contrasts(coding):  # BLAS products in the checks too
            if has_random_terms(formula):
                if chunksize is not None or is_source(data):
                    raise SpecificationError(
                        "random effects need the data in memory (a DataFrame) for now"
                    )
                mixed = OrdinalMixedModel.from_formula(
                    formula,
                    data,
                    nominal=nominal,
                    scale=scale,
                    weights=weights,
                    offset=offset,
                    context=caller,
                    subset=subset,
                    **options,
                )
                mixed.data_name = _data_name(given, caller)
                return mixed  # type: ignore[return-value]
            name = _data_name(given, caller)
            with _plain_formula_errors(formula):
                captured = used_context(
                    caller,
                    (formula, nominal, scale, weights, offset),
                    *_columns_and_rows(data),
                )
                if chunksize is not None or is_source(data):
                    design, evaluator = build_chunked(
                        formula,
                        data,
                        family=opts.family_object(),
                        threshold=opts.threshold,
                        design_options=opts.design_options(),
                        weights=weights,
                        offset=offset,
                        nominal=nominal,
                        scale=scale,
                        context=captured,
                        chunksize=chunksize,
                    )
                    model = cls.from_design(
                        design, opts, evaluator=evaluator, context=evaluator.spec.context
                    )
                    model.data_name = name
                    # the opened source, so that term tests re-read the same chunks
                    model._formula_source = _FormulaSource(
                        evaluator.source, weights, offset, captured, contrasts=coding
                    )
                    return model
                built = design_from_formula(
                    formula,
                    data,
                    nominal=nominal,
                    scale=scale,
                    weights=weights,
                    offset=offset,
                    context=captured,
                    options=opts.design_options(),
                    subset=subset,
                )
            model = cls.from_design(built, opts, context=captured)
            model.data_name = name
            # an offset(...) term of the formula is the model's offset in its refits
            given_offset = offset if offset is not None else built.offset_name
            model._formula_source = _FormulaSource(
                data, weights, given_offset, captured, subset=subset, contrasts=coding
            )
            model.survey_design = design
            return model

    @property
    def can_refit_formulas(self) -> bool:
        """Whether :meth:`refit_formulas` can rebuild this model from its formulas."""
        return self._formula_source is not None and self.design.formula is not None

    def refit_formulas(
        self,
        *,
        nominal: str | None = None,
        scale: str | None = None,
        location: str | None = None,
        collinear: CollinearAction | None = None,
        contrasts: Mapping[str, Any] | None = None,
    ) -> OrdinalModel | None:
        """The same formula model with other nominal and scale formulas (R's ``update()``).

        The new model is built from the same DataFrame (or the same source
        read in chunks: files, Dask), weights, offset, names and options, so
        terms are coded as R codes them in their new formula (``scale = ~
        temp:contact`` alone gets its own dummies) and aliased columns are
        dropped as at the first fit.  ``None`` when the model was not built
        from a formula in this session (arrays, or after pickling or
        ``remove_data()``).

        Parameters
        ----------
        nominal, scale : str, optional
            One-sided formulas (``"~ contact + temp"``); ``None`` keeps none.
        location : str, optional
            Other location terms (``"temp + contact"``); ``None`` keeps the model's.
        collinear : {"drop", "raise", "keep"}, optional
            Another rule for aliased columns; ``None`` keeps the model's.
        contrasts : dict, optional
            Other contrasts for some factor columns (R's ``contrasts = list(f =
            "contr.treatment")``), over the model's own.

        Returns
        -------
        OrdinalModel or None
        """
        source, formula = self._formula_source, self.design.formula
        if source is None or formula is None:
            return None
        if location is not None:
            formula = f"{formula.split('~', 1)[0].strip()} ~ {location}"
        options = self.options if collinear is None else replace(self.options, collinear=collinear)
        coding = {**source.contrasts, **r_contrasts(contrasts)}
        with requested_contrasts(coding):
            return self._rebuilt(source, formula, nominal, scale, options)

    def update(self, formula: str | None = None, **changes: Any) -> OrdinalModel:
        """The model with another formula or options (R's ``update(fit, formula, ...)``).

        In ``formula`` R's ``.`` stands for the model's own terms (and its
        response): ``"~ . - contact"``, ``"~ . + temp:contact"``, ``". ~ . + x"``
        or a whole new formula.  The model is built from the same data (the same
        files for data read in chunks), weights, offset, subset, contrasts and
        options, except those given in ``changes``.

        Parameters
        ----------
        formula : str, optional
            The new formula; default the model's.
        **changes
            ``nominal=``, ``scale=`` (``.`` stands for the model's own nominal
            or scale terms; ``None`` drops them), ``weights=``, ``offset=``,
            ``subset=`` (``None`` drops them), ``data=`` (another DataFrame, for
            a model fitted in memory) or any option (``link=``, ``threshold=``,
            ``family=``, ``levels=``, ...).

        Returns
        -------
        OrdinalModel
            Unfitted; :meth:`OrdinalResults.update` also fits it.

        Raises
        ------
        SpecificationError
            For a model not built from a formula in this session (from arrays,
            unpickled, or after ``remove_data()``), a survey design's model, an
            unknown keyword, ``data=`` for data read in chunks, or ``data=``
            without new ``weights=`` / ``offset=`` when the model's were arrays
            (they pair by position with the old rows; column names and Series
            follow the new data).
        """
        source, old = self._formula_source, self.design.formula
        if source is None or old is None:
            raise SpecificationError(
                "update() rebuilds the model from its formula and data, which this model does "
                "not hold (built from arrays, unpickled, or after remove_data()): build it "
                "again with OrdinalModel.from_formula"
            )
        if getattr(self, "survey_design", None) is not None:
            raise SpecificationError(
                "update() of a survey design's model is not available: build it again with "
                "OrdinalModel.from_formula(..., design=...)"
            )
        known = ["nominal", "scale", *_UPDATE_SOURCE, *ModelOptions.names()]
        unknown = [name for name in changes if name not in known]
        if unknown:
            raise SpecificationError(
                f"update() got the unknown keyword(s) {', '.join(map(repr, unknown))}; it takes "
                f"{', '.join(known)}"
            )
        new = old if formula is None else update_formula(old, formula)
        if has_random_terms(new):
            raise SpecificationError(
                "update() cannot add random terms (a clmm is another kind of model): build it "
                f"with OrdinalModel.from_formula({new!r}, ...)"
            )
        nominal = update_one_sided(
            self._formula_of("nominal"),
            changes.pop("nominal", self._formula_of("nominal")),
            "nominal",
        )
        scale = update_one_sided(
            self._formula_of("scale"), changes.pop("scale", self._formula_of("scale")), "scale"
        )
        other_data = "data" in changes
        source = self._updated_source(source, changes)
        options = self.options.replace(changes) if changes else self.options
        new, nominal, scale = _with_r_column_names(new, nominal, scale, source.data, None)
        with _plain_formula_errors(new), requested_contrasts(source.contrasts):
            model = self._rebuilt(source, new, nominal, scale, options)
        if other_data:  # the summary's data: line named the old data
            model.data_name = None
        return model

    def _formula_of(self, part: str) -> str | None:
        """The model's nominal or scale formula (``"~ terms"``), None without one."""
        terms = getattr(self.design, part, None)
        text = getattr(terms, "formula", None)
        return None if not text else f"~ {text}"

    def _updated_source(self, source: _FormulaSource, changes: dict[str, Any]) -> _FormulaSource:
        """``source`` with the data, weights, offset or subset in ``changes`` (taken out)."""
        given = {name: changes.pop(name) for name in _UPDATE_SOURCE if name in changes}
        if "data" in given:
            if not self.evaluator.keeps_rows or not isinstance(given["data"], pd.DataFrame):
                raise SpecificationError(
                    "update(data=...) takes a DataFrame for a model fitted in memory; for data "
                    "read in chunks build the model again with OrdinalModel.from_formula"
                )
        if "data" in given:
            _refuse_positional_rows(source, given)
        if "data" in given and source.subset is not None and "subset" not in given:
            raise SpecificationError(
                "the model was fitted to a subset of its data: pass subset= for the new data "
                "too (or subset=None for all of its rows)"
            )
        if "subset" in given and isinstance(given.get("data", source.data), pd.DataFrame):
            frame = given.get("data", source.data)
            given["subset"] = subset_mask(given["subset"], frame, source.context)
        elif "subset" in given and given["subset"] is not None:
            raise SpecificationError(
                "update(subset=...) takes rows of a DataFrame; for data read in chunks build "
                "the model again with OrdinalModel.from_formula(..., subset=...)"
            )
        return replace(source, **given) if given else source

    def _rebuilt(
        self,
        source: _FormulaSource,
        formula: str,
        nominal: str | None,
        scale: str | None,
        options: ModelOptions,
    ) -> OrdinalModel:
        """:meth:`refit_formulas` once the formula source is known, with ``options``."""
        if not self.evaluator.keeps_rows:  # two passes (levels, summary) over the source
            design, evaluator = build_chunked(
                formula,
                source.data,
                family=self.family_spec,
                threshold=options.threshold,
                design_options=options.design_options(),
                weights=source.weights,
                offset=source.offset,
                nominal=nominal,
                scale=scale,
                context=source.context,
                chunksize=None,
            )
            model = OrdinalModel.from_design(
                design, options, evaluator=evaluator, context=evaluator.spec.context
            )
            model.data_name = self.data_name
            model._formula_source = source
            return model
        design = design_from_formula(
            formula,
            source.data,
            nominal=nominal,
            scale=scale,
            weights=source.weights,
            offset=source.offset,
            context=source.context,
            options=options.design_options(),
            subset=source.subset,
        )
        model = OrdinalModel.from_design(design, options, context=self.formula_context)
        model.data_name = self.data_name
        model._formula_source = source
        return model

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_formula_source"] = None  # the caller's DataFrame stays behind
        return state

    @classmethod
    def from_design(
        cls,
        design: Design,
        options: ModelOptions,
        *,
        evaluator: Evaluator | None = None,
        context: object = None,
    ) -> OrdinalModel:
        """Build a model from a checked design (the constructor behind all others).

        Parameters
        ----------
        design : Design
            Response, location/nominal/scale designs, weights and offset, as the
            formula layer (:mod:`ordstats.design`) builds them.
        options : ModelOptions
        evaluator : Evaluator, optional
            Where the rows live; default: the design's rows in memory.
        context : mapping, optional
            Names the formula may use, kept for predictions on new data.

        Returns
        -------
        OrdinalModel
        """
        model = cls.__new__(cls)
        model._setup(design, options, evaluator=evaluator, context=context)
        return model

    def _setup(
        self,
        design: Design,
        options: ModelOptions,
        *,
        evaluator: Evaluator | None = None,
        context: object = None,
    ) -> None:
        family = options.family_object()
        if not family.capabilities.latent_variable:  # censoring is on the latent scale
            refuse_censored(design.response, f"family={family.name!r}")
        levels = design.response.levels
        fixed = isinstance(options.threshold, tuple)
        if fixed and design.nominal is not None:
            raise SpecificationError(
                "fixed thresholds cannot have nominal effects: a nominal effect per cut-point "
                "would free them again; drop nominal= or estimate the thresholds"
            )
        #: fixed cut-points ``c`` of ``theta = J a + c`` (zeros unless ``threshold=[...]``)
        self.threshold_offset = threshold_offset(options.threshold, len(levels) - 1)
        if evaluator is None:
            jacobian = model_jacobian(options.threshold, len(levels) - 1, family)
            evaluator = InMemoryEvaluator.from_design(
                design, family, jacobian, self.threshold_offset if fixed else None
            )
        self.options = options
        self.design = design
        self.evaluator: Evaluator = evaluator
        #: the :class:`~ordstats.families.Family` that fits and predicts
        self.family_spec = family
        #: the names the formulas use (:class:`~ordstats.estimation.context.FormulaContext`)
        self.formula_context = _as_context(context)
        #: what the data were called (variable name or path), for the summary
        self.data_name: str | None = None
        #: the survey design of a model built with ``design=`` (None otherwise)
        self.survey_design: Any = None
        #: the DataFrame and row arguments of an in-memory formula model, so that term
        #: tests refit updated formulas as R's ``update()`` does; not pickled
        self._formula_source: _FormulaSource | None = None
        #: the censored levels' tie patterns fitted before this model (see ``fit``)
        self._censored_visited: frozenset[bytes] = frozenset()
        self.threshold_param_names = family.parameter_names(options.threshold, levels)
        self.nominal_names = list(design.nominal.names) if design.nominal else []
        self.exog_names = list(design.location.names)
        self.scale_names = list(design.scale.names) if design.scale else []
        self.param_names = (
            self.threshold_param_names
            + [f"{thr}:{term}" for term in self.nominal_names for thr in self.threshold_param_names]
            + self.exog_names
            + [f"scale:{term}" for term in self.scale_names]
            + (["lambda"] if self.problem.layout.n_lambda else [])
        )
        _refuse_repeated_names(self.param_names)

    def with_changes(
        self,
        *,
        response: EncodedResponse | None = None,
        location: TermsDesign | None = None,
        nominal: TermsDesign | None = None,
        scale: TermsDesign | None = None,
        weights: FloatArray | None = None,
        **options: object,
    ) -> OrdinalModel:
        """The same model with some parts changed: one path for every refit.

        Term tests, Brant's test and link comparisons refit through this method,
        so the new model keeps everything not named here: family, link,
        threshold structure, rows, weights, offset, formula context and where
        the rows live.  A change the evaluator cannot serve raises.

        Parameters
        ----------
        response : EncodedResponse, optional
            A replacement response on the same rows (Brant's binary models).
        location, nominal, scale : TermsDesign, optional
            Replacement designs for these parts (same rows).
        weights : ndarray, shape (n,), optional
            Replacement row weights (rows in memory only), e.g. how often each
            row is drawn in a bootstrap sample.
        **options
            Replacement options (e.g. ``link="probit"``), validated as in
            :class:`~ordstats.ModelOptions`.

        Returns
        -------
        OrdinalModel
        """
        opts = self.options.replace(options) if options else self.options
        parts = (response, location, nominal, scale, weights)
        changed = any(part is not None for part in parts)
        if isinstance(self.evaluator, DataRemovedEvaluator):
            raise NotFittedError(_REMOVED)
        if not self.evaluator.keeps_rows:
            if (
                location is not None
                and all(p is None for p in (response, nominal, scale, weights))
                and not options
            ):
                return self._with_chunked_columns(location)
            return self._with_chunked_changes(changed, options, opts)
        old = self.design
        design = replace(
            old,
            response=old.response if response is None else response,
            location=old.location if location is None else location,
            nominal=old.nominal if nominal is None else nominal,
            scale=old.scale if scale is None else scale,
            weights=old.weights if weights is None else np.asarray(weights, dtype=float),
        )
        model = OrdinalModel.from_design(design, opts, context=self.formula_context)
        model.data_name = self.data_name
        return model

    def dichotomized(self, cut: int) -> OrdinalModel:
        """The binary model of ``Y > levels[cut]`` on the same rows (Brant's test).

        Same location terms, weights, offset, link and rows; one flexible
        threshold.  For data read in chunks the response is recoded in each
        chunk as it is read.

        Parameters
        ----------
        cut : int
            Code of the highest level counted as "not above" (0 to K - 2).

        Returns
        -------
        OrdinalModel
        """
        top = len(self.levels) - 2
        if isinstance(cut, (bool, np.bool_)) or not isinstance(cut, (int, np.integer)):
            raise SpecificationError(
                f"cut is the code of a level (0 to {top}: 0 is {self.levels[0]!r}); got {cut!r}"
            )
        if not 0 <= cut <= top:
            raise SpecificationError(f"cut must be 0 to {top} (a level below the top); got {cut}")
        name = f"{self.endog_name} > {cut}"
        if not isinstance(self.evaluator, ChunkedEvaluator):  # rows in memory (or removed)
            above = encode_response(self.data.y > cut, name=name)
            return self.with_changes(response=above, threshold="flexible")
        levels = encode_response(np.array([False, True]), name=name)
        design = replace(self.design, response=replace(levels, codes=levels.codes[:0]))
        options = self.options.replace({"threshold": "flexible"})
        return OrdinalModel.from_design(
            design,
            options,
            evaluator=self.evaluator.dichotomized(cut),
            context=self.formula_context,
        )

    def without_data(self) -> OrdinalModel:
        """The same model without its rows (for :meth:`OrdinalResults.remove_data`).

        Names, levels, formula terms and sizes stay, so new data can be
        predicted; anything that reads the rows raises
        :class:`~ordstats.errors.NotFittedError`.
        """
        old = self.design

        def empty(terms: TermsDesign | None) -> TermsDesign | None:
            return None if terms is None else replace(terms, matrix=terms.matrix[:0])

        design = replace(
            old,
            response=replace(
                old.response,
                codes=old.response.codes[:0],
                lower_codes=None
                if old.response.lower_codes is None
                else old.response.lower_codes[:0],
                bounds=None,
            ),
            location=replace(old.location, matrix=old.location.matrix[:0]),
            nominal=empty(old.nominal),
            scale=empty(old.scale),
            weights=old.weights[:0],
            offset=old.offset[:0],
            scale_offset=None if old.scale_offset is None else old.scale_offset[:0],
            row_index=old.row_index[:0],
            row_positions=None,
        )
        model = OrdinalModel.from_design(
            design,
            self.options,
            evaluator=DataRemovedEvaluator(self.evaluator),
            context=self.formula_context,
        )
        model.data_name = self.data_name
        return model

    def _with_chunked_columns(self, location: TermsDesign) -> OrdinalModel:
        """Data read in chunks with some of its location columns (the term tests' refits).

        The rows stay those of the fit: the columns dropped are still read and
        still select the rows with missing values, as in memory.
        """
        names = list(self.design.location.names)
        if location.spec is not None or not set(location.names) <= set(names):
            raise SpecificationError(
                "refitting a model read in chunks with other location terms is available "
                "only for some of its own columns; build the other model with "
                "OrdinalModel.from_formula on the same data and compare the fits with lr_test"
            )
        kept = [names.index(name) for name in location.names]
        evaluator = self.evaluator.with_location_columns(kept)  # type: ignore[attr-defined]
        design = replace(self.design, location=location)
        return OrdinalModel.from_design(
            design, self.options, evaluator=evaluator, context=self.formula_context
        )

    def _with_chunked_changes(
        self, changed: bool, options: dict[str, object], opts: ModelOptions
    ) -> OrdinalModel:
        """Refits of data read in chunks: the same columns under another link or family."""
        if changed or set(options) - {"link", "family", "reverse"}:
            why = (
                "needs its data source, which a model read in chunks does not keep when pickled"
                if self.source is None
                else "is not available for data read in chunks"
            )
            raise SpecificationError(
                f"refitting a model read in chunks with other terms, responses or threshold "
                f"options {why}; build the other model with OrdinalModel.from_formula on the "
                "same data (nominal=..., scale=...) and compare the fits with lr_test"
            )
        evaluator = self.evaluator.with_family(opts.family_object())
        return OrdinalModel.from_design(
            self.design, opts, evaluator=evaluator, context=self.formula_context
        )

    # -- descriptive ----------------------------------------------------------

    @property
    def family(self) -> str:
        """``"cumulative"``, ``"sratio"``, ``"cratio"`` or ``"acat"``."""
        return self.family_spec.name

    @property
    def reverse(self) -> bool:
        """VGAM's ``reverse=``."""
        return self.family_spec.reverse

    @property
    def link(self) -> Link:
        """The link (the distribution ``F``)."""
        return self.family_spec.link

    @property
    def threshold(self) -> Structure:
        """The threshold structure, or the fixed cut-points (a tuple)."""
        return self.options.threshold

    @property
    def problem(self) -> Any:
        """The family's prepared likelihood problem (its ``layout`` orders the parameters)."""
        return self.evaluator.problem

    @property
    def data(self) -> Any:
        """The likelihood arrays (:class:`~ordstats.families.problem.CLMData`).

        Raises :class:`~ordstats.errors.NotFittedError` for data read in chunks.
        """
        return self.evaluator.data

    @property
    def threshold_jacobian(self) -> Any:
        """``J`` with ``theta = J alpha``."""
        return self.problem.data.threshold_jacobian

    @property
    def source(self) -> Any:
        """Where the rows are read from for data read in chunks (None: in memory)."""
        return getattr(self.evaluator, "source", None)

    @property
    def levels(self) -> list[str]:
        """Response level labels, lowest first."""
        return list(self.design.response.levels)

    @property
    def endog_name(self) -> str:
        """Name of the response."""
        return self.design.response_name

    @property
    def endog_names(self) -> str:
        """Name of the response (statsmodels' name; ``exog_names`` lists the regressors)."""
        return self.endog_name

    @property
    def nobs(self) -> float:
        """Number of observations: the sum of the weights (as R's ``nobs``)."""
        return self.evaluator.nobs

    @property
    def n_rows(self) -> int:
        """Rows used in the fit."""
        return self.evaluator.n_rows

    @property
    def k_params(self) -> int:
        """Number of free parameters."""
        return int(self.problem.layout.n_params)

    @property
    def response_counts(self) -> FloatArray:
        """Weighted number of observations per response level."""
        return self.evaluator.response_counts

    @property
    def has_offset(self) -> bool:
        """Whether the model has a non-zero offset."""
        return self.evaluator.has_offset

    @property
    def has_weights(self) -> bool:
        """Whether any weight differs from one."""
        return self.evaluator.has_weights

    def null_loglike(self) -> float:
        """Log-likelihood of the thresholds-only model on the same rows and weights."""
        censored = self.design.response.censoring is not None
        if self.threshold == "flexible" and not self.has_offset and not censored:
            # the saturated multinomial of the level counts (a censored row spans levels)
            counts = self.response_counts
            return float(counts @ np.log(counts / counts.sum()))
        model: OrdinalModel | None = self
        visited: frozenset[bytes] = frozenset()  # the null model's own tie patterns
        while model is not None:  # a censored response's thresholds kept in order, as in fit
            null = model.evaluator.without_location()
            start = (
                null.start_params() if self.link.log_concave else self._probit_start(null, False)
            )
            solution = null.newton(
                start, NewtonOptions(), callback=None, progress=False, banded=False
            )
            step = (
                model._censored_active_set_step(solution.x, null=True, visited=visited)
                if censored
                else None
            )
            visited = visited if step is None else step._censored_visited
            model = step
        if not solution.converged:
            # e.g. a flexible link whose parameter runs off to infinity without predictors:
            # the last iterate depends on the path (in memory or in chunks), so say so
            warnings.warn(
                "the thresholds-only model behind llnull (and llr, pseudo R-squared) did not "
                f"converge ({solution.message}); llnull is its last iterate, below the "
                "maximum, and may differ between fits of the same rows. Compare fits with "
                "lr_test() instead",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        return -float(solution.evaluation.nll)

    def __repr__(self) -> str:
        spec = r_label(self.design.formula) if self.design.formula else f"{self.endog_name} ~ exog"
        fam = "" if self.family == DEFAULT_FAMILY else f"family={self.family_spec.label!r}, "
        where = "" if self.source is None else f", source={self.source!r}"
        if isinstance(self.evaluator, DataRemovedEvaluator):
            where = ", data removed"
        return f"OrdinalModel({spec!r}, {fam}link={self.link.name!r}, nobs={self.nobs:g}{where})"

    # -- likelihood -----------------------------------------------------------

    def _aligned_params(self, params: Any) -> Any:
        """A Series labelled by parameter names in the order of :attr:`param_names`.

        pandas users expect labels to be matched: ``res.params.iloc[::-1]`` gave
        the log-likelihood of the parameters in the wrong slots (``-inf``).  A
        Series with the default ``RangeIndex`` is read by position, as an array.
        """
        if not isinstance(params, pd.Series) or isinstance(params.index, pd.RangeIndex):
            return params
        missing = [n for n in self.param_names if n not in params.index]
        unknown = [n for n in params.index if n not in self.param_names]
        problems = []
        if missing:
            problems.append(f"lacks the parameter(s) {', '.join(map(repr, missing))}")
        if unknown:  # e.g. the params of another model: not silently dropped
            problems.append(
                f"has label(s) {', '.join(map(repr, unknown))} that are not parameters of "
                "this model"
            )
        if problems:
            raise SpecificationError(
                f"params {' and '.join(problems)}; give {self.k_params} values in the "
                "order of model.param_names or a Series with those labels"
            )
        return params[self.param_names]

    def _check_params(self, params: Any) -> FloatArray:
        """``params`` as a float vector of :attr:`k_params` values, or a clear error."""
        params = self._aligned_params(params)
        try:
            arr = np.asarray(params, dtype=float)
        except (TypeError, ValueError):
            raise self._not_finite_numbers(f"; got {params!r}") from None
        if arr.shape != (self.k_params,):
            raise SpecificationError(
                f"params must have {self.k_params} values ({', '.join(self.param_names)}); "
                f"got shape {arr.shape}"
            )
        return arr

    def evaluate(self, params: object) -> FamilyEvaluation:
        """Evaluate the negative log-likelihood and its derivatives at ``params``.

        For data read in chunks this is one pass over the data.
        """
        return self.evaluator.evaluate(self._check_params(params))

    def loglike(self, params: Any) -> float:
        """Log-likelihood at ``params`` (``-inf`` if the thresholds are disordered)."""
        return -self.evaluate(params).nll

    def score(self, params: Any) -> FloatArray:
        """Gradient of the log-likelihood at ``params``."""
        return -self.evaluate(params).gradient

    def hessian(self, params: Any) -> FloatArray:
        """Hessian of the log-likelihood at ``params`` (minus the observed information)."""
        return -self.evaluate(params).hessian

    def predict(
        self,
        params: Any = None,
        exog: Any = None,
        offset: Any = None,
        which: str = "prob",
    ) -> pd.DataFrame | pd.Series:
        """Predict at given parameter values (statsmodels' ``OrderedModel.predict``).

        To predict from a fit use ``res = model.fit(); res.predict(newdata)``;
        this model-level form takes the parameters explicitly, as statsmodels'.

        Parameters
        ----------
        params : array-like or pandas.Series
            Values in the order of :attr:`param_names` (a Series is aligned on
            its labels), e.g. ``res.params`` of a fit.
        exog : DataFrame, array-like or large source, optional
            New rows (``newdata`` of :meth:`OrdinalResults.predict`); default:
            the rows of the model.
        offset : float or array-like, optional
            Offset for ``exog`` (see :meth:`OrdinalResults.predict`).
        which : {"prob", "cumprob", "class", "expected", "linear"}
            As :meth:`OrdinalResults.predict`; statsmodels' ``"linpred"`` and
            ``"cum"`` are taken for ``"linear"`` and ``"cumprob"``.

        Returns
        -------
        pandas.DataFrame or pandas.Series

        Raises
        ------
        NotFittedError
            Without ``params``: fit the model first, or pass the parameters.
        """
        if params is None:
            raise NotFittedError(
                "OrdinalModel.predict(params, exog) needs parameter values: fit the model "
                "and predict from the result (res = model.fit(); res.predict(newdata)), or "
                "pass params (e.g. res.params), as statsmodels' model.predict"
            )
        values = self._predict_params(params)
        which = {"linpred": "linear", "cum": "cumprob"}.get(which, which)  # statsmodels' names
        result = OrdinalResults._at_params(self, values)
        return result.predict(exog, which=which, offset=offset)  # type: ignore[arg-type]

    def _predict_params(self, params: Any) -> FloatArray:
        """``params`` for :meth:`predict`: a Series is aligned on the parameter names."""
        if isinstance(params, pd.DataFrame) or is_source(params):
            raise SpecificationError(
                "the first argument of OrdinalModel.predict is params, the parameter values "
                "(statsmodels' signature); to predict for new rows from a fit use "
                "res.predict(newdata), or model.predict(res.params, exog=newdata)"
            )
        values = self._check_params(params)
        if not np.all(np.isfinite(values)):
            raise self._not_finite_numbers()
        self._refuse_decreasing_thresholds(values)
        return values

    def _check_start(self, start_params: Any) -> FloatArray:
        """``start_params`` as :meth:`_check_params` reads them, refused unless all are finite.

        Checked before the first evaluation, which would warn of the values
        (numpy's ``invalid value``) before its own error.
        """
        values = self._check_params(start_params)
        bad = ~np.isfinite(values)
        if bad.any():
            names = [name for name, b in zip(self.param_names, bad, strict=True) if b]
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            raise self._not_finite_numbers(
                f"; start_params has {int(bad.sum())} non-finite value(s) (at {shown}): give "
                "finite start_params with increasing thresholds, or leave start_params out "
                "for the default start"
            )
        return values

    def _not_finite_numbers(self, got: str = "") -> SpecificationError:
        return SpecificationError(
            f"params must be {self.k_params} finite numbers ({', '.join(self.param_names)}){got}"
        )

    def _refuse_decreasing_thresholds(self, params: FloatArray) -> None:
        """Cumulative cut-points from given ``params`` must increase (without nominal effects).

        With nominal effects the cut-points depend on the row, and predictions
        warn about the rows where they cross.
        """
        lay = self.problem.layout
        if lay.n_nominal_cols or not self.family_spec.ordered_cutpoints:
            return
        theta = threshold_matrix(
            params[lay.thresholds], self.threshold_jacobian, None, self.threshold_offset
        )
        if crossing_rows(theta).size:
            raise SpecificationError(
                "the thresholds given in params do not increase "
                f"({', '.join(f'{v:g}' for v in theta[0])}), so some probabilities would be "
                "negative; give increasing thresholds, in the order of model.param_names"
            )

    @property
    def start_params(self) -> FloatArray:
        """Default starting values (marginal thresholds, zero effects)."""
        return self.evaluator.start_params()

    # -- fitting --------------------------------------------------------------

    def fit(
        self,
        start_params: Any = None,
        method: str = "newton",
        *,
        maxiter: int = 100,
        gradtol: float = 1e-6,
        reltol: float = 1e-6,
        disp: bool | None = None,
        check_separation: bool = True,
        cov_type: str = "nonrobust",
        cov_kwds: dict[str, Any] | None = None,
        banded: bool | None = None,
        penalty: str | None = None,
        warm_start: bool | None = None,
        prior: object = None,
    ) -> Any:
        """Fit the model by Newton-Raphson with analytic gradient and Hessian.

        Parameters
        ----------
        start_params : array-like, optional
            Starting values in the order of :attr:`param_names`.
        method : str
            ``"newton"`` (default): Newton-Raphson with the analytic Hessian, as
            R's ``clm``.  statsmodels' and scipy's names (``"bfgs"``,
            ``"lbfgs"``, ``"cg"``, ``"ncg"``, ``"nm"``, ``"powell"``,
            ``"trust-constr"``; see :data:`ordstats.core.prefit.FIT_METHODS`)
            run that scipy optimiser first and end with the Newton polish, so
            the estimates are the same; ``mle_retvals`` reports both stages.
        maxiter : int
            Maximum Newton iterations (R's ``maxIter``).
        gradtol : float
            Tolerance on ``max|gradient|`` (R's ``gradTol``).  A Firth fit
            (``penalty="firth"``) stops when its penalised score is below a tenth
            of it: its steps leave out the penalty's curvature, so they close in
            on the estimate more slowly.
        reltol : float
            Tolerance on ``max|Newton step|`` (R's ``relTol``, absolute as in R;
            relative for parameters beyond 10^6 in size).
        disp : bool, optional
            Print one line per iteration.  For data read in chunks: a progress
            bar with one tick per pass when a terminal or notebook is watching
            (default), nothing with ``disp=False``.
        check_separation : bool
            Check for (quasi-)complete separation and mark diverging estimates.
        cov_type : {"nonrobust", "robust", "HC0", "HC1", "cluster", "expected", "none"}
            Covariance of the estimates behind ``bse``, tests and the summary:
            the inverse observed information, a sandwich estimator (see
            :mod:`ordstats.results.covariance`) or the inverse expected information
            (``"expected"``, VGAM's standard errors).  The observed-information
            covariance stays available as ``nonrobust_covariance``.  ``"none"``
            (as in statsmodels' state-space models) is for fits that only
            predict: no covariance is computed at the fit, and Newton may judge
            its last step with the previous iteration's Hessian instead of
            computing one at the estimates
            (:attr:`~ordstats.core.solver.NewtonOptions.final_hessian`); the
            inverse observed information is still there, computed when ``bse``
            or anything else first needs it.
        cov_kwds : dict, optional
            For ``"cluster"``: ``{"groups": ...}``, the name of the column of
            cluster labels (any data; read from the rows the fit used) or, for a
            DataFrame in memory, the labels themselves (a Series aligned on the
            data's index or one label per row used); and ``"use_correction"``.
        banded : bool, optional
            Treat the threshold block of the Hessian as tridiagonal (flexible
            thresholds without nominal effects; see :mod:`ordstats.families.cumulative.banded`), so
            that thousands of levels cost little more than a few.  Default: when
            there are more than 50 thresholds.  The estimates are the same.
        penalty : {None, "firth"}
            ``"firth"``: maximise ``loglik + log det I / 2`` (Jeffreys prior,
            Firth 1993; brglm2's ``MPL_Jeffreys``) with ``I`` the expected
            information, which gives finite estimates under separation.  For
            the binary and adjacent-category logit it is also brglm2's mean
            bias reduction (``AS_mean``), for other links not; the result is a
            :class:`~ordstats.results.regularized.PenalizedResults` whose
            standard errors are the inverse expected information (brglm2's).
            See :mod:`ordstats.estimation.penalized`.  For the elastic net use
            :meth:`fit_regularized`.
        warm_start : bool, optional
            Start the iterations at the estimates on a random 5% subsample of
            the rows (fixed seed; at least 5,000 rows and 50 of each level), so
            that the full data take two or three Newton iterations instead of
            five or six (:mod:`ordstats.estimation.warm_start`).  The estimates
            are the full data's either way; ``mle_retvals["warm_start_rows"]``
            says how many rows the subsample had (0: not used).  Default: for
            at least 20,000 rows, Newton's method, the default start and at
            most 50 thresholds.  ``False`` never; ``True`` also for fewer rows.
            Data read in chunks or from Dask keep the subsample (at most
            200,000 rows) in their first pass; ``mle_retvals["passes"]`` counts
            the passes over the data that the fit made.
        prior : optional
            A Bayesian fit with brms' priors: :func:`ordstats.prior` (or a list of
            them, a dict such as ``{"b": "normal(0, 1)"}``, or ``"default"`` for
            brms' defaults).  Returns the posterior mode, a
            :class:`~ordstats.results.posterior.PosteriorMode`, whose
            ``posterior(draws=4000)`` draws from the posterior
            (:mod:`ordstats.estimation.bayes`).

        Returns
        -------
        OrdinalResults
            With ``prior``: a :class:`~ordstats.results.posterior.PosteriorMode`.
            For a censored response the fit keeps the thresholds in order by tying
            those of levels the maximum gives no probability (see
            :mod:`ordstats.design.censored`); the results' ``model`` then has the
            levels kept, and may differ from this model.

        Warns
        -----
        ConvergenceWarning
            If the convergence criteria were not met.
        SeparationWarning
            If the data are separated, so that some estimates diverge.
        """
        with numeric_threads(), _source_cache_released(self.source):
            estimates_only = isinstance(cov_type, str) and cov_type.lower() == "none"
            kind = "nonrobust" if estimates_only else _fit_cov_type(cov_type)
            _check_fit_flags(disp=disp, check_separation=check_separation, banded=banded)
            if cov_kwds and kind in ("nonrobust", "expected"):
                raise SpecificationError(
                    f"cov_kwds={cov_kwds!r} is read with cov_type='cluster' (groups) or the "
                    f"robust types; with cov_type={cov_type!r} it would be ignored: drop it or "
                    "choose the cov_type it is meant for"
                )
            method = canonical_method(method)
            options = newton_options(maxiter, gradtol, reltol)
            if estimates_only:
                options = replace(options, final_hessian=False)
            if prior is not None:
                self._refuse_survey_design("Bayesian fits (prior=)")
                if kind != "nonrobust" or cov_kwds:
                    raise SpecificationError(
                        "a Bayesian fit (prior=) describes its uncertainty by the posterior "
                        "(.posterior(draws=...)), so cov_type= and cov_kwds= do not apply: "
                        "leave them out"
                    )
            if penalty is not None:
                self._refuse_survey_design("penalised fits (penalty=)")
            if prior is not None:
                if penalty is not None:
                    raise SpecificationError(
                        "give prior= or penalty=, not both "
                        "(a prior is the penalty of a Bayesian fit)"
                    )
                self._require_free_thresholds("Bayesian fits")
                start = None if start_params is None else self._check_start(start_params)
                return bayes.fit_mode(self, prior, start_params=start, maxiter=maxiter)
            bayes.refuse_monotonic_ml(self)
            if penalty is not None:
                _refuse_firth_options(
                    method=method, reltol=reltol, disp=disp, banded=banded, warm_start=warm_start
                )
                return self._fit_penalized(penalty, start_params, options, kind, cov_type)
            use_banded = self._use_banded(banded)
            passes_before = getattr(self.evaluator, "n_passes", None)
            if start_params is not None:
                warm = WarmStart(self._check_start(start_params))
            elif self.problem.layout.n_lambda:
                warm = WarmStart(self._flexible_start(options))
            elif not self.link.log_concave:
                warm = WarmStart(self._probit_start(self.evaluator, use_banded))
            elif method == "newton" and not use_banded:
                warm = self._warm_start(self.start_params, options, warm_start)
            else:
                warm = WarmStart(self.start_params)
            first, start = None, warm.params
            if method != "newton":
                first = prefit(self.evaluator.evaluate, start, method)
                start = first.x
            solution = self._newton(
                start, options, disp=disp, banded=use_banded, initial_hessian=warm.hessian
            )
            diverging = self._diverging(solution) if check_separation else []
            info = FitInfo.from_solution(solution, diverging, self._crossing(solution.x))
            info = replace(info, method=method, prefit=first, warm_start_rows=warm.n_rows)
            if passes_before is not None:  # data read in chunks: passes are what a fit costs
                passes_after = getattr(self.evaluator, "n_passes", passes_before)
                predicted = bool(getattr(solution.evaluation, "predicted", False))
                info = replace(
                    info, n_passes=passes_after - passes_before, last_step_predicted=predicted
                )
            tied = self._censored_active_set_step(solution.x)
            if tied is not None:  # another set of tied thresholds: fit that model
                return tied.fit(
                    method=method,
                    maxiter=maxiter,
                    gradtol=gradtol,
                    reltol=reltol,
                    disp=disp,
                    check_separation=check_separation,
                    cov_type=cov_type,
                    cov_kwds=cov_kwds,
                    banded=banded,
                    warm_start=warm_start,
                )
            _warn_fit(info)
            self._warn_unordered_censored_thresholds(solution.x)
            results = OrdinalResults(
                self, solution.x, solution.evaluation, info, defer_covariance=estimates_only
            )
            if self.survey_design is not None:
                return survey_results(self, results, kind, disp)
            if kind == "nonrobust":
                return results
            return results.get_robustcov_results(kind, cov_kwds)

    def _refuse_survey_design(self, what: str) -> None:
        """Fits that would read a survey design's sampling weights as frequency weights."""
        if self.survey_design is not None:
            raise SpecificationError(
                f"{what} do not support survey designs: they would read the sampling weights "
                "as frequency weights and report standard errors that are not design-based; "
                "fit(), without penalty or prior, gives the design-based fit"
            )

    def _fit_penalized(
        self,
        penalty: str,
        start_params: Any,
        options: NewtonOptions,
        cov_kind: str,
        cov_type: object,
    ) -> OrdinalResults:
        if penalty != "firth":
            raise SpecificationError(
                f"fit(penalty=...) takes 'firth' (or None); got {penalty!r}. For ridge, lasso "
                "and elastic net use fit_regularized(alpha=..., L1_wt=...)"
            )
        if cov_kind not in {"nonrobust", "expected"}:
            raise SpecificationError(
                "penalty='firth' reports the inverse expected information; cov_type must be "
                f"'nonrobust' or 'expected', not {cov_type!r}"
            )
        self._require_free_thresholds("penalised fits")
        start = None if start_params is None else self._check_start(start_params)
        return penalized.fit_firth(
            self, start_params=start, maxiter=options.max_iter, gradtol=options.grad_tol / 10
        )

    def _require_elastic_net_model(self, what: str) -> None:
        """Raise for a model the elastic-net fits, paths and cross-validation cannot fit.

        Warns where aliased columns were dropped: a penalty estimates them, and
        the estimates differ without them (glmnet keeps every column).
        """
        self._refuse_survey_design("penalised fits (fit_regularized, path, cv)")
        refuse_threshold_groups_ml(self)
        self._require_free_thresholds(what)
        design = self.design
        dropped = [
            name
            for terms in (design.location, design.nominal, design.scale)
            if terms is not None
            for name in terms.aliased
        ]
        if dropped:
            warnings.warn(
                f"{', '.join(map(repr, dropped))} {'was' if len(dropped) == 1 else 'were'} "
                f"dropped as aliased (collinear='drop', R's clm rule) before these {what}; a "
                "penalty estimates aliased columns, and "
                "with them the estimates differ: build the model with collinear='keep' to "
                "penalise every column, as glmnet does",
                CollinearityWarning,
                stacklevel=user_stacklevel(),
            )

    def _require_free_thresholds(self, what: str) -> None:
        """Raise for a fixed-threshold model where ``what`` does not support it."""
        if isinstance(self.options.threshold, tuple):
            raise SpecificationError(
                f"{what} are not available with fixed thresholds yet; estimate the "
                "thresholds (threshold='flexible')"
            )

    def fit_regularized(
        self,
        method: str = "elastic_net",
        alpha: float = 0.0,
        L1_wt: float = 1.0,
        *,
        standardize: bool = False,
        nominal_weight: float = 1.0,
        start_params: Any = None,
        tol: float = 1e-7,
        maxiter: int = 200,
    ) -> PenalizedResults:
        r"""Elastic-net (ridge, lasso) fit on the slopes, as statsmodels' ``fit_regularized``.

        Minimises (glmnet's and scikit-learn's scaling)

        .. math::

            \frac{1}{n_w}\bigl(-\ell\bigr) + \alpha \sum_j c_j
            \Bigl(\mathrm{L1\_wt}\, |s_j b_j| + \frac{1 - \mathrm{L1\_wt}}{2}
            (s_j b_j)^2\Bigr),\qquad n_w = \sum_i w_i,

        over thresholds/intercepts (never penalised) and slopes ``b``
        (location effects ``c_j = 1``), with ``s_j`` the column standard
        deviations when ``standardize=True`` and 1 otherwise.  A nominal
        column's effects ``gamma_j`` (one per cut-point) are ``c + delta_j``,
        ``c`` penalised as a slope and each deviation ``delta_j`` with factor
        ``nominal_weight`` (ordinalNet's semi-parallel model).  Solved exactly by proximal
        Newton steps (the family's gradient and Hessian, coordinate descent on
        the penalised quadratic model, line search) to the KKT conditions
        within ``tol``.  Pure ridge (``L1_wt=0``) is the MAP estimate under
        Gaussian priors on the slopes.  Details in
        :mod:`ordstats.estimation.penalized`.

        Parameters
        ----------
        method : {"elastic_net"}
        alpha : float
            Penalty weight ``>= 0`` (glmnet's ``lambda``; scikit-learn's
            ``1 / (C n_w)``).
        L1_wt : float
            Share of the L1 penalty in ``[0, 1]`` (glmnet's ``alpha``,
            scikit-learn's ``l1_ratio``): 1 lasso, 0 ridge.
        standardize : bool
            Penalise ``s_j b_j`` (glmnet's ``standardize=TRUE``); estimates
            stay on the original scale.
        nominal_weight : float
            Penalty factor of the nominal effects' deviations from their
            common effect: shrinks them toward the parallel model (0: the
            deviations unpenalised).
        start_params : array-like, optional
            Default: the fit with every slope zero.
        tol : float
            Largest KKT violation accepted (scale of the objective above).
        maxiter : int

        Returns
        -------
        PenalizedResults
            Prints, predicts; ``bse`` is NaN unless ``L1_wt == 0`` (ridge
            sandwich ``(H + P)^{-1} H (H + P)^{-1}``).
        """
        with numeric_threads():  # thin products, as in a fit
            if method != "elastic_net":
                raise SpecificationError(f"method must be 'elastic_net'; got {method!r}")
            self._require_elastic_net_model("penalised fits")
            start = None if start_params is None else self._check_start(start_params)
            return penalized.fit_elastic_net(
                self,
                alpha,
                L1_wt,
                standardize=standardize,
                nominal_weight=nominal_weight,
                start_params=start,
                tol=tol,
                maxiter=maxiter,
            )

    def path(
        self,
        alphas: Any = None,
        *,
        n_alphas: int = 100,
        l1_ratio: float = 1.0,
        eps: float = 1e-3,
        standardize: bool = False,
        nominal_weight: float = 1.0,
        tol: float = 1e-7,
    ) -> RegularizationPath:
        """Elastic-net estimates along a warm-started path of penalties.

        Parameters
        ----------
        alphas : sequence of float, optional
            Penalties, fitted and returned in decreasing order (warm starts;
            as glmnet, which reorders a user's ``lambda``; read each row's
            ``alpha`` from the path).  Default: ``n_alphas``
            values log-spaced from ``alpha_max``, the smallest ``alpha`` at
            which every penalised slope is zero (from the gradient at the
            thresholds-only fit, glmnet's rule), down to ``eps * alpha_max``.
        n_alphas : int
        l1_ratio : float
            ``L1_wt`` of :meth:`fit_regularized`.
        eps : float
        standardize, nominal_weight, tol
            As in :meth:`fit_regularized`.

        Returns
        -------
        RegularizationPath
        """
        with numeric_threads():  # thin products, as in a fit
            self._require_elastic_net_model("regularisation paths")
            return penalized.regularization_path(
                self,
                alphas,
                n_alphas=n_alphas,
                l1_ratio=l1_ratio,
                eps=eps,
                standardize=standardize,
                nominal_weight=nominal_weight,
                tol=tol,
            )

    def cv(
        self,
        alphas: Any = None,
        *,
        n_alphas: int = 50,
        l1_ratio: float = 1.0,
        cv: int | Sequence[tuple[Any, Any]] = 5,
        scoring: str = "log_loss",
        standardize: bool = False,
        nominal_weight: float = 1.0,
        seed: int | None = 0,
    ) -> CVResult:
        """Choose the elastic-net ``alpha`` by K-fold cross-validation.

        Each fold refits the path of :meth:`path` on the other rows and scores
        the held-out rows by ``scoring``: ``"log_loss"`` (``-log P(y)``),
        ``"mae"`` (absolute difference in categories of the most probable level)
        or ``"rps"`` (ranked probability score), weighted means; the folds'
        losses are averaged with weights their held-out weights, and their
        standard error is ``cv.glmnet``'s (``cvm``, ``cvsd``).  Fit the
        chosen model with ``fit_regularized(alpha=result.alpha_best, ...)``.
        ``cv`` is a number of folds (rows assigned at random, seeded by
        ``seed``) or the folds themselves: ``(train, test)`` pairs of positions
        among the model's rows (``0 .. n_rows - 1``, after rows with missing
        values or zero weight are left out), e.g. ``list(KFold(5).split(X))``.

        Returns
        -------
        CVResult
        """
        with numeric_threads():  # thin products, as in a fit
            self._require_elastic_net_model("cross-validated penalised fits")
            return penalized.cross_validate(
                self,
                alphas,
                n_alphas=n_alphas,
                l1_ratio=l1_ratio,
                cv=cv,
                scoring=scoring,
                standardize=standardize,
                nominal_weight=nominal_weight,
                seed=seed,
            )

    def _warm_start(
        self, start: FloatArray, options: NewtonOptions, warm_start: bool | None
    ) -> WarmStart:
        """The subsample start (:mod:`ordstats.estimation.warm_start`) where it applies."""
        if warm_start is not None and not isinstance(warm_start, (bool, np.bool_)):
            raise SpecificationError(f"warm_start must be True, False or None; got {warm_start!r}")
        evaluator = self.evaluator
        if warm_start is False:
            return WarmStart(start)
        if not isinstance(evaluator, InMemoryEvaluator):
            return self._chunked_warm_start(start, options, warm_start)
        data = evaluator.data
        if evaluator.basis is not None or (warm_start is None and data.n_obs < WARM_START_ROWS):
            return WarmStart(start)
        layout = self.problem.layout
        check = None
        if layout.n_nominal_cols or layout.n_zeta:  # cut-points or scales of unseen rows
            check = lambda x: float(evaluator.evaluate(x).nll)  # noqa: E731
        return subsample_start(self.family_spec, data, start, options, check)

    def _chunked_warm_start(
        self, start: FloatArray, options: NewtonOptions, warm_start: bool | None
    ) -> WarmStart:
        """The start from the random subsample kept by the first pass over chunked data.

        Fitted before the summary pass, which evaluated the gradient there
        (and the Hessian too where the subsample has no scaled Hessian for
        the first step).  Fitted here otherwise, without a scaled Hessian: the
        first Newton pass makes the full data's Hessian with its gradient.
        """
        evaluator = self.evaluator
        subsample = getattr(evaluator, "subsample", None)
        if subsample is None:  # no rows (removed): the fit itself says so
            return WarmStart(start)
        n_rows = evaluator.n_rows
        first = getattr(evaluator, "first_evaluation", None)
        if first is not None and (warm_start or n_rows >= WARM_START_ROWS):
            start_then: WarmStart = first[0]  # fitted before the summary pass, evaluated there
            return start_then
        size = min(subsample_size(n_rows), RESERVOIR_ROWS)
        if (warm_start is None and n_rows < WARM_START_ROWS) or size >= n_rows:
            return WarmStart(start)
        drawn = subsample(size)
        if drawn is None:
            return WarmStart(start)
        layout, data = self.problem.layout, drawn[0]
        check = None
        if layout.n_nominal_cols or layout.n_zeta:  # cut-points or scales of unseen rows
            check = lambda x: float(evaluator.evaluate(x).nll)  # noqa: E731
        return start_from_subsample(
            self.family_spec, data, evaluator.nobs, start, options, check, with_hessian=False
        )

    def _flexible_start(self, options: NewtonOptions) -> FloatArray:
        """Start a flexible link at the fit of the standard link it nests.

        Far from the optimum the joint Hessian in ``(theta, beta, lambda)`` is
        often indefinite, so the other parameters are first fitted with
        ``lambda`` fixed at its default (logit for Aranda-Ordaz, probit for
        log-gamma).
        """
        nested = self.link.nested_link  # type: ignore[attr-defined]
        if not self.evaluator.keeps_rows:  # chunked: the same passes under the nested link
            family = self.options.replace({"link": nested}).family_object()
            chunked = self.evaluator.with_family(family)
            x = chunked.newton(
                chunked.start_params(), options, callback=None, progress=False, banded=False
            ).x
            return np.concatenate([x, [self.link.lam]])  # type: ignore[attr-defined]
        fixed = prepare(replace(self.data, link=get_link(nested)))
        inner = newton(lambda x: evaluate(fixed, x), initial_params(fixed), options)
        return np.concatenate([inner.x, [self.link.lam]])  # type: ignore[attr-defined]

    def _probit_start(self, evaluator: Evaluator, banded: bool) -> FloatArray:
        """Start a link without a log-concave density (cauchit) at the probit estimates.

        Its log-likelihood is not concave, and from the default start Newton's
        Hessian is often indefinite for several iterations in a row; R's ``clm``
        starts cauchit fits at the probit fit, to loose tolerances (``gradTol``
        and ``relTol`` 1e-3), as here.
        """
        family = self.options.replace({"link": "probit"}).family_object()
        probit = evaluator.with_family(family)
        loose = NewtonOptions(grad_tol=1e-3, rel_tol=1e-3)
        solution = probit.newton(
            probit.start_params(), loose, callback=None, progress=False, banded=banded
        )
        return solution.x if np.all(np.isfinite(solution.x)) else evaluator.start_params()

    def _crossing(self, params: FloatArray) -> tuple[Any, ...]:
        """Labels of fitted rows whose nominal effects make the cut-points cross.

        Only the cumulative model needs ordered cut-points; the intercepts of
        the other families are unconstrained.
        """
        lay = self.problem.layout
        if not lay.n_nominal_cols or not self.family_spec.ordered_cutpoints:
            return ()
        if not self.evaluator.keeps_rows:  # positions among the used rows, in reading order
            found = self.evaluator.reduce_rows(
                crossing_positions, params[lay.thresholds], self.threshold_jacobian
            )
            return found.positions
        theta = threshold_matrix(params[lay.thresholds], self.threshold_jacobian, self.data.nominal)
        return tuple(self.design.row_index[crossing_rows(theta)])

    def _negative_censored_levels(self, params: FloatArray) -> IntArray:
        """Levels of a censored response that ``params`` give no or negative probability.

        The levels come from Turnbull's estimate without predictors, which leaves
        out the intervals it gives no probability; predictors can still make the
        unconstrained maximum put a negative probability on a level that only
        censored rows cover (its threshold below the one before).
        """
        return np.flatnonzero(self._censored_threshold_steps(params) <= 0) + 1

    def _censored_threshold_steps(self, params: FloatArray) -> FloatArray:
        """``theta_j - theta_(j-1)`` of a censored response's shared thresholds (else none)."""
        lay = self.problem.layout
        if self.design.response.censoring is None or lay.n_nominal_cols:
            return np.empty(0)
        theta = threshold_matrix(params[lay.thresholds], self.threshold_jacobian)[0]
        return np.diff(theta)

    def _censored_active_set_step(
        self, params: FloatArray, *, null: bool = False, visited: frozenset[bytes] | None = None
    ) -> OrdinalModel | None:
        """One step of the active-set method that keeps a censored response's thresholds in order.

        The levels are innermost intervals (:mod:`ordstats.design.censored`); an
        interval that is not a level has its thresholds tied (probability zero).
        At ``params`` (the maximum with the current levels): a level whose
        threshold does not exceed the one below is tied (the most negative step
        first); otherwise the tied interval whose opening raises the likelihood
        most, the Kuhn-Tucker multiplier of its tie having the wrong sign, is a
        level again.  None when neither applies: ``params`` is the maximum over
        ordered thresholds (or the model is not one this applies to).  With
        ``null``, ``params`` are the thresholds-only model's (``llnull``).
        ``visited``: the tie patterns fitted before (default: this model's way
        from ``fit``); the model returned carries them on.
        """
        response, lay = self.design.response, self.problem.layout
        if (
            response.censoring is None
            or lay.n_nominal_cols
            or self.threshold != "flexible"
            or (self.evaluator.keeps_rows and response.bounds is None)
            or not (self.evaluator.keeps_rows or isinstance(self.evaluator, ChunkedEvaluator))
        ):
            return None
        kept = response.censoring.kept_cells
        steps = self._censored_threshold_steps(params)
        new = kept.copy()
        visited = (self._censored_visited if visited is None else visited) | {kept.tobytes()}
        if len(visited) > _MAX_ACTIVE_SET_STEPS:
            return None
        if np.any(steps <= 0):  # to a feasible fit, even one fitted before
            new[np.flatnonzero(kept)[int(np.argmin(steps)) + 1]] = False
        else:
            cell = self._censored_cell_to_free(params, kept, null)
            if cell is None:
                return None
            new[cell] = True
            if new.tobytes() in visited:  # freed before, and tied again: a cycle
                return None
        try:
            model = self._with_censored_cells(new)
        except ResponseError:
            return None
        model._censored_visited = visited
        return model

    def _censored_cell_to_free(
        self, params: FloatArray, kept: BoolArray, null: bool = False
    ) -> int | None:
        """The tied innermost interval whose opening raises the likelihood most, if any.

        The model with every interval between the lowest and the highest level
        is evaluated at ``params`` with tied thresholds; opening interval ``q``
        raises the thresholds from ``q`` to the next level's, so its directional
        derivative is the sum of the log-likelihood's gradient over them.
        """
        cells = np.flatnonzero(kept)
        span = kept[cells[0] : cells[-1] + 1]
        if span.all():
            return None
        lay = self.problem.layout
        probe_mask = np.zeros_like(kept)
        probe_mask[cells[0] : cells[-1] + 1] = True
        probe = self._with_censored_cells(probe_mask)
        level_of = np.cumsum(span) - 1  # the level each interval's thresholds are tied to
        x = np.concatenate([params[lay.thresholds][level_of[:-1]], params[lay.thresholds.stop :]])
        evaluator = probe.evaluator.without_location() if null else probe.evaluator
        grad = -np.asarray(evaluator.evaluate(x).gradient)[: span.size - 1]
        upto = np.concatenate([[0.0], np.cumsum(grad)])
        next_kept = np.flatnonzero(span)[
            np.searchsorted(np.flatnonzero(span), np.arange(span.size))
        ]
        tied = np.flatnonzero(~span)
        gain = upto[next_kept[tied]] - upto[tied]
        best = int(np.argmax(gain))
        if gain[best] <= _OPENING_TOLERANCE * self.nobs / max(self.n_rows, 1):
            return None
        return int(cells[0] + tied[best])

    def _with_censored_cells(self, kept: BoolArray) -> OrdinalModel:
        """The model whose levels are the censored response's innermost intervals ``kept``."""
        response = self.design.response
        levels = response.censoring.with_cells(kept)
        if self.evaluator.keeps_rows:
            model = self.with_changes(response=recode_censored(response, levels))
        else:
            labels = levels_labels(levels)
            design = replace(
                self.design,
                response=replace(
                    response, levels=labels, values=list(levels.values), censoring=levels
                ),
            )
            assert isinstance(self.evaluator, ChunkedEvaluator)
            evaluator = self.evaluator.with_censored_levels(levels, labels)
            model = OrdinalModel.from_design(
                design, self.options, evaluator=evaluator, context=self.formula_context
            )
            model.data_name = self.data_name
        model._formula_source = self._formula_source
        return model

    def _warn_unordered_censored_thresholds(self, params: FloatArray) -> None:
        """Warn where a censored response's shared thresholds do not increase."""
        bad = self._negative_censored_levels(params)
        if bad.size:
            levels = ", ".join(repr(self.levels[k]) for k in bad[:5])
            warnings.warn(
                f"the fitted thresholds do not increase at {bad.size} level(s) of the "
                f"censored response ({levels}{', ...' if bad.size > 5 else ''}): only "
                "censored rows cover them, and the fit gives them negative probabilities, "
                "so it is not a valid model and its predictions are NaN. ordstats keeps "
                "such thresholds in order (tied) with threshold='flexible' and no nominal "
                "effects; censoring bounds on observed values also avoid such levels",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )

    def _use_banded(self, banded: bool | None) -> bool:
        layout = self.problem.layout
        applicable = self.family_spec.capabilities.banded and banded_applicable(
            layout, self.threshold_jacobian
        )
        if banded and not applicable:
            raise SpecificationError(
                "banded=True needs the cumulative family with flexible thresholds and no "
                f"nominal effects; this model has family={self.family!r}, "
                f"threshold={self.threshold!r}. Use banded=None or False"
            )
        if banded is None:
            return applicable and layout.n_alpha > BANDED_MIN_THRESHOLDS
        return bool(banded)

    def _newton(
        self,
        start: FloatArray,
        options: NewtonOptions,
        *,
        disp: bool | None,
        banded: bool,
        initial_hessian: FloatArray | None = None,
    ) -> NewtonResult:
        """Run the Newton iterations from ``start`` wherever the rows live."""
        return self.evaluator.newton(
            start,
            options,
            callback=print_iteration if disp else None,
            progress=disp is not False,
            banded=banded,
            initial_hessian=initial_hessian,
        )

    def _diverging(self, solution: NewtonResult) -> list[str]:
        """Names of the parameters that diverge because of separation, if any."""
        return [self.param_names[k] for k in self.evaluator.diverging(solution)]


@dataclass(frozen=True)
class _FormulaSource:
    """What ``from_formula`` was given besides the formulas (for :meth:`refit_formulas`).

    ``data`` is the DataFrame, or the opened source of data read in chunks.
    """

    data: Any
    weights: object
    offset: object
    context: object
    subset: object = None  # the rows of ``data`` fitted (R's subset=)
    contrasts: Mapping[str, Any] = field(default_factory=dict)  # requested by column

    def __post_init__(self) -> None:
        # the formulas name columns by text (`0` for the column 0), as the design read them
        if isinstance(self.data, pd.DataFrame):
            object.__setattr__(self, "data", with_text_column_names(self.data))


#: What :meth:`OrdinalModel.update` may change of the formula's source (besides options).
_UPDATE_SOURCE = ("data", "weights", "offset", "subset")


def _refuse_positional_rows(source: _FormulaSource, given: Mapping[str, Any]) -> None:
    """Refuse to carry arrays of the old data's rows (paired by position) to ``data=``.

    Column names are read from the new data and pandas Series pair by index label,
    but an array's values belong to the old rows in their order: on other rows (or
    the same rows reordered) they would weight or offset the wrong rows.
    """
    for name in ("weights", "offset"):
        value = getattr(source, name)
        if name in given or value is None or isinstance(value, (str, pd.Series)):
            continue
        raise SpecificationError(
            f"the model's {name} are an array paired by position with the rows of its data, "
            f"so they cannot follow data= to other rows: pass {name}= for the new data too "
            "(a column name, a pandas Series paired by index label, or None)"
        )


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: A tied interval of a censored response is freed when opening it raises the
#: log-likelihood at this rate or more per unit of mean weight (its tie's multiplier
#: has the wrong sign); per unit of weight, so that scaling the weights changes nothing.
_OPENING_TOLERANCE = 1e-6
#: At most this many tie patterns are fitted (each step ties or frees one interval).
_MAX_ACTIVE_SET_STEPS = 200


@contextmanager
def _plain_formula_errors(formula: str) -> Iterator[None]:
    """Formula errors without terminal colour codes, quoting the whole formula."""
    try:
        yield
    except FormulaError as exc:
        message = _ANSI.sub("", str(exc))
        rhs = formula.partition("~")[2].strip()
        # only where the message quotes the terms as "the formula" (not a column
        # that happens to be the whole right-hand side, as in 'y ~ x')
        for quoted in {f"'{rhs}'", repr(rhs)}:
            for lead in ("formula ", "design for "):
                if rhs and lead + quoted in message and repr(formula) not in message:
                    message = message.replace(lead + quoted, lead + repr(formula), 1)
        if message == str(exc):
            raise
        raise FormulaError(message) from exc


def _data_name(data: object, caller: object) -> str | None:
    """The caller's name for ``data`` (R's ``data:`` line), or its path."""
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    if isinstance(caller, Mapping):
        try:
            for key in list(caller):
                if isinstance(key, str) and not key.startswith("_") and caller[key] is data:
                    return key
        except (KeyError, TypeError):  # an exotic mapping: no name, no harm
            return None
    return None


def _as_context(context: object) -> FormulaContext | None:
    """A model's formula context as a picklable :class:`FormulaContext`."""
    if context is None or isinstance(context, FormulaContext):
        return context
    return FormulaContext(dict(context))  # type: ignore[call-overload]


def _check_fit_flags(**flags: object) -> None:
    """``fit``'s switches: True or False (``disp`` and ``banded`` also None, their default)."""
    for name, value in flags.items():
        if value is not None or name == "check_separation":
            check_flag(name, value)


def _fit_cov_type(cov_type: str) -> str:
    """:func:`canonical_cov_type`, whose message also names ``fit``'s ``"none"``."""
    try:
        return canonical_cov_type(cov_type)
    except SpecificationError as exc:
        raise SpecificationError(
            f"{exc}; or 'none' for the estimates only (covariance computed when first used)"
        ) from None


def _warn_fit(info: FitInfo) -> None:
    if info.crossing:
        shown = ", ".join(map(str, info.crossing[:5])) + (", ..." if len(info.crossing) > 5 else "")
        warnings.warn(
            f"not all thresholds are increasing for {len(info.crossing)} fitted row(s) "
            f"({shown}): the nominal effects imply negative probabilities there, so the fit "
            "is invalid. Simplify the nominal effects (fewer terms, or as location effects)",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    if info.diverging:
        warnings.warn(
            "complete or quasi-complete separation: the likelihood keeps increasing as "
            f"{', '.join(map(repr, info.diverging))} grow without bound, so their maximum-"
            "likelihood estimates do not exist and the reported values and standard "
            "errors are meaningless. Merge sparse categories, drop or recode the "
            "separating variable, or fit with a penalty: fit(penalty='firth') (Firth's "
            "bias-reducing Jeffreys prior) or fit_regularized(alpha=..., L1_wt=...)",
            SeparationWarning,
            stacklevel=user_stacklevel(),
        )
    elif info.code != 0:
        advice = (
            "The log-likelihood is not concave on the way from the start values (a link "
            "such as cauchit whose likelihood is not log-concave, or rows far in the tails); "
            "try other start_params or fit(method='bfgs')"
            if info.code == 4
            else "Check the data for separation or rescale the predictors; fit(maxiter=...) "
            "allows more iterations"
        )
        warnings.warn(
            f"the fit did not converge ({info.message}; max|gradient| = {info.max_grad:.2e} "
            f"after {info.n_iter} iterations). {advice}",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _refuse_repeated_names(names: Sequence[str]) -> None:
    """Refuse parameter names that occur twice (a column named like a threshold or ``lambda``).

    Every table, test and interval reads parameters by name, so two parameters
    of one name would make them ambiguous or silently drop one.
    """
    twice = [name for name, count in Counter(names).items() if count > 1]
    if twice:
        raise SpecificationError(
            f"two parameters would be named {', '.join(map(repr, twice))}: a "
            "predictor has the name of a threshold or of the link parameter 'lambda'; "
            "rename that column"
        )


def _with_r_column_names(
    formula: str, nominal: Any, scale: Any, data: Any, chunksize: int | None
) -> tuple[str, Any, Any]:
    """The formulas with R's ``.`` expanded and bare dotted column names in backticks.

    ``.`` is every column of ``data`` (or a survey design's) but the response; a
    dotted name (``Solar.R``) that is a column is quoted, since formulaic would read
    an attribute.  The columns are read once, only where a formula needs them.
    """
    texts = (formula, nominal, scale)
    dot = any(has_dot(f) for f in texts)
    if not dot and not any(dotted_names(f) for f in texts):
        return formula, nominal, scale
    fit_data = getattr(data, "fit_data", None)
    try:
        columns = _data_columns(fit_data() if callable(fit_data) else data, chunksize)
    except FormulaError:
        if dot:
            raise
        return formula, nominal, scale  # no named columns: the formula layer says what is missing
    response = _response_name(formula)
    expanded = [expand_dot(f, columns, response) if has_dot(f) else f for f in texts]
    return tuple(quote_dotted_columns(f, columns) for f in expanded)


def _data_columns(data: object, chunksize: int | None) -> list[object]:
    """The column names of any data ``from_formula`` takes (R's ``.``, dotted names).

    A file source is opened and its first chunk read for them.
    """
    if isinstance(data, Mapping):
        return list(data)
    columns = getattr(data, "columns", None)  # pandas, Dask and Spark DataFrames
    if columns is not None:
        return list(columns)
    if is_source(data):
        return list(open_source(data, chunksize).first_chunk().columns)
    raise FormulaError(
        "the formula uses '.' (all other columns), which needs data with named columns "
        "(a DataFrame, a mapping of columns or a data source)"
    )


def _response_name(formula: str) -> str:
    """The response column of ``"y ~ ..."`` (also ``"y | thres(gr = g) ~ ..."``)."""
    return formula.split("~", 1)[0].split("|", 1)[0].strip().strip("`")


def _columns_and_rows(data: object) -> tuple[Iterable[object], int | None]:
    """Column names and row count of in-memory data (a DataFrame or a mapping of columns).

    Used to record which of the caller's variables a formula read were per-row
    data; ``None`` rows for a file source, whose rows are not known here.
    """
    if isinstance(data, pd.DataFrame):
        return data.columns, len(data)
    if isinstance(data, Mapping) and data:
        first = next(iter(data.values()))
        return list(data), (len(first) if hasattr(first, "__len__") else None)
    return (), None


def _refuse_firth_options(
    *, method: str, reltol: float, disp: object, banded: object, warm_start: object
) -> None:
    """Raise for ``fit()`` arguments that ``penalty="firth"`` would ignore."""
    ignored = [
        f"{name}={value!r}"
        for name, value, unused in (
            ("method", method, method != "newton"),
            ("reltol", reltol, reltol != 1e-6),
            ("disp", disp, disp is True),
            ("banded", banded, banded is True),
            ("warm_start", warm_start, warm_start is True),
        )
        if unused
    ]
    if ignored:
        pronoun = "it" if len(ignored) == 1 else "them"
        raise SpecificationError(
            "penalty='firth' runs its own Newton iteration on the penalised likelihood, "
            "which takes start_params, maxiter, gradtol and cov_type; "
            f"{', '.join(ignored)} would be ignored: leave {pronoun} out"
        )
