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
    assert res.data_removed
    assert len(pickle.dumps(res)) < size
    # no per-row arrays are left: 20 times the rows pickle to (nearly) the same size
    many = ordstats.OrdinalModel.from_formula(
        "rating ~ temp + contact", pd.concat([wine] * 20, ignore_index=True)
    ).fit()
    many_size = len(pickle.dumps(many))
    many.remove_data()
    assert len(pickle.dumps(many)) < min(1.1 * len(pickle.dumps(res)), many_size / 5)
    loaded = ordstats.load(tmp_path / "fit.pkl")
    pd.testing.assert_frame_equal(loaded.predict(wine.head(4)), full)
    assert loaded.llnull == llnull
    pd.testing.assert_series_equal(loaded.bse, bse)
    assert "rating" in str(loaded.summary())
    with pytest.raises(NotFittedError, match="remove_data"):
        loaded.predict()
    with pytest.raises(NotFittedError, match="remove_data"):
        loaded.model.fit()


def test_load_refuses_other_objects(tmp_path):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(OrdstatsError, match="not an ordstats result"):
        ordstats.load(path)


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
