"""The closed loop as dynid stepped it in Python before the compiled loop
(``dynid.simulate._closed_loop``): one sample at a time through the public batched dynamics
(``mass_matrix``, ``rnea``, ``forward_dynamics``) and the friction models' own methods. Kept,
unchanged, as the oracle the compiled loop must match (``tests/test_simulate.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._progress import Progress
from dynid._validation import as_vector
from dynid.data.dataset import Dataset, sample_times
from dynid.dynamics import forward_dynamics, mass_matrix, rnea
from dynid.robot import Robot
from dynid.simulate.twin import SensorModel, _check


class _Diverged(Exception):
    """The closed loop's state or torque left the finite numbers."""


def closed_loop_oracle(robot: Robot, trajectory, *, duration: float, rate: float = 1000.0,
                       natural_frequency: ArrayLike | None = None,
                       stiffness: ArrayLike | None = None, damping: ArrayLike | None = None,
                       controller: Robot | None = None, sensor: SensorModel | None = None,
                       substeps: int = 2, start: float = 0.0, seed: int = 0,
                       progress: Callable[[str], None] | None = None) -> Dataset:
    """Closed-loop tracking of ``trajectory`` by the truth ``robot`` (see the module).

    ``controller``: the model inside the control law (default: the truth without friction —
    a perfect rigid-body model); ``natural_frequency`` w [rad/s] per joint sets
    ``Kp = w^2``, ``Kd = 2 w`` (default w = 20 rad/s); or ``stiffness`` K [N m/rad] and
    ``damping`` D [N m s/rad] per joint, a joint impedance instead of the computed-torque
    feedback; the torque is held over each period ``1 / rate`` and the
    dynamics integrated by ``substeps`` RK4 steps per period, from the reference state at
    ``start`` [s]. The dataset's metadata holds the tracking error (RMS per joint).
    ``progress`` receives a line every few seconds (samples done, time left).
    """
    _check(robot, trajectory)
    controller = robot if controller is None else controller
    if controller.n_joints != robot.n_joints:
        raise ValueError("`controller` must have the robot's joints")
    n = robot.n_joints
    impedance = stiffness is not None or damping is not None
    if impedance and natural_frequency is not None:
        raise ValueError("give `natural_frequency` (computed torque) or `stiffness` and "
                         "`damping` (joint impedance), not both")
    if impedance:
        if stiffness is None or damping is None:
            raise ValueError("a joint impedance needs both `stiffness` and `damping`")
        kp, kd = as_vector("stiffness", stiffness, n), as_vector("damping", damping, n)
        if (kp <= 0).any() or (kd <= 0).any():
            raise ValueError(f"`stiffness` and `damping` must be > 0, got {kp} and {kd}")
        gains = {"stiffness": kp.tolist(), "damping": kd.tolist()}
    else:
        w = as_vector("natural_frequency", 20.0 if natural_frequency is None
                      else natural_frequency, n)
        if (w <= 0).any():
            raise ValueError(f"`natural_frequency` must be > 0, got {w}")
        kp, kd = w**2, 2 * w
        gains = {"natural_frequency": w.tolist()}
    if not (isinstance(substeps, int) and substeps >= 1):
        raise ValueError(f"`substeps` must be an integer >= 1, got {substeps}")
    t = sample_times(duration, rate, start)
    q_d, dq_d, ddq_d = trajectory.sample(t)
    friction = robot.friction
    h = 1.0 / rate / substeps

    def derivative(state: NDArray, tau: NDArray) -> NDArray:
        if not (np.isfinite(state).all() and np.isfinite(tau).all()):
            raise _Diverged
        q, dq, z = state[:n], state[n:2 * n], state[2 * n:]
        if friction.stateful:
            tau_f, dz = friction.torque_with_state(dq, z), friction.state_derivative(dq, z)
        else:
            tau_f, dz = friction.torque(dq[None])[0], np.zeros(n)
        ddq = forward_dynamics(robot, q, dq, tau - tau_f)
        return np.concatenate([dq, ddq, dz])

    sensor = sensor or SensorModel()
    resolution = sensor.position_resolution
    # a stateful friction starts at its steady state, as in the open loop
    z0 = (friction.states_along(t[:1], dq_d[:1])[0] if friction.stateful else np.zeros(n))
    state = np.concatenate([q_d[0], dq_d[0], z0])
    q_log, dq_log, ddq_log, tau_log = (np.empty((t.size, n)) for _ in range(4))
    measured_previous = None
    meter = Progress(progress, "closed-loop simulation", t.size)
    for k in range(t.size):
        meter.update(k)
        q, dq = state[:n], state[n:2 * n]
        # the controller acts on what the encoders report, as on the real robot
        measured = np.round(q / resolution) * resolution if resolution > 0 else q
        rate_measured = dq
        if sensor.velocity_from_positions and measured_previous is not None:
            rate_measured = (measured - measured_previous) * rate
        measured_previous = measured
        feedback = kd * (dq_d[k] - rate_measured) + kp * (q_d[k] - measured)
        if impedance:
            tau = (mass_matrix(controller, measured) @ ddq_d[k] + feedback
                   + rnea(controller, measured, rate_measured, np.zeros(n)))
        else:
            tau = (mass_matrix(controller, measured) @ (ddq_d[k] + feedback)
                   + rnea(controller, measured, rate_measured, np.zeros(n)))
        q_log[k], dq_log[k], tau_log[k] = q, dq, tau
        try:
            first = derivative(state, tau)  # the first RK4 stage, and the logged acceleration
            ddq_log[k] = first[n:2 * n]
            if k + 1 < t.size:
                for substep in range(substeps):
                    k1 = first if substep == 0 else derivative(state, tau)
                    k2 = derivative(state + 0.5 * h * k1, tau)
                    k3 = derivative(state + 0.5 * h * k2, tau)
                    k4 = derivative(state + h * k3, tau)
                    state = state + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if not np.isfinite(state).all():
                raise _Diverged
        except _Diverged:
            raise ValueError(
                f"the closed loop diverged at t = {t[k]:.3f} s: lower the gains "
                "(`natural_frequency`, or `stiffness` and `damping`) or raise `rate` / "
                "`substeps`") from None
    meter.update(t.size)
    error = np.sqrt(np.mean((q_log - q_d) ** 2, axis=0))
    return sensor.record(
        t, q_log, dq_log, ddq_log, tau_log, np.random.default_rng(seed),
        {"robot": robot.name, "source": "digital twin (closed loop, "
         f"{'joint impedance' if impedance else 'computed torque'})", "rate_hz": rate,
         **gains, "friction": friction.name,
         "controller": controller.name, "tracking_rms": error.tolist(), "seed": seed})
