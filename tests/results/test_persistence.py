"""Results and models pickle, deep-copy, save/load and slim down (statsmodels' API)."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ordstats
from ordstats.errors import NotFittedError, OrdstatsError, SpecificationError


@pytest.fixture
def log_fit(wine):
    data = wine.assign(x=np.arange(1.0, len(wine) + 1.0))
    return data, ordstats.OrdinalModel.from_formula(
        "rating ~ temp + np.log(x)", data, nominal="~ contact"
    ).fit()


def test_pickle_and_deepcopy_keep_predictions(log_fit):
    data, res = log_fit
    expected = res.predict(data.head(5))
    for copied in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res)):
        pd.testing.assert_frame_equal(copied.predict(data.head(5)), expected)
        pd.testing.assert_series_equal(copied.params, res.params)
    model = pickle.loads(pickle.dumps(res.model))
    np.testing.assert_allclose(model.fit().params, res.params, rtol=1e-10)
    copy.deepcopy(res.model)


def test_context_keeps_only_the_names_the_formulas_use(log_fit):
    _, res = log_fit
    assert set(res.model.formula_context) == {"np"}


def test_context_does_not_shadow_a_data_column(wine):
    temp = 3.0  # noqa: F841 - a caller variable with a column's name
    model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine)
    assert "temp" not in model.formula_context


def test_context_must_be_a_mapping(wine):
    with pytest.raises(SpecificationError, match="mapping"):
        ordstats.OrdinalModel.from_formula("rating ~ temp", wine, context=[1])


def test_save_load_and_remove_data(wine, tmp_path):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    full = res.predict(wine.head(4))
    llnull, bse = res.llnull, res.bse.copy()
    size = len(pickle.dumps(res))
    res.save(tmp_path / "fit.pkl", remove_data=True)
    assert (tmp_path / "fit.pkl").stat().st_size < size
    loaded = ordstats.load(tmp_path / "fit.pkl")
    assert loaded.data_removed
    # no per-row arrays are left: 20 times the rows pickle to (nearly) the same size
    many = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", pd.concat([wine] * 20, ignore_index=True)
    ).fit()
    many_size = len(pickle.dumps(many))
    many.remove_data()
    assert len(pickle.dumps(many)) < min(1.1 * len(pickle.dumps(loaded)), many_size / 5)
    pd.testing.assert_frame_equal(loaded.predict(wine.head(4)), full)
    assert loaded.llnull == llnull
    pd.testing.assert_series_equal(loaded.bse, bse)
    assert "rating" in str(loaded.summary())
    with pytest.raises(NotFittedError, match="remove_data"):
        loaded.predict()
    with pytest.raises(NotFittedError, match="remove_data"):
        loaded.model.fit()


def test_save_with_remove_data_keeps_the_result_intact(wine, tmp_path):
    # the docs Quickstart saves with remove_data=True, then keeps using res: before,
    # res itself was stripped and lr_test(smaller, res) refused
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    fitted = res.predict()
    res.save(tmp_path / "fit.pkl", remove_data=True)
    assert not res.data_removed
    pd.testing.assert_frame_equal(res.predict(), fitted)
    assert len(res.resid_prob) == len(wine)
    smaller = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    assert ordstats.lr_test(smaller, res).statistic == pytest.approx(11.043, abs=1e-3)
    loaded = ordstats.OrdinalResults.load(tmp_path / "fit.pkl")
    assert loaded.data_removed and isinstance(loaded, ordstats.OrdinalResults)
    assert loaded.prsquared == pytest.approx(res.prsquared)  # kept before stripping
    with pytest.raises(OrdstatsError, match="remove_data must be True or False"):
        res.save(tmp_path / "other.pkl", remove_data="yes")


def test_residuals_computed_before_removing_the_data_are_removed_too(wine, tmp_path):
    # before: the cached residuals stayed in the result and in the file saved with
    # remove_data=True (one value per row), and resid worked or not by call order
    many = pd.concat([wine] * 50, ignore_index=True)
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", many).fit()
    assert len(res.resid) == len(many)
    res.save(tmp_path / "fit.pkl", remove_data=True)
    assert len(res.resid) == len(many)  # the result in memory keeps its rows
    loaded = ordstats.load(tmp_path / "fit.pkl")
    assert "resid_prob" not in vars(loaded)
    with pytest.raises(NotFittedError, match="removed from this result"):
        _ = loaded.resid
    res.remove_data()
    with pytest.raises(NotFittedError, match="removed from this result"):
        _ = res.resid_prob


def test_results_load_is_a_classmethod_like_statsmodels(wine, tmp_path):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    res.save(tmp_path / "fit.pkl")
    loaded = ordstats.OrdinalResults.load(tmp_path / "fit.pkl")
    pd.testing.assert_series_equal(loaded.params, res.params)
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(OrdstatsError, match="holds a dict, not an ordstats result"):
        ordstats.OrdinalResults.load(path)


def test_what_needs_the_rows_says_they_were_removed(wine):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    res.remove_data()
    for get in (
        lambda: res.resid,
        lambda: res.resid_prob,
        lambda: res.get_prediction(),
        lambda: res.brant_test(),
    ):
        with pytest.raises(NotFittedError, match="removed from this result") as caught:
            get()
        assert "chunk" not in str(caught.value)
    with pytest.raises(NotFittedError, match="remove_data") as caught:
        res.nominal_test()
    assert "chunk" not in str(caught.value)
    # before: "'observation_scores' needs the rows ..." (an internal method's name)
    with pytest.raises(NotFittedError, match=r"^a sandwich covariance \(cov_type='HC0'\) needs"):
        res.get_robustcov_results("HC0")


def test_load_refuses_other_objects(tmp_path):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(OrdstatsError, match="not an ordstats result"):
        ordstats.load(path)


@pytest.mark.parametrize("fname", [1, 5, None, b"fit.pkl", ["fit.pkl"]])
def test_save_and_load_take_paths_only(wine, fname, tmp_path):
    """``open(5)`` would write into file descriptor 5 (``save(1)``: standard output)."""
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    with pytest.raises(OrdstatsError, match="must be a path"):
        res.save(fname)
    with pytest.raises(OrdstatsError, match="must be a path"):
        ordstats.load(fname)


def test_files_that_cannot_be_written_or_read_are_named(wine, tmp_path):
    res = ordstats.OrdinalModel.from_formula("rating ~ temp", wine).fit()
    missing = tmp_path / "no" / "such" / "dir" / "fit.pkl"
    with pytest.raises(OrdstatsError, match=r"cannot write .*fit\.pkl.*No such file"):
        res.save(missing)
    with pytest.raises(OrdstatsError, match=r"cannot read .*fit\.pkl.*No such file"):
        ordstats.load(missing)
    with pytest.raises(OrdstatsError, match="cannot read"):
        ordstats.OrdinalResults.load(str(missing))


def test_saved_result_predicts_in_a_fresh_process(wine, tmp_path):
    data = wine.assign(x=np.arange(1.0, len(wine) + 1.0))
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + np.log(x)", data).fit()
    res.save(tmp_path / "fit.pkl")
    data.head(6).to_pickle(tmp_path / "new.pkl")
    expected = res.predict(data.head(6))
    script = textwrap.dedent(
        f"""
        import pandas as pd, ordstats
        res = ordstats.load({str(tmp_path / "fit.pkl")!r})
        res.predict(pd.read_pickle({str(tmp_path / "new.pkl")!r})).to_pickle(
            {str(tmp_path / "out.pkl")!r})
        """
    )
    root = str(Path(ordstats.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)
    pd.testing.assert_frame_equal(pd.read_pickle(tmp_path / "out.pkl"), expected)


def test_results_pickled_with_an_eager_covariance_still_load(wine):
    """Results saved before the covariance became lazy kept it in ``covariance``."""
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()
    robust = res.get_robustcov_results("HC0")
    for fitted in (res, robust):
        old = pickle.loads(pickle.dumps(fitted))
        old.__dict__["covariance"] = old.__dict__.pop("_chosen_covariance") or fitted.covariance
        loaded = pickle.loads(pickle.dumps(old))
        pd.testing.assert_series_equal(loaded.bse, fitted.bse)
        assert loaded.covariance.kind == fitted.covariance.kind


def test_survey_result_without_its_rows_keeps_its_summary(tmp_path):
    """The summary's design block and df were read from the design, which remove_data drops."""
    api = pd.read_csv(Path(__file__).parents[1] / "data" / "survey" / "apiclus1.csv")
    api = api.rename(columns={"avg.ed": "avg_ed"}).dropna(subset=["avg_ed"])
    api["mealcat"] = pd.Categorical(
        api["mealcat"], ordered=True, categories=["(0,25]", "(25,50]", "(50,75]", "(75,100]"]
    )
    design = ordstats.SurveyDesign(api, weights="pw", psu="dnum", fpc="fpc")
    res = ordstats.OrdinalModel.from_formula("mealcat ~ avg_ed + stype", design=design).fit()
    text, tests = str(res.summary()), res.reg_term_test("stype")
    res.save(tmp_path / "fit.pkl", remove_data=True)
    slim = ordstats.load(tmp_path / "fit.pkl")
    assert str(slim.summary()) == text
    pd.testing.assert_frame_equal(slim.reg_term_test("stype"), tests)
    with pytest.raises(NotFittedError, match="survey design needs the rows"):
        slim.design_effects()


@pytest.mark.parametrize("family", ["sratio", "cratio", "acat"])
def test_sequential_fit_without_its_rows_gives_prediction_intervals(wine, family):
    """get_prediction(newdata) read the fitted rows' arrays as a template for new rows."""
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine, family=family).fit()
    new = wine.iloc[[0, 3, 9]]
    expected = res.get_prediction(new).summary_frame()
    res.remove_data()
    pd.testing.assert_frame_equal(res.get_prediction(new).summary_frame(), expected)


def test_pickled_chunked_fit_says_its_rows_are_gone(wine, tmp_path):
    """The fitted rows of a pickled chunked fit: a TypeError from opening no source before."""
    path = tmp_path / "wine.parquet"
    wine.to_parquet(path)
    res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", str(path), chunksize=20)
    loaded = pickle.loads(pickle.dumps(res.fit()))
    for method in (
        lambda: loaded.resid_prob,
        loaded.mean,
        lambda: loaded.quantile(0.5),
        loaded.predict,  # said 'a chunked model keeps no rows ... read the data yourself'
        lambda: loaded.profile("temp[T.warm]"),  # said only 'unpickled without its data source'
    ):
        with pytest.raises(NotFittedError, match="does not keep when pickled"):
            method()
    pd.testing.assert_frame_equal(loaded.mean(wine.head(3)), res.fit().mean(wine.head(3)))


def test_load_names_what_a_saved_formula_needs(wine, tmp_path):
    """A function a formula calls, from a module the loading session cannot import."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "my_transforms.py").write_text("def double(x):\n    return 2 * x\n")
    sys.path.insert(0, str(tmp_path / "mods"))
    try:
        import my_transforms  # type: ignore[import-not-found]

        data = wine.assign(x=np.arange(1.0, len(wine) + 1.0))
        res = ordstats.OrdinalModel.from_formula(
            "rating ~ double(x)", data, context={"double": my_transforms.double}
        ).fit()
        res.save(tmp_path / "fit.pkl")
    finally:
        sys.path.remove(str(tmp_path / "mods"))
        sys.modules.pop("my_transforms", None)
    with pytest.raises(OrdstatsError, match=r"my_transforms.*define or import it"):
        ordstats.load(tmp_path / "fit.pkl")
