"""Reproduces a hang of jaxlib's CPU backend in the float64 L-BFGS GP fit (issue 23 note).

    uv run python scripts/gp_fit_hang_repro.py rbf        # hangs, or prints the fit in seconds
    uv run python scripts/gp_fit_hang_repro.py matern52   # hung in every try

Measured on the 2-core CI VM (jax and jaxlib 0.10.2, as locked): the hung process waits in
BlockUntilReady with every XLA thread idle (gdb); 7 s of CPU in 300 s of wall time.
RBF at XLA's default level finished in seconds once and hung the next time; with
--xla_backend_optimization_level=0 or 1 (the test conftest sets 0) it hung every time. One jitted
gp_model.fit: 150 points in 1-D, two starts (the neutral point and one random start), L-BFGS.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from nbo_jax import gp_model as gpm  # noqa: E402


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
