"""Online payload estimation: the arm's model known, the payload on the last link followed by
RLS with forgetting, sample by sample or block by block, as it is picked up and put down.

A payload rigidly fixed to the last link adds its link-frame 10-vector to the link's (Gilbert
et al. 2024, eq. 22; ``dynid.identification.payload``), so the torque the arm's model leaves
unexplained is linear in the payload's parameters:
``tau - tau_arm(q, dq, ddq) = Y_n(q, dq, ddq) phi`` with ``Y_n`` the last link's ten regressor
columns. ``OnlinePayload`` runs ``RecursiveLeastSquares`` (``rls``) on that model: with
forgetting ``lam`` its memory is about ``1 / ((1 - lam) rate)`` seconds, which sets how fast a
change of payload is tracked against how much noise stays in the estimate; the bounded-trace
guard keeps a pause (the arm at rest excites only the mass and first moments) from winding up
the inertia's variance. The estimate is unconstrained (a least-squares 10-vector); its mass,
centre of mass and inertia about the CoM are read off it, and ``identify_payload`` gives the
physically consistent batch fit of a log once the payload is known to be fixed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_vector
from dynid.dynamics import regressor, rnea
from dynid.identification.payload import in_tool_frame
from dynid.identification.recursive.rls import RecursiveLeastSquares, joint_block
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.inertia import MASS, N_LINK_PARAMETERS, to_com

__all__ = ["OnlinePayload"]


class OnlinePayload:
    """The payload on ``arm``'s last link, estimated online (see the module).

    ``arm``: the arm's model without the payload: an identified ``LinearModel`` (its
    prediction, friction included; a stateful fitted friction at steady state) or a ``Robot``
    with its link parameters and friction (a stateful friction at steady state).
    ``forgetting``: lam (default 0.99: a memory of 0.1 s at 1 kHz). ``max_trace``,
    ``start``: as ``RecursiveLeastSquares`` (``start``: ``(phi, std)`` of the payload's
    10-vector). ``noise_std``: the torque noise per joint [N m] (rows weighted by its
    inverse).

    ``update(q, dq, ddq, tau)`` with ``(n,)`` or ``(k, n)`` arrays; ``parameters`` (10,) the
    link-frame 10-vector, ``std``, ``mass``, ``com`` (link frame), ``com_tool``,
    ``inertia_com`` (3, 3), ``n_samples``.
    """

    def __init__(self, arm: LinearModel | Robot, *, forgetting: float = 0.99,
                 max_trace: float | None = None, noise_std: ArrayLike = 1.0,
                 start: tuple[ArrayLike, ArrayLike] | None = None) -> None:
        if isinstance(arm, LinearModel):
            self.robot = arm.robot
        elif isinstance(arm, Robot):
            self.robot = arm
        else:
            raise TypeError(f"`arm` must be a LinearModel or a Robot, got {type(arm).__name__}")
        self.arm = arm
        n = self.robot.n_joints
        self.noise_std = as_vector("noise_std", noise_std, n)
        if not (self.noise_std > 0).all():
            raise ValueError(f"`noise_std` must be > 0, got {self.noise_std}")
        self.estimator = RecursiveLeastSquares(N_LINK_PARAMETERS, forgetting=forgetting,
                                               max_trace=max_trace, start=start)
        self._last = slice(N_LINK_PARAMETERS * (n - 1), N_LINK_PARAMETERS * n)

    def arm_torque(self, q: NDArray, dq: NDArray, ddq: NDArray) -> NDArray:
        """The arm's own torques ``(k, n)`` (no payload)."""
        if isinstance(self.arm, LinearModel):
            return self.arm.predict(q, dq, ddq)
        return rnea(self.arm, q, dq, ddq) + self.arm.friction.torque(dq)

    def update(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, tau: ArrayLike, *,
               every: int = 0) -> tuple[NDArray, NDArray]:
        """Feed one sample ``(n,)`` or a block ``(k, n)`` (finite); ``every``: the estimate
        and its std at every ``every``-th sample (``RecursiveLeastSquares.update_rows``)."""
        q, dq, ddq, tau = joint_block(self.robot.n_joints, q=q, dq=dq, ddq=ddq, tau=tau)
        weight = 1.0 / self.noise_std
        columns = regressor(self.robot, q, dq, ddq)[..., self._last] * weight[:, None]
        residual = (tau - self.arm_torque(q, dq, ddq)) * weight
        return self.estimator.update_rows(columns, residual, every=every)

    @property
    def n_samples(self) -> int:
        return self.estimator.n_samples

    @property
    def parameters(self) -> NDArray:
        """The payload's link-frame 10-vector (NaN until the estimate has started)."""
        return self.estimator.coefficients

    @property
    def std(self) -> NDArray:
        return self.estimator.std

    @property
    def mass(self) -> float:
        return float(self.parameters[MASS])

    @property
    def com(self) -> NDArray:
        """Centre of mass (3,) in the last link's frame [m] (NaN without a positive mass)."""
        phi = self.parameters
        return to_com(phi)[1] if phi[MASS] > 0 else np.full(3, np.nan)

    @property
    def com_tool(self) -> NDArray:
        """Centre of mass (3,) in the tool frame [m] (NaN without a positive mass)."""
        phi = in_tool_frame(self.robot, self.parameters) if self.estimator.started \
            else self.parameters
        return to_com(phi)[1] if phi[MASS] > 0 else np.full(3, np.nan)

    @property
    def inertia_com(self) -> NDArray:
        """Inertia about the CoM (3, 3), link-frame axes [kg m^2] (``dynid.robot.inertia.
        to_com``: Steiner's step from the origin; NaN without a positive mass)."""
        phi = self.parameters
        return to_com(phi)[2] if phi[MASS] > 0 else np.full((3, 3), np.nan)
