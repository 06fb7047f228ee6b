"""Printed summaries of fitted models, built from statsmodels' table machinery."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.summary2 import Summary as Summary2
from statsmodels.iolib.table import SimpleTable
from statsmodels.iolib.tableformatting import fmt_params

from ordstats.design import r_label
from ordstats.results.wald import format_pvalue

if TYPE_CHECKING:
    from ordstats.families import Family
    from ordstats.families.cumulative.banded import BandedCovariance
    from ordstats.results.protocols import FittedModel
    from ordstats.results.values import Covariance, FitInfo

__all__ = [
    "Estimates",
    "OrdinalSummary",
    "SummarisedFit",
    "latex_escape",
    "summarize",
    "summarize2",
    "summary_frame",
]


class Estimates(Protocol):
    """What :func:`summary_frame` reads of a result (any results class)."""

    @property
    def params(self) -> pd.Series:  # noqa: D102
        ...

    @property
    def bse(self) -> pd.Series:  # noqa: D102
        ...

    @property
    def zvalues(self) -> pd.Series:  # noqa: D102
        ...

    @property
    def pvalues(self) -> pd.Series:  # noqa: D102
        ...

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:  # noqa: D102
        ...


class SummarisedFit(Estimates, Protocol):
    """What the summaries read of a fixed-effects result (``OrdinalResults``)."""

    @property
    def model(self) -> FittedModel:  # noqa: D102
        ...

    @property
    def fit_info(self) -> FitInfo:  # noqa: D102
        ...

    @property
    def covariance(self) -> Covariance | BandedCovariance:  # noqa: D102
        ...

    @property
    def llf(self) -> float:  # noqa: D102
        ...

    @property
    def aic(self) -> float:  # noqa: D102
        ...

    @property
    def bic(self) -> float:  # noqa: D102
        ...

    @property
    def nobs(self) -> float:  # noqa: D102
        ...

    @property
    def n_rows(self) -> int:  # noqa: D102
        ...

    @property
    def df_model(self) -> int:  # noqa: D102
        ...

    @property
    def df_resid(self) -> float:  # noqa: D102
        ...

    @property
    def converged(self) -> bool:  # noqa: D102
        ...

    @property
    def niter(self) -> int:  # noqa: D102
        ...

    @property
    def max_grad(self) -> float:  # noqa: D102
        ...

    @property
    def cond_H(self) -> float:  # noqa: D102
        ...


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (``_``, ``|``, ``&``, ...) in plain text."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


class OrdinalSummary(Summary):
    """statsmodels' :class:`~statsmodels.iolib.summary.Summary`, printed as R users expect.

    The text has one width for the header and every table, a ``formula:`` line,
    ``scale:`` and ``nominal:`` lines when the model has those formulas (as R's
    ``summary(clm)``) and a ``data:`` line; :meth:`as_latex` keeps every table's title and escapes
    the names; :meth:`as_html` (a notebook's ``_repr_html_``) shows the same.
    """

    def __init__(
        self,
        formula: str | None = None,
        data_name: str | None = None,
        scale: str | None = None,
        nominal: str | None = None,
    ) -> None:
        super().__init__()
        # R's summary(clm): formula, then the scale and nominal formulas, then the data
        self.call_lines = [
            *([f"formula: {r_label(formula)}"] if formula else []),
            *([f"scale:   {r_label(scale)}"] if scale else []),
            *([f"nominal: {r_label(nominal)}"] if nominal else []),
            *([f"data:    {data_name}"] if data_name else []),
        ]
        self.gap_label = ""

    def _table_lines(self) -> list[list[str]]:
        blocks = [str(table).split("\n") for table in self.tables]
        return [lines[:-1] for lines in blocks[:-1]] + [blocks[-1]]

    def as_text(self) -> str:
        """The summary as text, every table as wide as the widest."""
        blocks = self._table_lines()
        width = max(len(line) for lines in blocks for line in lines)
        width = max(width, *(len(line) for line in self.call_lines)) if self.call_lines else width
        out: list[str] = []
        for k, (table, lines) in enumerate(zip(self.tables, blocks, strict=True)):
            if k == 0:
                at = max(lines[2].find(self.gap_label), 0) if len(lines) > 2 else 0
            else:
                at = max(len(str(row[0])) for row in table.data)
            out += [_widen(line, width, at, table.title) for line in lines]
            if k == 0 and self.call_lines:
                out += ["-" * width, *self.call_lines]
        text = "\n".join(out)
        if self.extra_txt is not None:
            text += "\n\n" + self.extra_txt
        return text

    def as_latex(self) -> str:
        """The summary as LaTeX: one titled ``tabular`` per table, names escaped."""
        parts = [r"\begin{center}"]
        if self.call_lines:
            parts += [latex_escape(line) + r"\\" for line in self.call_lines]
        for table in self.tables:
            rows = [[str(cell) for cell in row] for row in table.data]
            ncols = max(len(row) for row in rows)
            parts += [
                rf"\textbf{{{latex_escape(table.title or '')}}}\\[0.5ex]",
                rf"\begin{{tabular}}{{l{'r' * (ncols - 1)}}}",
                r"\hline",
            ]
            for row in rows:
                cells = [latex_escape(cell.strip()) for cell in row] + [""] * (ncols - len(row))
                parts.append("{}" + " & ".join(cells) + r" \\")
            parts += [r"\hline", r"\end{tabular}\\[1ex]"]
        parts.append(r"\end{center}")
        if self.extra_txt is not None:
            notes = [latex_escape(line.strip()) for line in self.extra_txt.split("\n")]
            parts.append(r"\par ".join(notes))
        return "\n".join(parts)

    def as_html(self) -> str:
        """The summary as HTML (what a notebook shows): call lines, tables with titles, notes."""
        import html

        head = "".join(f"<div><code>{html.escape(line)}</code></div>" for line in self.call_lines)
        return head + super().as_html()


def _widen(line: str, width: int, at: int, title: str | None) -> str:
    """Stretch one line of a table to ``width``: rules, titles, or spaces at ``at``."""
    stripped = line.strip()
    if stripped and set(stripped) <= {"=", "-"}:
        return stripped[0] * width
    if title and stripped == title.strip():
        return title.strip().center(width).rstrip()
    short = width - len(line)
    if short <= 0 or not stripped:
        return line
    return line[:at] + " " * short + line[at:]


def _fmt(value: float, spec: str) -> str:
    return "nan" if not np.isfinite(value) else format(value, spec)


def _header(
    res: SummarisedFit, yname: str | None = None
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    model = res.model
    design = model.design
    left = [
        ("Dep. Variable:", [yname or model.endog_name]),
        ("Model:", ["OrdinalModel"]),
        ("Family:", [model.family_spec.label]),
        ("Positive coef:", [f"{model.family_spec.positive_effect} levels"]),
        ("Link:", [model.link.name]),
        ("Threshold:", ["fixed" if isinstance(model.threshold, tuple) else model.threshold]),
        *([("Nominal:", [r_label(design.nominal.describe())])] if design.nominal else []),
        *([("Scale:", [r_label(design.scale.describe())])] if design.scale else []),
        ("Method:", [_method(res)]),
        ("No. Observations:", [_fmt(res.nobs, "g")]),
        ("Df Model:", [str(res.df_model)]),
        ("Df Residuals:", [_fmt(res.df_resid, "g")]),
    ]
    right = [
        ("Log-Likelihood:", [_fmt(res.llf, ".4f")]),
        ("AIC:", [_criterion(res, "aic")]),
        ("BIC:", [_criterion(res, "bic")]),
        ("Converged:", [str(res.converged)]),
        ("Iterations:", [str(res.niter)]),
        ("max|grad|:", [_fmt(res.max_grad, ".2e")]),
        ("cond(H):", [_fmt(res.cond_H, ".4g")]),
        ("Covariance:", [res.covariance.kind]),
    ]
    return left, right


def _criterion(res: SummarisedFit, name: str) -> str:
    """AIC or BIC, or "n/a" for fits without a likelihood (survey fits' pseudo-likelihood)."""
    if not getattr(res, "has_likelihood", True):
        return "n/a"
    return _fmt(getattr(res, name), ".4f")


def _method(res: SummarisedFit) -> str:
    label = getattr(res, "method_label", None)  # penalised fits name their method
    if label is not None:
        return str(label)
    method = res.fit_info.method
    return "Newton-Raphson" if method == "newton" else f"{method} + Newton"


def _params_table(
    res: SummarisedFit,
    names: list[str],
    alpha: float,
    title: str,
    labels: dict[str, str] | None = None,
) -> SimpleTable:
    """One block of coefficients: estimates and SEs to 4 decimals, p-values as R prints."""
    ci = res.conf_int(alpha).loc[names]
    data = [
        [
            _fmt(res.params[n], ".4f"),
            _fmt(res.bse[n], ".4f"),
            _fmt(res.zvalues[n], ".3f"),
            format_pvalue(float(res.pvalues[n])),
            _fmt(ci.loc[n, "lower"], ".3f"),
            _fmt(ci.loc[n, "upper"], ".3f"),
        ]
        for n in names
    ]
    stat = "t" if getattr(res, "use_t", False) else "z"  # survey fits: t on design df
    headers = ["coef", "std err", stat, f"P>|{stat}|", f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"]
    stubs = [labels.get(n, n) for n in names] if labels else list(names)
    return SimpleTable(data, headers, stubs, title=title, txt_fmt=fmt_params)


def _family_note(family: Family, nominal: bool) -> str:
    """State the model's equation and the direction of a positive coefficient."""
    equation = family.definition
    if not family.ordered_cutpoints:
        equation += " = alpha_j + w'gamma_j + x'b" if nominal else " = alpha_j + x'b"
        equation += ",\n    alpha_j the intercept 'j:j+1'"
        if nominal:
            equation += ", gamma_j the non-parallel effects 'j:j+1:w'"
    return (
        f"{family.title}: {equation}.\n    A positive coefficient moves the response to "
        f"{family.positive_effect.upper()} levels."
    )


def _notes(res: SummarisedFit) -> list[str]:
    model, info = res.model, res.fit_info
    family = model.family_spec
    notes = [_family_note(family, bool(model.problem.layout.n_nominal_cols))]
    if isinstance(model.threshold, tuple):
        cuts = ", ".join(
            f"{name} = {value:.6g}"
            for name, value in zip(
                model.family_spec.cutpoint_names(model.levels), model.threshold, strict=True
            )
        )
        notes.append(
            f"Thresholds fixed at {cuts};\n    (Intercept) is estimated instead: "
            "P(Y <= j) = F(theta_j - (Intercept) - x'beta)."
        )
    if info.diverging:
        notes.append(
            "Separation: the estimates of " + ", ".join(info.diverging) + " diverge (no finite "
            "MLE); their values and standard errors are meaningless."
        )
    elif info.crossing:
        notes.append(
            f"Invalid fit: the thresholds are not increasing for {len(info.crossing)} rows "
            "(nominal effects imply negative probabilities)."
        )
    elif info.code != 0:
        notes.append(f"The fit did not converge: {info.message}.")
    if res.covariance.singular:
        notes.append("The Hessian is singular: standard errors are not available.")
    penalty_note = getattr(res, "penalty_note", None)
    if penalty_note:
        notes.append(penalty_note)
    elif res.covariance.kind != "nonrobust":
        notes.append(
            f"Standard errors, z, p-values and intervals use the {res.covariance.kind} "
            "(sandwich) covariance, not the inverse observed information."
        )
    if model.has_weights:
        notes.append(f"No. Observations is the sum of frequency weights over {res.n_rows} rows.")
    if model.design.n_dropped:
        notes.append(
            f"{model.design.n_dropped} rows with missing values or zero weight were dropped."
        )
    aliased = model.design.location.aliased
    if aliased:
        notes.append("Aliased columns dropped: " + ", ".join(aliased) + ".")
    return [f"[{i}] {text}" for i, text in enumerate(notes, start=1)]


def _blocks(res: SummarisedFit) -> list[tuple[str, list[str]]]:
    """Parameter blocks in display order: location, nominal, scale, link, thresholds."""
    model, lay = res.model, res.model.problem.layout
    names = model.param_names
    cumulative = model.family_spec.ordered_cutpoints
    return [
        ("Location coefficients", names[lay.beta]),
        (
            "Nominal effects (on the thresholds)"
            if cumulative
            else "Non-parallel effects (one per step)",
            names[lay.nominal],
        ),
        ("Scale effects (log scale)", names[lay.zeta]),
        (f"Link parameter ({model.link.name})", names[lay.lam]),
        ("Thresholds" if cumulative else "Intercepts", names[lay.alpha]),
    ]


def summarize(
    res: SummarisedFit,
    alpha: float = 0.05,
    *,
    yname: str | None = None,
    xname: Sequence[str] | None = None,
    title: str | None = None,
) -> OrdinalSummary:
    """Build the summary of a fitted ordinal model (any family).

    Parameters
    ----------
    res : OrdinalResults
    alpha : float
        One minus the level of the confidence intervals shown.
    yname, xname, title : optional
        Names shown for the response and the parameters, and the title
        (statsmodels' keywords).

    Returns
    -------
    OrdinalSummary
        Header, location coefficients, thresholds and notes; ``as_text()``,
        ``as_html()`` and ``as_latex()`` render it.
    """
    design = res.model.design
    smry = OrdinalSummary(
        design.formula,
        getattr(res.model, "data_name", None),
        scale=design.scale.describe() if design.scale else None,
        nominal=design.nominal.describe() if design.nominal else None,
    )
    left, right = _header(res, yname)
    smry.gap_label = right[0][0]
    labels = dict(zip(res.params.index, xname, strict=True)) if xname is not None else None
    smry.add_table_2cols(
        res,
        gleft=left,
        gright=right,
        yname=yname or res.model.endog_name,
        xname=list(res.params.index),
        title=title or f"{res.model.family_spec.title} Results",
    )
    for block, names in _blocks(res):
        if names:
            smry.tables.append(_params_table(res, names, alpha, block, labels))
    notes = _notes(res)
    if notes:
        smry.add_extra_txt(["Notes:", *notes])
    return smry


def summarize2(
    res: SummarisedFit,
    alpha: float = 0.05,
    *,
    yname: str | None = None,
    xname: Sequence[str] | None = None,
    title: str | None = None,
) -> Summary2:
    """Build statsmodels' ``summary2``: model information and the coefficient table as DataFrames.

    Parameters as for :func:`summarize`.
    """
    left, right = _header(res, yname)
    info = {key: value[0] for key, value in [*left, *right]}
    smry = Summary2()
    smry.add_dict(info, ncols=2)
    table = summary_frame(res, alpha)
    if xname is not None:
        table.index = pd.Index(list(xname))
    smry.add_df(table, float_format="%.4f")
    smry.add_title(title or f"{res.model.family_spec.title} Results")
    return smry


def summary_frame(res: Estimates, alpha: float = 0.05) -> pd.DataFrame:
    """The coefficient table as a DataFrame (estimate, SE, z, p, CI)."""
    ci = res.conf_int(alpha)
    stat = "t" if getattr(res, "use_t", False) else "z"  # survey fits: t on design df
    return pd.DataFrame(
        {
            "coef": res.params,
            "std err": res.bse,
            stat: res.zvalues,
            f"P>|{stat}|": res.pvalues,
            f"[{alpha / 2:g}": ci["lower"],
            f"{1 - alpha / 2:g}]": ci["upper"],
        }
    )
