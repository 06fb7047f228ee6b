"""Ordinal matrix factorisation: block Newton, MAP monotonicity, agreement with clm."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import scipy.optimize as so
import scipy.sparse as sp

from ordstats import OrdinalModel
from ordstats.core.links import get_link
from ordstats.errors import (
    DataError,
    LevelsWarning,
    PredictionError,
    ResponseError,
    SpecificationError,
)
from ordstats.estimation.factorization import OrdinalFactorization
from ordstats.families.cumulative import blocks
from ordstats.families.cumulative.blocks import (
    BlockData,
    block_layout,
    block_newton_step,
    block_objective,
)
from ordstats.families.cumulative.sides import part_data
from ordstats.families.cumulative.simulate import simulate_ratings


def _frame(sim: object) -> pd.DataFrame:
    return pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    return _frame(simulate_ratings(60, 25, rank=2, density=0.5, scale_use=0.5, seed=3))


def _row_block(res: object, frame: pd.DataFrame, u: int, bias: bool) -> BlockData:
    sub = frame[frame.row == u]
    c = res.col_labels.get_indexer(sub.col)  # type: ignore[attr-defined]
    cb = int(res.col_has_bias)  # type: ignore[attr-defined]
    cov = res.col_coef[c, cb:]  # type: ignore[attr-defined]
    if bias:
        cov = np.column_stack([np.ones(len(c)), cov])
    off = res.col_coef[c, 0] if cb else np.zeros(len(c))  # type: ignore[attr-defined]
    n = len(c)
    y = sub.rating.to_numpy() - 1
    return BlockData(
        y, np.ones(n), np.zeros(n, dtype=np.intp), 1, cov, off, np.zeros(n, dtype=np.intp), 5
    )


def _iterate(link, data, coef, table, penalty, **kw):  # type: ignore[no-untyped-def]
    for _ in range(100):
        step = block_newton_step(link, data, coef, table, penalty, **kw)
        done = np.max(np.abs(step.coef - coef)) + np.max(np.abs(step.thresholds - table)) < 1e-12
        coef, table = step.coef, step.thresholds
        if done:
            break
    return coef, table


def test_block_newton_equals_clm_with_fixed_column_factors(small: pd.DataFrame) -> None:
    res = OrdinalFactorization(
        small, rank=2, thresholds="row", threshold_penalty=0.0, factor_penalty=1.0
    ).fit()
    u = 7
    data = _row_block(res, small, u, bias=False)
    coef, table = _iterate(
        res.link,
        data,
        np.zeros((1, 2)),
        np.array([[-1.0, 0.0, 1.0, 2.0]]),
        np.zeros(2),
        owns_thresholds=True,
    )
    frame = pd.DataFrame(
        {
            "rating": pd.Categorical(data.y + 1, categories=[1, 2, 3, 4, 5], ordered=True),
            "q1": data.covariates[:, 0],
            "q2": data.covariates[:, 1],
            "off": data.offset,
        }
    )
    if frame.rating.cat.codes.nunique() < 5:
        pytest.skip("this row does not use every level")
    fit = OrdinalModel.from_formula("rating ~ q1 + q2", frame, offset="off").fit()
    np.testing.assert_allclose(table[0], fit.params[:4], atol=1e-6)
    np.testing.assert_allclose(coef[0], fit.params[4:], atol=1e-6)


def test_ridge_block_step_equals_direct_optimisation(small: pd.DataFrame) -> None:
    res = OrdinalFactorization(small, rank=2, factor_penalty=2.0, bias_penalty=0.5).fit()
    data = _row_block(res, small, 3, bias=True)
    penalty = np.array([0.5, 2.0, 2.0])
    table = res.threshold_table
    coef, _ = _iterate(res.link, data, np.zeros((1, 3)), table, penalty)

    def f(x: np.ndarray) -> float:
        return float(block_objective(res.link, data, x[None, :], table, penalty)[0])

    direct = so.minimize(f, np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(coef[0], direct.x, atol=1e-5)
    # the fitted model's own row is at that optimum too (columns fixed at convergence)
    np.testing.assert_allclose(res.row_coef[3], direct.x, atol=1e-3)


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "loglog", "cauchit"])
@pytest.mark.parametrize("sharing", ["global", "row", "column"])
def test_map_objective_decreases_monotonically(
    small: pd.DataFrame, link: str, sharing: str
) -> None:
    res = OrdinalFactorization(small, rank=2, thresholds=sharing, link=link).fit(max_sweeps=15)
    trace = res.objective_trace
    assert np.all(np.diff(trace) <= 1e-9 * np.abs(trace[1:]))
    assert trace[-1] < trace[0]
    # ordered; per-row thresholds around a level the row never uses may meet
    assert np.all(np.diff(res.threshold_table, axis=1) >= 0)


def test_rank_zero_equals_clm_with_row_and_column_effects(small: pd.DataFrame) -> None:
    res = OrdinalFactorization(small, rank=0, bias_penalty=0.0).fit(tol=1e-13, max_sweeps=2000)
    frame = small.assign(
        row=small.row.astype(str).str.zfill(3),
        col=small.col.astype(str).str.zfill(3),
        rating=pd.Categorical(small.rating, ordered=True),
    )
    clm = OrdinalModel.from_formula("rating ~ row + col", frame).fit()
    assert -res.objective == pytest.approx(clm.llf, abs=1e-5)
    probs = res.predict_proba(small.row, small.col).to_numpy()
    clm_probs = np.asarray(clm.predict())
    if clm_probs.ndim == 2:
        np.testing.assert_allclose(probs, clm_probs, atol=1e-4)


def test_fitted_probabilities_approach_the_truth() -> None:
    errors = []
    for n_rows in (100, 800):
        sim = simulate_ratings(n_rows, 40, rank=1, density=0.6, seed=5)
        res = OrdinalFactorization(_frame(sim), rank=1, factor_penalty=1.0, bias_penalty=1.0).fit()
        rows, cols = np.arange(20), np.arange(20)
        fitted = res.predict_proba(rows, cols).to_numpy()
        truth = sim.true_proba(rows, cols)
        errors.append(np.abs(fitted - truth).mean())
        # columns are estimated from n_rows ratings each: also compare all pairs
    assert errors[1] < 0.05


def test_invariant_to_row_and_column_permutation(small: pd.DataFrame) -> None:
    model = OrdinalFactorization(small, rank=2, thresholds="row")
    res = model.fit()
    rng = np.random.default_rng(0)
    shuffled = small.sample(frac=1.0, random_state=1)
    perm_r, perm_c = rng.permutation(60), rng.permutation(25)
    relabelled = shuffled.assign(row=perm_r[shuffled.row], col=perm_c[shuffled.col])
    row0, col0, table0 = model._start(0)
    start = (np.empty_like(row0), np.empty_like(col0), np.empty_like(table0))
    start[0][perm_r] = row0
    start[1][perm_c] = col0
    start[2][perm_r] = table0
    res2 = OrdinalFactorization(relabelled, rank=2, thresholds="row").fit(start=start)
    np.testing.assert_allclose(res2.row_coef[perm_r], res.row_coef, atol=1e-8)
    np.testing.assert_allclose(res2.col_coef[perm_c], res.col_coef, atol=1e-8)
    assert res2.objective == pytest.approx(res.objective, rel=1e-12)


def test_predictions_recommendations_and_scores(small: pd.DataFrame) -> None:
    res = OrdinalFactorization(small, rank=2).fit()
    p = res.predict_proba([0, 1, 2], [3, 4, 5])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(
        res.expected_rating([0, 1, 2], [3, 4, 5]), p.to_numpy() @ np.arange(1, 6)
    )
    assert list(res.most_probable([0], [3])) == [p.columns[p.to_numpy()[0].argmax()]]
    rec = res.recommend(n=5)
    rated = set(zip(small.row, small.col, strict=True))
    assert not any((r, c) in rated for r, c in zip(rec.row, rec.col, strict=True))
    assert (rec.groupby("row").expected.apply(lambda s: s.is_monotonic_decreasing)).all()
    scores = res.row_scores()
    assert (scores[["se_f1", "se_f2", "se_bias"]] > 0).all().all()
    with pytest.raises(PredictionError, match="fold_in"):
        res.predict_proba(["nobody"], [0])


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
@pytest.mark.parametrize("sharing", ["global", "row", "column"])
def test_fold_in_equals_the_row_optimum_given_the_columns(
    small: pd.DataFrame, sharing: str
) -> None:
    res = OrdinalFactorization(small, rank=2, thresholds=sharing).fit(max_sweeps=40)
    u = 11
    sub = small[small.row == u]
    new = res.fold_in("copy", dict(zip(sub.col, sub.rating, strict=True)))
    # the row's own optimum with the columns (and their thresholds) fixed
    owns = sharing == "row"
    data = _row_block(res, sub, u, bias=res.row_has_bias)
    if sharing == "column":
        data = replace(data, threshold_index=res.col_labels.get_indexer(sub.col))
    table = res.threshold_center[None, :] if owns else res.threshold_table
    coef, table = _iterate(
        res.link,
        data,
        np.zeros((1, res.row_coef.shape[1])),
        table,
        np.array([res.penalties["bias"]] * res.row_has_bias + [res.penalties["factors"]] * 2),
        owns_thresholds=owns,
        threshold_penalty=res.penalties["thresholds"],
        threshold_center=res.threshold_center,
    )
    np.testing.assert_allclose(new.row_coef[-1], coef[0], atol=1e-6)
    # at convergence the fitted row is (nearly) that optimum
    np.testing.assert_allclose(new.row_coef[-1], res.row_coef[u], atol=0.05)
    assert not set(new.recommend(3, rows=["copy"]).col) & set(sub.col)
    assert new.row_scores().index[-1] == "copy"


def test_sparse_input_matches_long_frame(small: pd.DataFrame) -> None:
    matrix = sp.csr_array((small.rating.to_numpy(), (small.row, small.col)), shape=(60, 25))
    a = OrdinalFactorization(matrix, rank=1, levels=[1, 2, 3, 4, 5]).fit()
    b = OrdinalFactorization(small, rank=1).fit()
    assert a.objective == pytest.approx(b.objective, rel=1e-10)


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
def test_bad_input_gets_clear_errors(small: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="duplicate"):
        OrdinalFactorization(pd.concat([small, small.iloc[:2]]))
    with pytest.raises(DataError, match="has values not among levels"):
        OrdinalFactorization(small, levels=[1, 2, 3, 4])
    with pytest.raises(DataError, match="missing values"):
        OrdinalFactorization(small.assign(rating=small.rating.where(small.index != 3)))
    cat = small.assign(row=pd.Categorical(small.row, categories=range(61)))
    with pytest.raises(DataError, match="no ratings"):
        OrdinalFactorization(cat)
    matrix = sp.csr_array((small.rating.to_numpy(), (small.row, small.col)), shape=(61, 25))
    with pytest.raises(DataError, match="rows \\[60\\] have no ratings"):
        OrdinalFactorization(matrix, levels=[1, 2, 3, 4, 5])
    with pytest.raises(SpecificationError, match="thresholds"):
        OrdinalFactorization(small, thresholds="item")
    with pytest.raises(SpecificationError, match="rank"):
        OrdinalFactorization(small, rank=-1)
    with pytest.raises(DataError, match="already"):
        OrdinalFactorization(small, rank=1).fit(max_sweeps=3).fold_in(0, {1: 2})
    model = OrdinalFactorization(small, rank=1)
    with pytest.raises(SpecificationError, match="n_jobs must be a whole number >= 1, not 0"):
        model.fit(n_jobs=0)
    with pytest.raises(SpecificationError, match=r"n_parts must be a whole number >= 1, not 2\.5"):
        model.fit(n_parts=2.5)  # type: ignore[arg-type]
    with pytest.raises(SpecificationError, match=r"client must be a dask\.distributed\.Client"):
        model.fit(client="tcp://127.0.0.1:8786")


def test_links_are_resolved_by_name(small: pd.DataFrame) -> None:
    assert OrdinalFactorization(small, link="probit").link == get_link("probit")


def test_block_layout_covers_every_rating_once() -> None:
    rng = np.random.default_rng(5)
    block = np.repeat(np.arange(40), rng.integers(1, 60, 40))
    rng.shuffle(block)
    layout = block_layout(block, 42, growth=1.25)  # blocks 40 and 41 are empty
    seen = np.zeros(len(block), dtype=int)
    for ids, rows, mask in layout.batches:
        assert np.all(block[rows] == ids[:, None])  # padding repeats the block's own rows
        counts = mask.sum(axis=1)
        assert np.all(rows.shape[1] <= np.ceil(1.25 * counts) + 1)
        np.add.at(seen, rows[mask > 0], 1)
    assert np.all(seen == 1)


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
@pytest.mark.parametrize("owns", [False, True])
def test_batched_derivatives_equal_each_block_alone(
    small: pd.DataFrame, owns: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The padded, batched sums over many blocks of different sizes (split into
    several batches) give each block's gradient, Hessian and NLL computed alone."""
    monkeypatch.setattr(blocks, "_BATCH_CELLS", 64)
    sharing = "row" if owns else "global"
    model = OrdinalFactorization(small.sample(frac=0.7, random_state=1), rank=2, thresholds=sharing)
    res = model.fit(max_sweeps=3)
    data = part_data(model._parts(1)["row"][0], res.col_coef)
    table = res.threshold_table
    link = get_link("logit")
    grad, hess, nll = blocks.block_gradient_hessian(link, data, res.row_coef, table, owns)
    assert len(block_layout(data.block, data.n_blocks).batches) > 3
    for u in range(data.n_blocks):
        keep = data.block == u
        n = int(keep.sum())
        unpadded = blocks.BlockLayout(((np.array([0]), np.arange(n)[None, :], np.ones((1, n))),), 1)
        alone = replace(
            blocks._subset(data, keep),
            block=np.zeros(n, dtype=np.intp),
            n_blocks=1,
            threshold_index=np.zeros(n, dtype=np.intp),
            layout=unpadded,
        )
        theta = table[[u]] if owns else table
        g, h, f = blocks.block_gradient_hessian(link, alone, res.row_coef[[u]], theta, owns)
        np.testing.assert_allclose(grad[u], g[0], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(hess[u], h[0], rtol=1e-10, atol=1e-10)
        assert nll[u] == pytest.approx(f[0], rel=1e-12)


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
@pytest.mark.parametrize("sharing", ["global", "row", "column"])
def test_trace_is_the_objective_and_extrapolation_reaches_the_same_optimum(
    small: pd.DataFrame, sharing: str
) -> None:
    model = OrdinalFactorization(small, rank=1, factor_penalty=2.0, thresholds=sharing)
    fits = [model.fit(max_sweeps=400, tol=1e-9, extrapolate=e) for e in (True, False)]
    for res in fits:
        trace = res.objective_trace
        assert np.all(np.diff(trace) <= 1e-9 * np.abs(trace[1:]))
        params = (res.row_coef, res.col_coef, res.threshold_table, res.threshold_center)
        assert trace[-1] == pytest.approx(model._objective(*params), rel=1e-12)
    assert fits[0].objective == pytest.approx(fits[1].objective, rel=1e-7)
    assert fits[0].n_sweeps < fits[1].n_sweeps


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
@pytest.mark.parametrize("link_name", ["logit", "cloglog"])
def test_block_gradient_and_hessian_equal_finite_differences(
    small: pd.DataFrame, link_name: str
) -> None:
    """Derivatives of a block's NLL in (x_k, theta_k) (rows owning their thresholds)."""
    model = OrdinalFactorization(small, rank=2, thresholds="row", link=link_name)
    res = model.fit(max_sweeps=3)
    data = part_data(model._parts(1)["row"][0], res.col_coef)
    link = get_link(link_name)
    d = res.row_coef.shape[1]
    zero = np.zeros(d)

    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        coef, theta = res.row_coef.copy(), res.threshold_table.copy()
        coef[4], theta[4] = x[:d], x[d:]
        return coef, theta

    def nll(x: np.ndarray) -> float:
        return float(block_objective(link, data, *split(x), zero)[4])

    def gradient(x: np.ndarray) -> np.ndarray:
        return blocks.block_gradient_hessian(link, data, *split(x), True)[0][4]

    x0 = np.concatenate([res.row_coef[4], res.threshold_table[4]])
    grad, hess, _ = blocks.block_gradient_hessian(link, data, *split(x0), True)
    eps = 1e-6
    basis = np.eye(x0.size) * eps
    fd_grad = [(nll(x0 + e) - nll(x0 - e)) / (2 * eps) for e in basis]
    fd_hess = np.array([(gradient(x0 + e) - gradient(x0 - e)) / (2 * eps) for e in basis])
    np.testing.assert_allclose(grad[4], fd_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess[4], fd_hess, rtol=1e-5, atol=1e-6)


# -- input checks (issue 29: items 7, 22, 24) -----------------------------------

_WORDS = ["awful", "bad", "ok", "good", "great"]


def test_text_ratings_need_their_order(small: pd.DataFrame) -> None:
    """Text ratings are not sorted alphabetically (bad < good < great < ok) but refused
    without levels=, as the formula API and `ordstats factorize` refuse them."""
    words = small.assign(rating=np.array(_WORDS, dtype=object)[small.rating - 1])
    with pytest.raises(ResponseError, match=r"unordered labels .*Pass levels=\[\.\.\.\]"):
        OrdinalFactorization(words, rank=1)
    unordered = words.assign(rating=pd.Categorical(words.rating))
    with pytest.raises(ResponseError, match="unordered Categorical"):
        OrdinalFactorization(unordered, rank=1)
    numbers = OrdinalFactorization(small, rank=1).fit()
    for model in (
        OrdinalFactorization(words, rank=1, levels=_WORDS),
        OrdinalFactorization(
            words.assign(rating=pd.Categorical(words.rating, categories=_WORDS, ordered=True)),
            rank=1,
        ),
    ):
        res = model.fit()
        assert res.levels == _WORDS
        assert res.objective == pytest.approx(numbers.objective, rel=1e-12)


def test_mixed_number_and_text_ratings_need_levels(small: pd.DataFrame) -> None:
    mixed = small.assign(
        rating=small.rating.astype(object).where(small.index % 2 == 0, small.rating.astype(str))
    )
    with pytest.raises(ResponseError, match=r"unordered labels .*levels="):
        OrdinalFactorization(mixed, rank=1)
    # with levels the ratings are compared as text (as OrdinalModel's levels=): 1 and "1" agree
    res = OrdinalFactorization(mixed, rank=1, levels=[1, 2, 3, 4, 5]).fit()
    assert res.levels == [1, 2, 3, 4, 5]
    assert res.objective == pytest.approx(OrdinalFactorization(small, rank=1).fit().objective)


def test_a_sparse_cell_stored_twice_is_refused() -> None:
    """scipy adds the two ratings of a duplicated COO cell (2 + 3 -> a rating of 5)."""
    matrix = sp.coo_array(
        (np.array([2.0, 3.0, 1.0, 4.0, 5.0]), ([0, 0, 1, 1, 2], [0, 0, 1, 0, 1])), shape=(3, 2)
    )
    with pytest.raises(DataError, match=r"1 cell\(s\) more than once, e\.g\. row 0, column 0 "):
        OrdinalFactorization(matrix, rank=0, levels=[1, 2, 3, 4, 5])


def test_pairs_rated_twice_in_long_data_are_named() -> None:
    frame = pd.DataFrame({"row": ["a", "a", "b", "b"], "col": [0, 0, 1, 0], "rating": [2, 3, 1, 4]})
    with pytest.raises(DataError, match=r"row 'a', column 0 with ratings \[2, 3\]"):
        OrdinalFactorization(frame, rank=0)


def test_weights_that_leave_a_level_or_everything_unweighted_are_refused(
    small: pd.DataFrame,
) -> None:
    with pytest.raises(DataError, match="all weights are zero"):
        OrdinalFactorization(small.assign(w=0.0), weights="w")
    w = np.where(small.rating == 5, 0.0, 1.0)
    with pytest.raises(DataError, match=r"level\(s\) \['5'\] have only ratings of weight 0"):
        OrdinalFactorization(small.assign(w=w), weights="w")
    with pytest.raises(DataError, match=r"holds str values, not numbers; .*pd\.to_numeric"):
        OrdinalFactorization(small.assign(w="1"), weights="w")


@pytest.mark.parametrize("link", ["aranda-ordaz", "log-gamma"])
def test_links_with_a_shape_parameter_are_refused(small: pd.DataFrame, link: str) -> None:
    """The flexible families would be held at their starting lambda, not estimated."""
    with pytest.raises(SpecificationError, match=r"shape parameter .*'logit', 'probit'"):
        OrdinalFactorization(small, link=link)
    with pytest.raises(SpecificationError, match="shape parameter"):
        OrdinalFactorization(small, link=get_link(link))


def test_a_sparse_matrix_cannot_lose_ratings_of_zero() -> None:
    """Zeros of a dense array vanish in a sparse matrix (6 of 9 answers were fitted)."""
    dense = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]])
    with pytest.raises(DataError, match=r"needs levels=\[\.\.\.\]"):
        OrdinalFactorization(sp.csr_array(dense), rank=0)
    with pytest.raises(DataError, match="levels include 0 but the sparse matrix stores no zeros"):
        OrdinalFactorization(sp.csr_array(dense), rank=0, levels=[0, 1, 2])
    rows, cols = np.indices(dense.shape).reshape(2, -1)
    explicit = sp.csr_array((dense.ravel(), (rows, cols)), shape=dense.shape)
    assert explicit.nnz == dense.size  # built from triples: the zeros are stored
    with pytest.raises(DataError, match=r"stores 4 explicit zero\(s\).*eliminate_zeros"):
        OrdinalFactorization(explicit, rank=0, levels=[1, 2])
    model = OrdinalFactorization(explicit, rank=0, levels=[0, 1, 2])
    assert len(model.ratings.y) == dense.size
    long = pd.DataFrame({"row": rows, "col": cols, "rating": dense.ravel()})
    a, b = model.fit(), OrdinalFactorization(long, rank=0).fit()
    assert a.levels == b.levels == [0, 1, 2]
    assert a.objective == pytest.approx(b.objective, rel=1e-12)


def test_a_declared_level_without_ratings_is_dropped_as_ordinal_model_drops_it(
    small: pd.DataFrame,
) -> None:
    """It got a threshold of 29.3 silently; OrdinalModel warns and drops such a level."""
    with pytest.warns(LevelsWarning, match="'6' have no observations and were dropped"):
        res = OrdinalFactorization(small, rank=1, levels=[1, 2, 3, 4, 5, 6]).fit()
    plain = OrdinalFactorization(small, rank=1).fit()
    assert res.levels == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(res.threshold_table, plain.threshold_table, rtol=1e-12)
    frame = small.assign(rating=pd.Categorical(small.rating, categories=range(1, 7), ordered=True))
    with pytest.warns(LevelsWarning, match="'6' have no observations"):
        OrdinalModel.from_formula("rating ~ 1", frame)


def test_fold_in_matches_levels_as_text_and_checks_its_ratings(small: pd.DataFrame) -> None:
    res = OrdinalFactorization(small, rank=1).fit()
    a = res.fold_in("new", {0: 5, 1: 2})
    b = res.fold_in("new", {0: 5.0, 1: "2"})
    np.testing.assert_allclose(a.row_coef[-1], b.row_coef[-1])
    with pytest.raises(DataError, match=r"columns \[0\] are rated more than once"):
        res.fold_in("new", pd.Series([5, 2], index=[0, 0]))
    with pytest.raises(DataError, match=r"a dict or a pandas Series.*got list"):
        res.fold_in("new", [5, 2])
    with pytest.raises(DataError, match="rating 9 is not one of the levels"):
        res.fold_in("new", {0: 9})


def test_default_penalties_keep_a_row_with_three_top_ratings_uncertain(
    small: pd.DataFrame,
) -> None:
    """With the old default bias_penalty=0.01 (a nearly flat prior) the bias of a row
    with three 5-star ratings ran off as under separation: P(5) was 0.97-1.00 for every
    column. Three ratings are weak evidence; the validated defaults keep it uncertain."""
    res = OrdinalFactorization(small, rank=2).fit()
    new = res.fold_in("fan", {0: 5, 1: 5, 2: 5})
    p5 = new.predict_proba(["fan"] * 25, list(range(25)))[5]
    assert p5.median() < 0.75
    assert new.row_bias["fan"] < 3.0


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")
def test_default_threshold_penalty_keeps_per_row_thresholds_of_sparse_rows_usable() -> None:
    """threshold_penalty=1 let a row's thresholds run off around the levels it did not
    use: log-loss of held-out ratings of rows with 3-5 ratings was far above the
    global-threshold fit's. The default keeps it close to that."""
    sim = simulate_ratings(400, 60, rank=2, density=0.06, seed=7)
    frame = _frame(sim)
    test = np.random.default_rng(0).random(len(frame)) < 0.15
    fit = frame[~test]
    test = test & frame.row.isin(fit.row).to_numpy() & frame.col.isin(fit.col).to_numpy()
    held = frame[test]

    def log_loss(res: object) -> float:
        p = res.predict_proba(held.row, held.col).to_numpy()  # type: ignore[attr-defined]
        return float(-np.mean(np.log(p[np.arange(len(held)), held.rating - 1])))

    per_row = log_loss(OrdinalFactorization(fit, thresholds="row").fit())
    shared = log_loss(OrdinalFactorization(fit).fit())
    assert per_row < shared + 0.1


def _readme_section() -> str:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    return readme.split("## Ordinal matrix factorisation\n", 1)[1].split("\n## ", 1)[0]


def test_readme_factorisation_example_prints_what_the_readme_shows() -> None:
    import contextlib
    import io
    import re

    section = _readme_section()
    code, shown = re.findall(r"^```(?:py)?\n(.*?)^```", section, re.MULTILINE | re.DOTALL)[:2]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert out.getvalue().strip() == shown.strip()


def test_readme_factorisation_speed_numbers_are_the_bench_runs() -> None:
    from pathlib import Path

    section = _readme_section()
    bench = (Path(__file__).resolve().parents[2] / "bench" / "README.md").read_text(
        encoding="utf-8"
    )
    rows = [line for line in bench.splitlines() if line.startswith("| 1,011,399 | 10,000 x 2,000")]
    assert "converge in 19 sweeps, about 22 s on one core" in section
    assert all("| 19 |" in row for row in rows)
    assert any("| 21.6 s |" in row for row in rows) and any("| 22.3 s |" in row for row in rows)
    assert "1.5-1.6x the time of\na Gaussian ALS sweep" in section
    assert any("(1.5x ALS)" in row for row in rows) and any("(1.6x ALS)" in row for row in rows)
    assert "(`n_jobs=2`: 11 s)" in section and any("| 10.9 s |" in row for row in rows)
    assert "ridge 1 on the factors and 0.01 on the\nbiases" in section
    script = (Path(__file__).resolve().parents[2] / "bench" / "bench_factorization.py").read_text(
        encoding="utf-8"
    )
    assert "factor_penalty=1.0, bias_penalty=0.01" in script


def test_per_row_thresholds_around_an_unused_level_meet_at_the_optimum() -> None:
    """A row that never uses a level gains by closing the thresholds around it. With a
    small threshold_penalty they close: the Newton step of such a row crossed them, no
    halving kept them ordered, and the whole row (factors, bias, other thresholds) stopped
    moving while the fit reported convergence (reduced gradient up to 5.4, MAP objective
    392.2492 instead of lower). Now the pair meets and moves tied: the fit satisfies the
    KKT conditions of the MAP on ordered thresholds (exact objective, central differences)."""
    sim = simulate_ratings(25, 12, rank=2, density=0.6, seed=3)
    frame = _frame(sim)
    frame["w"] = np.random.default_rng(1).integers(1, 3, len(frame)).astype(float)
    model = OrdinalFactorization(
        frame, rank=2, thresholds="row", weights="w", factor_penalty=2.0, threshold_penalty=3.0
    )
    res = model.fit(tol=1e-14, max_sweeps=3000)
    r = model.ratings
    shapes = (res.col_coef.shape, res.threshold_table.shape)
    n_row = res.row_coef.size

    def objective(x: np.ndarray) -> float:  # equation (1) with its priors, written out
        p = x[:n_row].reshape(res.row_coef.shape)
        col = x[n_row : n_row + res.col_coef.size].reshape(shapes[0])
        table = x[n_row + res.col_coef.size :].reshape(shapes[1])
        eta = col[r.col, 0] + np.sum(p[r.row] * col[r.col, 1:], axis=1)
        cuts = np.column_stack([np.full(len(table), -np.inf), table, np.full(len(table), np.inf)])
        cdf = get_link("logit").cdf
        prob = cdf(cuts[r.row, r.y + 1] - eta) - cdf(cuts[r.row, r.y] - eta)
        # priors: factors 2, column bias 2 (the default), thresholds 3 around their mean
        prior = np.sum(p**2) + np.sum(col**2) + 1.5 * np.sum((table - table.mean(axis=0)) ** 2)
        return float(-np.sum(r.weights * np.log(prob)) + prior)

    x = np.concatenate([res.row_coef.ravel(), res.col_coef.ravel(), res.threshold_table.ravel()])
    assert objective(x) == pytest.approx(res.objective_trace[-1], rel=1e-12)
    grad = np.array([(objective(x + h) - objective(x - h)) / 2e-6 for h in 1e-6 * np.eye(len(x))])
    table = res.threshold_table
    start = n_row + res.col_coef.size
    tied = np.argwhere(np.diff(table, axis=1) < 1e-9)
    assert len(tied) > 0  # the case this test is about
    for u, j in tied:  # a tied pair moves as one variable, and closing it more would help
        k = start + u * table.shape[1] + j
        assert grad[k + 1] - grad[k] > 0
        grad[k + 1] += grad[k]
        grad[k] = 0.0
    assert np.max(np.abs(grad)) < 1e-5
