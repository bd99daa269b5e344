"""The control law that ran, as a value: what the closed-loop twin simulates and what the
simulation-based identification methods (``dynid.identification.simulation``) simulate again
with their estimate.

Two laws, each on a controller model ``M^, c^, g^`` (a ``Robot``, whose friction is not used)
acting on what the encoders report (positions quantised to ``resolution``, velocities as
backward differences of them when ``velocity_from_positions``):

- ``Controller.computed_torque(model, natural_frequency)``:
  ``tau = M^(q) (ddq_d + Kd (dq_d - dq) + Kp (q_d - q)) + c^(q, dq) + g^(q)`` with
  ``Kp = w^2``, ``Kd = 2 w`` (critically damped at natural frequency ``w`` [rad/s] per joint;
  Gilbert et al. 2024, eq. 23-27);
- ``Controller.impedance(stiffness, damping, model=...)``: a joint impedance in torque units,
  ``tau = M^(q) ddq_d + c^(q, dq) + g^(q) + K (q_d - q) + D (dq_d - dq)``; ``model=None`` is a
  pure PD loop (no feedforward), as in BIRDy's TX40 experiments.

The torque is computed once per control period ``1 / rate`` and held while ``substeps`` RK4
steps integrate the plant (None: as many as the plant's fastest dynamics need,
``dynid.simulate._substeps``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, as_vector
from dynid.robot import Robot

__all__ = ["CONTROL_LAWS", "Controller"]

CONTROL_LAWS = ("computed-torque", "impedance")


def _positive(name: str, value: ArrayLike) -> NDArray:
    """A scalar or a vector of finite numbers > 0, read only."""
    array = np.array(as_float_array(name, value), dtype=float)
    if array.ndim > 1 or array.size == 0 or not (array > 0).all():
        raise ValueError(f"`{name}` must be > 0 (a number, or one per joint), got "
                         f"{value!r:.80}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Controller:
    """A control law (see the module); build it with ``computed_torque`` or ``impedance``.

    ``law``: one of ``CONTROL_LAWS``; ``model``: the controller model (None: none, a pure PD
    joint impedance); ``natural_frequency`` [rad/s] (computed torque) or ``stiffness``
    [N m/rad] and ``damping`` [N m s/rad] (impedance), a number for every joint or one per
    joint; ``rate`` [Hz]: the control rate (one logged sample per period); ``substeps``: RK4
    steps per period, or None; ``resolution`` [rad]: the encoders' step (0: exact positions);
    ``velocity_from_positions``: the velocity fed back is the encoders' backward difference.
    """

    law: str
    model: Robot | None = None
    natural_frequency: ArrayLike | None = None
    stiffness: ArrayLike | None = None
    damping: ArrayLike | None = None
    rate: float = 1000.0
    substeps: int | None = None
    resolution: float = 0.0
    velocity_from_positions: bool = False

    def __post_init__(self) -> None:
        if self.law not in CONTROL_LAWS:
            raise ValueError(f"`law` must be one of {CONTROL_LAWS}, got {self.law!r:.60}")
        if self.model is not None and not isinstance(self.model, Robot):
            raise TypeError(f"`model` must be a dynid Robot or None, got "
                            f"{type(self.model).__name__}")
        if self.law == "computed-torque":
            if self.model is None:
                raise ValueError("`model`: computed torque needs a controller model (its M^ "
                                 "scales the feedback)")
            if self.stiffness is not None or self.damping is not None:
                raise ValueError("`stiffness` and `damping` belong to a joint impedance; "
                                 "computed torque takes `natural_frequency`")
            gains = {"natural_frequency": 20.0 if self.natural_frequency is None
                     else self.natural_frequency}
        else:
            if self.natural_frequency is not None:
                raise ValueError("`natural_frequency` belongs to computed torque; a joint "
                                 "impedance takes `stiffness` and `damping`")
            if self.stiffness is None or self.damping is None:
                raise ValueError("a joint impedance needs both `stiffness` and `damping`")
            gains = {"stiffness": self.stiffness, "damping": self.damping}
        for name, value in gains.items():
            array = _positive(name, value)
            if self.model is not None:
                array = as_vector(name, array, self.model.n_joints)
                array.setflags(write=False)
            object.__setattr__(self, name, array)
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)) \
                or not (np.isfinite(rate) and rate > 0):
            raise ValueError(f"`rate` must be a number > 0 Hz, got {rate!r:.60}")
        object.__setattr__(self, "rate", float(rate))
        substeps = self.substeps
        if substeps is not None and not (isinstance(substeps, (int, np.integer))
                                         and not isinstance(substeps, bool) and substeps >= 1):
            raise ValueError(f"`substeps` must be an integer >= 1 or None, got {substeps!r:.60}")
        resolution = self.resolution
        if isinstance(resolution, bool) or not isinstance(resolution, (int, float, np.number)) \
                or not (np.isfinite(resolution) and resolution >= 0):
            raise ValueError(f"`resolution` must be a number >= 0 rad, got {resolution!r:.60}")
        object.__setattr__(self, "resolution", float(resolution))
        if not isinstance(self.velocity_from_positions, (bool, np.bool_)):
            raise ValueError(f"`velocity_from_positions` must be true or false, got "
                             f"{self.velocity_from_positions!r:.60}")

    @classmethod
    def computed_torque(cls, model: Robot, natural_frequency: ArrayLike = 20.0, *,
                        rate: float = 1000.0, substeps: int | None = None,
                        resolution: float = 0.0,
                        velocity_from_positions: bool = False) -> Controller:
        """Computed torque on ``model`` at ``natural_frequency`` w [rad/s] (see the module)."""
        return cls("computed-torque", model, natural_frequency=natural_frequency, rate=rate,
                   substeps=substeps, resolution=resolution,
                   velocity_from_positions=velocity_from_positions)

    @classmethod
    def impedance(cls, stiffness: ArrayLike, damping: ArrayLike, *,
                  model: Robot | None = None, rate: float = 1000.0,
                  substeps: int | None = None, resolution: float = 0.0,
                  velocity_from_positions: bool = False) -> Controller:
        """A joint impedance ``K``, ``D`` on top of ``model``'s feedforward (None: a pure PD
        loop)."""
        return cls("impedance", model, stiffness=stiffness, damping=damping, rate=rate,
                   substeps=substeps, resolution=resolution,
                   velocity_from_positions=velocity_from_positions)

    @property
    def is_impedance(self) -> bool:
        return self.law == "impedance"

    def gains(self, n_joints: int) -> tuple[NDArray, NDArray]:
        """``(Kp, Kd)`` ``(n,)``: ``w^2, 2 w`` (computed torque, in acceleration units) or
        ``K, D`` (impedance, in torque units)."""
        if self.is_impedance:
            return (as_vector("stiffness", self.stiffness, n_joints),
                    as_vector("damping", self.damping, n_joints))
        w = as_vector("natural_frequency", self.natural_frequency, n_joints)
        return w**2, 2 * w

    def model_for(self, robot: Robot) -> Robot:
        """The controller model for the plant ``robot``: its own, or (a pure PD loop) the
        robot's kinematics with no mass, whose feedforward is zero."""
        if self.model is None:
            return robot.with_parameters(np.zeros((robot.n_joints, 10))).with_rotor_inertia(
                np.zeros(robot.n_joints))
        if self.model.n_joints != robot.n_joints:
            raise ValueError(f"`controller`: its model has {self.model.n_joints} joints, "
                             f"`robot` {robot.n_joints}")
        return self.model

    def to_dict(self) -> dict:
        """The law as the log's metadata states it (the model by its name)."""
        gains = ({"stiffness": np.asarray(self.stiffness).tolist(),
                  "damping": np.asarray(self.damping).tolist()} if self.is_impedance
                 else {"natural_frequency": np.asarray(self.natural_frequency).tolist()})
        return {"law": self.law, "model": None if self.model is None else self.model.name,
                **gains, "rate_hz": self.rate, "substeps": self.substeps,
                "resolution": self.resolution,
                "velocity_from_positions": bool(self.velocity_from_positions)}
