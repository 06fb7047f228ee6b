r"""A scikit-learn classifier for ordinal responses, fitted by :class:`~ordstats.OrdinalModel`.

:class:`OrdinalClassifier` wraps the cumulative (R's ``clm``), sequential
(``sratio``, ``cratio``) and adjacent-category (``acat``) models with every link.
It fits through ``OrdinalModel`` on arrays (no formula machinery), so its
estimates *are* ``OrdinalModel``'s, and keeps the fitted
:class:`~ordstats.OrdinalResults` as ``results_`` for standard errors, tests and
the summary.  For the cumulative model

.. math::

    P(Y \le j \mid x) = F(\theta_j - x^\top\beta), \qquad j = 1, \dots, K - 1,

so a positive coefficient moves probability to higher classes.

scikit-learn is imported by this module; ``import ordstats`` never imports it.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.config import check_threads
from ordstats.core.links import get_link
from ordstats.core.links.flexible import FlexibleLink
from ordstats.core.penalty import check_penalty_arguments
from ordstats.core.threads import numeric_threads
from ordstats.design.core import align_to_index
from ordstats.design.response import format_level
from ordstats.errors import (
    CollinearityWarning,
    DataError,
    SpecificationError,
    check_flag,
    not_numbers,
    user_stacklevel,
)
from ordstats.estimation.model import OrdinalModel
from ordstats.estimation.options import ModelOptions
from ordstats.estimation.penalized import cv_splits
from ordstats.families.cumulative.prediction import threshold_matrix
from ordstats.learn._sklearn import ClearParameters, Prediction, class_index, require_sklearn
from ordstats.learn._targets import encode_target, refuse_missing
from ordstats.metrics import mean_absolute_class_error
from ordstats.results.fitted import OrdinalResults

require_sklearn()

from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.model_selection import check_cv  # noqa: E402
from sklearn.utils.validation import (  # noqa: E402
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

__all__ = ["OrdinalClassifier", "OrdinalClassifierCV"]


class OrdinalClassifier(ClearParameters, ClassifierMixin, BaseEstimator):
    r"""Ordinal regression as a scikit-learn classifier.

    Parameters
    ----------
    family : {"cumulative", "sratio", "cratio", "acat"}
        The model, as in :class:`~ordstats.ModelOptions`.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"loglog"``, ``"cauchit"`` or a
        flexible link (``"aranda-ordaz"``, ``"log-gamma"``), as in
        :class:`~ordstats.ModelOptions`.
    threshold : {"flexible", "equidistant", "symmetric", "symmetric2"}
        Threshold structure (cumulative family only).
    reverse : bool
        VGAM's ``reverse=`` for sratio, cratio and acat.
    classes : sequence, optional
        The classes in their order, lowest first (any number of them).  Default:
        the categories of an ordered pandas Categorical ``y``, otherwise the
        sorted distinct values of numeric or boolean ``y`` (at most 50; more are
        refused as a continuous target).  Text labels, or labels of mixed types,
        have no order of their own: without ``classes=`` (or an ordered
        Categorical) they are refused, never sorted alphabetically.  Every class
        must occur in ``y`` (the thresholds around a class without rows are not
        estimable).
    maxiter, gradtol : int, float
        Newton iterations and gradient tolerance (as :meth:`OrdinalModel.fit`).
        A penalised fit (``alpha > 0``) takes ``maxiter`` but not ``gradtol``:
        it stops when its KKT conditions hold within ``1e-7`` (the ``tol`` of
        :meth:`OrdinalModel.fit_regularized`), about ``1e-7`` from the exact
        optimum in the estimates.
    check_separation : bool
        Check a fit for separation (a linear program per fit; turn off in long
        resampling loops where a ``ConvergenceWarning`` is enough).
    alpha : float
        Elastic-net penalty weight ``>= 0`` on the slopes (never the
        thresholds); 0 (default) is the unpenalised maximum-likelihood fit.
        The objective is the mean negative log-likelihood plus
        ``alpha * (l1_ratio * |b|_1 + (1 - l1_ratio) / 2 * |b|_2^2)``, glmnet's
        ``lambda`` and scikit-learn's ``1 / (C n)`` (see
        :meth:`OrdinalModel.fit_regularized`).  :class:`OrdinalClassifierCV`
        chooses it by cross-validation.
    l1_ratio : float
        Share of the L1 penalty in ``[0, 1]`` (1 lasso, 0 ridge).
    standardize : bool
        Penalise the slopes of standardised columns (glmnet's
        ``standardize = TRUE``); coefficients stay on the original scale.
    n_jobs : int or None
        The most BLAS threads the fit may use, as scikit-learn's ``n_jobs``
        (``-1``: every usable core).  Thin products always run on one thread
        and only large ones may use more (:func:`ordstats.set_options`);
        ``None`` takes the ``threads`` option.  The estimates do not depend on it.

    Attributes
    ----------
    classes_ : ndarray
        The classes, lowest first (the columns of :meth:`predict_proba`).
    results_ : OrdinalResults
        The fitted model: ``results_.summary()``, ``results_.bse``, ...  Its
        parameters are named as R's ``clm`` names them: the thresholds after the
        classes (``"low|mid"``), the slopes after ``feature_names_in_`` (a
        DataFrame's columns, also through ``set_output(transform="pandas")``)
        or ``x1, x2, ...`` for arrays, for repeated column names and for a
        column named as another parameter (``"low|mid"``, ``"lambda"``).
    coef_ : ndarray, shape (n_features,)
        Slopes ``beta``; 0 for a column left out because it is constant in
        the training rows (with a ``CollinearityWarning``: the thresholds are the
        intercept) or aliased with earlier columns.  Such a column is absent
        from ``results_.params`` and has no effect on predictions.
    intercept_ : ndarray, shape (n_classes - 1,)
        The thresholds / step intercepts (``results_.params`` names them).
    n_features_in_, feature_names_in_
        As scikit-learn defines them.

    Notes
    -----
    :meth:`score` is minus the mean absolute error between predicted and true
    class *indices* (:func:`~ordstats.metrics.mean_absolute_class_error`):
    on an ordered target a prediction two classes off is worse than one class
    off, which accuracy ignores; it is negated so that higher is better, as
    ``GridSearchCV`` and ``cross_val_score`` expect (scikit-learn's
    ``neg_mean_absolute_error`` convention).  Pass ``scoring="accuracy"`` or a
    scorer from :mod:`ordstats.metrics` for another metric.

    ``classes_`` are in the classes' order, lowest first, not sorted (as
    scikit-learn's own classifiers' are).  scikit-learn's probability scorers
    (``scoring="neg_log_loss"``, ``"neg_brier_score"``, ``"roc_auc_ovr"``, ...)
    pair the columns of :meth:`predict_proba` with the *sorted* labels of
    ``y``, not with ``classes_``: where the order differs (text classes such as
    ``["low", "mid", "high"]``, or ``classes=`` listing numbers from highest
    down) they score the wrong columns without an error.  Use the scorers of
    ``ordstats.metrics.SCORERS`` (``"neg_log_loss"``, ``"neg_rps"``, ...), which
    read ``classes_``; label scorers (``"accuracy"``) are unaffected.

    :meth:`predict_proba` returns a NumPy array with one column per class of
    ``classes_``: scikit-learn's ``set_output`` applies to transformers only, so
    pandas output is available where it is defined (transformers before this
    estimator in a pipeline); ``results_.predict`` gives DataFrames.

    Examples
    --------
    >>> import ordstats
    >>> from ordstats.learn import OrdinalClassifier
    >>> wine = ordstats.datasets.load("wine")
    >>> X = (wine[["temp", "contact"]] != ["cold", "no"]).astype(float)
    >>> clf = OrdinalClassifier().fit(X, wine["rating"])
    >>> clf.classes_.tolist()
    ['1', '2', '3', '4', '5']
    >>> round(clf.results_.llf, 4)
    -86.4919
    """

    def __init__(
        self,
        family: str = "cumulative",
        link: str = "logit",
        threshold: str = "flexible",
        reverse: bool = False,
        classes: Sequence[object] | None = None,
        maxiter: int = 100,
        gradtol: float = 1e-6,
        check_separation: bool = True,
        alpha: float = 0.0,
        l1_ratio: float = 0.5,
        standardize: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        self.family = family
        self.link = link
        self.threshold = threshold
        self.reverse = reverse
        self.classes = classes
        self.maxiter = maxiter
        self.gradtol = gradtol
        self.check_separation = check_separation
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.standardize = standardize
        self.n_jobs = n_jobs

    # -- fitting ---------------------------------------------------------------

    def fit(self, X: object, y: object, sample_weight: object = None) -> OrdinalClassifier:
        """Fit the ordinal model by maximum likelihood.

        Parameters
        ----------
        X : array-like or pandas.DataFrame, shape (n_samples, n_features)
            Numeric regressors without a constant column (the thresholds are the
            intercepts).  Encode strings first, e.g. with a ``ColumnTransformer``.
        y : array-like, shape (n_samples,)
            The classes: numbers or booleans (numeric order), an ordered pandas
            Categorical (its order) or any labels listed in ``classes=``.
        sample_weight : array-like, shape (n_samples,), optional
            Non-negative frequency weights.

            With a pandas ``X``, a pandas ``y`` or ``sample_weight`` is paired with
            its rows by index label (the same labels in another order are
            reordered; other labels raise a ``DataError``); numpy arrays pair by
            position, as in scikit-learn.

        Returns
        -------
        OrdinalClassifier
            ``self``.

        Raises
        ------
        ValueError
            (:class:`~ordstats.errors.OrdstatsError` and scikit-learn's) for
            non-numeric ``X``, fewer than two classes, a class of ``y`` not in
            ``classes``, or negative weights.
        """
        return self._fit(X, y, sample_weight, groups=None)

    def _fit(
        self, X: object, y: object, sample_weight: object, groups: object
    ) -> OrdinalClassifier:
        with numeric_threads(check_threads(self.n_jobs, "n_jobs")):
            return self._fit_threaded(X, y, sample_weight, groups)

    def _fit_threaded(
        self, X: object, y: object, sample_weight: object, groups: object
    ) -> OrdinalClassifier:
        options = self._options()
        y, sample_weight, groups = align_on_X(X, y=y, sample_weight=sample_weight, groups=groups)
        if y is not None:  # None itself gets scikit-learn's "requires y" error
            refuse_missing(y)  # also None in an object array, which sorting would trip over
        refuse_text_columns(X)
        X_checked, y_checked = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        X = np.asarray(X_checked, dtype=np.float64)
        weights = sample_weights(sample_weight, X)
        target = encode_target(
            y, y_checked, self.classes, weights, estimator="an ordinal classifier"
        )
        # an ordered Categorical of the codes (the fast path of the response encoding),
        # its categories the classes: the thresholds are named "low|mid", as R's clm
        endog = pd.Categorical.from_codes(
            target.codes, categories=pd.Index(target.classes), ordered=True
        )
        names = _column_names(self, _other_parameter_names(options, target.classes))
        kept = _nonconstant_columns(X, weights, names)
        exog = pd.DataFrame(X[:, kept], columns=[names[j] for j in kept], copy=False)
        model = OrdinalModel(
            endog, exog if kept.size else None, weights=weights, **options.as_keywords()
        )
        self.results_ = self._fit_model(model, _Rows(X, y_checked, groups))
        self.classes_ = target.classes
        self._store_coefficients(model, names)
        return self

    def _fit_model(self, model: OrdinalModel, rows: _Rows) -> OrdinalResults:
        """Maximum likelihood, or the elastic-net fit when ``alpha > 0``."""
        alpha, l1_ratio = check_penalty_arguments(self.alpha, self.l1_ratio)
        check_flag("standardize", self.standardize)  # read only when alpha > 0
        if alpha == 0.0:
            return model.fit(  # predictions need no covariance: bse computes it if asked
                maxiter=self.maxiter,
                gradtol=self.gradtol,
                check_separation=self.check_separation,
                cov_type="none",
            )
        return model.fit_regularized(
            alpha=alpha, L1_wt=l1_ratio, standardize=self.standardize, maxiter=self.maxiter
        )

    def _options(self) -> ModelOptions:
        alpha = getattr(self, "alpha", None)  # None: the CV estimator, whose fits penalise
        penalised = alpha is None or check_penalty_arguments(alpha, self.l1_ratio)[0] > 0
        return ModelOptions(
            family=self.family,
            link=self.link,
            threshold=self.threshold,
            reverse=self.reverse,
            many_levels=True,  # the classes are checked by encode_target (classes= allows many)
            # a penalty estimates aliased columns: kept, as scikit-learn's and glmnet's
            # penalised models keep every column
            collinear="keep" if penalised else "drop",
        )

    def _store_coefficients(self, model: OrdinalModel, names: list[str]) -> None:
        params = self.results_.params.to_numpy()
        layout = model.problem.layout
        self.intercept_ = params[layout.thresholds].copy()
        coef = np.zeros(len(names))
        position = {name: j for j, name in enumerate(names)}
        kept = [position[name] for name in model.exog_names]  # constant and aliased absent
        coef[kept] = params[layout.beta]
        self.coef_ = coef

    # -- prediction ------------------------------------------------------------

    def predict_proba(self, X: object) -> FloatArray:
        """``P(Y = j | x)`` for each class of ``classes_``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        refuse_text_columns(X)
        checked = validate_data(self, X, dtype=np.float64, reset=False)
        return self._proba(np.asarray(checked, dtype=np.float64))

    def _proba(self, X: FloatArray) -> FloatArray:
        with numeric_threads(self.n_jobs):  # thin products, as in the fit
            model = self.results_.model
            if isinstance(model.link, FlexibleLink):  # the link at the estimated lambda
                if not model.exog_names:
                    prob = self.results_.predict(None, "prob").to_numpy()[:1]
                    return np.repeat(prob, len(X), axis=0)
                others = set(model.param_names) - set(model.exog_names)
                frame = pd.DataFrame(X, columns=_column_names(self, others), copy=False)
                return np.asarray(self.results_.predict(frame, "prob").to_numpy(), dtype=float)
            # x'beta and the cut-points directly: no design or pandas work per call
            theta = threshold_matrix(
                self.intercept_, model.threshold_jacobian, offset=model.threshold_offset
            )
            return model.family_spec.category_probabilities(theta, X @ self.coef_, link=model.link)

    def predict(self, X: object, kind: Prediction = "mode") -> np.ndarray:
        """The predicted class of each row.

        Parameters
        ----------
        X : array-like or pandas.DataFrame, shape (n_samples, n_features)
        kind : {"mode", "median", "expected"}
            ``"mode"`` (default): the most probable class, the argmax of
            :meth:`predict_proba`, as scikit-learn requires of a classifier
            (:meth:`score`, ``cross_val_score`` and ``GridSearchCV`` use it).
            ``"median"``: the first class with ``P(Y <= j) >= 1/2``, which
            minimises the expected absolute error in classes.  ``"expected"``:
            the class nearest the expected class index ``sum_j j P(Y = j)``
            (:meth:`expected_index` gives the number itself).  In a
            ``Pipeline``, ``pipe.predict(X, kind="median")`` passes it on.

        Returns
        -------
        ndarray, shape (n_samples,)
            Elements of ``classes_``.
        """
        index = class_index(self.predict_proba(X), kind)  # checks the fit first
        return self.classes_[index]

    def expected_index(self, X: object) -> FloatArray:
        """Expected class index ``sum_j j P(Y = j | x)``, classes numbered ``0, ..., K-1``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
        """
        prob = self.predict_proba(X)
        return prob @ np.arange(prob.shape[1], dtype=float)

    def predict_log_proba(self, X: object) -> FloatArray:
        """``log P(Y = j | x)``, shape (n_samples, n_classes)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def score(self, X: object, y: object, sample_weight: object = None) -> float:
        """Minus the mean absolute error in classes of :meth:`predict` (higher is better).

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
            True classes (elements of ``classes_``).
        sample_weight : array-like, optional

        Returns
        -------
        float
            ``-sum_i w_i |index(y_i) - index(yhat_i)| / sum_i w_i``; see Notes of
            the class for why not accuracy.
        """
        return class_error_score(self, X, y, sample_weight)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True
        return tags


class OrdinalClassifierCV(OrdinalClassifier):
    r"""Elastic-net ordinal classifier with ``alpha`` chosen by cross-validation.

    Fits the regularisation path of :meth:`OrdinalModel.path` on ``cv``
    folds of the training rows (:meth:`OrdinalModel.cv`), scores each
    held-out fold along the path by ``scoring``, takes the ``alpha`` with the
    smallest mean loss (``select="best"``) or the largest ``alpha`` within one
    standard error of it (``select="1se"``, glmnet's ``lambda.1se``), and
    refits all rows at that ``alpha`` (warm-started from the path).  It is
    ``OrdinalClassifier(alpha=alpha_, ...)`` with ``alpha_`` chosen on the
    training data only, so it can sit in a ``Pipeline`` or be scored by
    ``cross_val_score`` without leaking the test rows.

    Parameters
    ----------
    family, link, threshold, reverse, classes, maxiter, gradtol
        As :class:`OrdinalClassifier`.
    alphas : sequence of float, optional
        Candidate penalties.  Default: ``n_alphas`` values log-spaced from
        ``alpha_max`` (every slope zero) down to ``1e-3 alpha_max``.
    n_alphas : int
    l1_ratio : float
        Share of the L1 penalty (1 lasso, 0 ridge).
    cv : int, cross-validation splitter, iterable of (train, test) or None
        What scikit-learn's CV estimators accept: a number of folds (at least 2;
        ``None`` is 5), a splitter such as ``KFold``, ``StratifiedKFold`` or
        ``GroupKFold`` (its groups passed as ``fit(..., groups=)``), or a list of
        ``(train, test)`` index arrays into the rows of ``X``.  A number of folds
        assigns the rows at random (seeded by ``random_state``), as
        :meth:`OrdinalModel.cv` does; a splitter's folds are used as it gives
        them.
    scoring : {"log_loss", "rps", "mae"}
        The held-out loss: ordinal log-loss, ranked probability score or mean
        absolute error in classes of the most probable class
        (:mod:`ordstats.metrics`).
    standardize : bool
        Penalise standardised slopes (default ``True``, as glmnet: penalties
        then treat predictors on different scales alike).
    select : {"best", "1se"}
    random_state : int or None
        Seed of the fold assignment when ``cv`` is a number.
    n_jobs : int or None
        As :class:`OrdinalClassifier` (the folds are fitted one after another).

    Attributes
    ----------
    alpha_ : float
        The chosen penalty.
    cv_results_ : ordstats.results.regularized.CVResult
        Mean and standard error of the loss at each ``alpha``, the folds' losses
        and the full-data path (``cv_results_.plot()`` where available).
    classes_, results_, coef_, intercept_, n_features_in_, feature_names_in_
        As :class:`OrdinalClassifier`; ``results_`` is the penalised fit.

    Examples
    --------
    >>> import numpy as np
    >>> from ordstats.learn import OrdinalClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 5))
    >>> y = np.digitize(X[:, 0] + rng.logistic(size=300), [-1.0, 0.0, 1.0])
    >>> clf = OrdinalClassifierCV(n_alphas=10, cv=3).fit(X, y)
    >>> bool(clf.alpha_ > 0), clf.predict_proba(X[:2]).shape
    (True, (2, 4))
    """

    def __init__(
        self,
        family: str = "cumulative",
        link: str = "logit",
        threshold: str = "flexible",
        reverse: bool = False,
        classes: Sequence[object] | None = None,
        maxiter: int = 100,
        gradtol: float = 1e-6,
        alphas: Sequence[float] | None = None,
        n_alphas: int = 50,
        l1_ratio: float = 0.5,
        cv: int | object = 5,
        scoring: str = "log_loss",
        standardize: bool = True,
        select: str = "best",
        random_state: int | None = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.family = family
        self.link = link
        self.threshold = threshold
        self.reverse = reverse
        self.classes = classes
        self.maxiter = maxiter
        self.gradtol = gradtol
        self.alphas = alphas
        self.n_alphas = n_alphas
        self.l1_ratio = l1_ratio
        self.cv = cv
        self.scoring = scoring
        self.standardize = standardize
        self.select = select
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(
        self, X: object, y: object, sample_weight: object = None, groups: object = None
    ) -> OrdinalClassifierCV:
        """Choose ``alpha`` by cross-validation on the rows, then refit them all at it.

        Parameters
        ----------
        X, y, sample_weight
            As :meth:`OrdinalClassifier.fit`.
        groups : array-like, shape (n_samples,), optional
            Group labels for a splitter that needs them (``GroupKFold``, ...).

        Returns
        -------
        OrdinalClassifierCV
            ``self``.
        """
        return self._fit(X, y, sample_weight, groups=groups)

    def _fit_model(self, model: OrdinalModel, rows: _Rows) -> OrdinalResults:
        """Choose ``alpha`` by cross-validation, then refit every row at it."""
        if self.select not in ("best", "1se"):
            raise SpecificationError(f"select must be 'best' or '1se'; got {self.select!r}")
        _, l1_ratio = check_penalty_arguments(0.0, self.l1_ratio)
        result = model.cv(
            self.alphas,
            n_alphas=self.n_alphas,
            l1_ratio=l1_ratio,
            cv=self._folds(model, rows),
            scoring=self.scoring,
            standardize=self.standardize,
            seed=self.random_state,
        )
        alpha = result.alpha_best if self.select == "best" else result.alpha_1se
        start = result.path.params.loc[alpha].to_numpy()
        self.alpha_ = float(alpha)
        self.cv_results_ = result
        return model.fit_regularized(
            alpha=alpha,
            L1_wt=l1_ratio,
            standardize=self.standardize,
            start_params=start,
            maxiter=self.maxiter,
        )

    def _folds(self, model: OrdinalModel, rows: _Rows) -> int | list[tuple[IntArray, IntArray]]:
        """``cv`` as the model takes it: a number of folds, or the splitter's folds.

        A splitter (or a list of splits) numbers the rows of ``X``; the model
        leaves out rows of zero weight, so its positions are mapped to the
        model's rows (a left-out row is in no fold).
        """
        cv = 5 if self.cv is None else self.cv
        if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
            return int(cv)  # the model's own seeded folds (random_state)
        try:
            splitter = check_cv(cv, rows.y, classifier=True)
            splits = list(splitter.split(rows.X, rows.y, rows.groups))
        except (TypeError, ValueError) as exc:
            hint = " (pass groups= to fit)" if rows.groups is None and "group" in str(exc) else ""
            raise SpecificationError(
                f"cv must be a number of folds, a scikit-learn splitter or a list of "
                f"(train, test) index pairs; cv={cv!r} could not split the rows: {exc}{hint}"
            ) from exc
        checked = cv_splits(splits, len(rows.y), None)  # positions among the rows of X
        position = np.full(len(rows.y), -1, dtype=np.intp)
        position[np.asarray(model.design.row_index, dtype=np.intp)] = np.arange(model.n_rows)
        return [(_kept(position, train), _kept(position, test)) for train, test in checked]


# -- helpers -------------------------------------------------------------------


def _column_names(estimator: OrdinalClassifier, others: set[str]) -> list[str]:
    """Names of the columns of ``X``: ``feature_names_in_``, else ``x1, x2, ...``.

    Positional names too when the names repeat or one of them is in ``others``,
    the names of the model's other parameters (a threshold ``"low|mid"``,
    ``"lambda"``): ``results_.params`` needs one name per parameter.
    """
    names = getattr(estimator, "feature_names_in_", None)
    if names is None or len(set(names)) != len(names) or others.intersection(map(str, names)):
        return [f"x{j + 1}" for j in range(estimator.n_features_in_)]
    return [str(name) for name in names]


def _other_parameter_names(options: ModelOptions, classes: np.ndarray) -> set[str]:
    """Names of the parameters of the classifier's model that are not slopes."""
    levels = [format_level(c) for c in classes.tolist()]
    names = set(options.family_object().parameter_names(options.threshold, levels))
    if isinstance(get_link(options.link), FlexibleLink):
        names.add("lambda")
    return names


def _nonconstant_columns(X: FloatArray, weights: FloatArray, names: list[str]) -> IntArray:
    """Positions of the columns that vary over the rows of positive weight.

    A constant column is aliased with the thresholds (the intercepts): it is
    left out with a warning, coefficient 0, as an aliased column is, so that
    a rare dummy absent from one cross-validation fold does not fail the fit.
    """
    rows = X if np.all(weights > 0) else X[weights > 0]
    constant = np.ptp(rows, axis=0) == 0 if len(rows) else np.zeros(X.shape[1], dtype=bool)
    if constant.any():
        dropped = ", ".join(repr(names[j]) for j in np.flatnonzero(constant))
        warnings.warn(
            f"X column(s) {dropped} are constant in the training rows: the thresholds already "
            "act as the intercept, so a constant has no effect of its own. Left out of the "
            "model (coefficient 0 in coef_, absent from results_.params), as an aliased column",
            CollinearityWarning,
            stacklevel=user_stacklevel(),
        )
    return np.flatnonzero(~constant)


@dataclass(frozen=True)
class _Rows:
    """The training rows as :meth:`OrdinalClassifier.fit` checked them (for the CV splitter)."""

    X: FloatArray
    y: np.ndarray
    groups: object


def _kept(position: IntArray, rows: IntArray) -> IntArray:
    """Model positions of the rows of ``X`` at ``rows`` that the model kept."""
    mapped = position[rows]
    return mapped[mapped >= 0]


def align_on_X(X: object, **values: object) -> list[object]:
    """The pandas ``values`` (``y=``, ``sample_weight=``, ...) in the row order of a pandas ``X``.

    pandas inputs pair by index label, as in :class:`~ordstats.OrdinalModel`: when
    ``X`` and a value are both pandas objects whose indexes hold the same labels
    in another order, the value is reordered to ``X``'s index; other labels raise
    a :class:`~ordstats.errors.DataError`.  numpy inputs (on either side) pair by
    position, as scikit-learn's.
    """
    if not isinstance(X, (pd.DataFrame, pd.Series)):
        return list(values.values())
    return [align_to_index(value, X.index, name, "X") for name, value in values.items()]


def class_error_score(estimator: Any, X: object, y: object, sample_weight: object) -> float:
    """An estimator's ``score``: minus the mean absolute error in classes of ``predict(X)``."""
    y, sample_weight = align_on_X(X, y=y, sample_weight=sample_weight)
    return -mean_absolute_class_error(
        y, estimator.predict(X), labels=list(estimator.classes_), sample_weight=sample_weight
    )


def refuse_text_columns(X: object) -> None:
    """Refuse a DataFrame ``X`` with columns that are not numbers, naming them.

    scikit-learn's validation says only "could not convert string to float: 'x'"
    (or stops on a date's dtype), naming no column.
    """
    if not isinstance(X, pd.DataFrame):
        return
    bad = [
        str(c)
        for c in X.columns
        if not pd.api.types.is_numeric_dtype(X[c].dtype) and not_numbers(X[c]) is not None
    ]
    if bad:
        raise DataError(
            f"X column(s) {', '.join(map(repr, bad))} are not numbers (text, categories or "
            "dates); encode them first, e.g. with scikit-learn's OneHotEncoder in a Pipeline "
            "or pd.get_dummies"
        )


def sample_weights(sample_weight: object, X: FloatArray) -> FloatArray:
    """Checked non-negative, finite weights of the rows of ``X`` (ones when None)."""
    if sample_weight is None:
        return np.ones(len(X))
    kind = not_numbers(sample_weight)
    if kind is not None:  # numpy reads booleans as 0/1 and parses text
        raise DataError(f"sample_weight must be numbers; got {kind}")
    if isinstance(sample_weight, pd.Series):
        sample_weight = sample_weight.to_numpy(dtype=np.float64, na_value=np.nan)
    shape = np.shape(np.asarray(sample_weight))
    if shape not in ((), (len(X),)):
        raise DataError(
            f"sample_weight must be one number per row of X ({len(X)}) or one number; "
            f"got shape {shape}"
        )
    if not np.all(np.isfinite(np.asarray(sample_weight, dtype=np.float64))):
        raise DataError("sample_weight has missing or non-finite values")
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if not np.all(np.isfinite(weights)):
        raise DataError("sample_weight has missing or non-finite values")
    if np.any(weights < 0):
        raise DataError("sample_weight has negative values; weights must be >= 0")
    return weights
