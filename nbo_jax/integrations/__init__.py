"""Optional integrations with the tools users already run: asynchronous parallel evaluation
on Ray (:mod:`nbo_jax.integrations.ray`), a Ray Tune searcher
(:mod:`nbo_jax.integrations.ray_tune`) and an Optuna sampler
(:mod:`nbo_jax.integrations.optuna`). Each needs its extra (``pip install 'nbo-jax[ray]'``,
``'nbo-jax[optuna]'``); the core never imports them. :mod:`nbo_jax.integrations.study` (the
asynchronous study the Ray pieces share) needs nothing beyond the core.
"""
