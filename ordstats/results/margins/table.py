r"""The output of the margins verbs: estimates with Wald inference, as marginaleffects prints.

Standard errors are the delta method, :math:`\mathrm{se}_r = \sqrt{J_r V
J_r^\top}` with ``J`` the analytic Jacobian of the estimates in the
parameters; statistics and p-values use the normal distribution (as R's
marginaleffects and emmeans for these models).  Intervals are Wald intervals
:math:`b \pm z\,\mathrm{se}`, except for estimates that are probabilities,
whose intervals are by default formed on the logit scale and mapped back,
:math:`\operatorname{expit}(\operatorname{logit} b \pm z\,\mathrm{se}/(b(1-b)))`,
so that they stay inside ``(0, 1)`` (``conf_type="wald"`` gives R's intervals).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import special, stats

from ordstats._typing import FloatArray
from ordstats.errors import OrdstatsError

__all__ = ["CONF_TYPES", "Estimates", "MarginsSummary", "MarginsTable", "check_conf_level"]

#: how intervals are formed
CONF_TYPES = ("auto", "wald", "logit")
_INFERENCE = ["estimate", "std_error", "statistic", "p_value", "s_value", "conf_low", "conf_high"]


def check_conf_level(conf_level: Any) -> float:
    """``conf_level`` as a float in (0, 1), or a clear error."""
    if isinstance(conf_level, bool) or not isinstance(conf_level, (int, float, np.floating)):
        raise OrdstatsError(f"conf_level must be a number between 0 and 1; got {conf_level!r}")
    if not 0.0 < float(conf_level) < 1.0:
        raise OrdstatsError(f"conf_level must be between 0 and 1 (e.g. 0.95); got {conf_level}")
    return float(conf_level)


@dataclass
class Estimates:
    """Estimates before inference: labels, values, Jacobian, which are probabilities.

    Attributes
    ----------
    labels : pandas.DataFrame
        One row per estimate: the descriptive columns (term, contrast, group,
        by columns, rowid, data columns).
    values : ndarray, shape (n,)
    jacobian : ndarray, shape (n, k), or None
        ``None`` for estimates without standard errors (``type="class"``).
    probability : ndarray of bool, shape (n,)
        Which estimates are probabilities (logit intervals by default).
    """

    labels: pd.DataFrame
    values: FloatArray
    jacobian: FloatArray | None
    probability: FloatArray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        if self.probability.size != self.values.size:
            self.probability = np.zeros(self.values.size, dtype=bool)


class MarginsTable(pd.DataFrame):
    """A DataFrame of estimates with marginaleffects' columns, and a ``summary()``.

    Columns: the descriptive ones (``term``, ``contrast``, ``group`` named by
    the response levels, any ``by`` columns, ``rowid``), then ``estimate``,
    ``std_error``, ``statistic``, ``p_value``, ``s_value``, ``conf_low``,
    ``conf_high`` (and the data columns for unit-level estimates).
    """

    _metadata: ClassVar[list[str]] = ["margins_info"]

    @property
    def _constructor(self) -> type[MarginsTable]:
        return MarginsTable

    def summary(self) -> MarginsSummary:
        """A printable (and HTML) table of the estimates with a description of the inference.

        Returns
        -------
        MarginsSummary
        """
        info = getattr(self, "margins_info", None) or {}
        keep = [c for c in self.columns if c not in ("s_value",)]
        return MarginsSummary(pd.DataFrame(self[keep]), dict(info))


@dataclass
class MarginsSummary:
    """The estimates and the notes that say what they are and how intervals were formed."""

    table: pd.DataFrame
    info: dict[str, Any]

    def notes(self) -> list[str]:
        """Lines describing the estimates: type, intervals, standard errors."""
        info = self.info
        lines = []
        if info.get("title"):
            lines.append(str(info["title"]))
        if info.get("type"):
            lines.append(f"Type: {info['type']}")
        lines.append(f"Intervals: {info.get('intervals', 'Wald')}")
        if self.table["std_error"].isna().all():
            lines.append("Standard errors: not available for this fit (or this type)")
        else:
            lines.append(
                "Standard errors: delta method (analytic Jacobian); z statistics, normal p-values"
            )
        return lines

    def __str__(self) -> str:
        body = self.table.to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return "\n".join([*self.notes(), "", body])

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        notes = "".join(f"<p>{html.escape(line)}</p>" for line in self.notes())
        table = self.table.to_html(index=False, float_format=lambda v: f"{v:.4g}")
        return notes + table


def wald_table(
    estimates: Estimates,
    covariance: FloatArray,
    conf_level: float,
    conf_type: str,
    info: dict[str, Any],
) -> MarginsTable:
    """Standard errors, z statistics, p-values and intervals of ``estimates``.

    Parameters
    ----------
    estimates : Estimates
    covariance : ndarray, shape (k, k)
    conf_level : float
    conf_type : {"auto", "wald", "logit"}
        ``"auto"``: logit-scale intervals for probabilities, Wald otherwise;
        ``"logit"``: the same, but an error if no estimate is a probability.
    info : dict
        Description for the summary (``title``, ``type``).

    Returns
    -------
    MarginsTable
    """
    conf_level = check_conf_level(conf_level)
    if conf_type not in CONF_TYPES:
        raise OrdstatsError(
            f"conf_type must be one of {', '.join(map(repr, CONF_TYPES))}; got {conf_type!r}"
        )
    values = np.asarray(estimates.values, dtype=float)
    if estimates.jacobian is None:
        se = np.full(values.shape, np.nan)
    else:
        jac = estimates.jacobian
        se = np.sqrt(np.maximum(np.einsum("nk,kl,nl->n", jac, covariance, jac), 0.0))
    z = stats.norm.ppf(0.5 + conf_level / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = values / se
        p_value = 2.0 * stats.norm.sf(np.abs(statistic))
        s_value = -np.log2(p_value)
    low, high = values - z * se, values + z * se
    logit = estimates.probability.copy()
    if conf_type == "wald":
        logit[:] = False
    elif conf_type == "logit" and not logit.any():
        raise OrdstatsError(
            "conf_type='logit' is for probabilities (type='prob', 'cumprob' or 'exceedance' "
            "predictions); these estimates are not probabilities: use conf_type='wald'"
        )
    if logit.any():
        p = values[logit]
        with np.errstate(divide="ignore", invalid="ignore"):
            half = z * se[logit] / (p * (1.0 - p))
            centre = special.logit(p)
            inside = (p > 0) & (p < 1) & np.isfinite(half)
            # a probability at 0 or 1 (to rounding) has no width; a missing se none at all
            edge = np.where(np.isfinite(se[logit]), p, np.nan)
            low[logit] = np.where(inside, special.expit(centre - half), edge)
            high[logit] = np.where(inside, special.expit(centre + half), edge)
    inference = pd.DataFrame(
        {
            "estimate": values,
            "std_error": se,
            "statistic": statistic,
            "p_value": p_value,
            "s_value": s_value,
            "conf_low": low,
            "conf_high": high,
        },
        index=estimates.labels.index,
    )
    labels = estimates.labels
    descriptive = [c for c in labels.columns if c not in _INFERENCE]
    table = MarginsTable(pd.concat([labels[descriptive], inference], axis=1).reset_index(drop=True))
    if logit.all():
        intervals = f"{conf_level:.0%} on the logit scale, mapped back (probabilities)"
    elif logit.any():
        intervals = (
            f"{conf_level:.0%}; on the logit scale, mapped back, for the probabilities, "
            "Wald (estimate +- z se) for the others"
        )
    else:
        intervals = f"{conf_level:.0%} Wald (estimate +- z se)"
    table.margins_info = dict(info, intervals=intervals, conf_level=conf_level)
    return table
