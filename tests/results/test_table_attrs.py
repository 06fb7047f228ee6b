"""Results tables whose ``attrs`` pandas can compare.

pandas compares the ``attrs`` of frames with ``==`` when it concatenates them or casts
columns (``astype`` with a dict).  Before, ``emmeans(...).summary_frame()`` kept a
numpy array in ``attrs["nonEst"]`` and ``brant_test``/``anova`` kept DataFrames in
``attrs``, so ``pd.concat`` of two such tables or ``.astype({...})`` raised pandas'
"truth value of an array (DataFrame) is ambiguous".  Now the ``attrs`` hold plain
Python values (tuples and dicts).
"""

from __future__ import annotations

import pandas as pd
import pytest

import ordstats


@pytest.fixture(scope="module")
def fits():
    housing = ordstats.datasets.load("housing")
    fit = ordstats.OrdinalModel.from_formula
    full = fit("Sat ~ Infl + Type + Cont", housing, weights="Freq").fit()
    smaller = fit("Sat ~ Infl + Type", housing, weights="Freq").fit()
    return full, smaller


def _tables(full, smaller):
    return {
        "emmeans": (full.emmeans("Infl").summary_frame(), smaller.emmeans("Infl").summary_frame()),
        "brant_test": (full.brant_test(), smaller.brant_test()),
        "anova": (ordstats.anova(full, smaller), ordstats.anova(smaller, full, names=["a", "b"])),
    }


@pytest.mark.parametrize("name", ["emmeans", "brant_test", "anova"])
def test_result_tables_can_be_concatenated_and_cast(fits, name):
    first, second = _tables(*fits)[name]
    assert pd.concat([first, second]).shape[0] == first.shape[0] + second.shape[0]
    again = _tables(*fits)[name][0]  # the same values in new objects: attrs kept
    assert pd.concat([first, again]).attrs == first.attrs
    column = first.columns[0]
    assert first.astype({column: str})[column].map(type).eq(str).all()


def test_attrs_still_give_the_tables(fits):
    full, smaller = fits
    assert pd.DataFrame(full.brant_test().attrs["binary_params"]).shape == (6, 2)
    models = pd.DataFrame(ordstats.anova(full, smaller).attrs["models"])
    assert list(models.columns[:2]) == ["formula", "link"]
    assert full.emmeans("Infl").summary_frame().attrs["nonEst"] == (False, False, False)
