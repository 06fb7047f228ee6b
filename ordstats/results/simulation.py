"""New responses drawn from a fitted model, as R's ``simulate(fit, nsim, seed)`` of a polr.

Each simulated response of row ``i`` is level ``j`` with the fitted probability
``P(Y_i = j | x_i)``, independently across rows and simulations (MASS's
``simulate.polr``: a uniform draw against the row's cumulative probabilities).
The rows, their predictors, offsets, nominal and scale parts stay those of the
fit: the draws are the parametric bootstrap's responses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ordstats.errors import SpecificationError

__all__ = ["simulate_responses"]


def _check_nsim(nsim: Any) -> int:
    if isinstance(nsim, bool) or not isinstance(nsim, (int, np.integer)) or nsim < 1:
        raise SpecificationError(
            f"nsim is the number of simulations, an integer >= 1; got {nsim!r}"
        )
    return int(nsim)


def simulate_responses(res: Any, nsim: int = 1, seed: Any = None) -> pd.DataFrame:
    """Draw ``nsim`` responses for every row of the fit (R's ``simulate(fit, nsim, seed)``).

    Parameters
    ----------
    res : OrdinalResults
    nsim : int
        Number of simulated responses per row.
    seed : int, numpy.random.Generator or None
        The generator's seed (``numpy.random.default_rng(seed)``) or a generator.

    Returns
    -------
    pandas.DataFrame
        Columns ``sim_1``, ..., ``sim_<nsim>`` (R's names), one row per row of
        the fit (its index), each an ordered categorical with the response's levels.

    Raises
    ------
    SpecificationError
        For a weighted fit (as MASS: a frequency weight would ask for one draw per
        copy, a sampling weight for none), or a censored response.
    """
    nsim = _check_nsim(nsim)
    model = res.model
    if model.has_weights:
        raise SpecificationError(
            "simulate() draws one response per row, which a weighted fit does not describe "
            "(as R's simulate.polr: 'weighted fits are not yet supported'); expand frequency "
            "weights into rows and refit"
        )
    if model.design.response.lower_codes is not None:
        raise SpecificationError(
            "simulate() of a censored response would need a censoring model; it draws "
            "uncensored responses only"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    prob = res.predict(which="prob")
    cumulative = np.cumsum(prob.to_numpy(), axis=1)
    cumulative[:, -1] = 1.0  # the top level takes what rounding leaves above the last cut
    uniform = rng.uniform(size=(nsim, cumulative.shape[0]))
    levels = list(model.design.response.values)
    columns = {}
    for k in range(nsim):
        codes = (uniform[k][:, None] > cumulative[:, :-1]).sum(axis=1)
        columns[f"sim_{k + 1}"] = pd.Categorical.from_codes(codes, categories=levels, ordered=True)
    return pd.DataFrame(columns, index=prob.index)
