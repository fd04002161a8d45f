"""Reproduces a hang of jaxlib's CPU backend in a float64 GP fit, and its cure (issue 23 note).

    uv run python scripts/gp_fit_hang_repro.py matern52      # prints the fit in about 5 s
    XLA_FLAGS=--xla_cpu_enable_concurrency_optimized_scheduler=true \
        uv run python scripts/gp_fit_hang_repro.py matern52  # hangs (every try)

One jitted gp_model.fit: 150 points in 1-D, two starts, 100 Adam steps in a lax.scan (a batched
Cholesky per step). Measured on the 2-core CI VM (jax and jaxlib 0.10.2, as locked): with
XLA's concurrency-optimized scheduler on (XLA's default) the process waits in BlockUntilReady
with every XLA thread idle (gdb), Matern-5/2 every time, RBF in most runs and every
time at --xla_backend_optimization_level=0. With it off, which importing nbo_jax now does
(nbo_jax/_xla_cpu.py), every run finished (Matern-5/2 10 of 10, RBF 5 of 5). --xla_cpu_multi_thread_eigen=false,
--xla_cpu_use_xnnpack=false and --xla_cpu_use_fusion_emitters=false did not help.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from nbo_jax import gp_model as gpm  # noqa: E402  (sets the XLA flag of nbo_jax._xla_cpu)


def main(kind: str) -> None:
    n, d = 150, 1
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.uniform(size=(n, d)))
    y = jnp.asarray(np.sin(6 * np.asarray(u[:, 0])) + 0.03 * rng.normal(size=n))

    def fit(u, y, key):
        warm = jax.tree.map(lambda a: a[None], gpm.default_params(d))
        starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), warm, gpm.random_params(key, 1, d))
        params, lml = gpm.fit(kind, starts, u, y, jnp.ones(n, bool), steps=100, learning_rate=0.05)
        return params.lengthscale, params.noise, lml

    print(jax.jit(fit)(u, y, jax.random.key(0)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "rbf")
