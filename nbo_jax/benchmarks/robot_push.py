"""Robot pushing, 14-D (Wang and Jegelka 2017): two robot hands push two objects toward goals
in a 2-D Box2D simulation; the problem maximizes the reduction of the objects' distances to
their goals (this module's :class:`~nbo_jax.types.Problem` minimizes ``-reward``).

Sources: Wang and Jegelka 2017, "Max-value Entropy Search for Efficient Bayesian
Optimization" (ICML), Section 5 (robot pushing); Wang, Gehring, Kohli and Jegelka 2018,
"Batched Large-scale Bayesian Optimization in High-dimensional Spaces" (AISTATS), Section 5
(the 14-D variant used here); Phan-Trong 2024, PhD thesis, Section 3.5, Figure 3.5. Every
constant below was read from the authors' code, repository ``zi-w/Ensemble-Bayesian-
Optimization`` (commit ``4b978b2bc0779add3085db8169cf58d56c49acac``), files
``test_functions/push_function.py`` (class ``PushReward``: bounds, start and goal positions,
object shapes, the reward) and ``test_functions/push_utils.py`` (world settings, hands,
friction joints, the control law, the step loop); cited as ``push_function.py`` and
``push_utils.py``. The simulator here is our own code on pybox2d (``Box2D`` 2.3.10).

**The 14 parameters** (``x[i]``, box from ``PushReward.xmin/xmax``):

====  ==============================================  ================
 i    meaning                                         box
====  ==============================================  ================
 0,1  hand 1 start position ``(rx, ry)``              ``[-5, 5]^2``
 2,3  hand 1 commanded velocity ``(vx, vy)``          ``[-10, 10]^2``
 4    hand 1 pushing duration (steps = ``int(10 x)``) ``[2, 30]``
 5    hand 1 initial angle (rad)                      ``[0, 2 pi]``
 6-11 the same for hand 2                             same boxes
 12   hand 1 commanded angular velocity (rad/s)       ``[-5, 5]``
 13   hand 2 commanded angular velocity (rad/s)       ``[-5, 5]``
====  ==============================================  ================

**The world** (``push_utils.py``): gravity 0 (a top-down table), sleeping allowed, time step
``1/100`` s, 10 velocity and 10 position iterations per step. A static base (a box of
half-extents ``500 x 500`` at the origin) anchors one ``b2FrictionJoint`` per moving body
(the table's friction); a joint disables collision between the bodies it connects, so
nothing collides with the base. Object 1: a square of half-extents ``0.5 x 0.5`` starting at
``(0, 2)``, goal ``(4, 3.5)``; object 2: a circle of radius 1 starting at ``(0, -2)``, goal
``(-4, 3.5)``; both density 0.05, friction 0.01, friction joint ``maxForce = 5``,
``maxTorque = 2``. Hands: boxes of half-extents ``1 x 0.3``, density 0.1, friction 0.1,
friction joint ``maxForce = 2``, ``maxTorque = 2``. While hand ``k`` pushes (its first
``int(10 x)`` steps) it gets, before each step, the torque ``m (w* - w) 30`` and the force
``m (v* - v) 30`` at its origin (``m`` its mass, ``w``/``v`` its angular/linear velocity,
``w*``/``v*`` the commanded ones); the world runs ``max(steps_1, steps_2) + 100`` steps.
Reward: ``f_max - ||g_1 - p_1|| - ||g_2 - p_2||`` with ``p_k`` the final object positions and
``f_max = ||g_1 - s_1|| + ||g_2 - s_2|| = 11.0727...`` the initial distances.

**Where the authors' code is odd** (behaviour kept unless said otherwise):

- Their velocities get Gaussian noise ``N(0, 0.01^2)`` per call from numpy's global
  generator, so their reward is random. Here the simulator is deterministic (the noise is
  off); :func:`simulate_push` takes the perturbation as an explicit argument
  (``velocity_noise``) for whoever wants the authors' noisy version reproducibly.
- ``PushReward.__call__`` sets ``oshape, osize, bfriction = 'circle', 1, 0.01`` but never
  uses them: the object shapes are hard-coded (the square and the circle above).
- The hand's torque is ``mass * delta_omega * 30``: a mass, not a rotational inertia.
- The duration is truncated (``int(10 x)``), so the reward is piecewise constant in
  ``x[4]`` and ``x[10]`` (steps of 0.1).
- ``PushReward`` opens a pygame window (``b2WorldInterface(True)``); drawing has no effect on
  the physics and is left out.
- The comment of their ``run_simulation`` speaks of a push "pointing from robot location to
  body location"; the direction is the commanded velocity ``x[2:4]`` (``x[8:10]``).

Cost: one simulation takes 120-400 Box2D steps, about 2 ms of CPU on average over the box
(2.2 ms measured on 200 uniform points), run in the calling process. The library starts no
worker processes (a spawn pool re-imports the user's ``__main__`` and dies from a script
without a main guard or from stdin); to simulate in parallel, evaluate ``push_reward`` on Ray
workers with :func:`nbo_jax.integrations.ray.optimize`::

    from nbo_jax.benchmarks import robot_push as rp
    from nbo_jax.integrations.ray import optimize
    study = optimize(lambda x: -rp.push_reward(x), list(zip(rp.LOWER, rp.UPPER)), n_evaluations=200,
                     n_workers=8)
"""

from __future__ import annotations

import functools

import Box2D
import jax
import numpy as np

from nbo_jax._checks import check_positive
from nbo_jax.types import Problem, TaskMetric, make_bounds

from .synthetic import _as_float

__all__ = [
    "DIM",
    "F_MAX",
    "GOALS",
    "LOWER",
    "STARTS",
    "UPPER",
    "evaluate_batch",
    "push_reward",
    "robot_push",
    "simulate_push",
]

SOURCE = ("Wang and Jegelka 2017 (ICML), Section 5; Wang et al. 2018 (AISTATS); code: "
          "github.com/zi-w/Ensemble-Bayesian-Optimization, test_functions/push_function.py, push_utils.py")

DIM = 14
#: ``PushReward.xmin`` / ``xmax`` (push_function.py).
LOWER = np.array([-5., -5., -10., -10., 2., 0., -5., -5., -10., -10., 2., 0., -5., -5.])
UPPER = np.array([5., 5., 10., 10., 30., 2. * np.pi, 5., 5., 10., 10., 30., 2. * np.pi, 5., 5.])
#: ``(2, 2)``: start positions of object 1 (the square) and object 2 (the circle): ``PushReward.sxy``, ``sxy2``.
STARTS = np.array([[0., 2.], [0., -2.]])
#: ``(2, 2)``: goal positions of objects 1 and 2: ``PushReward.gxy``, ``gxy2``.
GOALS = np.array([[4., 3.5], [-4., 3.5]])
#: ``PushReward.f_max``: the sum of the initial distances to the goals (11.0727...).
F_MAX = float(np.linalg.norm(GOALS[0] - STARTS[0]) + np.linalg.norm(GOALS[1] - STARTS[1]))

# push_utils.py, b2WorldInterface: TARGET_FPS = 100, VEL_ITERS, POS_ITERS = 10, 10
_TIME_STEP = 1.0 / 100
_VEL_ITERS, _POS_ITERS = 10, 10
_EXTRA_STEPS = 100          # run_simulation: range(tmax + 100)
_STEPS_PER_UNIT = 10        # push_function.py: simu_steps = int(float(argv[4]) * 10)
_BASE_HALF = (500.0, 500.0)  # make_base(500, 500, world): box=(table_length, table_width)
# push_function.py: body = rectangle (0.5, 0.5), body2 = circle 1; ofriction 0.01, odensity 0.05
_SQUARE_HALF = (0.5, 0.5)
_CIRCLE_RADIUS = 1.0
_OBJECT_FRICTION, _OBJECT_DENSITY = 0.01, 0.05
_OBJECT_JOINT = {"maxForce": 5.0, "maxTorque": 2.0}   # create_body's friction joint
# push_function.py: hand_shape, hand_size = 'rectangle', (1, 0.3); push_utils.py end_effector
_HAND_HALF = (1.0, 0.3)
_HAND_DENSITY, _HAND_FRICTION = 0.1, 0.1
_HAND_JOINT = {"maxForce": 2.0, "maxTorque": 2.0}
_FORCE_UNIT = 30.0          # end_effector: forceunit = 30.0 for a rectangle hand
_TORQUE_UNIT = 30.0         # apply_wrench: torque = mass * delta_avel * 30.0


def _check_point(x, name: str = "x") -> np.ndarray:
    """``x`` as a float64 ``(14,)`` array, finite and inside the box (up to float32 rounding)."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float array of shape ({DIM},)") from None
    if a.shape != (DIM,):
        raise ValueError(f"{name} must have shape ({DIM},), got {a.shape}")
    _check_rows(a[None], name)
    return a


def _check_rows(a: np.ndarray, name: str) -> None:
    bad = np.nonzero(~np.all(np.isfinite(a), axis=1))[0]
    if bad.size:
        raise ValueError(f"{name} has NaN/inf coordinates in row(s) {bad[:10].tolist()}")
    tol = 1e-5 * (UPPER - LOWER)  # float32 rounding of the box (e.g. float32(2 pi) > 2 pi)
    out = (a < LOWER - tol) | (a > UPPER + tol)
    if out.any():
        r, j = (int(v[0]) for v in np.nonzero(out))
        raise ValueError(f"{name} row {r}: coordinate {j} is {float(a[r, j])!r}, outside the box "
                         f"[{float(LOWER[j])!r}, {float(UPPER[j])!r}] of Wang and Jegelka 2017")


def _friction_joint(world, base, body, limits: dict) -> None:
    world.CreateFrictionJoint(bodyA=base, bodyB=body, **limits)


def _add_object(world, base, shape, position):
    body = world.CreateDynamicBody(position=position)
    body.CreateFixture(shape=shape, density=_OBJECT_DENSITY, friction=_OBJECT_FRICTION)
    _friction_joint(world, base, body, _OBJECT_JOINT)
    return body


def _add_hand(world, base, position, angle):
    hand = world.CreateDynamicBody(position=position, angle=angle)
    hand.CreateFixture(shape=Box2D.b2PolygonShape(box=_HAND_HALF), density=_HAND_DENSITY, friction=_HAND_FRICTION)
    _friction_joint(world, base, hand, _HAND_JOINT)
    return hand


def _drive(hand, velocity, omega: float) -> None:
    """One step of the hand's velocity controller (push_utils.py, ``apply_wrench``)."""
    hand.ApplyTorque(hand.mass * (omega - hand.angularVelocity) * _TORQUE_UNIT, wake=True)
    force = hand.mass * (velocity - Box2D.b2Vec2(hand.linearVelocity)) * _FORCE_UNIT
    hand.ApplyForce(force, hand.position, wake=True)


def simulate_push(x, *, velocity_noise=None) -> np.ndarray:
    """Run the pushing simulation for one parameter vector and return the final positions.

    A fresh ``b2World`` per call and no global state, so the same ``x`` gives bit-identical
    positions (Box2D computes in float32; the positions are returned as float64).

    Args:
        x: ``(14,)`` parameters in the box :data:`LOWER`, :data:`UPPER` (module docstring
            table); any float dtype.
        velocity_noise: optional ``(2, 2)`` perturbation added to the commanded velocities
            ``(x[2:4], x[8:10])``, in m/s. The authors draw it from ``N(0, 0.01^2)`` on every
            call (push_utils.py, ``run_simulation``); ``None`` (default) means none, the
            deterministic version.

    Returns:
        ``(2, 2)`` float64: final ``(x, y)`` positions (m) of object 1 (the square, start
        :data:`STARTS` ``[0]``) and object 2 (the circle).

    Raises:
        ValueError: ``x`` not of shape ``(14,)``, NaN/inf, or outside the box (beyond float32
            rounding); ``velocity_noise`` not ``(2, 2)`` finite. TypeError: not numeric.

    Source: Wang and Jegelka 2017, Section 5; push_utils.py (``run_simulation``).
    """
    x = _check_point(x)
    noise = np.zeros((2, 2))
    if velocity_noise is not None:
        noise = np.asarray(velocity_noise, dtype=np.float64)
        if noise.shape != (2, 2) or not np.all(np.isfinite(noise)):
            raise ValueError(f"velocity_noise must be a finite (2, 2) array, got shape {noise.shape}")
    world = Box2D.b2World(gravity=(0.0, 0.0), doSleep=True)
    base = world.CreateStaticBody(position=(0.0, 0.0), shapes=Box2D.b2PolygonShape(box=_BASE_HALF))
    # creation order as in push_function.py: square, circle, hand 1, hand 2
    square = _add_object(world, base, Box2D.b2PolygonShape(box=_SQUARE_HALF), tuple(STARTS[0]))
    circle = _add_object(world, base, Box2D.b2CircleShape(radius=_CIRCLE_RADIUS), tuple(STARTS[1]))
    hands, velocities, omegas, steps = [], [], [], []
    for k, i in enumerate((0, 6)):
        hands.append(_add_hand(world, base, (float(x[i]), float(x[i + 1])), float(x[i + 5])))
        velocities.append(Box2D.b2Vec2(float(x[i + 2] + noise[k, 0]), float(x[i + 3] + noise[k, 1])))
        omegas.append(float(x[12 + k]))
        steps.append(int(float(x[i + 4]) * _STEPS_PER_UNIT))
    for t in range(max(steps) + _EXTRA_STEPS):
        for hand, v, w, n in zip(hands, velocities, omegas, steps):
            if t < n:
                _drive(hand, v, w)
        world.Step(_TIME_STEP, _VEL_ITERS, _POS_ITERS)
    return np.array([tuple(square.position), tuple(circle.position)], dtype=np.float64)


def _reward_from_positions(final: np.ndarray) -> float:
    d1 = float(np.linalg.norm(GOALS[0] - final[0]))
    d2 = float(np.linalg.norm(GOALS[1] - final[1]))
    return F_MAX - d1 - d2


def push_reward(x, *, velocity_noise=None) -> float:
    """The reward of Wang and Jegelka 2017 (Section 5) at one point, to be maximized.

    ``reward = f_max - ||g_1 - p_1|| - ||g_2 - p_2||`` (metres): :data:`F_MAX` is the sum of
    the objects' initial distances to their goals :data:`GOALS`, ``p_k`` the final positions
    from :func:`simulate_push`. It is ``<= F_MAX`` (equality only with both objects exactly on
    their goals) and negative when the objects end farther from their goals than they started.

    Args:
        x: ``(14,)`` parameters in the box (module docstring); velocity_noise: see
            :func:`simulate_push`.

    Returns:
        The reward, a Python float (float64); bit-identical for the same ``x``.

    Raises:
        ValueError / TypeError: as :func:`simulate_push`.
    """
    return _reward_from_positions(simulate_push(x, velocity_noise=velocity_noise))


def evaluate_batch(X) -> np.ndarray:
    """Rewards of a batch of points, simulated one after another in this process.

    Args:
        X: ``(n, 14)`` points in the box (any float dtype; ``n = 0`` allowed).

    Returns:
        ``(n,)`` float64 rewards (to be maximized), each equal to :func:`push_reward` of its
        row bit for bit.

    Raises:
        ValueError: ``X`` not ``(n, 14)``, NaN/inf, or outside the box.
        TypeError: ``X`` not numeric.
    """
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"X must be a float array of shape (n, {DIM})") from None
    if X.ndim != 2 or X.shape[1] != DIM:
        raise ValueError(f"X must have shape (n, {DIM}), got {X.shape}")
    _check_rows(X, "X")
    return np.array([push_reward(r) for r in X], dtype=np.float64)


def _final_best_reward(history) -> np.ndarray:
    return -np.asarray(history["best_f"])[:, -1]


def _best_reward_curve(history) -> np.ndarray:
    return -np.asarray(history["best_f"])


@functools.cache
def _robot_push(noise_std: float) -> Problem:
    def host(x):
        x = np.asarray(x)
        r = evaluate_batch(x.reshape(-1, DIM))
        return (-r).reshape(x.shape[:-1]).astype(x.dtype)

    def objective(x):
        x = _as_float(x)
        if x.shape[-1:] != (DIM,):
            raise ValueError(f"robot_push objective: x must have shape ({DIM},), got {x.shape}")
        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape[:-1], x.dtype), x,
                                 vmap_method="broadcast_all")

    return Problem(
        name="robot_push",
        dim=DIM,
        bounds=make_bounds(LOWER, UPPER, DIM),
        objective=objective,
        noise_std=noise_std,
        optimal_value=-F_MAX,
        metadata={"source": SOURCE, "goals": GOALS.tolist(), "starts": STARTS.tolist(), "f_max": F_MAX,
                  "time_step": _TIME_STEP, "velocity_iterations": _VEL_ITERS, "position_iterations": _POS_ITERS,
                  "velocity_noise": "off (the authors add N(0, 0.01^2) to the commanded velocities)"},
        metric=TaskMetric("best reward", final=_final_best_reward, higher_is_better=True, curve=_best_reward_curve),
    )


def robot_push(*, noise_std: float = 0.0) -> Problem:
    """The 14-D robot-pushing problem (Wang and Jegelka 2017, Section 5) as a minimization
    :class:`~nbo_jax.types.Problem` (cached per arguments).

    ``objective(x) = -push_reward(x)`` for ``x (14,)``, evaluated on the host through
    :func:`jax.pure_callback` (``vmap_method="broadcast_all"``), so it runs inside the
    jit-compiled, vmapped :func:`nbo_jax.run_bo`: one callback receives the whole batch of
    points of a step (every seed) and simulates it with :func:`evaluate_batch`, in this
    process (for parallel simulations see the module docstring: Ray). The value
    has the dtype of ``x`` (float32 by default); points are simulated in float64. Not
    differentiable (no gradient through a callback).

    ``optimal_value = -F_MAX = -11.0727...``: ``F_MAX`` (the sum of the initial distances to
    the goals) is an upper bound on the reward, reached only with both objects exactly on
    their goals; it is not known to be attained, so the "regret" ``f - optimal_value`` is a
    distance-to-goal sum, not a true regret. ``metric``: the best reward found
    (``-best_f``, higher is better).

    Args:
        noise_std: standard deviation of the additive Gaussian observation noise on
            ``-reward`` (metres), ``>= 0``; the simulator itself is deterministic.

    Raises:
        ValueError: ``noise_std`` negative or not finite.
        TypeError: ``noise_std`` not a number.
    """
    return _robot_push(check_positive("noise_std", noise_std, allow_zero=True))
