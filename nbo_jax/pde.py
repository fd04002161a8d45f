"""Differentiable PDE residual operators on scalar functions ``u: R^d -> R`` (PINN-BO:
Phan-Trong 2024, PhD thesis, Ch. 5).

Every operator takes a function of ONE point ``x (d,)`` and returns another function of one
point, built from JAX transformations only, so the result is jit-, vmap- and
grad-compatible: in PINN-BO the residual ``N[h(.; theta)](z)`` is differentiated with respect
to the network parameters ``theta`` (the loss, eq. 5.1, and the NTK-PINN kernel blocks).

Operators return :class:`Field` objects: callables that also support arithmetic with numbers,
arrays, other fields and plain functions, so residuals are one-liners::

    from nbo_jax import pde
    x1, x2 = pde.coordinate(0), pde.coordinate(1)
    drop_wave = lambda u: x1 * pde.partial(u, 1) - x2 * pde.partial(u, 0)     # rotation invariance
    beam = lambda w: pde.partial(pde.Field(EI) * pde.partial(w, 0, 2), 0, 2)  # (EI(x) w'')''
    heat = lambda T: pde.laplacian(T)                                         # Laplace

Cost per point (``C`` = cost of one evaluation of ``u``, ``d`` the dimension):

- :func:`gradient`: one reverse pass, about ``3 C``.
- :func:`partial` of order ``k``: ``k`` nested forward (jvp) passes along ``e_i``, about
  ``2^k C`` without forming any gradient or Hessian.
- :func:`directional`: one jvp along ``v(x)``, about ``2 C`` (cheaper than ``v . grad u``).
- :func:`laplacian`: ``d`` jvp-of-jvp second directional derivatives ``e_i^T H e_i``
  (forward-over-forward), about ``4 d C`` and ``O(d)`` memory; a full Hessian
  (:func:`hessian`, forward-over-reverse ``jacfwd(jacrev)``) costs about ``d`` times a
  Hessian-vector product (``~5 C`` each) and ``O(d^2)`` memory.
- :func:`divergence` of a vector field ``v: R^d -> R^d``: ``d`` jvps, about ``2 d C_v``.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Union

import jax
import jax.numpy as jnp

Array = jax.Array
ScalarFn = Callable[[Array], Array]


class Field:
    """A function of one point ``x (d,)`` (scalar- or vector-valued) with arithmetic.

    ``Field(fn)(x) == fn(x)``; ``+ - * / **`` and unary ``-`` combine fields, plain callables
    (wrapped as fields), and numbers or arrays (constants), pointwise. All operators of this
    module accept and return fields.

    Raises:
        TypeError: ``fn`` (or an arithmetic operand) is neither callable nor a number/array.
    """

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Array], Any]):
        if isinstance(fn, Field):
            fn = fn.fn
        if not callable(fn):
            raise TypeError(f"Field needs a callable f(x), got {type(fn).__name__}")
        self.fn = fn

    def __call__(self, x: Array) -> Array:
        return self.fn(x)

    def __repr__(self) -> str:
        return f"Field({getattr(self.fn, '__name__', self.fn)!r})"

    # ---------------------------------------------------------------- arithmetic
    def _binary(self, other, op, reverse=False) -> "Field":
        other_fn = _as_fn(other)
        if reverse:
            return Field(lambda x: op(other_fn(x), self.fn(x)))
        return Field(lambda x: op(self.fn(x), other_fn(x)))

    __add__ = lambda self, other: self._binary(other, jnp.add)  # noqa: E731
    __radd__ = lambda self, other: self._binary(other, jnp.add, reverse=True)  # noqa: E731
    __sub__ = lambda self, other: self._binary(other, jnp.subtract)  # noqa: E731
    __rsub__ = lambda self, other: self._binary(other, jnp.subtract, reverse=True)  # noqa: E731
    __mul__ = lambda self, other: self._binary(other, jnp.multiply)  # noqa: E731
    __rmul__ = lambda self, other: self._binary(other, jnp.multiply, reverse=True)  # noqa: E731
    __truediv__ = lambda self, other: self._binary(other, jnp.divide)  # noqa: E731
    __rtruediv__ = lambda self, other: self._binary(other, jnp.divide, reverse=True)  # noqa: E731
    __pow__ = lambda self, other: self._binary(other, jnp.power)  # noqa: E731

    def __neg__(self):
        return Field(lambda x: -self.fn(x))


FieldLike = Union[Field, Callable[[Array], Array]]


def _as_fn(value) -> Callable[[Array], Array]:
    """A callable of ``x`` for a field, a function, or a constant (number / array)."""
    if isinstance(value, Field):
        return value.fn
    if callable(value):
        return value
    if isinstance(value, (numbers.Number, jax.Array)) or hasattr(value, "__array__"):
        const = value
        return lambda x: jnp.asarray(const, dtype=jnp.result_type(x, float))
    raise TypeError(f"expected a Field, a function of x or a number/array, got {type(value).__name__}")


def _check_fn(u, name: str = "u") -> Callable[[Array], Array]:
    if not (isinstance(u, Field) or callable(u)):
        raise TypeError(f"{name} must be a function of one point x (d,) (or a pde.Field), got {type(u).__name__}")
    return _as_fn(u)


def _basis(x: Array, i: int) -> Array:
    if i >= x.shape[-1]:
        raise ValueError(f"i: partial derivative along x_{i} of a function of d={x.shape[-1]} inputs "
                         f"(0-based i must be < d)")
    return jnp.zeros_like(x).at[i].set(1.0)


# -------------------------------------------------------------------- building blocks
def coordinate(i: int) -> Field:
    """The field ``x -> x_i`` (0-based ``i``)."""
    if not isinstance(i, int) or i < 0:
        raise ValueError(f"i must be an int >= 0, got {i!r}")
    return Field(lambda x: x[i])


def constant(value) -> Field:
    """The constant field ``x -> value``."""
    return Field(_as_fn(value))


# -------------------------------------------------------------------- operators
def gradient(u: FieldLike) -> Field:
    """``grad u``: ``(d,) -> (d,)`` (one reverse pass)."""
    fn = _check_fn(u)
    return Field(jax.grad(fn))


def partial(u: FieldLike, i: int, order: int = 1) -> Field:
    """``d^order u / dx_i^order`` (0-based ``i``) by ``order`` nested jvps along ``e_i``
    (forward mode; no gradient or Hessian is formed).

    Raises:
        ValueError: ``i < 0`` or ``order < 1``; ``i >= d`` when the field is called.
    """
    if not isinstance(i, int) or i < 0:
        raise ValueError(f"i must be an int >= 0, got {i!r}")
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"order must be an int >= 1, got {order!r}")
    fn = _check_fn(u)
    for _ in range(order):
        fn = _directional_fn(fn, lambda x: _basis(x, i))
    return Field(fn)


def _directional_fn(fn, direction) -> Callable[[Array], Array]:
    def d(x):
        return jax.jvp(fn, (x,), (direction(x).astype(x.dtype),))[1]

    return d


def directional(u: FieldLike, v) -> Field:
    """``v(x) . grad u(x)`` by one jvp along ``v(x)``; ``v`` is a vector field ``(d,) ->
    (d,)`` (a function or :class:`Field`) or a constant vector ``(d,)``."""
    fn = _check_fn(u)
    direction = _as_fn(v)
    return Field(_directional_fn(fn, lambda x: jnp.broadcast_to(direction(x), x.shape)))


def hessian(u: FieldLike) -> Field:
    """The Hessian ``(d,) -> (d, d)`` (forward-over-reverse, ``jax.hessian``)."""
    return Field(jax.hessian(_check_fn(u)))


def laplacian(u: FieldLike) -> Field:
    """``sum_i d^2 u / dx_i^2`` as ``d`` second directional derivatives ``e_i^T H e_i``
    (jvp of jvp, vmapped over the basis; no Hessian is formed)."""
    fn = _check_fn(u)

    def lap(x):
        def second(e):
            first = lambda y: jax.jvp(fn, (y,), (e,))[1]
            return jax.jvp(first, (x,), (e,))[1]

        return jnp.sum(jax.vmap(second)(jnp.eye(x.shape[0], dtype=x.dtype)))

    return Field(lap)


def divergence(v: FieldLike) -> Field:
    """``sum_i d v_i / dx_i`` of a vector field ``v: (d,) -> (d,)`` (``d`` jvps, vmapped)."""
    fn = _check_fn(v, "v")

    def div(x):
        cols = jax.vmap(lambda e: jax.jvp(fn, (x,), (e,))[1])(jnp.eye(x.shape[0], dtype=x.dtype))
        return jnp.trace(cols)

    return Field(div)


def residual(operator: Callable[[Field], FieldLike], source: FieldLike) -> Callable[[FieldLike], Field]:
    """``u -> N[u] - g``: the PDE residual map of an operator ``N`` (a function of a field
    returning a field) and a source ``g`` (a function of ``x`` or a constant)."""
    g = _as_fn(source)
    return lambda u: Field(_as_fn(operator(Field(_check_fn(u))))) - g


__all__ = [
    "Field",
    "coordinate",
    "constant",
    "gradient",
    "partial",
    "directional",
    "hessian",
    "laplacian",
    "divergence",
    "residual",
]
