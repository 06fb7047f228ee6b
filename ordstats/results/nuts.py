"""NUTS on a Bayesian fit's log posterior, by NumPyro (the ``bayes`` extra).

The log density is ordstats' own (:class:`~ordstats.results.posterior.PosteriorTarget`:
the family's log-likelihood, the mixed model's Laplace/AGQ marginal likelihood, and the
log prior), so NUTS samples exactly the posterior the importance sampler approximates.
JAX calls it through ``jax.pure_callback`` with a custom vector-Jacobian product that
returns ordstats' analytic gradient; NumPyro's NUTS runs on that potential in double
precision (it calls ``numpyro.enable_x64()``, which switches JAX to 64-bit numbers for
the rest of the session), its chains one after the other.  The chains start at the mode, jittered by
draws of the Laplace approximation, with its covariance as the initial inverse mass
matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.errors import SpecificationError

__all__ = ["run_nuts"]

_INSTALL = "pip install 'ordstats[bayes]'"


def _import_numpyro() -> tuple[Any, Any, Any]:
    try:
        import jax
        import jax.numpy as jnp
        import numpyro
    except ImportError:
        raise SpecificationError(
            f"method='nuts' needs NumPyro and JAX (the bayes extra): {_INSTALL}; or use "
            "method='laplace'"
        ) from None
    return jax, jnp, numpyro


def _potential(target: Any, jax: Any, jnp: Any) -> Any:
    """``-log p(x)`` as a JAX function whose gradient is ordstats' analytic one."""

    def host(x: Any) -> tuple[FloatArray, FloatArray]:
        value, grad = target.log_density_and_gradient(np.asarray(x, dtype=float))
        dtype = np.asarray(x).dtype
        if not np.isfinite(value):
            return np.asarray(np.inf, dtype=dtype), np.zeros(np.shape(x), dtype=dtype)
        return np.asarray(-value, dtype=dtype), np.asarray(-grad, dtype=dtype)

    def both(x: Any) -> Any:
        shapes = (
            jax.ShapeDtypeStruct((), x.dtype),
            jax.ShapeDtypeStruct(x.shape, x.dtype),
        )
        return jax.pure_callback(host, shapes, x, vmap_method="sequential")

    @jax.custom_vjp
    def potential(x: Any) -> Any:
        return both(x)[0]

    def forward(x: Any) -> Any:
        value, grad = both(x)
        return value, grad

    def backward(grad: Any, cotangent: Any) -> Any:
        return (cotangent * grad,)

    potential.defvjp(forward, backward)
    return potential


def run_nuts(
    target: Any,
    mode: FloatArray,
    hessian: FloatArray,
    *,
    draws: int,
    chains: int,
    warmup: int,
    seed: int,
    progress: bool = False,
) -> tuple[FloatArray, dict[str, np.ndarray]]:
    """NUTS draws of ``target``'s posterior and the sampler's statistics per draw.

    Parameters
    ----------
    target : PosteriorTarget
    mode, hessian : ndarray
        The posterior mode and the Hessian of the negative log posterior there.
    draws, chains, warmup : int
    seed : int
    progress : bool
        Show NumPyro's progress bar of each chain (warm-up and sampling) on
        standard error.

    Returns
    -------
    draws : ndarray
        Chains stacked: shape ``(chains * draws, k)``.
    stats : dict of str to ndarray
        Per chain and draw, shape ``(chains, draws)``, named as ArviZ's
        ``from_numpyro`` names them (see :func:`sampler_statistics`).
    """
    jax, jnp, numpyro = _import_numpyro()
    from numpyro.infer import MCMC, NUTS

    cov = linalg.inv(hessian)
    cov = 0.5 * (cov + cov.T)
    rng = np.random.default_rng(seed)
    chol = linalg.cholesky(cov, lower=True)
    numpyro.enable_x64()  # JAX's callbacks convert in other threads: a global switch
    potential, n_extra = _native_potential(target, jax, jnp)
    if potential is None:
        potential = _potential(target, jax, jnp)
    if n_extra:  # the random effects of the full mixed model: z = 0, unit scale
        k = mode.size
        full = np.eye(k + n_extra)
        full[:k, :k] = cov
        cov = full
    starts = []
    for _ in range(chains):  # a start inside the support near the mode
        for _attempt in range(20):
            x0 = mode + 0.5 * chol @ rng.standard_normal(mode.size)
            x0 = np.concatenate([x0, 0.1 * rng.standard_normal(n_extra)])
            if np.isfinite(target.log_density(x0[: mode.size])):
                break
        else:  # pragma: no cover - the mode itself is inside
            x0 = np.concatenate([mode, np.zeros(n_extra)])
        starts.append(x0)
    kernel = NUTS(
        potential_fn=potential,
        inverse_mass_matrix=jnp.asarray(cov),
        dense_mass=True,
        adapt_mass_matrix=True,
    )
    mcmc = MCMC(
        kernel,
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method="sequential",
        progress_bar=progress,
    )
    init = jnp.asarray(np.array(starts)) if chains > 1 else jnp.asarray(starts[0])
    mcmc.run(jax.random.PRNGKey(seed), init_params=init, extra_fields=_EXTRA_FIELDS)
    samples = np.asarray(mcmc.get_samples(group_by_chain=True), dtype=float)
    stats = sampler_statistics(mcmc.get_extra_fields(group_by_chain=True))
    return samples[..., : mode.size].reshape(chains * draws, mode.size), stats


_EXTRA_FIELDS = ("diverging", "energy", "potential_energy", "num_steps", "accept_prob")


def sampler_statistics(fields: Any) -> dict[str, np.ndarray]:
    """NumPyro's per-draw NUTS fields under ArviZ's ``sample_stats`` names.

    Parameters
    ----------
    fields : mapping
        ``MCMC.get_extra_fields(group_by_chain=True)`` of :data:`_EXTRA_FIELDS`.

    Returns
    -------
    dict of str to ndarray
        ``diverging`` (bool), ``energy`` (the Hamiltonian, for ``az.plot_energy``
        and ``az.bfmi``), ``lp`` (the log posterior, minus NumPyro's potential
        energy), ``n_steps`` (leapfrog steps), ``tree_depth``
        (``floor(log2(n_steps)) + 1``, as ArviZ's ``from_numpyro``) and
        ``acceptance_rate``.
    """
    n_steps = np.asarray(fields["num_steps"], dtype=np.int64)
    return {
        "diverging": np.asarray(fields["diverging"], dtype=bool),
        "energy": np.asarray(fields["energy"], dtype=float),
        "lp": -np.asarray(fields["potential_energy"], dtype=float),
        "n_steps": n_steps,
        "tree_depth": np.floor(np.log2(np.maximum(n_steps, 1))).astype(np.int64) + 1,
        "acceptance_rate": np.asarray(fields["accept_prob"], dtype=float),
    }


def _native_potential(target: Any, jax: Any, jnp: Any) -> tuple[Any, int]:
    """``-log p`` in JAX (:mod:`ordstats.results.jax_models`) where written, else None."""
    from ordstats.results.jax_models import log_posterior

    arrays = getattr(target, "native_arrays", None)
    if arrays is None:
        return None, 0
    try:
        value, size = log_posterior(arrays())
    except KeyError:
        return None, 0
    k = len(target.param_names)
    return (lambda v: -value(v)), size - k
