# %% [markdown]
# # Ordinal matrix factorisation of ratings: a held-out comparison
#
# Simulated ratings with a planted low-rank structure and per-user scale use;
# ordinal MF against Gaussian MF, means and a clm with row and column effects.

# %%
"""Ordinal matrix factorisation on simulated ratings: held-out comparison.

Ratings of 300 users x 100 items (5 levels) are simulated from a rank-2 ordinal
factorisation with per-user scale use.  10% of the entries are held out for the
test, another 10% for validation (to choose rank and penalty); the models are

* ordinal MF (``OrdinalFactorization``, per-user thresholds),
* Gaussian MF of the same rank (plain ALS with numpy, ridge),
* row/column means (additive baseline),
* a cumulative link model with row and column effects only (rank 0),

scored by the ranked probability score (RPS), log-loss, MAE of the most
probable rating and RMSE of the expected rating.  Gaussian models get
probabilities by discretising their normal predictive distribution at the
half-points between levels (residual variance from the training data).

Run ``python vignettes/factorization.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import norm

from ordstats.errors import ConvergenceWarning
from ordstats.estimation.factorization import OrdinalFactorization
from ordstats.families.cumulative.simulate import simulate_ratings

warnings.simplefilter("ignore", ConvergenceWarning)
LEVELS = np.arange(1.0, 6.0)


def gaussian_als(
    train: pd.DataFrame, n_rows: int, n_cols: int, rank: int, lam: float, sweeps: int = 30
):
    """Ridge ALS for r ~ mu + b_u + b_v + p_u'q_v (returns a predict function)."""
    rng = np.random.default_rng(0)
    r, c, y = train.row.to_numpy(), train["col"].to_numpy(), train.rating.to_numpy(float)
    mu = y.mean()
    P = np.column_stack([np.ones(n_rows), 0.1 * rng.standard_normal((n_rows, rank))])
    Q = np.column_stack([np.ones(n_cols), 0.1 * rng.standard_normal((n_cols, rank))])
    bu, bv = np.zeros(n_rows), np.zeros(n_cols)

    def solve(block, other, n_blocks, target):
        z = np.column_stack([np.ones(len(block)), other])
        d = z.shape[1]
        A = np.zeros((n_blocks, d, d))
        b = np.zeros((n_blocks, d))
        for i in range(d):
            b[:, i] = np.bincount(block, z[:, i] * target, n_blocks)
            for j in range(d):
                A[:, i, j] = np.bincount(block, z[:, i] * z[:, j], n_blocks)
        A += lam * np.eye(d)
        return np.linalg.solve(A, b[:, :, None])[:, :, 0]

    for _ in range(sweeps):
        x = solve(r, Q[c, 1:], n_rows, y - mu - bv[c])
        bu, P[:, 1:] = x[:, 0], x[:, 1:]
        x = solve(c, P[r, 1:], n_cols, y - mu - bu[r])
        bv, Q[:, 1:] = x[:, 0], x[:, 1:]

    def predict(rows, cols):
        return mu + bu[rows] + bv[cols] + np.einsum("ij,ij->i", P[rows, 1:], Q[cols, 1:])

    sigma = np.sqrt(np.mean((y - predict(r, c)) ** 2))
    return predict, sigma


def gaussian_proba(mean, sigma):
    cuts = np.concatenate([[-np.inf], (LEVELS[:-1] + LEVELS[1:]) / 2, [np.inf]])
    cdf = norm.cdf((cuts[None, :] - mean[:, None]) / sigma)
    return np.clip(np.diff(cdf, axis=1), 1e-12, None)


def scores(proba, y):
    """RPS, log-loss, MAE of the most probable and RMSE of the expected rating."""
    proba = proba / proba.sum(axis=1, keepdims=True)
    k = np.arange(len(LEVELS))
    obs = (k[None, :] >= (y - 1)[:, None]).astype(float)
    rps = np.mean(np.sum((np.cumsum(proba, axis=1) - obs)[:, :-1] ** 2, axis=1) / (len(LEVELS) - 1))
    logloss = -np.mean(np.log(np.clip(proba[np.arange(len(y)), y - 1], 1e-12, None)))
    mae = np.mean(np.abs(LEVELS[proba.argmax(axis=1)] - y))
    rmse = np.sqrt(np.mean((proba @ LEVELS - y) ** 2))
    return rps, logloss, mae, rmse


sim = simulate_ratings(300, 100, rank=2, density=0.3, scale_use=0.6, seed=2026)
data = pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})
rng = np.random.default_rng(1)
part = rng.choice(3, size=len(data), p=[0.8, 0.1, 0.1])  # train / validation / test
train, val, test = (data[part == k] for k in range(3))
# keep every row and column in the training data
train = pd.concat([train, data[(part > 0) & ~data.row.isin(train.row)]])
print(f"{len(data)} ratings: {len(train)} train, {len(val)} validation, {len(test)} test")


def ordinal(frame, rank, lam):
    return OrdinalFactorization(
        frame, rank=rank, factor_penalty=lam, bias_penalty=0.1, thresholds="row"
    ).fit(max_sweeps=60)


grid = [(rank, lam) for rank in (1, 2, 3) for lam in (1.0, 5.0)]
val_ord = {
    g: scores(
        ordinal(train, *g).predict_proba(val.row, val["col"]).to_numpy(), val.rating.to_numpy()
    )[0]
    for g in grid
}
best_ord = min(val_ord, key=val_ord.get)
val_gauss = {}
for g in grid:
    predict, sigma = gaussian_als(train, 300, 100, *g)
    mean = predict(val.row.to_numpy(), val["col"].to_numpy())
    val_gauss[g] = np.sqrt(np.mean((mean - val.rating) ** 2))
best_gauss = min(val_gauss, key=val_gauss.get)
print(
    f"validation choice: ordinal rank {best_ord[0]} penalty {best_ord[1]:g}; "
    f"Gaussian rank {best_gauss[0]} penalty {best_gauss[1]:g}"
)

fit_data = pd.concat([train, val])
y = test.rating.to_numpy()
tr, tc = test.row.to_numpy(), test["col"].to_numpy()
rows = {}
mf = ordinal(fit_data, *best_ord)
rows["ordinal MF"] = scores(mf.predict_proba(tr, tc).to_numpy(), y)
predict, sigma = gaussian_als(fit_data, 300, 100, *best_gauss)
rows["Gaussian MF (ALS)"] = scores(gaussian_proba(predict(tr, tc), sigma), y)
predict, sigma = gaussian_als(fit_data, 300, 100, 0, 1.0)
rows["row/column means"] = scores(gaussian_proba(predict(tr, tc), sigma), y)
clm = OrdinalFactorization(fit_data, rank=0, bias_penalty=0.0).fit(max_sweeps=300)
rows["clm row + column"] = scores(clm.predict_proba(tr, tc).to_numpy(), y)
table = pd.DataFrame(rows, index=["RPS", "log-loss", "MAE(mode)", "RMSE(mean)"]).T
print(table.round(4).to_string())
print(f"ordinal MF: {mf.n_sweeps} sweeps, objective {mf.objective:.2f}")

# cold start: a new user with three ratings
new = mf.fold_in("new user", {0: 5, 1: 4, 2: 1})
print(new.recommend(3, rows=["new user"]).round(3).to_string(index=False))
