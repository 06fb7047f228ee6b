"""What results code reads of a model: the protocols a model class satisfies.

Results sit below the model (see ARCHITECTURE.md): a results class is created
by a model's ``fit()`` and reads the model it holds, but never imports the
model's module, not even for type checking.  It types that model against the
protocols here, which list exactly the attributes and methods results code
uses; :class:`~ordstats.estimation.model.OrdinalModel` and
:class:`~ordstats.estimation.mixed.OrdinalMixedModel` satisfy them structurally
(mypy checks this where ``fit()`` passes ``self`` to its results class).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from ordstats._typing import CollinearAction, FloatArray
    from ordstats.core.links import Link
    from ordstats.core.thresholds import Structure
    from ordstats.design import Design, TermsDesign
    from ordstats.design.random import MixedDesign, RandomTerm
    from ordstats.design.response import EncodedResponse
    from ordstats.families import Family
    from ordstats.families.mixed import MixedObjective, MixedProblem
    from ordstats.families.problem import FamilyEvaluation
    from ordstats.results.values import FitInfo

__all__ = [
    "FittedModel",
    "MixedFittedModel",
    "ModelFamily",
    "ModelNames",
    "ModelRows",
    "RefitResult",
]


class ModelRows(Protocol):
    """Where a model's rows live, as results code reads it (sums over rows, evaluations)."""

    @property
    def keeps_rows(self) -> bool:
        """Whether the rows are in memory (else read in chunks, or removed)."""
        ...

    def evaluate(self, params: FloatArray, *, banded: bool = False) -> FamilyEvaluation:
        """The negative log-likelihood with gradient and Hessian at ``params``."""
        ...

    def reduce_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(data, *args)`` summed over the rows (chunk by chunk)."""
        ...

    def reduce_internal_rows(self, func: Callable[..., Any], *args: Any) -> Any:
        """:meth:`reduce_rows` with the columns of the fit's shifted basis, if it has one."""
        ...

    def fitted_rows(self) -> Any:
        """What selects the fitted rows of a chunk of the data (None: rows in memory)."""
        ...


class RefitResult(Protocol):
    """What term tests and Brant's test read of a fit (this one or a refit's)."""

    @property
    def model(self) -> FittedModel:  # noqa: D102
        ...

    @property
    def params(self) -> pd.Series:  # noqa: D102
        ...

    @property
    def llf(self) -> float:  # noqa: D102
        ...

    @property
    def fit_info(self) -> FitInfo:  # noqa: D102
        ...

    @property
    def converged(self) -> bool:  # noqa: D102
        ...

    @property
    def k_params(self) -> int:  # noqa: D102
        ...

    @property
    def aic(self) -> float:  # noqa: D102
        ...


class ModelNames(Protocol):
    """What results code reads of any model: names, sizes and the threshold structure."""

    @property
    def param_names(self) -> list[str]:  # noqa: D102
        ...

    @property
    def levels(self) -> list[str]:  # noqa: D102
        ...

    @property
    def threshold(self) -> Structure:  # noqa: D102
        ...

    @property
    def n_rows(self) -> int:  # noqa: D102
        ...

    @property
    def has_offset(self) -> bool:  # noqa: D102
        ...

    @property
    def formula_context(self) -> object:  # noqa: D102
        ...


class FittedModel(ModelNames, Protocol):
    """What code holding a result reads of its fixed-effects model (``OrdinalModel``).

    Names, sizes and the parts of the design; the family, link and threshold
    structure; where the rows live; and the refits that term tests, Brant's
    test and ``remove_data`` ask for (``with_changes``, ``refit_formulas``,
    ``without_data``, ``fit``), so a refit keeps everything the model holds.
    """

    # -- design, names and sizes ------------------------------------------------
    @property
    def design(self) -> Design:  # noqa: D102
        ...

    @property
    def data(self) -> Any:  # noqa: D102
        ...

    @property
    def problem(self) -> Any:  # noqa: D102
        ...

    @property
    def source(self) -> Any:  # noqa: D102
        ...

    @property
    def evaluator(self) -> ModelRows:  # noqa: D102
        ...

    @property
    def threshold_param_names(self) -> list[str]:  # noqa: D102
        ...

    @property
    def exog_names(self) -> list[str]:  # noqa: D102
        ...

    @property
    def nominal_names(self) -> list[str]:  # noqa: D102
        ...

    @property
    def scale_names(self) -> list[str]:  # noqa: D102
        ...

    @property
    def endog_name(self) -> str:  # noqa: D102
        ...

    @property
    def nobs(self) -> float:  # noqa: D102
        ...

    @property
    def has_weights(self) -> bool:  # noqa: D102
        ...

    @property
    def response_counts(self) -> FloatArray:  # noqa: D102
        ...

    # -- what is fitted ---------------------------------------------------------
    @property
    def family(self) -> str:  # noqa: D102
        ...

    @property
    def family_spec(self) -> Family:  # noqa: D102
        ...

    @property
    def reverse(self) -> bool:  # noqa: D102
        ...

    @property
    def link(self) -> Link:  # noqa: D102
        ...

    @property
    def threshold_jacobian(self) -> Any:  # noqa: D102
        ...

    @property
    def threshold_offset(self) -> FloatArray:  # noqa: D102
        ...

    def null_loglike(self) -> float:  # noqa: D102
        ...

    def evaluate(self, params: object) -> FamilyEvaluation:  # noqa: D102
        ...

    # -- refits -----------------------------------------------------------------
    @property
    def can_refit_formulas(self) -> bool:  # noqa: D102
        ...

    def update(self, formula: str | None = None, **changes: Any) -> FittedModel:  # noqa: D102
        ...

    def refit_formulas(  # noqa: D102
        self,
        *,
        nominal: str | None = None,
        scale: str | None = None,
        location: str | None = None,
        collinear: CollinearAction | None = None,
        contrasts: Mapping[str, Any] | None = None,
    ) -> FittedModel | None: ...

    def with_changes(  # noqa: D102
        self,
        *,
        response: EncodedResponse | None = None,
        location: TermsDesign | None = None,
        nominal: TermsDesign | None = None,
        scale: TermsDesign | None = None,
        weights: FloatArray | None = None,
        **options: object,
    ) -> FittedModel: ...

    def dichotomized(self, cut: int) -> FittedModel:  # noqa: D102
        ...

    def without_data(self) -> FittedModel:  # noqa: D102
        ...

    def fit(self) -> RefitResult:  # noqa: D102
        ...


class ModelFamily(Protocol):
    """The model options as results code reads them: the family they describe."""

    def family_object(self) -> Family:  # noqa: D102
        ...


class MixedFittedModel(ModelNames, Protocol):
    """What results code reads of a cumulative link mixed model (``OrdinalMixedModel``).

    Its fixed-effects design and names, the random-effect terms, the
    Laplace/AGQ objective (conditional modes, gradient) and the refit with one
    random-effect standard deviation held (profile intervals).
    """

    @property
    def design(self) -> MixedDesign:  # noqa: D102
        ...

    @property
    def terms(self) -> list[RandomTerm]:  # noqa: D102
        ...

    @property
    def problem(self) -> MixedProblem:  # noqa: D102
        ...

    @property
    def objective(self) -> MixedObjective:  # noqa: D102
        ...

    @property
    def options(self) -> ModelFamily:  # noqa: D102
        ...

    @property
    def variance_names(self) -> list[str]:  # noqa: D102
        ...

    @property
    def data_name(self) -> str | None:
        """The caller's name for the data (the summary's ``data:`` line), if known."""
        ...

    def score(self, params: FloatArray, nagq: int = 1) -> FloatArray:  # noqa: D102
        ...

    def sd_positions(self, term: int, component: int) -> tuple[int, list[int]]:  # noqa: D102
        ...

    def fit_with_held_sd(  # noqa: D102
        self, term: int, component: int, log_sd: float, start: FloatArray, nagq: int = 1
    ) -> tuple[float, FloatArray]: ...
