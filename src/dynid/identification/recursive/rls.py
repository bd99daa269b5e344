"""Recursive least squares with exponential forgetting on the base regressor.

- ``RecursiveLeastSquares``: the estimator on any linear model ``y = Y theta``, fed blocks
  ``Y`` (k, m, r), ``y`` (k, m); the recursion is one compiled kernel per block
  (``_rls_kernel``), started exactly (least squares, by QR, on the first rows that determine
  ``theta``) and carried on in square-root form (``P = S S^T``, Potter's update: without
  forgetting, the batch least-squares estimate to rounding), with forgetting factor
  ``forgetting`` and a bounded-trace guard against covariance wind-up: the forgetting is
  reduced, sample by sample, so that ``trace(P)`` never exceeds ``max_trace`` (default: its
  value when the estimate started). The guard follows the
  constant-trace idea of Lozano Leal & Goodwin (1985, "A globally convergent adaptive pole
  placement algorithm without a persistency of excitation requirement", IEEE TAC 30(8)) and
  Åström & Wittenmark (Adaptive Control, 2nd ed., 1995) on estimator wind-up: without it, a
  pause in the excitation (the arm at rest) lets ``P`` grow as ``lam^-k`` in the directions
  the rest does not excite, and the next sample throws the estimate about.
- ``OnlineRLS``: the same on a robot's base parameters (rigid body, rotor inertias, linear
  friction: the columns of ``identify``): ``update(q, dq, ddq, tau)`` with ``(n,)`` or
  ``(k, n)`` arrays, the block's base regressor built batched by the compiled regressor.
- ``identify_rls(robot, logs)``: the batch face (the estimator contract): the logs fed in
  order, the final estimate as an ``Estimate`` and its history at a decimated rate in
  ``details``.

Feeding a ROS 2 bag (``dynid.data.read_rosbag``) block by block::

    data = with_accelerations(read_rosbag("run.mcap", joints=robot.joint_names))
    rls = OnlineRLS(robot, forgetting=0.999)
    for start in range(0, data.n_samples, 100):
        rows = slice(start, start + 100)
        rls.update(data.q[rows], data.dq[rows], data.ddq[rows], data.tau[rows])
        print(rls.n_samples, rls.coefficients[:3], rls.std[:3])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._progress import Progress
from dynid._validation import as_float_array, as_vector
from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._logs import as_logs
from dynid.identification.estimate import Estimate
from dynid.identification.linear.idim import linear_template
from dynid.identification.recursive import _rls_kernel
from dynid.identification.recursive._threads import one_blas_thread
from dynid.model.base_parameters import default_friction
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot

__all__ = ["OnlineRLS", "RecursiveLeastSquares", "check_forgetting", "identify_rls",
           "joint_block"]

# samples per regressor block of a log (bounds the memory of one block's regressor)
_LOG_BLOCK = 4096


def check_forgetting(forgetting: float) -> float:
    if isinstance(forgetting, bool) or not isinstance(forgetting, (int, float)) or not (
            0.5 <= forgetting <= 1.0):
        raise ValueError(f"`forgetting` must be a number in [0.5, 1], got {forgetting!r:.40}")
    return float(forgetting)


class RecursiveLeastSquares:
    """RLS with exponential forgetting on ``y = Y theta`` (see the module).

    ``n_parameters``: r. ``forgetting``: lam in [0.5, 1] (1: none; 0.999 at 1 kHz forgets
    with a time constant of 1 s). ``max_trace``: the guard's bound on ``trace(P)``; None: its
    value when the estimate started; ``inf``: no guard. ``start``: ``(coefficients, std)``,
    a prior to start from at once (``P = diag(std^2)``, in the units of the weighted rows);
    None: the exact least-squares start on the first rows that determine every coefficient.

    ``coefficients`` (r,) is the current estimate (NaN until started), ``covariance`` ``s^2 P``
    with ``s^2`` the weighted residual sum of squares over ``N_eff - r`` (1 while
    ``N_eff <= r``), ``std`` its diagonal's square root, ``n_samples`` the samples seen.
    """

    def __init__(self, n_parameters: int, *, forgetting: float = 1.0,
                 max_trace: float | None = None,
                 start: tuple[ArrayLike, ArrayLike] | None = None) -> None:
        if isinstance(n_parameters, bool) or not isinstance(n_parameters, (int, np.integer)) \
                or n_parameters < 1:
            raise ValueError(f"`n_parameters` must be an integer >= 1, got {n_parameters!r:.40}")
        r = int(n_parameters)
        self.forgetting = check_forgetting(forgetting)
        if max_trace is not None and not (isinstance(max_trace, (int, float))
                                          and not isinstance(max_trace, bool)
                                          and max_trace > 0):
            raise ValueError(f"`max_trace` must be a number > 0 or None, got {max_trace!r:.40}")
        self._theta = np.full(r, np.nan)
        self._p = np.zeros((r, r))
        self._a = np.zeros((r, r))
        self._b = np.zeros(r)
        bound = -1.0 if max_trace is None else (0.0 if np.isinf(max_trace) else max_trace)
        self._stats = np.array([0.0, 0.0, 0.0, 0.0, 0.0, float(bound)])
        if start is not None:
            coefficients = as_vector("start[0]", start[0], r)
            std = as_vector("start[1]", start[1], r)
            if not (std > 0).all():
                raise ValueError(f"`start[1]` (the prior's std) must be > 0, got {std}")
            self._theta[:] = coefficients
            self._p[:] = np.diag(std)  # the square root S of P = S S^T
            self._stats[3] = 1.0
            if bound < 0:
                self._stats[5] = float(np.sum(std**2))

    @property
    def n_parameters(self) -> int:
        return self._theta.size

    @property
    def n_samples(self) -> int:
        return int(self._stats[2])

    @property
    def started(self) -> bool:
        """Whether the estimate exists (enough rows seen, or a prior given)."""
        return bool(self._stats[3])

    @property
    def max_trace(self) -> float:
        """The guard's bound on ``trace(P)`` (inf: no guard; NaN: not yet set)."""
        bound = self._stats[5]
        return float(np.inf if bound == 0 else np.nan if bound < 0 else bound)

    @property
    def coefficients(self) -> NDArray:
        return self._theta.copy()

    @property
    def scale(self) -> float:
        """``s^2``: the residual variance of the weighted rows (1 while too few rows)."""
        excess = self._stats[1] - self.n_parameters
        return float(self._stats[0] / excess) if excess > 0 and self.started else 1.0

    @property
    def covariance(self) -> NDArray:
        if not self.started:
            return np.full(self._p.shape, np.nan)
        return self.scale * (self._p @ self._p.T)  # P = S S^T (the kernel keeps S)

    @property
    def std(self) -> NDArray:
        if not self.started:
            return np.full(self.n_parameters, np.nan)
        return np.sqrt(self.scale * np.sum(self._p**2, axis=1))

    def update_rows(self, regressor: ArrayLike, target: ArrayLike, *, every: int = 0
                    ) -> tuple[NDArray, NDArray]:
        """Feed k samples: ``regressor`` (k, m, r), ``target`` (k, m), finite. ``every`` > 0:
        return the estimate and its std at every ``every``-th sample seen (counting from the
        first sample ever fed), rows NaN before the start; else two empty arrays."""
        y = as_float_array("regressor", regressor)
        z = as_float_array("target", target)
        r = self.n_parameters
        if y.ndim != 3 or y.shape[2] != r:
            raise ValueError(f"`regressor` must have shape (k, m, {r}), got {y.shape}")
        if z.shape != y.shape[:2]:
            raise ValueError(f"`target` must have shape {y.shape[:2]}, got {z.shape}")
        seen = self.n_samples
        rows = (seen + y.shape[0]) // every - seen // every if every > 0 else 0
        history, history_std = np.empty((rows, r)), np.empty((rows, r))
        with one_blas_thread():
            _rls_kernel.rls_block(np.ascontiguousarray(y), np.ascontiguousarray(z),
                                  self.forgetting, self._theta, self._p, self._a, self._b,
                                  self._stats, int(every), history, history_std,
                                  np.zeros(1, dtype=np.int64))
        return history, history_std


def joint_block(n: int, **arrays: ArrayLike) -> list[NDArray]:
    """Each keyword as a ``(k, n)`` float array: an ``(n,)`` sample or a ``(k, n)`` block, all
    of the same k, finite (a NaN is refused, naming its argument)."""
    out = []
    for name, value in arrays.items():
        array = as_float_array(name, value)
        if array.ndim == 1:
            array = array[None]
        if array.ndim != 2 or array.shape[1] != n:
            raise ValueError(f"`{name}` must have shape ({n},) or (k, {n}), got "
                             f"{np.shape(value)}")
        out.append(np.ascontiguousarray(array))
    sizes = {a.shape[0] for a in out}
    if len(sizes) > 1:
        raise ValueError("`" + "`, `".join(arrays) + "` must hold the same number of samples, "
                         f"got {[a.shape[0] for a in out]}")
    return out


class OnlineRLS:
    """Online RLS on ``robot``'s base parameters (see the module): rigid body, rotor inertias
    (``rotor_inertia``, default: when the robot states some) and the linear ``friction``
    columns (default ``default_friction(robot)``), the layout of ``identify``.

    ``update(q, dq, ddq, tau)`` with ``(n,)`` or ``(k, n)`` arrays; ``coefficients``, ``std``,
    ``covariance``, ``n_samples``, ``model`` (a ``LinearModel`` of the current estimate).
    ``noise_std``: the torque noise per joint [N m] (scalar or (n,)): the rows are weighted by
    its inverse (WLS; the covariance is then in N m units). ``forgetting``, ``max_trace``,
    ``start`` (``(coefficients, std)`` of the base parameters) as in
    ``RecursiveLeastSquares``.
    """

    def __init__(self, robot: Robot, *, friction: FrictionModel | None = None,
                 rotor_inertia: bool | None = None, forgetting: float = 1.0,
                 max_trace: float | None = None, noise_std: ArrayLike = 1.0,
                 start: tuple[ArrayLike, ArrayLike] | None = None) -> None:
        if not isinstance(robot, Robot):
            raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
        friction = default_friction(robot) if friction is None else friction
        if not friction.linear:
            raise ValueError(f"`friction` must be linear in its parameters, got "
                             f"{friction.name!r}")
        rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
        self.template = linear_template(robot, friction, rotor_inertia=rotor)
        self.noise_std = as_vector("noise_std", noise_std, robot.n_joints)
        if not (self.noise_std > 0).all():
            raise ValueError(f"`noise_std` must be > 0, got {self.noise_std}")
        self.estimator = RecursiveLeastSquares(self.template.base.rank, forgetting=forgetting,
                                               max_trace=max_trace, start=start)

    @property
    def robot(self) -> Robot:
        return self.template.robot

    def update(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, tau: ArrayLike, *,
               every: int = 0) -> tuple[NDArray, NDArray]:
        """Feed one sample ``(n,)`` or a block ``(k, n)``; ``every``: see
        ``RecursiveLeastSquares.update_rows``."""
        q, dq, ddq, tau = joint_block(self.robot.n_joints, q=q, dq=dq, ddq=ddq, tau=tau)
        weight = 1.0 / self.noise_std
        regressor = self.template.base_regressor(q, dq, ddq) * weight[:, None]
        return self.estimator.update_rows(regressor, tau * weight, every=every)

    @property
    def n_samples(self) -> int:
        return self.estimator.n_samples

    @property
    def coefficients(self) -> NDArray:
        return self.estimator.coefficients

    @property
    def covariance(self) -> NDArray:
        return self.estimator.covariance

    @property
    def std(self) -> NDArray:
        return self.estimator.std

    @property
    def model(self) -> LinearModel:
        """The current estimate as a model (a ValueError before it has started)."""
        if not self.estimator.started:
            forgetting = self.estimator.forgetting
            raise ValueError(
                f"RLS has not started: {self.n_samples} samples do not determine the "
                f"{self.estimator.n_parameters} base parameters yet"
                + (f" (forgetting {forgetting:g} keeps about {1 / (1 - forgetting):.0f} "
                   "samples in memory: raise it, or excite every joint within that window)"
                   if forgetting < 1 else " (every joint must move, both ways)"))
        return dataclasses.replace(
            self.template, coefficients=self.coefficients, std=self.std,
            report={"method": "rls", "std_kind": "covariance", "n_samples": self.n_samples,
                    "forgetting": self.estimator.forgetting,
                    "max_trace": self.estimator.max_trace})


def identify_rls(robot: Robot, logs: Dataset | Sequence[Dataset], *,
                 friction: FrictionModel | None = None, rotor_inertia: bool | None = None,
                 forgetting: float = 1.0, max_trace: float | None = None,
                 noise_std: ArrayLike = 1.0, history_rate: float = 50.0,
                 start: tuple[ArrayLike, ArrayLike] | None = None,
                 progress: Callable[[str], None] | None = None) -> Estimate:
    """RLS over ``logs`` (one or several, fed in order, one offset shared by all: the
    friction model's), the estimator contract's face of ``OnlineRLS`` (same options).

    The ``Estimate``'s model holds the final coefficients and std; ``details["history"]``
    the estimate at ``history_rate`` Hz of the first log's rate (``t``: the samples' times,
    ``coefficients`` and ``std`` (h, r), NaN before the start); ``progress``: lines
    (``dynid._progress``) every 2 s or so. Logs that do not determine every base parameter
    (the estimate never starts): a ValueError."""
    logs = as_logs(logs)
    if not (isinstance(history_rate, (int, float)) and history_rate > 0):
        raise ValueError(f"`history_rate` must be > 0 Hz, got {history_rate!r:.40}")
    online = OnlineRLS(robot, friction=friction, rotor_inertia=rotor_inertia,
                       forgetting=forgetting, max_trace=max_trace, noise_std=noise_std,
                       start=start)
    for k, log in enumerate(logs):
        if log.n_joints != robot.n_joints:
            raise ValueError(f"`logs[{k}]` has {log.n_joints} joints, `robot` {robot.n_joints}")
    first = logs[0]
    rate = (first.n_samples - 1) / first.duration if first.n_samples > 1 else history_rate
    every = max(1, round(rate / history_rate))
    times, values, stds = [], [], []
    counter = Progress(progress, "rls: samples fed", sum(log.n_samples for log in logs))
    for log in logs:
        for begin in range(0, log.n_samples, _LOG_BLOCK):
            rows = slice(begin, begin + _LOG_BLOCK)
            seen = online.n_samples
            history, history_std = online.update(log.q[rows], log.dq[rows], log.ddq[rows],
                                                 log.tau[rows], every=every)
            # the recorded samples' indices within this block
            picked = np.arange(every - 1 - seen % every, rows.stop - begin, every)
            picked = picked[picked < log.t[rows].size][: history.shape[0]]
            times.append(log.t[rows][picked])
            values.append(history)
            stds.append(history_std)
            counter.update(online.n_samples)
    model = online.model  # a ValueError naming what is missing if RLS never started
    return Estimate(
        "rls", model, 0.0, True, "estimate started and fed every sample",
        iterations=online.n_samples,
        details={"history": {"t": np.concatenate(times), "coefficients": np.concatenate(values),
                             "std": np.concatenate(stds)},
                 "forgetting": online.estimator.forgetting,
                 "max_trace": online.estimator.max_trace, "n_samples": online.n_samples})
