"""The averaging margins verbs stream over chunked and Dask fits (issue 23, item 5).

Each case fits the same model in memory, in chunks of a DataFrame, from
CSV/Parquet files and from a Dask DataFrame, and checks that the avg_ verbs
over the estimation rows (newdata=None) give the in-memory numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ordstats import OrdinalModel
from ordstats.errors import MissingDataWarning, OrdstatsError

RTOL_ESTIMATE, RTOL_SE = 1e-10, 1e-8


def _fits(data, formula, tmp_path, chunksizes=(17, 23, 29), **options):
    """In memory, and streamed in chunks of a DataFrame, CSV and Parquet (sizes given) and Dask."""
    memory = OrdinalModel.from_formula(formula, data, **options).fit()
    csv, parquet = tmp_path / "rows.csv", tmp_path / "rows.parquet"
    data.to_csv(csv, index=False)
    data.to_parquet(parquet, index=False)
    sources = {"chunksize": data, "csv": str(csv), "parquet": str(parquet)}
    streamed = {
        name: OrdinalModel.from_formula(formula, source, chunksize=size, **options).fit()
        for (name, source), size in zip(sources.items(), chunksizes, strict=True)
    }
    dd = pytest.importorskip("dask.dataframe")
    lazy = dd.from_pandas(data, npartitions=4)
    streamed["dask"] = OrdinalModel.from_formula(formula, lazy, **options).fit()
    return memory, streamed


def _same(got, expected):
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    labels = [c for c in ("term", "contrast", "group") if c in got.columns]
    for column in labels:
        assert got[column].astype(str).tolist() == expected[column].astype(str).tolist()
    np.testing.assert_allclose(
        got["estimate"], expected["estimate"], rtol=RTOL_ESTIMATE, atol=1e-13
    )
    np.testing.assert_allclose(got["std_error"], expected["std_error"], rtol=RTOL_SE, atol=1e-13)
    np.testing.assert_allclose(got["conf_low"], expected["conf_low"], rtol=RTOL_SE, atol=1e-12)


CASES = {
    "comparisons": ("avg_comparisons", {}),
    "comparisons by, ratio": ("avg_comparisons", {"by": "temp", "comparison": "ratio"}),
    "comparisons lnor pairwise": (
        "avg_comparisons",
        {"variables": {"temp": "pairwise"}, "comparison": "lnor"},
    ),
    "comparisons user function": ("avg_comparisons", {"comparison": lambda hi, lo: hi - 2 * lo}),
    "slopes": ("avg_slopes", {"type": "exceedance"}),
    "predictions by": ("avg_predictions", {"by": ["temp", "contact"]}),
    "predictions counterfactual": ("avg_predictions", {"variables": "contact", "by": "contact"}),
    "predictions expected, hypothesis": (
        "avg_predictions",
        {"by": "temp", "type": "expected", "hypothesis": "pairwise"},
    ),
}


@pytest.fixture(scope="module")
def wine_fits(wine, tmp_path_factory):
    return _fits(wine, "rating ~ temp * contact", tmp_path_factory.mktemp("wine"))


@pytest.mark.parametrize("case", CASES)
def test_wine_averages_stream_with_the_in_memory_numbers(wine_fits, case):
    verb, options = CASES[case]
    memory, streamed = wine_fits
    expected = getattr(memory, verb)(**options)
    for fit in streamed.values():
        _same(getattr(fit, verb)(**options), expected)


def test_housing_weighted_averages_by_a_column_outside_the_model_stream(housing, tmp_path):
    # a CSV file keeps no category order: the factors as text give every path one coding
    data = housing.astype({"Infl": str, "Type": str, "Cont": str}).assign(
        region=np.where(np.arange(len(housing)) % 3 == 0, "north", "south")
    )
    memory, streamed = _fits(
        data, "Sat ~ Infl + Type + Cont", tmp_path, weights="Freq", levels=["Low", "Medium", "High"]
    )
    for options in ({"wts": "Freq", "by": "region"}, {"wts": "Freq", "variables": "Infl"}):
        # a column outside the model is read from the fitted data (here: every row is used)
        expected = memory.avg_comparisons(data, **options)
        _same(memory.avg_comparisons(**options), expected)
        for fit in streamed.values():
            _same(fit.avg_comparisons(**options), expected)
    expected = memory.avg_predictions(by="Type", wts="Freq", type="cumprob")
    for fit in streamed.values():
        _same(fit.avg_predictions(by="Type", wts="Freq", type="cumprob"), expected)


def test_wts_are_checked_over_every_chunk_as_in_memory(wine, tmp_path):
    """The check of ``wts=`` counts the weights of every row, as in memory: before, a fit
    read in chunks reported the first chunk with negative or missing weights (its count,
    its smallest), and refused a chunk of zero weights that other chunks outweigh."""
    n = len(wine)
    row = np.arange(n)
    data = wine.assign(
        negative=np.where(row % 5 == 2, -1.0, 1.0) * (1.0 + row % 7),
        missing=np.where(row % 9 == 4, np.nan, 1.0),
        zero=np.where(row < 30, 0.0, 1.0 + row % 3),
    )
    memory, streamed = _fits(data, "rating ~ temp + contact", tmp_path)
    smallest = data["negative"].min()
    for wts, problem in [
        ("negative", f"has {(data['negative'] < 0).sum()} negative values (smallest {smallest:g})"),
        ("missing", f"has {data['missing'].isna().sum()} missing or infinite values"),
    ]:
        with pytest.raises(OrdstatsError, match=re.escape(problem)) as caught:
            memory.avg_predictions(wts=wts)
        for fit in streamed.values():
            with pytest.raises(OrdstatsError) as got:
                fit.avg_predictions(wts=wts)
            assert str(got.value) == str(caught.value)
    expected = memory.avg_predictions(wts="zero", by="contact")
    for fit in streamed.values():
        _same(fit.avg_predictions(wts="zero", by="contact"), expected)


def test_by_a_column_outside_the_model_reads_the_fitted_rows(wine, tmp_path):
    # as marginaleffects reads the original data: the fitted data frame's column on the
    # rows the fit kept (here rows with a missing temp are dropped), in memory and in chunks
    data = wine.assign(
        temp=wine["temp"].astype(str).where(np.arange(len(wine)) % 7 != 3),
        contact=wine["contact"].astype(str),
        half=np.where(np.arange(len(wine)) % 2 == 0, "odd", "even"),
        size=1.0 + np.arange(len(wine)) % 5,
    )
    with pytest.warns(MissingDataWarning, match="rows were dropped"):
        memory, streamed = _fits(data, "rating ~ temp + contact", tmp_path)
    kept = data.dropna(subset=["temp"])
    assert len(kept) < len(data)
    for verb, options in [
        ("avg_predictions", {"by": "half"}),
        ("avg_comparisons", {"variables": "contact", "by": ["half", "judge"]}),
        ("avg_slopes", {"variables": "temp", "by": "half"}),
        ("avg_predictions", {"by": "half", "wts": "size"}),
    ]:
        expected = getattr(memory, verb)(kept, **options)
        _same(getattr(memory, verb)(**options), expected)
        for fit in streamed.values():
            _same(getattr(fit, verb)(**options), expected)


def test_by_a_categorical_column_with_missing_values_has_one_table_on_every_path(wine, tmp_path):
    """The groups of a Categorical ``by`` column outside the model, a missing group
    included, keep the column's type in memory as in chunks (before: text in memory)."""
    half = np.where(np.arange(len(wine)) % 2 == 0, "odd", "even").astype(object)
    half[::9] = None
    data = wine.assign(
        temp=wine["temp"].astype(str),
        contact=wine["contact"].astype(str),
        half=pd.Categorical(half, categories=["odd", "even"]),
    )
    memory, streamed = _fits(data, "rating ~ temp + contact", tmp_path)
    expected = memory.avg_predictions(by="half")
    assert isinstance(expected["half"].dtype, pd.CategoricalDtype)
    assert expected["half"].isna().sum() == 5  # one missing group per level of the response
    for name, fit in streamed.items():
        if name == "csv":  # a CSV file keeps no categories (its groups: text, sorted)
            continue
        got = fit.avg_predictions(by="half")
        _same(got, expected)
        pd.testing.assert_series_equal(got["half"], expected["half"])


def test_by_a_column_nowhere_says_so(wine, tmp_path):
    memory = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    with pytest.raises(OrdstatsError, match=r"by= names 'nope', which is not a column"):
        memory.avg_predictions(by="nope")
    parquet = tmp_path / "rows.parquet"
    wine.drop(columns="judge").to_parquet(parquet, index=False)
    chunked = OrdinalModel.from_formula("rating ~ temp + contact", str(parquet), chunksize=20).fit()
    with pytest.raises(
        OrdstatsError, match=r"'judge' is not a column of the data the model was fitted on"
    ):
        chunked.avg_predictions(by="judge")


def test_numeric_slopes_and_gaps_stream_on_soup(soup, tmp_path):
    rng = np.random.default_rng(3)
    data = soup.assign(x=rng.normal(size=len(soup)), z=rng.uniform(1, 3, size=len(soup)))
    formula = "SURENESS ~ PROD + x + np.log(z) + x:PROD"
    # 1847 rows: a few chunks each (not 100, whose passes add nothing to what is checked)
    memory, streamed = _fits(data, formula, tmp_path, chunksizes=(311, 397, 457))
    for verb, options in (
        ("avg_slopes", {}),
        ("avg_slopes", {"slope": "eyex", "variables": ["x", "z"], "by": "PROD"}),
        ("avg_comparisons", {"variables": {"x": 0.5, "z": [1.5, 2.5]}}),
    ):
        expected = getattr(memory, verb)(**options)
        for fit in streamed.values():
            _same(getattr(fit, verb)(**options), expected)


def test_streaming_is_one_pass(wine):
    fit = OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=10).fit()
    before = fit.model.evaluator.n_passes
    fit.avg_comparisons(by="temp")
    assert fit.model.evaluator.n_passes == before + 1


def test_newdata_still_works_on_chunked_fits(wine):
    memory = OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    chunked = OrdinalModel.from_formula("rating ~ temp + contact", wine, chunksize=10).fit()
    rows = wine.iloc[[3, 1, 50]]
    _same(chunked.predictions(rows), memory.predictions(rows))
    _same(chunked.slopes(rows, by="temp"), memory.slopes(rows, by="temp"))


# -- what needs a whole column or per-row output: clear refusals ------------------------------


@pytest.fixture
def chunked(wine):
    data = wine.assign(x=np.linspace(0, 1, len(wine)))
    return OrdinalModel.from_formula("rating ~ temp + contact + x", data, chunksize=10).fit()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: f.predictions(), r"no per-row results .* use the avg_ verb .* newdata"),
        (lambda f: f.comparisons(), r"no per-row results .* use the avg_ verb"),
        (lambda f: f.slopes(by=False), r"no per-row results"),
        (lambda f: f.avg_predictions(variables="x"), r"'x' is numeric.* give its values"),
        (lambda f: f.avg_predictions(wts=np.ones(72)), r"wts= .* must name a column"),
        (lambda f: f.avg_predictions(by="nothere"), r"'nothere' is not a column of the data"),
    ],
)
def test_out_of_core_refusals_say_what_to_do(chunked, call, message):
    with pytest.raises(OrdstatsError, match=message):
        call(chunked)


def test_counterfactual_datagrid_of_a_chunked_fit_says_to_average(chunked):
    from ordstats import datagrid

    # the typical-value grid streams (tests/results/test_datagrid_stream.py); copies do not
    with pytest.raises(OrdstatsError, match=r"does not hold in memory: average over them"):
        datagrid(chunked, grid_type="counterfactual", temp=["cold"])


# -- get_margeff (statsmodels' name) over chunked and Dask fits -------------------------------

MARGEFF_CASES = [
    {"at": "overall"},
    {"at": "overall", "dummy": True, "count": True, "method": "eydx"},
    {"at": "mean", "dummy": True, "atexog": {"x": 0.25}},
    {"at": "mean", "count": True},
    {"at": "median", "method": "eyex"},
    {"at": "zero", "method": "dyex"},
]


@pytest.fixture(scope="module")
def margeff_fits(wine):
    """Weighted fits with a factor, a 0/1 factor, a numeric x (also in the scale) and a count."""
    rng = np.random.default_rng(3)
    data = wine.assign(
        x=rng.normal(size=len(wine)),
        n=rng.integers(0, 4, size=len(wine)).astype(float),
        w=rng.integers(1, 4, size=len(wine)).astype(float),
    )
    formula, options = "rating ~ temp + contact + x + n", {"weights": "w", "scale": "~ x"}
    memory = OrdinalModel.from_formula(formula, data, **options).fit()
    dd = pytest.importorskip("dask.dataframe")
    streamed = {
        "chunksize": OrdinalModel.from_formula(formula, data, chunksize=17, **options).fit(),
        "dask": OrdinalModel.from_formula(
            formula, dd.from_pandas(data, npartitions=3), **options
        ).fit(),
    }
    return memory, streamed


@pytest.mark.parametrize("options", MARGEFF_CASES, ids=lambda o: "-".join(map(str, o.values())))
def test_get_margeff_streams_with_the_in_memory_numbers(margeff_fits, options):
    # before: SpecificationError "get_margeff() averages over the fitted rows, which a model
    # read in chunks (files, Dask, chunksize=) does not keep in memory"
    memory, streamed = margeff_fits
    expected = memory.get_margeff(**options)
    for fit in streamed.values():
        got = fit.get_margeff(**options)
        assert got.notes == expected.notes
        np.testing.assert_allclose(got.margeff, expected.margeff, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got.margeff_se, expected.margeff_se, rtol=1e-10, atol=1e-14)
        assert str(got.summary()) == str(expected.summary())


def test_get_margeff_passes_over_the_data(margeff_fits):
    # overall: a pass for the columns' summary and one for the effects; mean: the summary
    # pass only; median: the summary and one pass that collects the few rows' values
    chunked = margeff_fits[1]["chunksize"]
    for at, passes in (("overall", 2), ("mean", 1), ("median", 2)):
        before = chunked.model.evaluator.n_passes
        chunked.get_margeff(at=at)
        assert chunked.model.evaluator.n_passes - before == passes


# -- contrasts that need the whole column: summaries from passes before the average -----------


def _skewed(n: int = 3001, seed: int = 1) -> pd.DataFrame:
    """A far-from-zero skewed column with ties (x), a rounded one (z) and a factor."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x": np.round(rng.gamma(2.0, 3.0, n), 2) + 1e4,
            "z": np.round(rng.normal(size=n), 1),
            "g": rng.choice(list("abc"), n),
        }
    )
    latent = (frame["x"] - 1e4) * 0.2 + frame["z"] + rng.logistic(size=n)
    frame["y"] = (latent.to_numpy()[:, None] > np.array([1.0, 2.0, 3.5])).sum(axis=1)
    return frame


def _streamed_fits(data, formula):
    dd = pytest.importorskip("dask.dataframe")
    return {
        "chunksize": OrdinalModel.from_formula(formula, data, chunksize=250).fit(),
        "dask": OrdinalModel.from_formula(formula, dd.from_pandas(data, npartitions=7)).fit(),
    }


@pytest.mark.parametrize(
    "variables",
    [{"x": "sd"}, {"x": "2sd", "z": "iqr"}, {"z": "minmax", "x": "iqr", "g": "reference"}],
)
def test_summary_contrasts_stream_with_the_in_memory_numbers(variables):
    # before: refused ("the contrast 'sd' of 'x' needs the whole column ...")
    data = _skewed()
    memory = OrdinalModel.from_formula("y ~ x + z + g", data).fit()
    expected = memory.avg_comparisons(variables=variables)
    for fit in _streamed_fits(data, "y ~ x + z + g").values():
        got = fit.avg_comparisons(variables=variables)
        _same(got, expected)
        assert got["contrast"].tolist() == expected["contrast"].tolist()


@pytest.mark.filterwarnings("ignore::ordstats.errors.ConvergenceWarning")  # the fit is not read
@pytest.mark.parametrize("n", [3, 8, 1001, 3001])
def test_column_summaries_over_chunks_are_the_exact_in_memory_ones(monkeypatch, n):
    from ordstats.results import effect_rows
    from ordstats.results.margins.stream import column_summaries
    from ordstats.results.margins.verbs import numeric_summary

    monkeypatch.setattr(effect_rows, "_COLLECT", 5)  # narrow brackets over several passes
    data = _skewed(max(n, 40)).iloc[:n] if n < 40 else _skewed(n)
    data = data.assign(y=np.arange(n) % 3)  # every level, whatever n
    for fit in _streamed_fits(data, "y ~ x + z").values():
        found = column_summaries(fit, ["x", "z"])
        for name in ("x", "z"):
            expected = numeric_summary(data[name])
            for key, value in expected.items():
                np.testing.assert_allclose(found[name][key], value, rtol=1e-12, atol=0, err_msg=key)
            column = data[name].to_numpy()
            np.testing.assert_allclose(found[name]["median"], np.quantile(column, 0.5), rtol=1e-12)
            np.testing.assert_allclose(found[name]["mean"], column.mean(), rtol=1e-12)


def test_by_columns_keep_the_data_s_dtype(tmp_path):
    """A text by= column is text in the streamed table too, as in memory (it came back
    a Categorical of the fit's levels)."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.normal(size=200), "g": rng.choice(["a", "b", "c"], 200)})
    data["y"] = np.digitize(data["x"] + rng.logistic(size=200), [-1, 0.5, 1.5]) + 1
    memory, streamed = _fits(data, "y ~ x + C(g)", tmp_path)
    expected = memory.avg_predictions(by="g")
    for name, res in streamed.items():
        got = res.avg_predictions(by="g")
        assert not isinstance(got["g"].dtype, pd.CategoricalDtype), name
        if name != "dask":  # Dask reads text as its own string dtype
            assert got["g"].dtype == expected["g"].dtype, name
        _same(got, expected)
