"""Ordinal metrics against hand computations (and sklearn's kappa)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordstats import metrics as m
from ordstats.errors import DataError

LABELS = ["lo", "mid", "hi"]


def test_mae_by_hand():
    # indices: true 0, 2, 1, 1; predicted 2, 2, 0, 1 -> |.| = 2, 0, 1, 0
    y = ["lo", "hi", "mid", "mid"]
    p = ["hi", "hi", "lo", "mid"]
    assert m.mean_absolute_class_error(y, p, labels=LABELS) == pytest.approx(3 / 4)
    w = [1, 0, 3, 0]  # (1 * 2 + 3 * 1) / 4
    assert m.mean_absolute_class_error(y, p, labels=LABELS, sample_weight=w) == pytest.approx(5 / 4)


def test_rps_by_hand():
    prob = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
    # row 1, y = mid: cum (0.2, 0.7) vs (0, 1): 0.04 + 0.09 = 0.13
    # row 2, y = lo: cum (0.6, 0.9) vs (1, 1): 0.16 + 0.01 = 0.17
    assert m.ranked_probability_score(["mid", "lo"], prob, labels=LABELS) == pytest.approx(0.15)
    got = m.ranked_probability_score(["mid", "lo"], prob, labels=LABELS, sample_weight=[3, 1])
    assert got == pytest.approx((3 * 0.13 + 0.17) / 4)


def test_log_loss_by_hand():
    prob = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
    expected = -(np.log(0.5) + np.log(0.6)) / 2
    assert m.ordinal_log_loss(["mid", "lo"], prob, labels=LABELS) == pytest.approx(expected)


def test_qwk_by_hand_and_sklearn():
    y = [0, 0, 1, 2]
    p = [0, 1, 1, 1]
    # O = [[1,1,0],[0,1,0],[0,1,0]], rows (2,1,1), cols (1,3,0), n = 4
    # sum W O = 1 * 1 + 1 * 1 = 2; E = outer / 4, sum W E = (2*3*1 + 1*1*1 + 1*1*4 + 1*3*1) / 4
    expected = 1 - 2 / ((6 + 1 + 4 + 3) / 4)
    assert m.quadratic_weighted_kappa(y, p) == pytest.approx(expected)
    sklearn = pytest.importorskip("sklearn.metrics")
    assert expected == pytest.approx(sklearn.cohen_kappa_score(y, p, weights="quadratic"))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(1, 3)), min_size=3),
)
def test_qwk_equals_sklearn(rows):
    sklearn = pytest.importorskip("sklearn.metrics")
    y, p, w = map(np.array, zip(*rows, strict=True))
    if len(np.unique(y)) < 2 and len(np.unique(p)) < 2:
        return
    labels = list(range(5))
    ours = m.quadratic_weighted_kappa(y, p, labels=labels, sample_weight=w)
    theirs = sklearn.cohen_kappa_score(y, p, weights="quadratic", labels=labels, sample_weight=w)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_concordance_by_hand():
    y = [0, 0, 1, 2]
    s = [0.1, 0.3, 0.2, 0.9]
    # pairs with different y: (0,2) 0.1<0.2 yes; (1,2) 0.3>0.2 no; (0,3), (1,3), (2,3) yes
    assert m.concordance_index(y, s) == pytest.approx(4 / 5)
    assert m.somers_d(y, s) == pytest.approx(3 / 5)
    # ties in the score count one half
    assert m.concordance_index([0, 1], [0.5, 0.5]) == pytest.approx(0.5)
    # a pair (i, j) counts w_i w_j
    w = [2, 1, 1, 1]
    # weights: (0,2) 2 yes, (1,2) 1 no, (0,3) 2 yes, (1,3) 1 yes, (2,3) 1 yes -> 6 / 7
    assert m.concordance_index(y, s, sample_weight=w) == pytest.approx(6 / 7)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), min_size=2, max_size=30))
def test_concordance_equals_pairwise_count(rows):
    y, s = map(np.array, zip(*rows, strict=True))
    if len(np.unique(y)) < 2:
        return
    num = den = 0.0
    for i in range(len(y)):
        for j in range(len(y)):
            if y[i] < y[j]:
                den += 1
                num += 1.0 if s[i] < s[j] else 0.5 if s[i] == s[j] else 0.0
    assert m.concordance_index(y, s.astype(float)) == pytest.approx(num / den)


def test_errors_name_the_problem():
    with pytest.raises(DataError, match="different numbers of rows"):
        m.mean_absolute_class_error([0, 1], [0, 1, 1])
    with pytest.raises(DataError, match="not among labels"):
        m.mean_absolute_class_error([0, 5], [0, 1], labels=[0, 1])
    with pytest.raises(DataError, match="columns"):
        m.ranked_probability_score([0, 1], [[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    with pytest.raises(DataError, match="columns"):
        m.ordinal_log_loss([0, 1], [[0.5, 0.5], [0.5, 0.5]], labels=[0, 1, 2])
    with pytest.raises(DataError, match="rows"):
        m.ranked_probability_score([0, 1, 1], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(DataError, match="non-negative"):
        m.mean_absolute_class_error([0, 1], [0, 1], sample_weight=[1, -1])
    with pytest.raises(DataError, match="two classes"):
        m.concordance_index([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError):  # DataError is a ValueError, as sklearn expects
        m.quadratic_weighted_kappa([0, 0], [0, 0], labels=[0, 1])


# -- where classes lie without labels= (issue 29, item 4) ---------------------------


def test_an_absent_class_keeps_its_distance():
    # ranks among the classes present made 0 and 2 neighbours: 1.0 instead of 2
    assert m.mean_absolute_class_error([0, 2], [2, 0]) == 2.0
    assert m.mean_absolute_class_error([1, 3, 3], [3, 1, 3]) == pytest.approx(4 / 3)
    assert m.mean_absolute_class_error([0, 2], [2, 0], labels=[0, 1, 2]) == 2.0
    # numbers lie at their own values; labels= counts classes instead
    assert m.mean_absolute_class_error([1.0, 1.5], [1.5, 1.0]) == 0.5
    assert m.mean_absolute_class_error([1.0, 1.5], [1.5, 1.0], labels=[1.0, 1.5]) == 1.0
    assert m.mean_absolute_class_error([0, 20], [20, 0], labels=[0, 10, 20]) == 2.0
    assert m.mean_absolute_class_error([True, False], [False, False]) == 0.5
    big = np.array([2**63, 2**63 + 2], dtype=np.uint64)  # exact offsets beyond int64
    assert m.mean_absolute_class_error(big, big[::-1]) == 2.0


def test_qwk_with_an_absent_class_equals_sklearn_over_the_full_range():
    sklearn = pytest.importorskip("sklearn.metrics")
    y, p = [0, 1, 3, 3, 0, 1, 1], [1, 1, 3, 1, 0, 0, 3]  # class 2 absent from both
    full = sklearn.cohen_kappa_score(y, p, weights="quadratic", labels=[0, 1, 2, 3])
    assert full == pytest.approx(0.4696969696969697)  # ranks of the classes present: 0.5
    assert m.quadratic_weighted_kappa(y, p) == pytest.approx(full, abs=1e-12)
    assert m.quadratic_weighted_kappa(y, p, labels=[0, 1, 2, 3]) == pytest.approx(full, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 4), st.integers(-3, 4)), min_size=2, max_size=20))
def test_integer_classes_without_labels_equal_the_full_range(rows):
    y, p = map(np.array, zip(*rows, strict=True))
    full = list(range(int(min(y.min(), p.min())), int(max(y.max(), p.max())) + 1))
    assert m.mean_absolute_class_error(y, p) == pytest.approx(
        m.mean_absolute_class_error(y, p, labels=full)
    )
    if len(np.unique(y)) > 1 or len(np.unique(p)) > 1:
        assert m.quadratic_weighted_kappa(y, p) == pytest.approx(
            m.quadratic_weighted_kappa(y, p, labels=full), abs=1e-12
        )


@pytest.mark.parametrize(
    ("y_true", "y_pred"),
    [
        (["low", "high", "mid"], ["mid", "low", "mid"]),  # text: alphabetical was silent
        ([1, "a", 2], ["a", 1, 2]),  # mixed types
        ([True, 2, 1], [1, 2, True]),  # booleans and numbers in one list
    ],
)
def test_labels_without_an_order_need_labels(y_true, y_pred):
    prob = np.full((3, 3), 1 / 3)
    with pytest.raises(DataError, match=r"not numbers .*pass labels="):
        m.mean_absolute_class_error(y_true, y_pred)
    with pytest.raises(DataError, match=r"not numbers .*pass labels="):
        m.quadratic_weighted_kappa(y_true, y_pred)
    with pytest.raises(DataError, match=r"not numbers .*pass labels="):
        m.ranked_probability_score(y_true, prob)
    with pytest.raises(DataError, match=r"not numbers .*pass labels="):
        m.ordinal_log_loss(y_true, prob)
    with pytest.raises(DataError, match=r"not numbers .*pass labels="):
        m.concordance_index(y_true, [0.1, 0.2, 0.3])
    with pytest.raises(DataError, match=r"not numbers .*pass labels="):
        m.somers_d(y_true, [0.1, 0.2, 0.3])


def test_booleans_and_numbers_across_the_two_arrays_need_labels():
    with pytest.raises(DataError, match="mix booleans and numbers"):
        m.mean_absolute_class_error([True, False], [1, 0])


def test_missing_values_without_labels_are_named():
    with pytest.raises(DataError, match="y_pred has missing"):
        m.mean_absolute_class_error([1.0, 2.0], [1.0, np.nan])


def _indexed_example():
    """Classes, predictions, probabilities and weights of 8 rows labelled 10..17."""
    index = pd.Index(range(10, 18))
    y = pd.Series([1, 2, 3, 1, 2, 3, 3, 1], index=index)
    pred = pd.Series([1, 3, 3, 2, 2, 1, 3, 1], index=index)
    prob = pd.DataFrame(
        np.random.default_rng(3).dirichlet(np.ones(3), len(index)), index=index, columns=[1, 2, 3]
    )
    weights = pd.Series(np.arange(1.0, 9.0), index=index)
    return y, pred, prob, weights


#: each metric and what its second argument is: predicted classes, scores or probabilities
METRICS_AND_SECONDS = [
    (m.mean_absolute_class_error, "pred"),
    (m.quadratic_weighted_kappa, "pred"),
    (m.concordance_index, "score"),
    (m.somers_d, "score"),
    (m.ordinal_log_loss, "prob"),
    (m.ranked_probability_score, "prob"),
]


@pytest.mark.parametrize(("metric", "second"), METRICS_AND_SECONDS)
def test_pandas_inputs_are_paired_by_index_label(metric, second):
    """Permuted pandas inputs were paired by position: a silently different number."""
    y, pred, prob, weights = _indexed_example()
    other = {"pred": pred, "score": pred, "prob": prob}[second]
    expected = metric(y.to_numpy(), other.to_numpy(), sample_weight=weights.to_numpy())
    order = np.random.default_rng(0).permutation(len(y))
    shuffled = metric(y, other.iloc[order], sample_weight=weights.iloc[order[::-1]])
    assert shuffled == pytest.approx(expected, rel=1e-12)
    with pytest.raises(DataError, match="paired by index label"):
        metric(y, other.reset_index(drop=True))


ORDER = ["lo", "mid", "hi", "top"]  # not alphabetical; "top" is never observed


def _ordered(values):
    return pd.Series(pd.Categorical(values, categories=ORDER, ordered=True))


@pytest.mark.parametrize(("metric", "second"), METRICS_AND_SECONDS)
def test_an_ordered_categorical_gives_its_order_as_labels_would(metric, second):
    """An ordered Categorical was refused ('not numbers ... pass labels='): it has its order."""
    truth = ["lo", "hi", "mid", "hi", "lo", "mid"]
    pred = ["mid", "hi", "lo", "mid", "lo", "hi"]
    other = {
        "pred": _ordered(pred),
        "score": [0.1, 0.9, 0.4, 0.6, 0.3, 0.2],
        "prob": np.random.default_rng(5).dirichlet(np.ones(len(ORDER)), len(truth)),
    }[second]
    expected = metric(truth, np.asarray(other, dtype=object), labels=ORDER)
    assert metric(_ordered(truth), other) == pytest.approx(expected, rel=1e-12)
    if second == "pred":  # a plain array of predicted labels against an ordered y_true
        assert metric(_ordered(truth), np.array(pred)) == pytest.approx(expected, rel=1e-12)


def test_ordered_categoricals_with_other_categories_are_refused_clearly():
    truth = _ordered(["lo", "hi", "mid"])
    for categories in (ORDER[:3], ORDER[::-1]):
        pred = pd.Series(pd.Categorical(["mid", "hi", "lo"], categories=categories, ordered=True))
        with pytest.raises(DataError, match=r"y_true and y_pred are ordered Categoricals with "):
            m.mean_absolute_class_error(truth, pred)
    with pytest.raises(DataError, match=r"y_pred has values 'up' that are not among labels"):
        m.quadratic_weighted_kappa(truth, np.array(["lo", "up", "hi"]))
