"""Ordinal metrics against hand computations (and sklearn's kappa)."""

from __future__ import annotations

import numpy as np
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
