r"""Ordinal metrics: plain NumPy functions, ready for scikit-learn's ``make_scorer``.

**Where classes lie.**  With ``labels=`` (the classes, lowest first), a class
is its *index* in ``labels`` (``0, ..., K - 1``), so ``"low" < "mid" < "high"``
works as well as ``1 < 2 < 3`` and neighbouring classes are one apart whatever
their values.  Without ``labels=`` the classes must be numbers (or booleans,
``False < True``), and a class lies at its own value: the distance between
classes 1 and 3 is 2 even when no row has class 2 (ranks among the classes
present would shrink it to 1), and for consecutive integer classes (1-5 stars)
it is the number of classes apart.  For numeric classes that are not one
apart (``0, 10, 20`` or half steps) pass ``labels=`` to count classes instead.
An ordered pandas Categorical (``y_true`` or ``y_pred``) gives its categories
as ``labels=`` would (the two must then have the same categories in the same
order).  Other text or values of mixed types without ``labels=`` are refused:
neither their order nor their distances can be inferred (sorted as text, ``"high"`` would
come before ``"low"``).  Only :func:`mean_absolute_class_error` and
:func:`quadratic_weighted_kappa` use distances; the others need the order only.

With ``n`` rows, weights ``w_i`` (default 1), true class position ``y_i``,
predicted position ``\hat y_i`` and predicted probabilities ``p_{ij}``
(columns in the order of the classes):

* :func:`mean_absolute_class_error`: ``sum_i w_i |y_i - \hat y_i| / sum_i w_i``.
* :func:`ranked_probability_score`: ``sum_i w_i sum_{j<K-1} (P_ij - 1[y_i <= j])^2
  / sum_i w_i`` with ``P_ij = sum_{k<=j} p_ik`` (Epstein 1969, not divided by
  ``K - 1``); lower is better, 0 for a certain correct forecast.
* :func:`ordinal_log_loss`: ``-sum_i w_i log p_{i, y_i} / sum_i w_i``.
* :func:`quadratic_weighted_kappa`: Cohen's kappa with weights ``(a - b)^2``
  between class positions ``a`` and ``b``, ``1 - sum O_ab W_ab / sum E_ab W_ab``
  (with ``labels=``, equal to scikit-learn's ``cohen_kappa_score(labels=...,
  weights="quadratic")``; scikit-learn without ``labels`` ranks the classes
  present instead).
* :func:`concordance_index`: Harrell's C for an ordinal outcome: among pairs with
  ``y_i < y_j``, the share with ``s_i < s_j`` (ties in ``s`` count 1/2);
  :func:`somers_d` is ``2 C - 1``.

Every function takes ``sample_weight=`` and raises a ``ValueError``
(:class:`~ordstats.errors.DataError`) for mismatched shapes or labels, rows of
probabilities that do not sum to 1 (within 1e-5), and for
labels that need ``labels=``.  pandas inputs (``y_true`` with ``y_pred``,
``y_prob``, ``y_score`` or ``sample_weight``) are paired by index label, as
everywhere in ordstats: the same labels in another order are reordered to
``y_true``'s, different labels are refused (scikit-learn's metrics pair by
position).  Use them
with ``make_scorer``, for example::

    make_scorer(ranked_probability_score, response_method="predict_proba",
                greater_is_better=False, labels=classes)

or pass the ready scorers of :data:`SCORERS` (callables ``scorer(estimator, X,
y)`` that read ``estimator.classes_``) as ``scoring=``; like ``estimator.score``,
they pair a pandas ``y`` (and ``sample_weight``) with a pandas ``X`` by index label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray
from ordstats.errors import DataError, is_real_number

__all__ = [
    "SCORERS",
    "concordance_index",
    "concordance_scorer",
    "mean_absolute_class_error",
    "neg_log_loss_scorer",
    "neg_mae_scorer",
    "neg_rps_scorer",
    "ordinal_log_loss",
    "quadratic_weighted_kappa",
    "qwk_scorer",
    "ranked_probability_score",
    "somers_d",
]


@dataclass(frozen=True)
class _Scale:
    """The ordered classes and where each lies on the scale distances are measured on."""

    labels: list[object]
    positions: FloatArray


def _scale(labels: Sequence[object] | None, *named: tuple[object, str]) -> _Scale:
    """Classes and positions: ranks in ``labels``, else the numbers' own values (module doc)."""
    if labels is None:
        labels = _categorical_order(*named)
    if labels is not None:
        declared = _declared_labels(labels)
        return _Scale(declared, np.arange(len(declared), dtype=float))
    arrays = [_numeric_labels(y, name) for y, name in named]
    kinds = {a.dtype.kind == "b" for a in arrays}
    if len(kinds) > 1:
        raise DataError(
            "the arrays mix booleans and numbers; pass labels=[...] with the classes from "
            "lowest to highest"
        )
    found = np.unique(np.concatenate([a.reshape(-1) for a in arrays])).tolist()
    # Python numbers: exact offsets also for integers beyond 2**53 (and uint64)
    low = found[0] if found else 0
    return _Scale(found, np.array([float(v - low) for v in found], dtype=float))


def _categorical_order(*named: tuple[object, str]) -> list[object] | None:
    """The classes of the ordered pandas Categoricals among ``named``, which must agree.

    An ordered Categorical carries its classes, lowest first, as ``labels=`` would
    (unused categories included); None when no argument is one.
    """
    orders = [(_ordered_categories(y), name) for y, name in named]
    orders = [(order, name) for order, name in orders if order is not None]
    if not orders:
        return None
    first, first_name = orders[0]
    for order, name in orders[1:]:
        if order != first:
            raise DataError(
                f"{first_name} and {name} are ordered Categoricals with different categories "
                f"({first!r} and {order!r}); give them the same categories in the same order "
                "(e.g. y_pred.cat.set_categories(y_true.cat.categories)), or pass labels=[...]"
            )
    return first


def _ordered_categories(y: object) -> list[object] | None:
    """The categories of an ordered pandas Categorical (or a Series of one), else None."""
    dtype = getattr(y, "dtype", None)  # duck-typed: this layer does not import pandas
    categories = getattr(dtype, "categories", None)
    if getattr(dtype, "ordered", None) is not True or categories is None:
        return None
    return list(categories)


def _declared_labels(labels: Sequence[object]) -> list[object]:
    if isinstance(labels, (str, bytes)):
        raise DataError(f"labels must be a list of classes, lowest first; got {labels!r}")
    out = list(np.asarray(list(labels)).tolist())
    if len(set(out)) != len(out):
        raise DataError(f"labels has repeated values: {out}")
    return out


def _numeric_labels(y: object, name: str) -> np.ndarray:
    """``y`` as numbers or booleans, or an error asking for ``labels=`` (text, mixed types)."""
    # a list keeps each value's type: [True, 2] or [1, "a"] are not coerced to one dtype
    values = np.asarray(y) if hasattr(y, "dtype") else np.asarray(y, dtype=object)
    if values.dtype.kind == "O":
        values = _same_kind_numbers(values)
    if values.dtype.kind not in "biuf":
        shown = list(dict.fromkeys(values.reshape(-1).tolist()))
        listed = ", ".join(map(repr, shown[:4])) + (", ..." if len(shown) > 4 else "")
        raise DataError(
            f"{name} holds labels that are not numbers ({listed}), so neither their order nor "
            "the distance between classes can be inferred; pass labels=[...] with the classes "
            "from lowest to highest"
        )
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise DataError(f"{name} has missing or non-finite values")
    return values


def _same_kind_numbers(values: np.ndarray) -> np.ndarray:
    """Objects that are all booleans or all (non-boolean) real numbers as an array of them."""
    flat = values.reshape(-1).tolist()
    if all(isinstance(v, (bool, np.bool_)) for v in flat):
        return np.array(flat, dtype=bool).reshape(values.shape)
    if all(is_real_number(v) for v in flat):
        numeric = np.array(flat)
        if numeric.dtype.kind in "iuf":
            return numeric.reshape(values.shape)
    return values


def _index(y: object, labels: list[object], name: str) -> np.ndarray:
    values = np.asarray(y)
    if values.ndim != 1:
        raise DataError(f"{name} must be one-dimensional; got shape {values.shape}")
    lookup = {label: i for i, label in enumerate(labels)}
    try:
        return np.fromiter((lookup[v] for v in values.tolist()), dtype=np.intp, count=len(values))
    except (KeyError, TypeError):
        missing = sum(map(_is_missing, values.tolist()))
        if missing:
            raise DataError(
                f"{name} has {missing} missing value(s) (NaN, None or pd.NA); drop those rows "
                "(from every argument) first"
            ) from None
        raise DataError(_unknown_values_message(values.tolist(), labels, name)) from None


def _is_missing(value: object) -> bool:
    """None, NaN, NaT or pandas' NA (whose comparisons have no truth value)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True


def _unknown_values_message(values: list[object], labels: list[object], name: str) -> str:
    """Which values are not labels (as reprs: 1 and '1' differ), and when text meets numbers."""
    unknown = [v for v in values if not _hashable(v) or v not in labels]
    shown = sorted({repr(v) for v in unknown})
    message = f"{name} has values {', '.join(shown[:5])} that are not among labels {labels!r}"
    value_types = sorted({type(v).__name__ for v in unknown})
    label_types = sorted({type(v).__name__ for v in labels})
    text_and_numbers = ("str" in value_types) != ("str" in label_types)
    if text_and_numbers and not set(value_types) & set(label_types):
        message += (
            f": {name} holds {'/'.join(value_types)} values and the labels are "
            f"{'/'.join(label_types)}; convert {name} to the labels' type (e.g. "
            f"y.astype({label_types[0]}) for a pandas Series)"
        )
    return message


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _weights(sample_weight: object, n: int) -> FloatArray:
    if sample_weight is None:
        return np.ones(n)
    try:
        w = np.asarray(sample_weight, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DataError("sample_weight must be numbers, one non-negative weight per row") from None
    if w.shape != (n,):
        raise DataError(f"sample_weight has {w.size} values for {n} rows")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise DataError("sample_weight must be finite and non-negative")
    if w.sum() <= 0:
        raise DataError("sample_weight sums to zero")
    return w


def _same_length(a: np.ndarray, b: np.ndarray, names: str) -> None:
    if len(a) != len(b):
        raise DataError(f"{names} have different numbers of rows: {len(a)} and {len(b)}")
    if len(a) == 0:
        raise DataError(f"{names} are empty")


#: How far a row of ``y_prob`` may sum from 1 (float32 probabilities of many classes).
_SUM_TOLERANCE = 1e-5


def _probabilities(y_prob: object, n: int, n_labels: int | None) -> FloatArray:
    prob = np.asarray(y_prob, dtype=float)
    if prob.ndim != 2:
        raise DataError(f"y_prob must be (n_samples, n_classes); got shape {prob.shape}")
    if len(prob) != n:
        raise DataError(f"y_true has {n} rows and y_prob {len(prob)}")
    if n_labels is not None and prob.shape[1] != n_labels:
        raise DataError(
            f"y_prob has {prob.shape[1]} columns but there are {n_labels} labels; pass "
            "labels= with one label per column, lowest first"
        )
    if not np.all(np.isfinite(prob)) or np.any(prob < -1e-12):
        raise DataError("y_prob must hold finite, non-negative probabilities")
    sums = prob.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > _SUM_TOLERANCE)
    if off.size:
        raise DataError(
            f"y_prob's rows must each sum to 1 (P(Y = j) for every class j, e.g. "
            f"predict_proba's output); {off.size} row(s) do not (first at position {off[0]}: "
            f"sum {sums[off[0]]:.6g}). P(Y <= j) in place of P(Y = j), or a subset of the "
            "columns give a wrong score"
        )
    return prob


def _by_label(y_true: object, other: object, name: str, reference: str = "y_true") -> object:
    """``other`` in the order of ``y_true``'s index when both are pandas objects.

    pandas inputs are paired by index label, as everywhere in ordstats: the same
    labels in another order are reordered; different labels are refused rather
    than paired by position.  Arrays and lists pass as they are.
    """
    if not (hasattr(y_true, "reindex") and hasattr(other, "reindex")):
        return other
    index, theirs = y_true.index, other.index  # type: ignore[attr-defined]
    if index.equals(theirs):
        return other
    if index.is_unique and theirs.is_unique and len(index) == len(theirs):
        if index.isin(theirs).all():
            return other.reindex(index)
    raise DataError(
        f"{reference} and {name} are pandas objects whose indexes hold different labels; they are "
        "paired by index label: give them the same labels (e.g. .reset_index(drop=True) on "
        "each), or pass numpy arrays (.to_numpy()) to pair them by position"
    )


def _class_pair(
    y_true: object, y_pred: object, labels: Sequence[object] | None, sample_weight: object
) -> tuple[np.ndarray, np.ndarray, FloatArray, _Scale]:
    """Checked class indices of ``y_true`` and ``y_pred``, the weights and the scale."""
    y_pred = _by_label(y_true, y_pred, "y_pred")
    sample_weight = _by_label(y_true, sample_weight, "sample_weight")
    scale = _scale(labels, (y_true, "y_true"), (y_pred, "y_pred"))
    a, b = _index(y_true, scale.labels, "y_true"), _index(y_pred, scale.labels, "y_pred")
    _same_length(a, b, "y_true and y_pred")
    return a, b, _weights(sample_weight, len(a)), scale


def _class_probabilities(
    y_true: object, y_prob: object, labels: Sequence[object] | None, sample_weight: object
) -> tuple[np.ndarray, FloatArray, FloatArray]:
    """Checked class indices of ``y_true``, probabilities ``(n, K)`` and the weights."""
    y_prob = _by_label(y_true, y_prob, "y_prob")
    sample_weight = _by_label(y_true, sample_weight, "sample_weight")
    try:
        prob0 = np.asarray(y_prob, dtype=float)
    except (TypeError, ValueError):
        raise DataError(
            "y_prob must be numbers: one row per observation, one column per class"
        ) from None
    if prob0.ndim != 2:
        raise DataError(
            f"y_prob must be a matrix with one row per observation and one column per class "
            f"(e.g. predict_proba's output); got shape {prob0.shape}"
        )
    k = prob0.shape[1]
    labs = _prob_labels(labels, y_true, k)
    y = _index(y_true, labs, "y_true")
    prob = _probabilities(prob0, len(y), len(labs))
    return y, prob, _weights(sample_weight, len(y))


def _prob_labels(labels: Sequence[object] | None, y_true: object, k: int) -> list[object]:
    if labels is not None:
        return _declared_labels(labels)
    found = _scale(None, (y_true, "y_true")).labels
    if len(found) != k:
        raise DataError(
            f"y_true has {len(found)} distinct values but y_prob has {k} columns; pass "
            "labels= (the classes of the columns, lowest first)"
        )
    return found


def mean_absolute_class_error(
    y_true: object,
    y_pred: object,
    *,
    labels: Sequence[object] | None = None,
    sample_weight: object = None,
) -> float:
    """Mean absolute distance between true and predicted classes.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n_samples,)
        Classes (elements of ``labels``).
    labels : sequence, optional
        The classes, lowest first: distances are differences of their indices
        (one per class).  Without it the classes must be numbers, and distances
        are differences of their values (module docstring); text labels need it.
    sample_weight : array-like, optional

    Returns
    -------
    float
        ``sum_i w_i |y_i - yhat_i| / sum_i w_i`` with ``y_i`` the index of the
        class in ``labels``, or its value.

    Examples
    --------
    >>> mean_absolute_class_error(["lo", "hi", "mid"], ["mid", "lo", "mid"],
    ...                           labels=["lo", "mid", "hi"])
    1.0
    >>> mean_absolute_class_error([0, 2], [2, 0])  # two classes apart, class 1 absent
    2.0
    >>> mean_absolute_class_error([0, 20], [20, 0], labels=[0, 10, 20])
    2.0
    """
    a, b, w, scale = _class_pair(y_true, y_pred, labels, sample_weight)
    return float(w @ np.abs(scale.positions[a] - scale.positions[b]) / w.sum())


def ranked_probability_score(
    y_true: object,
    y_prob: object,
    *,
    labels: Sequence[object] | None = None,
    sample_weight: object = None,
) -> float:
    """Ranked probability score: squared error of the predicted cumulative probabilities.

    Parameters
    ----------
    y_true : array-like, shape (n_samples,)
    y_prob : array-like, shape (n_samples, n_classes)
        ``P(Y = j)`` with columns in the order of ``labels``.
    labels : sequence, optional
        The classes of the columns, lowest first; default the distinct numbers
        of ``y_true`` in numeric order (they must then have one value per
        column; text labels need ``labels=``).
    sample_weight : array-like, optional

    Returns
    -------
    float
        ``sum_i w_i sum_{j=0}^{K-2} (P_ij - 1[y_i <= j])^2 / sum_i w_i``.

    Examples
    --------
    >>> ranked_probability_score([0, 2], [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], labels=[0, 1, 2])
    0.125
    """
    y, prob, w = _class_probabilities(y_true, y_prob, labels, sample_weight)
    cum = np.cumsum(prob, axis=1)[:, :-1]
    observed = y[:, None] <= np.arange(prob.shape[1] - 1)[None, :]
    return float(w @ ((cum - observed) ** 2).sum(axis=1) / w.sum())


def ordinal_log_loss(
    y_true: object,
    y_prob: object,
    *,
    labels: Sequence[object] | None = None,
    sample_weight: object = None,
    eps: float = 1e-15,
) -> float:
    """Mean negative log probability of the true class.

    Parameters
    ----------
    y_true : array-like, shape (n_samples,)
    y_prob : array-like, shape (n_samples, n_classes)
        Columns in the order of ``labels``.
    labels : sequence, optional
        As :func:`ranked_probability_score`.
    sample_weight : array-like, optional
    eps : float
        Probabilities are clipped to ``[eps, 1]`` so that a zero gives a large
        finite loss.

    Returns
    -------
    float
        ``-sum_i w_i log p_{i, y_i} / sum_i w_i``.

    Examples
    --------
    >>> round(ordinal_log_loss([0, 1], [[0.5, 0.5], [0.2, 0.8]]), 6)
    0.458145
    """
    y, prob, w = _class_probabilities(y_true, y_prob, labels, sample_weight)
    p = np.clip(prob[np.arange(len(y)), y], eps, 1.0)
    return float(-(w @ np.log(p)) / w.sum())


def quadratic_weighted_kappa(
    y_true: object,
    y_pred: object,
    *,
    labels: Sequence[object] | None = None,
    sample_weight: object = None,
) -> float:
    """Cohen's kappa with quadratic disagreement weights.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n_samples,)
    labels : sequence, optional
        The classes, lowest first: ``a`` and ``b`` are indices into it.  Without
        it the classes must be numbers and ``a``, ``b`` are their values (as
        :func:`mean_absolute_class_error`).
    sample_weight : array-like, optional

    Returns
    -------
    float
        ``1 - sum_ab W_ab O_ab / sum_ab W_ab E_ab`` with ``W_ab = (a - b)^2``, the
        observed (weighted) confusion matrix ``O`` and ``E`` the outer product of
        its margins divided by its total.  1 is perfect agreement, 0 chance.

    Examples
    --------
    >>> quadratic_weighted_kappa([0, 1, 2], [0, 1, 2])
    1.0
    """
    a, b, w, scale = _class_pair(y_true, y_pred, labels, sample_weight)
    k = len(scale.labels)
    observed = np.zeros((k, k))
    np.add.at(observed, (a, b), w)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    grid = scale.positions
    weights = (grid[:, None] - grid[None, :]) ** 2
    denominator = float((weights * expected).sum())
    if denominator == 0.0:
        raise DataError("kappa is undefined: y_true and y_pred each have a single class")
    return float(1.0 - (weights * observed).sum() / denominator)


def concordance_index(
    y_true: object,
    y_score: object,
    *,
    labels: Sequence[object] | None = None,
    sample_weight: object = None,
) -> float:
    """Harrell's concordance index ``C`` between an ordinal outcome and a score.

    Parameters
    ----------
    y_true : array-like, shape (n_samples,)
    y_score : array-like, shape (n_samples,)
        A number per row that should rise with the class, e.g. the expected class
        index or the linear predictor.
    labels : sequence, optional
        The classes, lowest first (default: the numbers of ``y_true`` in numeric
        order; text labels need ``labels=``).
    sample_weight : array-like, optional
        A pair ``(i, j)`` counts ``w_i w_j``.

    Returns
    -------
    float
        ``(concordant + ties / 2) / pairs`` over the pairs with different
        classes; ``O(K n log n)``.

    Examples
    --------
    >>> concordance_index([0, 0, 1, 2], [0.1, 0.3, 0.2, 0.9])
    0.8
    """
    y_score = _by_label(y_true, y_score, "y_score")
    sample_weight = _by_label(y_true, sample_weight, "sample_weight")
    labs = _scale(labels, (y_true, "y_true")).labels
    y = _index(y_true, labs, "y_true")
    try:
        s = np.asarray(y_score, dtype=float)
    except (TypeError, ValueError):
        raise DataError(
            "y_score must be numbers, one per row, that rise with the class (e.g. the "
            "expected class index); missing values as NaN"
        ) from None
    if s.ndim != 1:
        raise DataError(f"y_score must be one-dimensional; got shape {s.shape}")
    _same_length(y, s, "y_true and y_score")
    if not np.all(np.isfinite(s)):
        raise DataError("y_score has missing or non-finite values")
    w = _weights(sample_weight, len(y))
    agree = 0.0
    total = 0.0
    groups = [np.flatnonzero(y == k) for k in range(len(labs))]
    for low in range(len(labs)):
        order = np.argsort(s[groups[low]], kind="stable")
        s_low = s[groups[low]][order]
        cum = np.concatenate([[0.0], np.cumsum(w[groups[low]][order])])
        for high in range(low + 1, len(labs)):
            s_high, w_high = s[groups[high]], w[groups[high]]
            below = cum[np.searchsorted(s_low, s_high, side="left")]
            tied = cum[np.searchsorted(s_low, s_high, side="right")] - below
            agree += float(w_high @ (below + 0.5 * tied))
            total += float(w_high.sum() * cum[-1])
    if total == 0.0:
        raise DataError("the concordance index needs rows of at least two classes")
    return agree / total


def somers_d(
    y_true: object,
    y_score: object,
    *,
    labels: Sequence[object] | None = None,
    sample_weight: object = None,
) -> float:
    """Somers' ``D`` of the score given the class: ``2 C - 1`` (see :func:`concordance_index`).

    Examples
    --------
    >>> round(somers_d([0, 0, 1, 2], [0.1, 0.3, 0.2, 0.9]), 6)
    0.6
    """
    c = concordance_index(y_true, y_score, labels=labels, sample_weight=sample_weight)
    return 2.0 * c - 1.0


# -- ready scorers: callables scorer(estimator, X, y) for scoring= -------------

Scorer = Callable[..., float]


def _classes(estimator: object) -> list[object]:
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        raise DataError("the estimator has no classes_; fit it first")
    return list(np.asarray(classes).tolist())


def _on_rows_of(X: object, y: object, sample_weight: object) -> tuple[object, object]:
    """``y`` and ``sample_weight`` in the row order of a pandas ``X`` (paired by label).

    The predictions of ``X`` are arrays in ``X``'s row order, so a pandas ``y`` (or
    weights) must first be paired with ``X`` by index label, as ``estimator.score``
    does; numpy inputs pair by position.
    """
    return (
        _by_label(X, y, "y", reference="X"),
        _by_label(X, sample_weight, "sample_weight", reference="X"),
    )


def neg_mae_scorer(estimator: object, X: object, y: object, sample_weight: object = None) -> float:
    """Minus :func:`mean_absolute_class_error` of ``estimator.predict(X)``."""
    y, sample_weight = _on_rows_of(X, y, sample_weight)
    pred = estimator.predict(X)  # type: ignore[attr-defined]
    return -mean_absolute_class_error(
        y, pred, labels=_classes(estimator), sample_weight=sample_weight
    )


def neg_rps_scorer(estimator: object, X: object, y: object, sample_weight: object = None) -> float:
    """Minus :func:`ranked_probability_score` of ``estimator.predict_proba(X)``."""
    y, sample_weight = _on_rows_of(X, y, sample_weight)
    prob = estimator.predict_proba(X)  # type: ignore[attr-defined]
    return -ranked_probability_score(
        y, prob, labels=_classes(estimator), sample_weight=sample_weight
    )


def neg_log_loss_scorer(
    estimator: object, X: object, y: object, sample_weight: object = None
) -> float:
    """Minus :func:`ordinal_log_loss` of ``estimator.predict_proba(X)``."""
    y, sample_weight = _on_rows_of(X, y, sample_weight)
    prob = estimator.predict_proba(X)  # type: ignore[attr-defined]
    return -ordinal_log_loss(y, prob, labels=_classes(estimator), sample_weight=sample_weight)


def qwk_scorer(estimator: object, X: object, y: object, sample_weight: object = None) -> float:
    """:func:`quadratic_weighted_kappa` of ``estimator.predict(X)``."""
    y, sample_weight = _on_rows_of(X, y, sample_weight)
    pred = estimator.predict(X)  # type: ignore[attr-defined]
    return quadratic_weighted_kappa(
        y, pred, labels=_classes(estimator), sample_weight=sample_weight
    )


def concordance_scorer(
    estimator: object, X: object, y: object, sample_weight: object = None
) -> float:
    """:func:`concordance_index` of the expected class index ``predict_proba(X) @ [0..K-1]``."""
    y, sample_weight = _on_rows_of(X, y, sample_weight)
    prob = np.asarray(estimator.predict_proba(X))  # type: ignore[attr-defined]
    score = prob @ np.arange(prob.shape[1], dtype=float)
    return concordance_index(y, score, labels=_classes(estimator), sample_weight=sample_weight)


#: Ready scorers by name, for ``scoring=`` (one or a dict of several); higher is better.
SCORERS: dict[str, Scorer] = {
    "neg_mae": neg_mae_scorer,
    "neg_rps": neg_rps_scorer,
    "neg_log_loss": neg_log_loss_scorer,
    "qwk": qwk_scorer,
    "concordance": concordance_scorer,
}
