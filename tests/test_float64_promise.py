"""The README's reproducibility promise, in the settings users run: XLA's default flags (not
the suite's, ``conftest.py``), float64, a size other than the contract test's. A seed run
inside ``jax.vmap`` gives the run of the same seed alone bit for bit for the algorithms the
README names (random search, NeuralTS; Neural-CBO and PINN-BO are covered by the contract
test), here on Ackley-5 over 5 + 25 steps in a fresh process."""

import os
import subprocess
import sys

SCRIPT = r"""
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
import nbo_jax as nbo
p = nbo.benchmarks.get("ackley", dim=5)
keys = jax.random.split(jax.random.key(7), 2)
for algo in (nbo.random_search(), nbo.neural_ts(width=64)):
    many = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, p, n_init=5, n_iter=25)))(keys)
    alone = jax.jit(lambda k: nbo.run_bo(k, algo, p, n_init=5, n_iter=25))(keys[1])
    np.testing.assert_array_equal(np.asarray(many.x[1]), np.asarray(alone.x))
    np.testing.assert_array_equal(np.asarray(many.y[1]), np.asarray(alone.y))
    print(algo.name, "bit for bit")
"""


def test_vmapped_seed_is_the_seed_alone_bit_for_bit_under_xla_defaults():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # XLA's defaults, as users run
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.split("\n")[:2] == ["random bit for bit", "neural-ts bit for bit"]
