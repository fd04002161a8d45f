import os

# The tests are dominated by XLA compilation (small sizes, many programs): LLVM optimization
# level 0 compiles faster (measured: 3 contract tests 55 s -> 44 s) and changes no semantics
# (IEEE arithmetic, no fast-math). Test runs only; benchmarks and users keep XLA's default.
# The same holds for XLA's older CPU code generation (loop emitters instead of the MLIR fusion
# emitters) and a single LLVM module per program: the contract file on 2 workers took 175 s
# with only level 0 and 87 s with all three (the float64 vmapped-equals-alone identities all hold).
# Test runs only: users, benchmarks and notebooks run outside the tests keep XLA's defaults.
# The last flag: one XLA thread per test process. The xdist workers already fill the cores, and
# XLA's own thread pool on top of them oversubscribes the CPU (a vmapped GP fit measured 17 s
# alone and 540 s beside another worker). In every test process, not only in the workers: the
# golden float64 histories were recorded so, and a test file run alone without it computed
# adaptive-basis's history differently (tests/test_golden.py failed alone, passed in workers).
# Set before jax is imported. (Only "--" flags: XLA stops reading XLA_FLAGS at the first token
# without "--", and aborts when the first token lacks it; an "intra_op_parallelism_threads=1"
# that stood here was never read, and hid every flag appended after it.)
_TEST_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false",
               "--xla_cpu_parallel_codegen_split_count=1", "--xla_cpu_multi_thread_eigen=false")
for _flag in _TEST_FLAGS:
    if _flag.split("=")[0] not in os.environ.get("XLA_FLAGS", ""):  # a user's own setting wins
        os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), _flag]).strip()

import jax
import numpy as np
import pytest


@pytest.fixture
def x64():
    """Run a test in float64 (DESIGN.md: every numerical identity is also checked in x64)."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)



def _map_count_and_limit() -> tuple[int, int]:
    try:
        with open("/proc/self/maps") as f:
            n = sum(1 for _ in f)
        with open("/proc/sys/vm/max_map_count") as f:
            return n, int(f.read())
    except OSError:  # not Linux
        return 0, 1


@pytest.fixture(autouse=True)
def _release_compiled_programs():
    """Drop JAX's compiled programs once this process holds half of Linux's memory-mapping
    limit. Every loaded XLA CPU executable holds memory mappings (a compiled ``run_bo`` about
    1000-1400) and JAX's caches, ``run_bo``'s among them, keep every program alive, so a test
    worker that compiles a few dozen BO loops reaches ``vm.max_map_count`` (65530) and the
    next compilation segfaults in ``backend_compile_and_load``
    (``scripts/map_count_repro.py``)."""
    yield
    n, limit = _map_count_and_limit()
    if n > limit // 2:
        jax.clear_caches()


@pytest.fixture
def compiled():
    """``compiled(algorithm)``: the algorithm with ``init`` (static ``capacity``), ``ask``,
    ``tell`` and ``surrogate`` jit-compiled, for tests that call them one by one: run eagerly
    (op by op) they cost several times their compile (a GP's ``init``: 9.5 s eager, 1.5 s
    compiled). Tests of eager behaviour (errors raised at the call) use the algorithm itself."""

    def make(algorithm):
        return algorithm._replace(init=jax.jit(algorithm.init, static_argnames=("capacity",)),
                                  ask=jax.jit(algorithm.ask), tell=jax.jit(algorithm.tell),
                                  surrogate=None if algorithm.surrogate is None else jax.jit(algorithm.surrogate))

    return make


class Program:
    """A function's closed jaxpr at given arguments (traced, never compiled): two are equal
    when their jaxprs print the same and their constants are equal arrays of the same dtype.
    Equal programs compute the same values bit for bit under one compiler, so a test that an
    option's default is a named setting compares the two programs instead of compiling and
    running both (CI time: a trace costs a fraction of a compile)."""

    def __init__(self, f, *args, **kwargs):
        closed = jax.make_jaxpr(f)(*args, **kwargs)
        self.text = str(closed.jaxpr)
        self.consts = tuple(self._concrete(c) for c in closed.consts)

    @staticmethod
    def _concrete(c):
        if isinstance(c, jax.Array) and jax.dtypes.issubdtype(c.dtype, jax.dtypes.prng_key):
            c = jax.random.key_data(c)
        return np.asarray(c) if hasattr(c, "dtype") else c

    def __eq__(self, other):
        if not isinstance(other, Program):
            return NotImplemented
        return self.text == other.text and len(self.consts) == len(other.consts) and all(
            (a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True))
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) else type(a) is type(b) and a == b
            for a, b in zip(self.consts, other.consts))

    def __repr__(self):
        return f"Program({len(self.text)} characters, {len(self.consts)} constants)"


@pytest.fixture
def program():
    """``program(f, *args)``: :class:`Program`, ``f``'s jaxpr at ``args`` (arrays or
    ``jax.ShapeDtypeStruct``s, e.g. a state from ``jax.eval_shape``), for ``==``."""
    return Program


@pytest.fixture
def benchmark_script():
    """``load(name)``: the script ``benchmarks/<name>.py`` imported as a module (tests share
    code with the benchmarks instead of copying it)."""
    import importlib.util
    import pathlib

    def load(name: str):
        import sys

        folder = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
        if str(folder) not in sys.path:  # the scripts import their shared driver (_study.py)
            sys.path.append(str(folder))
        path = folder / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
