"""BO algorithms, each a factory returning a :class:`~nbo_jax.types.BOAlgorithm`."""

from .neural_bo import NeuralBOState, neural_bo
from .random_search import RandomSearchState, random_search

REGISTRY = {
    "neural-bo": neural_bo,
    "random": random_search,
}


def get(name: str, **kwargs):
    """The algorithm named ``name`` (``"neural-bo"``, ``"random"``) built with ``kwargs``.

    Raises:
        ValueError: unknown name (the message lists the known ones).
    """
    key = name.strip().lower().replace("_", "-")
    aliases = {"neuralbo": "neural-bo", "random-search": "random", "rs": "random"}
    key = aliases.get(key, key)
    if key not in REGISTRY:
        raise ValueError(f"algorithm must be one of {sorted(REGISTRY)}, got {name!r}")
    return REGISTRY[key](**kwargs)


__all__ = ["neural_bo", "random_search", "NeuralBOState", "RandomSearchState", "REGISTRY", "get"]
