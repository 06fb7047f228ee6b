r"""Jacobians of per-row predictions kept as sums of per-row products, for averages.

The Jacobian of a prediction in the parameters is, row by row, a few scalars
times the row's design vectors: for a cumulative link model
:math:`\nabla F(u_{ij}) = f(u_{ij})\,[D_j(w_i)/s_i,\; -x_i/s_i,\; -u_{ij} z_i]`,
and a probability is a fixed combination ``M`` of the ``F(u_ij)``.  An
average over rows only needs

.. math:: \sum_i w_i \nabla v_{ig}
          = \sum_t M^{(t)}_{g\cdot}\, \big(w \odot a^{(t)}\big)^\top B^{(t)},

one ``(c x m) @ (m x n_t)`` product per design block ``B^(t)`` instead of
the ``(m, g, k)`` array of every row's Jacobian.  :class:`RowTerms` holds
the scalars ``a^(t)`` (m, c), the mixing ``M^(t)`` (g, c) and the blocks
``B^(t)`` (m, n_t), or one vector ``(n_t,)`` shared by all rows, with the
parameters they belong to.  A block may have columns that are one value for
every row (a counterfactual level or number set for all rows): ``fixed``
holds them instead of an ``(m, n)`` copy of the block with those columns
overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray

__all__ = ["RowTerm", "RowTerms"]


@dataclass(frozen=True)
class RowTerm:
    """``J[i, g, at] += (coef[i] @ mixing[g]) * basis[i]`` (``basis`` 1-d: the same for all rows).

    Attributes
    ----------
    coef : ndarray, shape (m, c)
    mixing : ndarray, shape (g, c)
    basis : ndarray, shape (m, n) or (n,)
    at : slice
        The ``n`` parameters.
    fixed : tuple of (ndarray of int, ndarray), optional
        ``(columns, values)``: ``basis[:, columns]`` is read as ``values`` in
        every row (a 2-d ``basis`` only).
    """

    coef: FloatArray
    mixing: FloatArray
    basis: FloatArray
    at: slice
    fixed: tuple[np.ndarray, FloatArray] | None = None

    def rows_basis(self) -> FloatArray:
        """``basis`` with the ``fixed`` columns set (a copy when there are any)."""
        if self.fixed is None:
            return self.basis
        columns, values = self.fixed
        basis = self.basis.copy()
        basis[:, columns] = values
        return basis


@dataclass(frozen=True)
class RowTerms:
    """A Jacobian of shape ``(m, g, k)`` as a sum of :class:`RowTerm`.

    Attributes
    ----------
    terms : tuple of RowTerm
    n_params : int
        ``k``.
    """

    terms: tuple[RowTerm, ...]
    n_params: int

    def dense(self) -> FloatArray:
        """The ``(m, g, k)`` array."""
        first = self.terms[0]
        out = np.zeros((first.coef.shape[0], first.mixing.shape[0], self.n_params))
        for term in self.terms:
            basis = term.rows_basis()
            basis = basis if basis.ndim == 1 else basis[:, None, :]
            out[:, :, term.at] += (term.coef @ term.mixing.T)[:, :, None] * basis
        return out

    def weighted_sums(self, weights: FloatArray, codes: np.ndarray, n_keys: int) -> FloatArray:
        """``sum_{i in q} weights[i, g] J[i, g, :]`` for each key ``q``: shape (n_keys, g, k).

        Parameters
        ----------
        weights : ndarray, shape (m, g)
            Zero where a row does not count for a group (its Jacobian, which
            may be NaN there, is then left out).
        codes : ndarray of int, shape (m,)
            Each row's key ``0, ..., n_keys - 1``.
        n_keys : int
        """
        g = weights.shape[1]
        out = np.zeros((n_keys, g, self.n_params))
        broadcast = weights.strides[1] == 0  # one weight per row, given as a view
        column = weights[:, 0]
        counted = np.flatnonzero(column != 0 if broadcast else np.any(weights != 0, axis=1))
        every = counted.size == len(codes)
        weights, codes = (weights, codes) if every else (weights[counted], codes[counted])
        # one weight per row for all groups
        shared = broadcast or bool(np.all(weights == weights[:, :1]))
        for key, rows in enumerate(_rows_of_keys(codes, n_keys)):
            for term in self.terms:
                coef, basis = term.coef, term.basis
                if not every:
                    coef = coef[counted]
                    basis = basis if basis.ndim == 1 else basis[counted]
                coef, w = coef[rows], weights[rows]
                if basis.ndim == 2:
                    basis = basis[rows]
                summed = _weighted_sum(coef, term.mixing, basis, w, shared)
                if term.fixed is not None:  # those columns' sums: the coefficients' sums x values
                    columns, values = term.fixed
                    one = np.ones(1)
                    summed[:, columns] = _weighted_sum(coef, term.mixing, one, w, shared) * values
                out[key][:, term.at] += summed
        return out


def _weighted_sum(
    coef: FloatArray, mixing: FloatArray, basis: FloatArray, weights: FloatArray, shared: bool
) -> FloatArray:
    """``sum_i weights[i, g] (coef[i] @ mixing[g]) basis[i]``: shape (g, n)."""
    if shared:  # the mixing after the sum over rows: (c x m) products, not (g x m)
        w = weights[:, 0]
        if basis.ndim == 1:
            summed = (w @ coef)[:, None] * basis
        else:
            summed = (w[:, None] * coef).T @ basis
        return mixing @ summed
    with np.errstate(invalid="ignore"):
        scaled = np.where(weights != 0, weights * (coef @ mixing.T), 0.0)
    return np.outer(scaled.sum(axis=0), basis) if basis.ndim == 1 else scaled.T @ basis


def _rows_of_keys(codes: np.ndarray, n_keys: int) -> list[slice | np.ndarray]:
    """The rows of each key (all rows, as a slice, for a single key)."""
    if n_keys == 1:
        return [slice(None)]
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_keys + 1))
    return [order[bounds[key] : bounds[key + 1]] for key in range(n_keys)]
