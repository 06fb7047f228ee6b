r"""Wald tests of linear constraints ``R params = q`` written as formulas.

Constraints are parsed by :func:`ordstats.design.constraints.parse_constraints` (formulaic)
from strings such as ``"temp[T.warm] = contact[T.yes]"`` or
``"temp[T.warm], contact[T.yes]"`` (each expression ``= 0``), lists of such
strings, ``{"expression": value}`` dicts, a matrix ``R`` or a tuple ``(R, q)``.
Names that are not plain identifiers, like thresholds, go in backticks:
``"`1|2` = -1"``.  The results are statsmodels'
:class:`~statsmodels.stats.contrast.ContrastResults`.

* :func:`wald_test` -- joint test of all constraints:
  :math:`W = (R\hat\theta - q)^\top (R V R^\top)^{-1} (R\hat\theta - q)`, chi-square
  with as many df as constraints.  A small p-value says the data contradict at
  least one constraint.
* :func:`wald_test_terms` -- one joint test per formula term (all its columns
  ``= 0``; in the nominal and scale parts too), statsmodels' ``wald_test_terms``
  and R's ``car::Anova(type = 3, test = "Wald")`` for models without interactions.
* :func:`t_test` -- each constraint separately: the estimate of
  :math:`R\hat\theta - q`, its standard error and a z test (normal reference,
  as every test of an ordinal model is asymptotic).
* ``f_test`` -- statsmodels' F form of the joint test, :math:`F = W / m` on
  ``(m, df_resid)`` degrees of freedom (``nobs - k_params``), as statsmodels'
  ``OrderedModel`` results compute it; asymptotically no different from ``W``.

``V`` is the covariance the results use (robust or cluster if fitted so), or the
``cov_p`` given.  The methods take statsmodels' arguments: ``wald_test(r_matrix,
cov_p=None, invcov=None, use_f=None, df_constraints=None, scalar=True)``,
``f_test(r_matrix, cov_p=None, invcov=None)`` and ``t_test(r_matrix, cov_p=None,
use_t=None)``.  A second argument with fewer than two dimensions cannot be a
covariance matrix: ``wald_test(R, q)`` is read as ``wald_test((R, q))``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contrast import ContrastResults

from ordstats._typing import FloatArray
from ordstats.design import term_columns
from ordstats.design.constraints import parse_constraints
from ordstats.errors import SpecificationError
from ordstats.results.arguments import check_alpha
from ordstats.results.state import FittedState

__all__ = [
    "ConstraintTestResults",
    "WaldMethods",
    "WaldTestResults",
    "constraint_spec",
    "t_test",
    "wald_test",
    "wald_test_terms",
]

_SPEC_HELP = (
    "give a string such as 'x = 0' or 'a = b, c = 1' (thresholds in backticks: "
    "'`1|2` = 0'), a list of such strings, a dict {expression: value}, a matrix R "
    "with one column per parameter, or a tuple (R, q)"
)


def _check_covariance(covariance: FloatArray) -> None:
    if not np.all(np.isfinite(covariance)):
        raise SpecificationError(
            "the covariance of the estimates is not available (a singular Hessian, or an L1 or "
            "elastic-net penalty, which gives no standard errors), so no Wald test can be "
            "computed; refit with fewer parameters, or with a ridge penalty (L1_wt=0)"
        )


def _is_numeric_array(value: Any) -> bool:
    if isinstance(value, (str, bytes, dict)) or value is None:
        return False
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return array.ndim <= 2


def constraint_spec(constraints: Any, values: Any = None) -> Any:
    """Check a constraint specification and put a separate ``q`` into ``(R, q)``.

    Parameters
    ----------
    constraints
        A string, list of strings, dict, matrix ``R`` or tuple ``(R, q)``.
    values : array-like, optional
        ``q`` given beside a matrix ``R`` (``wald_test(R, q)``).

    Returns
    -------
    object
        What :func:`~ordstats.design.constraints.parse_constraints` reads.

    Raises
    ------
    SpecificationError
        For ``None``, a tuple that is not ``(R, q)`` with a numeric ``R`` (with
        the string to write instead for ``("x", 0)``), ``q`` beside
        constraints that are not a matrix, anything else that names no
        constraints (a number, bytes, a set), or a matrix ``R`` or values ``q``
        with missing or infinite entries.
    """
    if constraints is None:
        raise SpecificationError(f"no constraints given: {_SPEC_HELP}")
    if values is not None:
        if not _is_numeric_array(constraints) or isinstance(constraints, tuple):
            raise SpecificationError(
                "constraint values q go with a matrix R (wald_test(R, q) or "
                f"wald_test((R, q))); with {type(constraints).__name__} constraints write "
                "the values in the constraints themselves, e.g. 'x = 2'"
            )
        constraints = (constraints, values)
    if isinstance(constraints, tuple):
        _check_matrix_tuple(constraints)
    elif _not_a_specification(constraints):
        raise SpecificationError(
            f"cannot read {constraints!r} ({type(constraints).__name__}) as constraints: "
            f"{_SPEC_HELP}"
        )
    _check_finite(constraints)
    return constraints


def columns_by_name(constraints: Any, names: Sequence[str]) -> Any:
    """A constraint matrix ``R`` whose column labels name parameters, in the parameters' order.

    A DataFrame (alone or as ``(R, q)``) whose columns are parameter names
    (all or some: the others get zeros) is paired with the parameters by
    name, as pandas pairs labels; the default columns 0, 1, ... by position.
    Other labels are refused rather than read by position (statsmodels reads
    ``r_matrix`` by position whatever its labels).
    """
    if isinstance(constraints, tuple) and len(constraints) == 2:
        return (columns_by_name(constraints[0], names), constraints[1])
    if not isinstance(constraints, pd.DataFrame):
        return constraints
    columns = constraints.columns
    if isinstance(columns, pd.RangeIndex) and columns.start == 0 and columns.step == 1:
        return constraints
    labels, known = [str(c) for c in columns], [str(n) for n in names]
    if len(set(labels)) == len(labels) and set(labels) <= set(known):
        return constraints.set_axis(labels, axis=1).reindex(columns=known, fill_value=0)
    unknown = [label for label in labels if label not in set(known)][:3]
    raise SpecificationError(
        f"the constraint matrix's column labels ({', '.join(map(repr, unknown))}, ...) are "
        f"not parameter names ({', '.join(map(repr, known[:4]))}, ...): label its columns "
        "with the parameters' names (columns are then paired by name), or give it the "
        "default columns 0, 1, ... to pair them by position"
    )


def _not_a_specification(value: Any) -> bool:
    """A number, bytes, a set or a non-iterable object: nothing that names constraints."""
    if isinstance(value, (str, dict)):
        return False
    return isinstance(value, (numbers.Number, np.generic, bytes, set, frozenset)) or not hasattr(
        value, "__iter__"
    )


def _check_finite(constraints: Any) -> None:
    """Refuse a matrix ``R`` (or ``(R, q)``) with missing or infinite entries."""
    parts = constraints if isinstance(constraints, tuple) else (constraints,)
    for part, name in zip(parts, ("R", "q"), strict=False):
        if _is_numeric_array(part) and not np.all(np.isfinite(np.asarray(part, dtype=float))):
            raise SpecificationError(
                f"the constraint {'matrix' if name == 'R' else 'values'} {name} has missing "
                "or infinite entries; give finite numbers"
            )


def _check_matrix_tuple(constraints: tuple[Any, ...]) -> None:
    """A tuple must be ``(R, q)`` with ``R`` a numeric matrix (statsmodels' form)."""
    first = constraints[0] if constraints else None
    if isinstance(first, str):
        hint = ""
        if len(constraints) == 2 and isinstance(constraints[1], (int, float, np.number)):
            hint = f"; to test {first} = {constraints[1]} write '{first} = {constraints[1]}'"
        raise SpecificationError(
            f"a tuple of constraints must be (R, q) with R a matrix of numbers; got "
            f"{constraints!r}{hint}"
        )
    if len(constraints) != 2 or not _is_numeric_array(first):
        raise SpecificationError(
            f"a tuple of constraints must be (R, q): a matrix R with one column per "
            f"parameter and the values q; got a tuple of {len(constraints)} item(s). "
            f"Otherwise {_SPEC_HELP}"
        )


def _parse(constraints: Any, names: Sequence[str]) -> tuple[FloatArray, FloatArray, list[str]]:
    matrix, values, labels = parse_constraints(constraints, names)
    if matrix.shape[0] == 0:
        raise SpecificationError(f"no constraints given: {_SPEC_HELP}")
    return matrix, values, labels


def _inverse_covariance(invcov: Any, m: int) -> FloatArray:
    try:
        inverse = np.asarray(invcov, dtype=float)
    except (TypeError, ValueError):
        inverse = np.empty(0)
    if inverse.shape != (m, m) or not np.all(np.isfinite(inverse)):
        raise SpecificationError(
            f"invcov must be a finite {m} x {m} matrix, the inverse of R V R' for the "
            f"{m} constraint(s); got {np.shape(invcov)}"
        )
    return inverse


def _check_df(df_constraints: Any) -> int:
    if (
        isinstance(df_constraints, bool)
        or not isinstance(df_constraints, (int, np.integer))
        or df_constraints < 1
    ):
        raise SpecificationError(
            f"df_constraints must be a positive integer; got {df_constraints!r}"
        )
    return int(df_constraints)


class WaldTestResults(ContrastResults):
    """A joint Wald chi-square test: ``statistic``, ``df``, ``pvalue``.

    statsmodels' :class:`~statsmodels.stats.contrast.ContrastResults` (whose
    ``df_denom`` holds the chi-square df, kept for compatibility), printed as
    a chi-square test: the statistic to 4 significant digits, its df and the
    p-value as R prints it.
    """

    def __init__(self, statistic: float | FloatArray, df: int) -> None:
        super().__init__(
            chi2=statistic, df_denom=df, statistic=statistic, distribution="chi2", distargs=(df,)
        )
        #: degrees of freedom of the chi-square reference (the number of constraints)
        self.df = int(df)

    def summary(self, xname: object = None, alpha: float = 0.05, title: object = None) -> str:
        """One line: ``Wald test: chi2 = 27.91 on 2 df, p-value = 8.69e-07``."""
        return (
            f"Wald test: chi2 = {format_stat(float(np.squeeze(self.statistic)))} on "
            f"{self.df} df, p-value = {format_pvalue(float(self.pvalue))}"
        )

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<{self.summary()}>"


class ConstraintTestResults(ContrastResults):
    """statsmodels' :class:`~statsmodels.stats.contrast.ContrastResults` of ``t_test``.

    The same attributes and methods; ``conf_int``, ``summary`` and
    ``summary_frame`` check ``alpha`` first.
    """

    def conf_int(self, alpha: float = 0.05) -> FloatArray:
        """Intervals for the constraints' values at level ``1 - alpha``."""
        return super().conf_int(check_alpha(alpha))

    def summary(self, xname: Any = None, alpha: float = 0.05, title: Any = None) -> Any:
        """The table of the tests (statsmodels' layout)."""
        return super().summary(xname, check_alpha(alpha), title)

    def summary_frame(self, xname: Any = None, alpha: float = 0.05) -> pd.DataFrame:
        """The table of the tests as a DataFrame."""
        return super().summary_frame(xname, check_alpha(alpha))


def format_stat(value: float) -> str:
    """A test statistic to 4 significant digits (``27.91``)."""
    return "nan" if not np.isfinite(value) else f"{value:.4g}"


def format_pvalue(value: float) -> str:
    """A p-value as R's ``format.pval`` prints it: ``0.0123``, ``2.19e-06``, ``< 2e-16``."""
    if not np.isfinite(value):
        return "nan"
    if value < 2.220446e-16:
        return "< 2e-16"
    return f"{value:.3g}"


def wald_test(
    params: FloatArray,
    covariance: FloatArray,
    names: Sequence[str],
    constraints: Any,
    *,
    invcov: Any = None,
    use_f: bool = False,
    df_constraints: Any = None,
    df_denom: float | None = None,
    scalar: bool = True,
) -> ContrastResults:
    """Joint Wald chi-square (or F) test of linear constraints (see module docstring).

    Parameters
    ----------
    params : ndarray
    covariance : ndarray
    names : sequence of str
    constraints
        See :func:`parse_constraints` (checked by :func:`constraint_spec`).
    invcov : array-like, optional
        The inverse of ``R V R'`` to use instead of ``covariance``.
    use_f : bool
        Report ``F = W / m`` on ``(m, df_denom)`` degrees of freedom.
    df_constraints : int, optional
        The number of constraints ``m`` to use (default: the rows of ``R``).
    df_denom : float, optional
        The denominator df of the F test.
    scalar : bool
        ``False`` gives the statistic as a 1 x 1 array (statsmodels' old form).

    Returns
    -------
    WaldTestResults or statsmodels.stats.contrast.ContrastResults
        ``statistic``, ``pvalue``, ``df`` (the number of constraints); with
        ``use_f`` statsmodels' F-test results (``fvalue``, ``df_num``, ``df_denom``).
    """
    matrix, values, _ = _parse(constraint_spec(columns_by_name(constraints, names)), names)
    diff = matrix @ params - values
    if invcov is None:
        _check_covariance(covariance)
        statistic = float(diff @ np.linalg.solve(matrix @ covariance @ matrix.T, diff))
    else:
        statistic = float(diff @ _inverse_covariance(invcov, matrix.shape[0]) @ diff)
    df = matrix.shape[0] if df_constraints is None else _check_df(df_constraints)
    value: float | FloatArray = statistic if scalar else np.array([[statistic]])
    if use_f:
        return ContrastResults(F=value / df, df_denom=df_denom, df_num=df)
    return WaldTestResults(value, df)


def wald_test_terms(
    params: FloatArray, covariance: FloatArray, names: Sequence[str], terms: dict[str, list[str]]
) -> pd.DataFrame:
    """Joint Wald test that all parameters of each term are zero.

    Parameters
    ----------
    params, covariance, names
        As for :func:`wald_test`.
    terms : dict
        Term label to the names of its parameters.

    Returns
    -------
    pandas.DataFrame
        One row per term: ``"chi2"``, ``"df"``, ``"P>chi2"``.
    """
    _check_covariance(covariance)
    index = {name: k for k, name in enumerate(names)}
    rows = {}
    for term, members in terms.items():
        cols = [index[m] for m in members]
        sub = params[cols]
        statistic = float(sub @ np.linalg.solve(covariance[np.ix_(cols, cols)], sub))
        rows[term] = (statistic, len(cols), float(stats.chi2.sf(statistic, len(cols))))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["chi2", "df", "P>chi2"])


def t_test(
    params: FloatArray,
    covariance: FloatArray,
    names: Sequence[str],
    constraints: Any,
    *,
    use_t: bool = False,
    df_denom: float | None = None,
) -> ContrastResults:
    """Separate z (or t) tests of linear constraints (see module docstring).

    Parameters
    ----------
    params, covariance, names, constraints
        As for :func:`wald_test`.
    use_t : bool
        Use Student's t on ``df_denom`` degrees of freedom instead of the normal.
    df_denom : float, optional
        Degrees of freedom of the t reference.

    Returns
    -------
    ConstraintTestResults
        ``effect`` (``R params - q``), ``sd``, ``statistic`` (z), ``pvalue``,
        ``conf_int()``; ``summary()`` prints a table with one row per constraint.
    """
    _check_covariance(covariance)
    matrix, values, labels = _parse(constraint_spec(columns_by_name(constraints, names)), names)
    effect = matrix @ params - values
    sd = np.sqrt(np.einsum("ij,jk,ik->i", matrix, covariance, matrix))
    if use_t:
        result = ConstraintTestResults(effect=effect, sd=sd, t=effect / sd, df_denom=df_denom)
    else:
        result = ConstraintTestResults(
            effect=effect, sd=sd, statistic=effect / sd, distribution="norm"
        )
    result.c_names = labels
    return result


def _flag(value: Any, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, (bool, np.bool_)):
        raise SpecificationError(f"{name} must be True or False; got {value!r}")
    return bool(value)


class WaldMethods(FittedState):
    """Wald tests of linear constraints written as formulas (statsmodels' arguments)."""

    def _test_covariance(self, cov_p: Any) -> tuple[FloatArray, Any]:
        """The covariance to use and a ``q`` given as the second argument, if any.

        ``cov_p`` with two dimensions is a covariance; with fewer it is ``q``
        (``wald_test(R, q)``), which a covariance matrix cannot be.
        """
        if cov_p is None:
            return self.covariance.matrix, None
        k = len(self.params)
        try:
            array = np.asarray(cov_p, dtype=float)
        except (TypeError, ValueError):
            raise SpecificationError(
                f"cov_p must be a {k} x {k} covariance matrix of the parameters; got "
                f"{type(cov_p).__name__}"
            ) from None
        if array.ndim < 2:
            return self.covariance.matrix, array
        if array.shape != (k, k):
            raise SpecificationError(
                f"cov_p must be a {k} x {k} covariance matrix of the parameters "
                f"({', '.join(self.params.index)}); got shape {array.shape}"
            )
        return array, None

    def wald_test(
        self,
        r_matrix: Any,
        cov_p: Any = None,
        invcov: Any = None,
        use_f: bool | None = None,
        df_constraints: int | None = None,
        scalar: bool = True,
    ) -> ContrastResults:
        """Joint Wald test of linear constraints on the parameters (statsmodels' arguments).

        ``W = (R p - q)' (R V R')^{-1} (R p - q)``, chi-square on as many df as
        constraints (``V`` the covariance in use, robust if fitted so).  A
        small p-value says the data contradict the constraints.

        Parameters
        ----------
        r_matrix : str, list, dict, ndarray or (R, q)
            E.g. ``"temp[T.warm] = contact[T.yes]"``; several separated by
            commas; thresholds in backticks (``"`1|2` = 0"``); a matrix ``R``
            (``R p = 0``) or a tuple ``(R, q)``.  See :mod:`ordstats.results.wald`.
        cov_p : ndarray, optional
            A covariance of the parameters to use instead.  A vector or number
            here is ``q`` for a matrix ``r_matrix`` (``wald_test(R, q)``).
        invcov : ndarray, optional
            The inverse of ``R V R'`` to use.
        use_f : bool, optional
            ``True``: the F form, as :meth:`f_test`.
        df_constraints : int, optional
            Degrees of freedom to use instead of the number of constraints.
        scalar : bool
            statsmodels' flag; ``False`` returns the statistic as a 1 x 1 array.

        Returns
        -------
        WaldTestResults
            ``statistic``, ``df``, ``pvalue`` (statsmodels' ``ContrastResults``);
            with ``use_f`` statsmodels' F-test results.
        """
        covariance, values = self._test_covariance(cov_p)
        f_form = _flag(use_f, "use_f")
        return wald_test(
            self.params.to_numpy(),
            covariance,
            list(self.params.index),
            constraint_spec(r_matrix, values),
            invcov=invcov,
            use_f=f_form,
            df_constraints=df_constraints,
            df_denom=self.df_resid if f_form else None,
            scalar=_flag(scalar, "scalar"),
        )

    def f_test(self, r_matrix: Any, cov_p: Any = None, invcov: Any = None) -> ContrastResults:
        """F test of linear constraints, as statsmodels' ``f_test``.

        ``F = W / m`` with ``W`` the Wald statistic of :meth:`wald_test` and ``m``
        constraints, referred to ``F(m, df_resid)`` (``df_resid = nobs -
        k_params``), as statsmodels computes it for its ``OrderedModel``.  For
        an ordinal model the chi-square form (:meth:`wald_test`) is the usual
        one; the two differ little unless ``df_resid`` is small.

        Parameters
        ----------
        r_matrix, cov_p, invcov
            As for :meth:`wald_test`.

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
            ``fvalue``, ``pvalue``, ``df_num``, ``df_denom``.
        """
        return self.wald_test(r_matrix, cov_p, invcov, use_f=True)

    def t_test(self, r_matrix: Any, cov_p: Any = None, use_t: bool | None = None) -> Any:
        """Test each linear constraint separately (estimate, SE, z, p, CI).

        Parameters
        ----------
        r_matrix
            As for :meth:`wald_test`.
        cov_p : ndarray, optional
            As for :meth:`wald_test` (a vector there is ``q``).
        use_t : bool, optional
            ``True``: Student's t on ``df_resid`` degrees of freedom instead of
            the normal reference.

        Returns
        -------
        ConstraintTestResults
            statsmodels' ``ContrastResults``; ``summary()`` prints one row per
            constraint.
        """
        covariance, values = self._test_covariance(cov_p)
        t_form = _flag(use_t, "use_t")
        return t_test(
            self.params.to_numpy(),
            covariance,
            list(self.params.index),
            constraint_spec(r_matrix, values),
            use_t=t_form,
            df_denom=self.df_resid if t_form else None,
        )

    def wald_test_terms(self) -> pd.DataFrame:
        """Joint Wald test of each formula term (statsmodels' ``wald_test_terms``).

        For every term of the location formula (``"temp"``, ``"temp:contact"``)
        all its coefficients ``= 0``; terms of the nominal formula (all their
        threshold-specific effects, labelled ``"nominal: term"``) and of the
        scale formula (``"scale: term"``) likewise.  Uses the covariance in use.

        Returns
        -------
        pandas.DataFrame
            One row per term: ``"chi2"``, ``"df"``, ``"P>chi2"``.
        """
        return wald_test_terms(
            self.params.to_numpy(),
            self.covariance.matrix,
            list(self.params.index),
            self.term_parameters(),
        )

    def term_parameters(self) -> dict[str, list[str]]:
        """The parameter names of each formula term, labelled as in :meth:`wald_test_terms`.

        Returns
        -------
        dict
            Term label (``"temp"``, ``"nominal: contact"``, ``"scale: temp"``)
            to the names of its parameters.
        """
        model = self.model
        design = model.design
        groups: dict[str, list[str]] = dict(term_columns(design.location))
        thresholds = model.threshold_param_names
        if design.nominal is not None:
            for term, cols in term_columns(design.nominal).items():
                groups[f"nominal: {term}"] = [f"{t}:{c}" for c in cols for t in thresholds]
        if design.scale is not None:
            for term, cols in term_columns(design.scale).items():
                groups[f"scale: {term}"] = [f"scale:{c}" for c in cols]
        return groups
