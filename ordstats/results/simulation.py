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

from ordstats.data.spark import is_spark_frame, map_partitions_seeded
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
        For a Dask fit a Dask DataFrame of the same columns, drawn partition by
        partition (each partition's generator seeded by ``seed`` and its number).
        For a Spark fit a Spark DataFrame, drawn in the cluster: the columns of
        the fit's rows (as ``predict`` gives them), then ``sim_1``, ...,
        ``sim_<nsim>`` holding the levels' values (Spark has no categorical
        type), each partition's generator seeded by ``seed`` and its id;
        rows without predictions (missing values) get nulls.

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
    levels = list(model.design.response.values)
    prob = res.predict(which="prob")
    if hasattr(prob, "map_partitions"):  # a Dask fit: draw where the rows are
        return _dask_draws(prob, nsim, _entropy(seed), levels)
    if is_spark_frame(prob):  # a Spark fit: draw in the cluster, beside the rows
        return _spark_draws(prob, nsim, _entropy(seed), levels)
    if not isinstance(prob, pd.DataFrame):
        raise SpecificationError(
            "simulate() draws on the driver from in-memory predictions; this fit's "
            f"predictions are a {type(prob).__module__.split('.')[0]} {type(prob).__name__} "
            "(they stay in the cluster): draw there from res.predict(which='prob'), each "
            "row's probabilities"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return _draws(prob, nsim, rng, levels)


def _draws(
    prob: pd.DataFrame, nsim: int, rng: np.random.Generator, levels: list[Any]
) -> pd.DataFrame:
    """``nsim`` draws per row of ``prob`` (rows of probabilities over ``levels``)."""
    cumulative = _cumulative(prob.to_numpy(dtype=float))
    uniform = rng.uniform(size=(nsim, cumulative.shape[0]))
    columns = {}
    for k in range(nsim):
        codes = _level_codes(uniform[k], cumulative)
        columns[f"sim_{k + 1}"] = pd.Categorical.from_codes(codes, categories=levels, ordered=True)
    return pd.DataFrame(columns, index=prob.index)


def _cumulative(prob: np.ndarray) -> np.ndarray:
    """Each row's cumulative probabilities, the last exactly 1.

    The top level takes what rounding leaves above the last cut.
    """
    cumulative = np.cumsum(prob, axis=1)
    cumulative[:, -1] = 1.0
    return cumulative


def _level_codes(uniform: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """The level each row's uniform draw falls in: the cuts of :func:`_cumulative` below it."""
    return (uniform[:, None] > cumulative[:, :-1]).sum(axis=1)


def _entropy(seed: Any) -> int:
    """One integer from which every partition's generator is seeded (fixed at the call)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63))
    return int(np.random.SeedSequence(seed).generate_state(2, dtype=np.uint64)[0])


def _partition_draws(
    frame: pd.DataFrame,
    nsim: int,
    entropy: int,
    levels: list[Any],
    partition_info: dict[str, Any] | None = None,
) -> pd.DataFrame:
    number = 0 if partition_info is None else int(partition_info["number"])
    rng = np.random.default_rng([entropy, number])
    return _draws(frame, nsim, rng, levels)


def _dask_draws(prob: Any, nsim: int, entropy: int, levels: list[Any]) -> Any:
    """The draws of a Dask fit, one generator per partition (seeded by its number)."""
    meta = pd.DataFrame(
        {f"sim_{k + 1}": pd.Categorical([], categories=levels, ordered=True) for k in range(nsim)}
    )
    return prob.map_partitions(_partition_draws, nsim, entropy, levels, meta=meta)


def _spark_draws(prob: Any, nsim: int, entropy: int, levels: list[Any]) -> Any:
    """The draws of a Spark fit: ``prob``'s rows with ``sim_*`` columns instead of the levels'.

    Uniforms are taken row by row (``nsim`` per row) from each partition's
    generator, so that the draws do not depend on how Spark cuts a partition
    into Arrow batches.
    """
    columns = [str(level) for level in levels]  # predict's probability columns
    values = np.empty(len(levels) + 1, dtype=object)
    values[: len(levels)] = levels
    values[-1] = None  # the draw of a row without probabilities

    def draw(batch: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        cumulative = _cumulative(batch[columns].to_numpy(dtype=float))
        uniform = rng.uniform(size=(cumulative.shape[0], nsim))
        unpredicted = np.isnan(cumulative).any(axis=1)
        drawn = {}
        for k in range(nsim):
            codes = np.where(unpredicted, len(levels), _level_codes(uniform[:, k], cumulative))
            drawn[f"sim_{k + 1}"] = pd.Series(values[codes], dtype=object)
        return pd.DataFrame(drawn)

    sample = pd.DataFrame({f"sim_{k + 1}": pd.Series(levels, dtype=object) for k in range(nsim)})
    return map_partitions_seeded(prob, draw, entropy, sample, drop=columns)
