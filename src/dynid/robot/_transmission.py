"""How the motors drive the joints: reductions with sign and a coupling matrix.

The one convention, stated here and tested (``tests/test_transmission.py``)::

    theta = G q,   G = diag(r) C,   C[k, k] = 1

``theta`` ``(n,)`` are the motor positions, ``q`` the joint positions; motor k is the motor of
joint k (``G[k, k] = r_k``, its signed reduction) and ``C`` says how much each other joint turns
it (a coupled wrist: ``theta_6 = r_6 (q_6 + c q_5)``, ``C[5, 4] = c``). So ``q = G^-1 theta``,
``dq = G^-1 dtheta`` and, by the power balance ``tau . dq = tau_m . dtheta``, the joint torques
are ``tau = G^T tau_m`` (``tau_m``: motor torques).

A motor's rotor inertia ``I_m`` and its friction act on the motor side: they contribute
``G^T diag(I_m) G ddq`` and ``G^T f_m(dtheta)`` to the joint torques. dynid keeps them in the
units of the joint each motor drives — the reflected rotor inertia ``I_a,k = r_k^2 I_m,k``
(``Robot.rotor_inertia``, as without a coupling) and the friction of motor k as a function of
its speed in joint units, ``u = C dq`` — so that

    G^T diag(I_m) G = C^T diag(I_a) C,     G^T f_m(G dq) = C^T f(C dq)

with ``f`` the robot's per-joint friction model (viscous ``r_k^2 fv_m``, Coulomb
``|r_k| fc_m``, offset ``r_k fo_m``). The reductions then matter only to map motor-side logs
(``dynid.data.to_joint_side``); the model depends on ``C`` alone, and a transmission without
coupling (``C = I``: any diagonal ``G``) is today's per-joint model exactly, every product with
``C`` skipped (``uncoupled``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, frozen_copy

__all__ = ["MAX_REDUCTION", "Transmission"]

# |r_k| and |C[k, j]| at most this: a harmonic drive is ~100-160, a fine ball screw in rad/m a
# few thousand; beyond, a unit slip (a ratio in degrees, a reduction typed as its inverse)
MAX_REDUCTION = 1e6
# cond(C) beyond this: the coupling is singular (a joint no motor moves), not a transmission
MAX_CONDITION = 1e10


@dataclass(frozen=True, eq=False)
class Transmission:
    """How ``n`` motors drive ``n`` joints: ``theta = G q``, ``G = diag(reductions) coupling``
    (module docstring).

    - ``reductions`` ``(n,)``: motor k turns ``r_k`` times per turn of joint k, signed
      (negative: the motor turns the other way), nonzero;
    - ``coupling`` ``(n, n)``: ``C``, unit diagonal; ``C[k, j]`` how far joint j turns motor k
      per turn of joint k (0 for a simple transmission);
    - ``motor_names`` ``(n,)``: the actuators' names (default ``motor1..n``).

    ``Transmission.identity(n)`` is a direct drive per joint (today's model); ``simple``
    gives reductions alone; ``from_matrix`` a full ``G``.
    """

    reductions: NDArray
    coupling: NDArray | None = None
    motor_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        r = as_float_array("reductions", self.reductions)
        if r.ndim != 1 or r.size == 0:
            raise ValueError(f"`reductions` must be a vector of one reduction per joint, got "
                             f"shape {r.shape}")
        n = r.size
        if (r == 0).any():
            k = int(np.argmax(r == 0))
            raise ValueError(f"`reductions`: motor {k + 1} has reduction 0; every motor k "
                             "drives its joint k (signed, nonzero)")
        if (np.abs(r) > MAX_REDUCTION).any():
            k = int(np.argmax(np.abs(r) > MAX_REDUCTION))
            raise ValueError(f"`reductions`: motor {k + 1} has reduction {r[k]:g}, beyond "
                             f"{MAX_REDUCTION:g}; check the value and its unit")
        c = np.eye(n) if self.coupling is None else as_float_array("coupling", self.coupling)
        if c.shape != (n, n):
            raise ValueError(f"`coupling` must have shape ({n}, {n}) for {n} motors, got "
                             f"{c.shape}")
        if not (np.diag(c) == 1.0).all():
            k = int(np.argmax(np.diag(c) != 1.0))
            raise ValueError(f"`coupling` must have a unit diagonal (a motor's own joint is in "
                             f"its reduction); motor {k + 1}: {c[k, k]:g}")
        if (np.abs(c) > MAX_REDUCTION).any():
            raise ValueError(f"`coupling` entries must be at most {MAX_REDUCTION:g} in size, "
                             f"got {np.abs(c).max():g}")
        condition = np.linalg.cond(c)
        if not condition <= MAX_CONDITION:
            raise ValueError(f"`coupling` is singular (condition {condition:.3g}): some joint "
                             "motion turns no motor, or two motors turn alike; check the "
                             "couplings")
        names = tuple(str(s) for s in self.motor_names) or tuple(
            f"motor{k + 1}" for k in range(n))
        if len(names) != n:
            raise ValueError(f"`motor_names` must have {n} names, got {len(names)}")
        if len(set(names)) != n:
            raise ValueError(f"`motor_names` must be distinct, got {list(names)}")
        object.__setattr__(self, "reductions", frozen_copy(r))
        object.__setattr__(self, "coupling", frozen_copy(c))
        object.__setattr__(self, "motor_names", names)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def identity(cls, n: int) -> Transmission:
        """Direct drive: ``theta = q`` (a robot without a stated transmission)."""
        return cls(np.ones(n))

    @classmethod
    def simple(cls, reductions: ArrayLike, motor_names: Sequence[str] = ()) -> Transmission:
        """One motor per joint, ``theta_k = r_k q_k``."""
        return cls(np.asarray(reductions, dtype=float), None, tuple(motor_names))

    @classmethod
    def from_matrix(cls, matrix: ArrayLike, motor_names: Sequence[str] = ()) -> Transmission:
        """From ``G`` ``(n, n)`` (``theta = G q``), whose diagonal must be nonzero: motor k is
        the motor of joint k (order the motors so)."""
        g = as_float_array("matrix", matrix)
        if g.ndim != 2 or g.shape[0] != g.shape[1]:
            raise ValueError(f"`matrix` must be square (n motors, n joints), got {g.shape}")
        r = np.diag(g).copy()
        if (r == 0).any():
            k = int(np.argmax(r == 0))
            raise ValueError(f"`matrix`: G[{k + 1}, {k + 1}] = 0; motor k must drive joint k "
                             "(order the motors so that each one's own joint is on the "
                             "diagonal)")
        coupling = g / r[:, None]
        np.fill_diagonal(coupling, 1.0)
        return cls(r, coupling, tuple(motor_names))

    # --- views --------------------------------------------------------------------------------
    @property
    def n_motors(self) -> int:
        return self.reductions.size

    @property
    def matrix(self) -> NDArray:
        """``G`` ``(n, n)``: ``theta = G q``."""
        return self.reductions[:, None] * self.coupling

    @property
    def uncoupled(self) -> bool:
        """Whether each motor turns with its own joint alone (``C = I``): the model is then
        the per-joint one, whatever the reductions."""
        return bool(np.count_nonzero(self.coupling) == self.n_motors)

    @property
    def direct(self) -> bool:
        """Whether this is direct drive, ``G = I`` (nothing to state in a robot file)."""
        return self.uncoupled and bool((self.reductions == 1.0).all()) and \
            self.motor_names == tuple(f"motor{k + 1}" for k in range(self.n_motors))

    def couplings(self) -> list[tuple[int, int, float]]:
        """The off-diagonal entries ``(motor k, joint j, C[k, j])``, 0-based."""
        rows, cols = np.nonzero(self.coupling - np.eye(self.n_motors))
        return [(int(k), int(j), float(self.coupling[k, j]))
                for k, j in zip(rows, cols, strict=True)]

    # --- motor side <-> joint side ----------------------------------------------------------
    def _joint_array(self, name: str, values: ArrayLike) -> NDArray:
        array = np.asarray(values, dtype=float)
        if array.ndim == 0 or array.shape[-1] != self.n_motors:
            raise ValueError(f"`{name}` must have {self.n_motors} columns (one per motor), got "
                             f"shape {array.shape}")
        return array

    def joint_positions(self, theta: ArrayLike) -> NDArray:
        """``q = G^-1 theta`` ``(*, n)`` from motor positions (or velocities, accelerations)
        ``(*, n)`` [motor rad]."""
        theta = self._joint_array("theta", theta)
        scaled = theta / self.reductions
        if self.uncoupled:
            return scaled
        return np.linalg.solve(self.coupling, scaled.reshape(-1, self.n_motors).T).T \
            .reshape(theta.shape)

    def motor_positions(self, q: ArrayLike) -> NDArray:
        """``theta = G q`` ``(*, n)``."""
        q = self._joint_array("q", q)
        return self.reductions * self.motor_speeds(q)

    def joint_torques(self, motor_torques: ArrayLike) -> NDArray:
        """``tau = G^T tau_m`` ``(*, n)`` from motor torques ``(*, n)``."""
        tau_m = self._joint_array("motor_torques", motor_torques)
        return self.to_joints((tau_m * self.reductions)[..., None])[..., 0]

    def motor_speeds(self, dq: ArrayLike) -> NDArray:
        """Each motor's speed in its joint's units, ``u = C dq`` ``(*, n)`` (``dq`` itself,
        the same array, without coupling): what a motor's friction is a function of."""
        if self.uncoupled:
            return dq
        return np.asarray(dq, dtype=float) @ self.coupling.T

    def to_joints(self, columns: NDArray) -> NDArray:
        """Per-motor columns ``(*, n, p)`` (row k: what motor k exerts, in its joint's units)
        as joint-torque columns ``C^T columns`` (``columns`` itself without coupling)."""
        if self.uncoupled:
            return columns
        return np.einsum("ki,...kp->...ip", self.coupling, columns)

    def rotor_matrix(self, rotor_inertia: ArrayLike) -> NDArray:
        """``C^T diag(I_a) C`` ``(n, n)``: the rotors' share of ``M(q)``."""
        return (self.coupling.T * np.asarray(rotor_inertia, dtype=float)) @ self.coupling

    def describe(self, joint_names: Sequence[str]) -> list[str]:
        """Lines for ``robot show``: each motor's reduction and what it couples."""
        out = []
        for k in range(self.n_motors):
            terms = [f"{joint_names[j]} x {c:g}" for m, j, c in self.couplings() if m == k]
            line = f"  {self.motor_names[k]}: {joint_names[k]} x {self.reductions[k]:g}"
            if terms:
                line += f" (theta = {self.reductions[k]:g} ({joint_names[k]} + " + \
                    " + ".join(terms) + "))"
            out.append(line)
        return out
