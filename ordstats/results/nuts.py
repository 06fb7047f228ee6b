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
) -> FloatArray:
    """NUTS draws of ``target``'s posterior, chains stacked: shape ``(chains * draws, k)``.

    Parameters
    ----------
    target : PosteriorTarget
    mode, hessian : ndarray
        The posterior mode and the Hessian of the negative log posterior there.
    draws, chains, warmup : int
    seed : int

    Returns
    -------
    ndarray
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
        progress_bar=False,
    )
    init = jnp.asarray(np.array(starts)) if chains > 1 else jnp.asarray(starts[0])
    mcmc.run(jax.random.PRNGKey(seed), init_params=init)
    samples = np.asarray(mcmc.get_samples(group_by_chain=True), dtype=float)
    return samples[..., : mode.size].reshape(chains * draws, mode.size)


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
