"""``conftest.Program`` (the fixture ``program``), the traced-program comparison that the
default-is-a-named-setting tests rely on: equal for the same computation, unequal for a
different literal, a different closed-over array (a jaxpr constant) or a different key
constant."""

import jax
import jax.numpy as jnp
import numpy as np


def test_equal_programs_for_the_same_computation(program):
    f = lambda x, s=0.5: jnp.sin(x) * s
    x = jnp.ones(3)
    assert program(f, x) == program(lambda x: jnp.sin(x) * 0.5, x)
    assert program(f, jax.ShapeDtypeStruct((3,), jnp.float32)) == program(f, x)  # traced from shapes alone


def test_a_different_literal_or_shape_is_a_different_program(program):
    x = jnp.ones(3)
    assert program(lambda x: jnp.sin(x) * 0.5, x) != program(lambda x: jnp.sin(x) * 0.25, x)
    assert program(lambda x: jnp.sin(x) * 0.5, x) != program(lambda x: jnp.cos(x) * 0.5, x)
    assert program(lambda x: jnp.sin(x), x) != program(lambda x: jnp.sin(x), jnp.ones(4))


def test_closed_over_arrays_are_compared_by_value_and_dtype(program):
    x = jnp.ones(3)
    big = np.arange(100.0)  # a jaxpr constant, not printed in the jaxpr's text
    with_const = lambda c: (lambda x: x.sum() + jnp.asarray(c).sum())
    assert program(with_const(big), x) == program(with_const(big.copy()), x)
    changed = big.copy()
    changed[7] += 1.0
    assert program(with_const(big), x) != program(with_const(changed), x)
    assert program(with_const(big), x) != program(with_const(big.astype(np.float16)), x)
    keyed = lambda k: (lambda x: x + jax.random.normal(k, x.shape))
    assert program(keyed(jax.random.key(0)), x) == program(keyed(jax.random.key(0)), x)
    assert program(keyed(jax.random.key(0)), x) != program(keyed(jax.random.key(1)), x)
