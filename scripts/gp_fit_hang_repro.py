"""Reproduces a hang of jaxlib's CPU backend in the float64 L-BFGS GP fit (issue 23 note).

    uv run python scripts/gp_fit_hang_repro.py rbf        # prints the fit in seconds
    XLA_FLAGS=--xla_backend_optimization_level=0 uv run python scripts/gp_fit_hang_repro.py rbf   # hangs
    uv run python scripts/gp_fit_hang_repro.py matern52   # hangs at XLA's default level too

Measured on the 2-core CI VM (jax and jaxlib 0.10.2, as locked): the hung process waits in BlockUntilReady with
every XLA thread idle (gdb); 7 s of CPU in 300 s of wall time.
"""
import sys, jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
from nbo_jax import gp_model as gpm
n=150; rng=np.random.default_rng(0)
u=jnp.asarray(rng.uniform(size=(n,1))); y=jnp.asarray(np.sin(6*np.asarray(u[:,0]))+0.03*rng.normal(size=n))
kind=sys.argv[1]
d=1
def one(u, y, k):
    warm = jax.tree.map(lambda a: a[None], gpm.default_params(d))
    starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), warm, gpm.random_params(k, 1, d))
    p, lml = gpm.fit(kind, starts, u, y, jnp.ones(n, bool), steps=100, learning_rate=0.05)
    return p.lengthscale, p.noise, lml
print(jax.jit(one)(u,y,jax.random.key(0)), flush=True)
