import jax
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
