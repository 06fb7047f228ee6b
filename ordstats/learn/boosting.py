r"""Ordinal gradient boosting: LightGBM and XGBoost with the cumulative-link likelihood.

The booster learns a latent score :math:`\eta(x)` (a sum of trees, no constant
term) and the estimator keeps ``K - 1`` ordered thresholds:

.. math::

    P(Y \le j \mid x) = F(\theta_j - \eta(x)), \qquad j = 1, \dots, K - 1,

with ``F`` any standard link (logit, probit, cloglog, loglog, cauchit), so a
larger score moves probability to higher classes, as a positive slope does in
:class:`~ordstats.OrdinalModel`.  Each round the booster's custom objective
receives the current scores of the training rows and

1. takes one exact Newton step for the thresholds given those scores (a
   cumulative link model without slopes and offset ``eta``), halved until the
   training NLL does not rise (``learn_thresholds=True``, on every
   ``threshold_update_every``-th round; otherwise they stay at the null
   model's), and
2. returns the per-row gradient and Hessian of the NLL in ``eta``, computed in
   the same pass over the rows (:mod:`ordstats.families.cumulative.boosting`;
   tail-safe; the cauchit link's non-convex tails get the expected information).

The thresholds start at the null model's (the scores start at zero); after the
last round they are solved to convergence given the final scores.  The score is
identified only up to a shift that the thresholds absorb; the thresholds carry
the location, the trees the effects.

With validation rows (``eval_set``) each round records their mean NLL, the
ordinal log-loss, at the thresholds of that round; early stopping watches it.
The returned model is then the trees of ``best_iteration_`` rounds with the
thresholds that round's NLL was computed with (not re-solved on the training
rows, which would change the validation NLL), so ``best_score_`` and
``evals_result_`` at ``best_iteration_`` are exactly its validation NLL.

``classes_`` keep the classes' order, as
:class:`~ordstats.learn.OrdinalClassifier`'s (see its Notes): score
probabilities with ``ordstats.metrics.SCORERS``, not scikit-learn's
``"neg_log_loss"``, when that order is not the sorted one.  LightGBM and XGBoost are optional extras
(``pip install 'ordstats[lightgbm]'`` / ``'ordstats[xgboost]'``), imported when
an estimator is fitted.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.config import check_threads, resolve_threads
from ordstats.core.links import Link, get_link
from ordstats.core.threads import numeric_threads
from ordstats.errors import DataError, SpecificationError
from ordstats.families.cumulative.boosting import (
    ScoreDerivatives,
    null_thresholds,
    ordinal_nll,
    threshold_step,
    update_thresholds,
)
from ordstats.families.cumulative.prediction import category_probabilities
from ordstats.learn._sklearn import ClearParameters, Prediction, class_index, require_sklearn
from ordstats.learn._targets import (
    encode_classes,
    encode_target,
    is_categorical,
    refuse_missing,
)
from ordstats.learn.estimator import align_on_X, class_error_score, sample_weights

require_sklearn()

from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.utils.validation import (  # noqa: E402
    check_is_fitted,
    column_or_1d,
    validate_data,
)

__all__ = ["OrdinalLGBMClassifier", "OrdinalXGBClassifier"]

#: Links whose ``F`` has a closed-form quantile function and a tail-safe likelihood.
BOOSTING_LINKS = ("logit", "probit", "cloglog", "loglog", "cauchit")

#: LightGBM's names of its ``boosting`` parameter.
_LGB_BOOSTING_KEYS = ("boosting", "boosting_type", "boost")

#: Characters a booster refuses in a feature name: LightGBM the JSON ones
#: (``" , : [ ] { }``), XGBoost ``[ ] <``.
_REFUSED_NAME_CHARACTERS = re.compile(r'[",:\[\]{}<]')


def _require(module: str, extra: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is not installed; install it with `pip install 'ordstats[{extra}]'` "
            f"(or `pip install {module}`)"
        ) from exc


class _Thresholds:
    """The thresholds a boosting run updates between rounds, and its history.

    Parameters
    ----------
    theta : ndarray, shape (K - 1,)
        Start (the null model's).
    link : Link
    codes : ndarray of int
    weights : ndarray
    learn : bool
        Update the thresholds (else keep them).
    every : int
        Update them at the start of every ``every``-th round (1: each round).
    """

    def __init__(
        self,
        theta: FloatArray,
        link: Link,
        codes: IntArray,
        weights: FloatArray,
        learn: bool,
        every: int = 1,
    ) -> None:
        self.theta = theta
        self.link = link
        self.codes = codes
        self.weights = weights
        self.learn = learn
        self.every = every
        self.rounds = 0
        self.nll_trace: list[tuple[float, float]] = []  # (before, after) each update
        self.scores = np.zeros(len(codes))  # the scores the last round started from
        self._score_derivatives = ScoreDerivatives(codes, link, weights)
        self._validation: tuple[IntArray, FloatArray, ScoreDerivatives] | None = None
        # each round's validation NLL and the thresholds it was computed with
        self.validation_nll: list[float] = []
        self.validation_thresholds: list[FloatArray] = []

    def round(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Threshold step at the current scores, then the booster's gradient and Hessian."""
        eta = np.asarray(eta, dtype=float).reshape(-1)
        np.copyto(self.scores, eta)  # the booster may reuse its buffer
        update_now = self.learn and self.rounds % self.every == 0
        self.rounds += 1
        if not update_now:  # the booster's derivatives alone (cheaper for the logit link)
            return self._score_derivatives(eta, self.theta)
        scorer = self._score_derivatives
        d = scorer.round(eta, self.theta)
        update = threshold_step(
            eta,
            self.codes,
            self.theta,
            self.link,
            d,
            self.weights,
            nll=lambda theta: scorer.nll(eta, theta),
        )
        self.nll_trace.append((update.nll_before, update.nll_after))
        self.theta = update.thresholds
        return d.gradient, d.hessian

    def mean_nll(self, eta: FloatArray, codes: IntArray, weights: FloatArray) -> float:
        """Weighted mean NLL of rows at the current thresholds (the validation metric).

        Records the value and the thresholds: the model stopped at this round
        is the trees so far with these thresholds.
        """
        cached = self._validation
        if cached is None or cached[0] is not codes or cached[1] is not weights:
            cached = (codes, weights, ScoreDerivatives(codes, self.link, weights))
            self._validation = cached  # the same validation rows every round
        eta = np.asarray(eta, dtype=float).reshape(-1)
        value = cached[2].nll(eta, self.theta) / float(np.sum(weights))
        self.validation_nll.append(value)
        self.validation_thresholds.append(np.array(self.theta, dtype=float))
        return value


class _OrdinalBooster(ClearParameters, ClassifierMixin, BaseEstimator):
    """What the LightGBM and XGBoost ordinal estimators share (see the module docstring)."""

    _booster_module = ""
    _extra = ""
    #: ``params`` names the ordinal model owns, each with the name it stands for.
    _reserved_params: ClassVar[dict[str, str]] = {}

    def _extra_params(self) -> dict[str, Any]:
        """``params`` checked (a dict without names the ordinal model owns)."""
        return _booster_params(self.params, self._reserved_params, self._booster_module)

    @classmethod
    def _refuse_unknown(cls, unknown: Mapping[str, Any]) -> None:
        # a keyword the ordinal model owns (objective=...) is refused as such: pointing it
        # at params= would only move the error to fit
        refuse_reserved(unknown, cls._reserved_params, cls._booster_module, "keywords")
        super()._refuse_unknown(unknown)

    # -- fitting ---------------------------------------------------------------

    def fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        eval_set: Any = None,
        eval_sample_weight: Any = None,
        **fit_params: Any,
    ) -> _OrdinalBooster:
        """Boost the ordinal likelihood.

        Parameters
        ----------
        X : array-like or pandas.DataFrame, shape (n_samples, n_features)
            Predictors as the booster takes them: missing values allowed,
            pandas ``category`` columns as categorical features (at prediction
            their values are matched by label; a category the fit did not see
            is a missing value, with either booster).
        y : array-like, shape (n_samples,)
            Classes, ordered as :class:`~ordstats.learn.OrdinalClassifier` orders
            them: ``classes=``, an ordered pandas Categorical, or numbers and
            booleans in numeric order (text labels need one of the first two).
        sample_weight : array-like, optional
            Non-negative weights.  In the ordinal likelihood (the booster's
            gradients and Hessians, the thresholds, ``train_nll_``) a weight
            ``k`` is ``k`` repeated rows, and XGBoost's trees are those of the
            repeated rows (to about 1e-7: its scores are float32).  LightGBM's
            trees may differ: it bins features by row counts (``max_bin``,
            ``min_data_in_bin``) and checks ``min_child_samples`` on row counts
            it estimates from the Hessians.
        eval_set : tuple or list of one tuple ``(X_val, y_val)``, optional
            Validation rows: their mean NLL is recorded each round
            (``evals_result_``) and, with ``early_stopping_rounds``, stops the
            boosting.  The model keeps the thresholds of its last (best) round
            so that ``best_score_`` is its validation NLL; without
            ``eval_set`` they are solved to convergence after the last round.
        eval_sample_weight : array-like, optional
            Weights of the validation rows.
        **fit_params
            None is taken: the library's other fit arguments (``init_score``,
            ``base_margin``, callbacks) are refused, since the ordinal
            objective sets the scores and the rounds itself.

            With a pandas ``X`` (``X_val``), a pandas ``y`` and weights (``y_val``,
            ``eval_sample_weight``) pair with its rows by index label; numpy arrays
            pair by position.

        Returns
        -------
        self
        """
        if fit_params:
            raise TypeError(
                f"fit() got the argument(s) {', '.join(map(repr, fit_params))}, which the ordinal "
                "boosters do not take: they take X, y, sample_weight, eval_set and "
                "eval_sample_weight (the ordinal objective sets the scores: an offset such as "
                "init_score or base_margin is not supported)"
            )
        booster_lib = _require(self._booster_module, self._extra)
        link = self._link()
        self._check_options()
        y, sample_weight = align_on_X(X, y=y, sample_weight=sample_weight)
        X_in, y_values = self._validate_Xy(X, y)
        self._fit_categories = category_dtypes(X_in)
        n_rows = len(y_values)
        if n_rows != _n_rows(X_in):
            raise DataError(f"X has {_n_rows(X_in)} rows but y has {n_rows}")
        weights = sample_weights(sample_weight, np.empty((n_rows, 0)))
        target = encode_target(y, y_values, self.classes, weights, estimator="an ordinal booster")
        classes, codes = target.classes, target.codes
        self.classes_ = classes
        valid = self._eval_rows(eval_set, eval_sample_weight)
        state = _Thresholds(
            null_thresholds(codes, len(classes), link, weights),
            link,
            codes,
            weights,
            bool(self.learn_thresholds),
            int(self.threshold_update_every),
        )
        # the objective's few BLAS calls must not leave OpenBLAS threads spinning on the
        # cores the booster's OpenMP threads need (that doubled the time per round)
        with numeric_threads(self.n_jobs):
            self.booster_, eta = self._train(booster_lib, X_in, codes, weights, valid, state)
        self.best_score_: float | None = None
        if state.validation_nll:
            self._keep_validated(state)
        elif self.learn_thresholds:
            final = update_thresholds(eta, codes, state.theta, link, weights, max_steps=100)
            self.thresholds_ = final.thresholds
        else:
            self.thresholds_ = state.theta
        self.threshold_nll_trace_ = np.array(state.nll_trace).reshape(-1, 2)
        self.train_nll_ = ordinal_nll(eta, codes, self.thresholds_, link, weights) / float(
            np.sum(weights)
        )
        return self

    def _keep_validated(self, state: _Thresholds) -> None:
        """The thresholds and exact validation NLLs the boosting recorded (with ``eval_set``).

        The returned model is the trees of ``best_iteration_`` rounds with the
        thresholds that round's validation NLL was computed with, so
        ``best_score_`` (and ``evals_result_`` at ``best_iteration_``) is its
        validation NLL; re-solving the thresholds on the training rows would
        change it.
        """
        # without early stopping the last round's (LightGBM may add no tree in a round)
        index = self.best_iteration_ - 1 if self.early_stopping_rounds else -1
        self.thresholds_ = state.validation_thresholds[index]
        self.best_score_ = state.validation_nll[index]
        # XGBoost's own record rounds each value to 6 decimals
        self.evals_result_ = {"valid": {"ordinal_nll": list(state.validation_nll)}}

    def _link(self) -> Link:
        if self.link not in BOOSTING_LINKS:
            raise SpecificationError(
                f"link must be one of {BOOSTING_LINKS} for ordinal boosting; got {self.link!r}"
            )
        return get_link(self.link)

    def _threads(self) -> int:
        """The booster's threads: ``n_jobs``, else the ``threads`` option, else every core."""
        return resolve_threads(self.n_jobs, "n_jobs")

    def _check_options(self) -> None:
        self._extra_params()
        check_threads(self.n_jobs, "n_jobs")
        if int(self.n_estimators) < 1:
            raise SpecificationError(f"n_estimators must be >= 1; got {self.n_estimators!r}")
        if not float(self.learning_rate) > 0:
            raise SpecificationError(f"learning_rate must be > 0; got {self.learning_rate!r}")
        every = self.threshold_update_every
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise SpecificationError(
                f"threshold_update_every must be a whole number >= 1; got {every!r}"
            )

    def _validate_Xy(self, X: Any, y: Any) -> tuple[Any, Any]:
        """scikit-learn's checks of ``X`` and ``y``; a DataFrame ``X`` is kept as it is."""
        if y is None:
            raise DataError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        refuse_missing(y)
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, skip_check_array=True, reset=True)
            check_frame(X)
            checked_y = column_or_1d(y, warn=True) if not is_categorical(y) else y
            X_in = X
        else:
            X_in, checked_y = validate_data(
                self, X, y, dtype=np.float64, ensure_all_finite="allow-nan", y_numeric=False
            )
        y_values = y if is_categorical(y) else checked_y
        return X_in, self._check_y(y_values)

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        """A DataFrame as it is (categories as in fit), else a float array."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, skip_check_array=True, reset=reset)
            check_frame(X)
            return recode_categories(X, getattr(self, "_fit_categories", {}))
        return validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=reset)

    @staticmethod
    def _check_y(y: Any) -> Any:
        if is_categorical(y):
            values = y
        else:
            values = np.asarray(y)
            if values.ndim != 1:
                values = values.reshape(-1) if values.ndim == 2 and values.shape[1] == 1 else None
                if values is None:
                    raise DataError("y must be one-dimensional")
        refuse_missing(values)
        return values

    def _eval_rows(
        self, eval_set: Any, eval_sample_weight: Any
    ) -> tuple[Any, IntArray, FloatArray] | None:
        if eval_set is None:
            if self.early_stopping_rounds:
                raise SpecificationError(
                    "early_stopping_rounds needs validation rows: pass eval_set=(X_val, y_val)"
                )
            return None
        if isinstance(eval_set, list):
            if len(eval_set) != 1:
                raise SpecificationError("eval_set takes one (X_val, y_val) pair")
            eval_set = eval_set[0]
        X_val, y_val = eval_set
        y_val, eval_sample_weight = align_on_X(
            X_val, y_val=y_val, eval_sample_weight=eval_sample_weight
        )
        X_val = self._validate_X(X_val, reset=False)
        codes = encode_classes(
            self._check_y(y_val),
            self.classes_,
            name="the validation y (eval_set)",
            remedy="validation rows must have classes of the training y; remove those rows",
        )
        weights = sample_weights(eval_sample_weight, np.empty((len(codes), 0)))
        return X_val, codes, weights

    def _train(
        self,
        lib: ModuleType,
        X: Any,
        codes: IntArray,
        weights: FloatArray,
        valid: tuple[Any, IntArray, FloatArray] | None,
        state: _Thresholds,
    ) -> tuple[Any, FloatArray]:  # pragma: no cover - implemented by each booster
        """The trained booster and its scores of the training rows (at ``best_iteration_``)."""
        raise NotImplementedError

    def _scores(self, X: Any) -> FloatArray:  # pragma: no cover - implemented by each booster
        raise NotImplementedError

    # -- prediction ------------------------------------------------------------

    def latent_score(self, X: Any) -> FloatArray:
        """The latent score ``eta(x)`` of each row (larger: higher classes)."""
        check_is_fitted(self)
        return self._scores(self._validate_X(X, reset=False))

    def predict_proba(self, X: Any) -> FloatArray:
        """``P(Y = j | x)`` for each class of ``classes_``, shape (n_samples, n_classes)."""
        eta = self.latent_score(X)
        return category_probabilities(get_link(self.link), self.thresholds_, eta)

    def predict(self, X: Any, kind: Prediction = "mode") -> np.ndarray:
        """The predicted class: the most probable (default), the median or nearest the mean.

        ``kind`` as :meth:`ordstats.learn.OrdinalClassifier.predict`; the default,
        the argmax of :meth:`predict_proba`, is what scikit-learn's tools use.
        """
        index = class_index(self.predict_proba(X), kind)  # checks the fit first
        return self.classes_[index]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Minus the mean absolute error in classes (as :class:`OrdinalClassifier`)."""
        return class_error_score(self, X, y, sample_weight)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True
        tags.input_tags.allow_nan = True
        return tags


def _xgb_early_stopping(lib: ModuleType, history: list[float], rounds: int) -> Any:
    """An XGBoost callback that stops ``rounds`` rounds after the lowest of ``history``."""

    class _EarlyStopping(lib.callback.TrainingCallback):  # type: ignore[name-defined]
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            return len(history) - 1 - int(np.argmin(history)) >= rounds

    return _EarlyStopping()


def check_frame(X: pd.DataFrame) -> None:
    """Refuse the columns of a DataFrame ``X`` that a numpy ``X`` could not hold either.

    Infinite values (refused in an array by scikit-learn's check; LightGBM would
    take them as large numbers, XGBoost fails) and text columns (the boosters
    take numbers, booleans and ``category`` columns).
    """
    text = [str(name) for name, dtype in X.dtypes.items() if _is_text(dtype)]
    if text:
        raise DataError(
            f"X has text columns ({', '.join(map(repr, text))}); the boosters take numbers, "
            "booleans and pandas 'category' columns: convert them with .astype('category')"
        )
    numeric = X.select_dtypes(include="number")
    if numeric.shape[1]:
        values = numeric.to_numpy(dtype=float, na_value=np.nan)
        infinite = [
            str(name)
            for name, bad in zip(numeric.columns, np.isinf(values).any(axis=0), strict=True)
            if bad
        ]
        if infinite:
            raise DataError(
                f"X has infinite values in column(s) {', '.join(map(repr, infinite))}; "
                "replace them (np.nan is taken as missing)"
            )


def _is_text(dtype: Any) -> bool:
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def category_dtypes(X: Any) -> dict[Any, pd.CategoricalDtype]:
    """The ``category`` columns of a DataFrame ``X`` and their dtypes (``{}`` for an array)."""
    if not isinstance(X, pd.DataFrame):
        return {}
    return {
        name: dtype for name, dtype in X.dtypes.items() if isinstance(dtype, pd.CategoricalDtype)
    }


def recode_categories(X: pd.DataFrame, dtypes: Mapping[Any, pd.CategoricalDtype]) -> pd.DataFrame:
    """``X`` with its ``category`` columns given the categories of the fit.

    A category the fit did not see becomes missing, as LightGBM treats it;
    XGBoost refuses a column whose categories differ from the fit's (even an
    unused extra one) with an error of its own.
    """
    changed = [
        name
        for name, dtype in dtypes.items()
        if name in X and isinstance(X[name].dtype, pd.CategoricalDtype) and X[name].dtype != dtype
    ]
    if not changed:
        return X
    X = X.copy()
    for name in changed:
        dtype = dtypes[name]
        X[name] = X[name].cat.set_categories(dtype.categories, ordered=dtype.ordered)
    return X


def _n_rows(X: Any) -> int:
    return int(X.shape[0])


def booster_feature_names(X: Any) -> list[str] | None:
    """Feature names for the booster where a DataFrame's own would be refused, else ``None``.

    LightGBM and XGBoost refuse some characters in feature names (``"x[1]"``,
    ``"age<30"``, ``"a,b"``: names that one-hot encoders and binning in a
    ``Pipeline`` produce), with an error of their own.  The estimator checks the
    columns by ``feature_names_in_``, so the booster only needs names it
    accepts: each refused character becomes ``"_"`` (positional names ``f0,
    f1, ...`` if that makes two names equal).

    Parameters
    ----------
    X : array-like or pandas.DataFrame

    Returns
    -------
    list of str or None
        ``None``: the booster reads the DataFrame's names (or an array's defaults).
    """
    if not isinstance(X, pd.DataFrame):
        return None
    names = [str(name) for name in X.columns]
    if not any(_REFUSED_NAME_CHARACTERS.search(name) for name in names):
        return None
    cleaned = [_REFUSED_NAME_CHARACTERS.sub("_", name) for name in names]
    if len(set(cleaned)) < len(cleaned):
        return [f"f{j}" for j in range(len(names))]
    return cleaned


def _booster_params(
    params: dict[str, Any] | None, reserved: Mapping[str, str], library: str
) -> dict[str, Any]:
    """The user's further booster parameters, without those the ordinal model owns.

    ``reserved`` maps each name (and its aliases in the library) to the one it
    stands for: the objective is the ordinal likelihood, the validation metric
    the ordinal NLL and the score a single column.  Setting one would train
    another model (``objective="regression"``: least squares on the class
    codes) while the estimator still reported an ordinal one.
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise SpecificationError(f"params must be a dict of booster parameters; got {params!r}")
    refuse_reserved(params, reserved, library, "params")
    return dict(params)


def refuse_reserved(
    names: Iterable[str], reserved: Mapping[str, str], library: str, where: str
) -> None:
    """Raise if ``names`` (of ``params``, or keywords: ``where``) include a reserved one."""
    taken = [name for name in names if name in reserved]
    if taken:
        owned = ", ".join(
            f"{name!r} ({reserved[name]})" if reserved[name] != name else repr(name)
            for name in taken
        )
        raise SpecificationError(
            f"{where} may not set {owned}: this estimator's objective is the ordinal "
            "likelihood, its validation metric the ordinal NLL (evals_result_) and its score "
            f"a single latent column, so {library} must not be given another. Remove "
            f"{'them' if len(taken) > 1 else 'it'}; for a plain {library} model use "
            f"{library}'s own estimators"
        )


class OrdinalLGBMClassifier(_OrdinalBooster):
    r"""Ordinal gradient boosting on LightGBM (see :mod:`ordstats.learn.boosting`).

    Parameters
    ----------
    link : {"logit", "probit", "cloglog", "loglog", "cauchit"}
    n_estimators : int
        Boosting rounds.
    learning_rate : float
    num_leaves, max_depth, min_child_samples, subsample, colsample_bytree, reg_alpha, reg_lambda
        LightGBM's tree parameters (its scikit-learn names).
    learn_thresholds : bool
        Newton-update the thresholds between rounds (default) or keep the null
        model's.
    threshold_update_every : int
        Take the threshold step every this many rounds (default 5; 1: every
        round).  Rounds in between hand the booster only its gradient and
        Hessian, about a third of the work of a round with a threshold step
        (logit link).  Measured at n = 10^5, p = 20 (bench/README.md): a round
        costs 1.3-1.4x the booster's built-in binary objective with the default
        and 1.7x with 1, while held-out log-loss did not change with the setting
        (1, 5, 10 or 25).  The thresholds are solved to convergence after the last
        round either way.
    early_stopping_rounds : int, optional
        Stop when the validation NLL has not improved for this many rounds
        (needs ``eval_set`` in :meth:`fit`).
    classes : sequence, optional
        The classes, lowest first, as :class:`~ordstats.learn.OrdinalClassifier`
        (default: an ordered Categorical's, or numbers in numeric order; text
        labels need ``classes=``).
    importance_type : {"split", "gain"}
    random_state : int, optional
    n_jobs : int, optional
        Threads of the booster (LightGBM's ``num_threads``), as scikit-learn's
        ``n_jobs`` (``-1``: every usable core).  Default: the ``threads`` option
        (:func:`ordstats.set_options`), itself every usable core by default.
        BLAS runs on one thread inside the fit.
    params : dict, optional
        Further LightGBM parameters, passed through (``verbose``, ``max_bin``,
        ...: keywords this estimator does not declare go here, and an unknown
        keyword says so).  ``objective``, ``metric`` and ``num_class`` (and
        their LightGBM aliases) are refused: the ordinal likelihood, its NLL and
        one score column are this estimator's.

    Attributes
    ----------
    booster_ : lightgbm.Booster
    thresholds_ : ndarray, shape (n_classes - 1,)
    classes_ : ndarray
    feature_importances_ : ndarray
    best_iteration_ : int
        Rounds used for prediction.
    evals_result_ : dict
        ``{"valid": {"ordinal_nll": [...]}}`` with ``eval_set``: the weighted
        mean validation NLL after each round, at that round's thresholds.
    best_score_ : float or None
        With ``eval_set``: the validation NLL of the returned model (the
        entry of ``evals_result_`` at ``best_iteration_``; the last without
        early stopping).  Its thresholds are that round's, not re-solved.
        ``None`` without ``eval_set``.
    threshold_nll_trace_ : ndarray, shape (n_rounds, 2)
        Training NLL before and after each threshold update (never higher after).
    train_nll_ : float
        Mean training NLL of the final model.

    Examples
    --------
    >>> import numpy as np
    >>> from ordstats.learn import OrdinalLGBMClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = np.digitize(np.sin(2 * X[:, 0]) + X[:, 1] + rng.logistic(size=500), [-1, 0, 1])
    >>> clf = OrdinalLGBMClassifier(n_estimators=50).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 4)
    """

    _booster_module = "lightgbm"
    _extra = "lightgbm"
    _reserved_params: ClassVar[dict[str, str]] = {
        **dict.fromkeys(("objective", "objective_type", "app", "application", "loss"), "objective"),
        **dict.fromkeys(("metric", "metrics", "metric_types"), "metric"),
        **dict.fromkeys(("num_class", "num_classes"), "num_class"),
    }
    _parameter_hint: ClassVar[str] = (
        "Pass LightGBM's own parameters through params=, e.g. "
        "OrdinalLGBMClassifier(params={{{name!r}: {value!r}}})."
    )

    def __init__(
        self,
        link: str = "logit",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        num_leaves: int = 31,
        max_depth: int = -1,
        min_child_samples: int = 20,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        reg_alpha: float = 0.0,
        reg_lambda: float = 0.0,
        learn_thresholds: bool = True,
        threshold_update_every: int = 5,
        early_stopping_rounds: int | None = None,
        classes: Sequence[object] | None = None,
        importance_type: str = "split",
        random_state: int | None = None,
        n_jobs: int | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.link = link
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_alpha = reg_alpha
        self.reg_lambda = reg_lambda
        self.learn_thresholds = learn_thresholds
        self.threshold_update_every = threshold_update_every
        self.early_stopping_rounds = early_stopping_rounds
        self.classes = classes
        self.importance_type = importance_type
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.params = params

    def _check_options(self) -> None:
        super()._check_options()
        params = self.params or {}
        boosting = {params.get(key, "gbdt") for key in _LGB_BOOSTING_KEYS}
        if boosting & {"rf", "random_forest"}:
            raise SpecificationError(
                "LightGBM's random-forest boosting ('rf') takes only its built-in objectives, "
                "not the ordinal likelihood this estimator supplies; use boosting='gbdt' (the "
                "default) or 'dart', with subsample= and colsample_bytree= for bagging"
            )

    def _lgb_params(self, state: _Thresholds) -> dict[str, Any]:
        params: dict[str, Any] = {
            "objective": lambda preds, _data: state.round(preds),
            "metric": "None",
            "learning_rate": float(self.learning_rate),
            "num_leaves": int(self.num_leaves),
            "max_depth": int(self.max_depth),
            "min_data_in_leaf": int(self.min_child_samples),
            "feature_fraction": float(self.colsample_bytree),
            "lambda_l1": float(self.reg_alpha),
            "lambda_l2": float(self.reg_lambda),
            "verbosity": -1,
            # keep features that min_data_in_leaf would filter out at Dataset construction:
            # on few rows LightGBM otherwise fails with "num_features() > 0"
            "feature_pre_filter": False,
        }
        if self.subsample < 1.0:
            params.update(bagging_fraction=float(self.subsample), bagging_freq=1)
        if self.random_state is not None:
            params["seed"] = int(self.random_state)
        params["num_threads"] = self._threads()
        params.update(self._extra_params())
        return params

    def _train(
        self,
        lib: ModuleType,
        X: Any,
        codes: IntArray,
        weights: FloatArray,
        valid: tuple[Any, IntArray, FloatArray] | None,
        state: _Thresholds,
    ) -> tuple[Any, FloatArray]:
        names = booster_feature_names(X)
        feature_name = "auto" if names is None else names
        train = lib.Dataset(
            X, label=codes, weight=weights, free_raw_data=False, feature_name=feature_name
        )
        kwargs: dict[str, Any] = {}
        self.evals_result_: dict[str, dict[str, list[float]]] = {}
        if valid is not None:
            X_val, codes_val, weights_val = valid
            dvalid = lib.Dataset(
                X_val,
                label=codes_val,
                weight=weights_val,
                reference=train,
                feature_name=feature_name,
            )

            def metric(preds: FloatArray, _data: Any) -> tuple[str, float, bool]:
                return "ordinal_nll", state.mean_nll(preds, codes_val, weights_val), False

            callbacks = [lib.record_evaluation(self.evals_result_)]
            if self.early_stopping_rounds:
                callbacks.append(lib.early_stopping(int(self.early_stopping_rounds), verbose=False))
            kwargs = {
                "valid_sets": [dvalid],
                "valid_names": ["valid"],
                "feval": metric,
                "callbacks": callbacks,
            }
        params = self._lgb_params(state)
        booster = lib.train(params, train, num_boost_round=int(self.n_estimators), **kwargs)
        best = booster.best_iteration
        self.best_iteration_ = int(best) if best and best > 0 else booster.current_iteration()
        return booster, self._training_scores(booster, params, X, state)

    def _training_scores(
        self, booster: Any, params: dict[str, Any], X: Any, state: _Thresholds
    ) -> FloatArray:
        """Scores of the training rows without predicting them through every tree.

        Gradient boosting adds one tree per round to the scores the last round
        started from (``state.scores``), so only the last tree is predicted; after
        early stopping, a dropped constant tree, or with DART boosting (which
        reweights earlier trees) all trees are.
        """
        kept = booster.current_iteration()
        boosting = {params.get(key, "gbdt") for key in _LGB_BOOSTING_KEYS}
        if boosting != {"gbdt"} or kept != state.rounds or self.best_iteration_ != kept:
            return self._predict_scores(booster, X)
        last_tree = booster.predict(X, raw_score=True, start_iteration=kept - 1, num_iteration=1)
        return state.scores + np.asarray(last_tree, dtype=float)

    def _scores(self, X: Any) -> FloatArray:
        return self._predict_scores(self.booster_, X)

    def _predict_scores(self, booster: Any, X: Any) -> FloatArray:
        raw = booster.predict(X, raw_score=True, num_iteration=self.best_iteration_)
        return np.asarray(raw, dtype=float)

    @property
    def feature_importances_(self) -> FloatArray:
        """LightGBM's importances (``importance_type``) of each feature."""
        check_is_fitted(self)
        return np.asarray(
            self.booster_.feature_importance(
                importance_type=self.importance_type, iteration=self.best_iteration_
            ),
            dtype=float,
        )


class OrdinalXGBClassifier(_OrdinalBooster):
    r"""Ordinal gradient boosting on XGBoost (see :mod:`ordstats.learn.boosting`).

    Parameters
    ----------
    link : {"logit", "probit", "cloglog", "loglog", "cauchit"}
    n_estimators : int
    learning_rate : float
    max_depth, min_child_weight, subsample, colsample_bytree, reg_alpha, reg_lambda
        XGBoost's parameters (its scikit-learn names).
    booster : {"gbtree", "gblinear", "dart"}
        ``"gblinear"`` boosts a linear score: with enough rounds and no
        penalty it approaches :class:`~ordstats.OrdinalModel`'s fit.  It
        cannot be early-stopped (XGBoost predicts a linear booster with its
        last coefficients, never those of an earlier round).
    learn_thresholds, threshold_update_every, early_stopping_rounds, classes
        As :class:`OrdinalLGBMClassifier`.
    random_state, n_jobs
        As :class:`OrdinalLGBMClassifier`.
    importance_type : {"weight", "gain", "cover", "total_gain", "total_cover"}
    params : dict, optional
        Further XGBoost parameters, passed through (keywords this estimator
        does not declare go here).  ``objective``, ``eval_metric`` and
        ``num_class`` are refused, as for :class:`OrdinalLGBMClassifier`.

    Attributes
    ----------
    booster_ : xgboost.Booster
    thresholds_, classes_, feature_importances_, best_iteration_, evals_result_,
    best_score_, threshold_nll_trace_, train_nll_
        As :class:`OrdinalLGBMClassifier`.
    """

    _booster_module = "xgboost"
    _extra = "xgboost"
    _reserved_params: ClassVar[dict[str, str]] = {
        "objective": "objective",
        "num_class": "num_class",
        "eval_metric": "eval_metric",
    }
    _parameter_hint: ClassVar[str] = (
        "Pass XGBoost's own parameters through params=, e.g. "
        "OrdinalXGBClassifier(params={{{name!r}: {value!r}}})."
    )

    def __init__(
        self,
        link: str = "logit",
        n_estimators: int = 100,
        learning_rate: float = 0.3,
        max_depth: int = 6,
        min_child_weight: float = 1.0,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        reg_alpha: float = 0.0,
        reg_lambda: float = 1.0,
        booster: str = "gbtree",
        learn_thresholds: bool = True,
        threshold_update_every: int = 5,
        early_stopping_rounds: int | None = None,
        classes: Sequence[object] | None = None,
        importance_type: str = "gain",
        random_state: int | None = None,
        n_jobs: int | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.link = link
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_alpha = reg_alpha
        self.reg_lambda = reg_lambda
        self.booster = booster
        self.learn_thresholds = learn_thresholds
        self.threshold_update_every = threshold_update_every
        self.early_stopping_rounds = early_stopping_rounds
        self.classes = classes
        self.importance_type = importance_type
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.params = params

    def _check_options(self) -> None:
        super()._check_options()
        booster = (self.params or {}).get("booster", self.booster)
        if booster == "gblinear" and self.early_stopping_rounds:
            raise SpecificationError(
                "early_stopping_rounds cannot be used with booster='gblinear': XGBoost predicts "
                "a linear booster with the coefficients of its last round, not of the best one, "
                "so the model returned would not be the one early stopping chose. Choose "
                "n_estimators from the validation NLL (evals_result_ of a fit with eval_set), "
                "or use booster='gbtree'"
            )

    def _xgb_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "booster": self.booster,
            "eta": float(self.learning_rate),
            "max_depth": int(self.max_depth),
            "min_child_weight": float(self.min_child_weight),
            "subsample": float(self.subsample),
            "colsample_bytree": float(self.colsample_bytree),
            "alpha": float(self.reg_alpha),
            "lambda": float(self.reg_lambda),
            "base_score": 0.0,
            "disable_default_eval_metric": 1,
            "verbosity": 0,
        }
        if self.random_state is not None:
            params["seed"] = int(self.random_state)
        params["nthread"] = self._threads()
        params.update(self._extra_params())
        return params

    def _matrix(self, lib: ModuleType, X: Any, **kwargs: Any) -> Any:
        return lib.DMatrix(
            X,
            enable_categorical=isinstance(X, pd.DataFrame),
            feature_names=booster_feature_names(X),
            **kwargs,
        )

    def _train(
        self,
        lib: ModuleType,
        X: Any,
        codes: IntArray,
        weights: FloatArray,
        valid: tuple[Any, IntArray, FloatArray] | None,
        state: _Thresholds,
    ) -> tuple[Any, FloatArray]:
        train = self._matrix(lib, X, label=codes, weight=weights)
        self.evals_result_: dict[str, dict[str, list[float]]] = {}
        kwargs: dict[str, Any] = {"evals_result": self.evals_result_, "verbose_eval": False}
        if valid is not None:
            X_val, codes_val, weights_val = valid
            dvalid = self._matrix(lib, X_val, label=codes_val, weight=weights_val)

            def metric(preds: FloatArray, _data: Any) -> tuple[str, float]:
                return "ordinal_nll", state.mean_nll(preds, codes_val, weights_val)

            kwargs.update(evals=[(dvalid, "valid")], custom_metric=metric)
            if self.early_stopping_rounds:
                # on the exact values: XGBoost's own early stopping reads them rounded
                rounds = int(self.early_stopping_rounds)
                kwargs["callbacks"] = [_xgb_early_stopping(lib, state.validation_nll, rounds)]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*base_score.*")
            booster = lib.train(
                self._xgb_params(),
                train,
                num_boost_round=int(self.n_estimators),
                obj=lambda preds, _data: state.round(preds),
                **kwargs,
            )
        history = state.validation_nll
        stopped = self.early_stopping_rounds and history
        self.best_iteration_ = int(np.argmin(history)) + 1 if stopped else int(self.n_estimators)
        # the training matrix holds XGBoost's prediction cache: no pass through the trees
        scores = booster.predict(
            train, output_margin=True, iteration_range=(0, self.best_iteration_)
        )
        return booster, np.asarray(scores, dtype=float)

    def _scores(self, X: Any) -> FloatArray:
        lib = _require("xgboost", "xgboost")
        return np.asarray(
            self.booster_.predict(
                self._matrix(lib, X),
                output_margin=True,
                iteration_range=(0, self.best_iteration_),
            ),
            dtype=float,
        )

    @property
    def feature_importances_(self) -> FloatArray:
        """XGBoost's importances (``importance_type``), normalised to sum 1.

        Of the rounds used for prediction (``best_iteration_`` after early
        stopping, as :class:`OrdinalLGBMClassifier`'s), not of the later ones.
        """
        check_is_fitted(self)
        booster = self.booster_
        if self.booster != "gblinear" and self.best_iteration_ < booster.num_boosted_rounds():
            booster = booster[: self.best_iteration_]  # the trees predict_proba uses
        scores = booster.get_score(importance_type=self.importance_type)
        names = booster.feature_names or [f"f{j}" for j in range(self.n_features_in_)]
        values = np.array([float(np.sum(scores.get(name, 0.0))) for name in names])
        total = values.sum()
        return values / total if total > 0 else values
