"""External contacts for the twin: a force (and moment) on a link over a time interval.

A ``Contact`` pushes on ``link`` at ``point`` (link coordinates, m) with ``force`` [N] and
``moment`` [N m] given in the base frame, from ``start`` for ``duration`` seconds (``inf``: to
the end of the log): a short pulse at the tool, or a constant push. Its joint torques are

    tau_ext = J(q)^T (force, moment)

with ``J`` the Jacobian of the point's linear velocity and of the link's angular velocity in
the base frame (pinocchio's ``LOCAL_WORLD_ALIGNED`` frame Jacobian). For joint j up to the
contact's link, with base-frame axis ``w_j = R_j zeta_j`` and origin velocity ``v_j = R_j eta_j``
per unit rate (``dynid.dynamics._chain``), ``tau_j = force . (v_j + w_j x (x - o_j))
+ moment . w_j`` where ``x`` is the point and ``o_j`` link j's origin in the base frame.

The truth's dynamics then read ``M q'' + c + g + tau_f = tau + tau_ext``: the closed loop adds
``tau_ext`` to the applied torque at every RK4 stage (``_closed_loop.run_block`` calls
``external_torques_given_poses``, a compiled leaf, with the poses the stage computed), the open
loop logs ``tau = rnea + tau_f - tau_ext`` (``external_torques``, batched).

A contact table row (what the compiled loop reads) is ``TABLE_COLUMNS``: start, stop, 0-based
link, point (3), force (3), moment (3).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._jit import kernel
from dynid._validation import as_float_array, as_vector, is_index
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics.kinematics import forward_kinematics
from dynid.robot import Robot

__all__ = ["TABLE_COLUMNS", "Contact", "contact_table", "external_torques", "parse_contact"]

TABLE_COLUMNS = ("start", "stop", "link", "px", "py", "pz", "fx", "fy", "fz", "mx", "my", "mz")


@dataclass(frozen=True)
class Contact:
    """A wrench on the robot from ``start`` [s] for ``duration`` [s] (``inf``: to the end).

    - ``force`` ``(3,)`` [N] and ``moment`` ``(3,)`` [N m]: in the base frame (the moment is a
      pure couple, added to the force's own moment about the point);
    - ``link``: a link name or its 1-based number (link k moves with joint k); None: the last;
    - ``point`` ``(3,)`` [m]: where the force acts, in the link's frame; None: the robot's
      tool point (``robot.tool``) on the last link, the link's origin on any other.

    ``Contact.pulse(1.0, (0, 0, -10))`` is a 10 N downward pulse of 50 ms at the tool;
    ``Contact(2.0, force=(5, 0, 0))`` a constant 5 N push from 2 s on.
    """

    start: float
    duration: float = math.inf
    force: ArrayLike = (0.0, 0.0, 0.0)
    moment: ArrayLike = (0.0, 0.0, 0.0)
    link: int | str | None = None
    point: ArrayLike | None = None

    def __post_init__(self) -> None:
        start = as_float_array("start", self.start)
        if start.ndim != 0:
            raise ValueError(f"`start` must be one time [s], got shape {start.shape}")
        duration = as_float_array("duration", self.duration, allow_inf=True)
        if duration.ndim != 0 or not duration > 0:
            raise ValueError(f"`duration` must be one time > 0 s (inf: to the end), got "
                             f"{self.duration!r:.40}")
        object.__setattr__(self, "start", float(start))
        object.__setattr__(self, "duration", float(duration))
        for name in ("force", "moment"):
            object.__setattr__(self, name, _frozen(as_vector(name, getattr(self, name), 3)))
        if self.point is not None:
            object.__setattr__(self, "point", _frozen(as_vector("point", self.point, 3)))
        link = self.link
        if link is not None and not isinstance(link, str) and not (
                isinstance(link, (int, np.integer)) and not isinstance(link, bool) and link >= 1):
            raise TypeError(f"`link` must be a link name or a 1-based link number, got "
                            f"{link!r:.40}")
        if isinstance(link, np.integer):
            object.__setattr__(self, "link", int(link))
        if not (np.any(self.force != 0) or np.any(self.moment != 0)):
            raise ValueError("a contact needs a nonzero `force` or `moment`")

    @classmethod
    def pulse(cls, start: float, force: ArrayLike, duration: float = 0.05, **kwargs) -> Contact:
        """A short force pulse (default 50 ms) at the tool (or ``link``, ``point``)."""
        return cls(start, duration, force, **kwargs)

    @property
    def stop(self) -> float:
        """When the contact ends [s] (inf: never)."""
        return self.start + self.duration

    def link_index(self, robot: Robot) -> int:
        """The 0-based link of ``robot`` this contact pushes on."""
        n = robot.n_joints
        if self.link is None:
            return n - 1
        if isinstance(self.link, str):
            if self.link not in robot.link_names:
                raise ValueError(f"`link`: {self.link!r:.40} is no link of {robot.name!r} "
                                 f"({', '.join(robot.link_names)})")
            return robot.link_names.index(self.link)
        if self.link > n:
            raise ValueError(f"`link` must be 1..{n} for {robot.name!r}, got {self.link}")
        return self.link - 1

    def point_on(self, robot: Robot) -> NDArray:
        """The point [m] in the link's frame (the default resolved for ``robot``)."""
        if self.point is not None:
            return np.array(self.point)
        if self.link_index(robot) == robot.n_joints - 1:
            return np.array(robot.tool[:3, 3])
        return np.zeros(3)

    def to_dict(self, robot: Robot, end: float | None = None) -> dict:
        """The truth as plain data (a dataset's ``contacts`` metadata): ``stop`` is clipped to
        ``end`` [s] when the contact lasts to the end of the log."""
        index = self.link_index(robot)
        stop = self.stop if end is None or math.isfinite(self.stop) else max(end, self.start)
        return {"start": self.start, "stop": stop,
                "duration": self.duration if math.isfinite(self.duration) else None,
                "link": index + 1, "link_name": robot.link_names[index],
                "point": self.point_on(robot).tolist(), "force": self.force.tolist(),
                "moment": self.moment.tolist()}


def _frozen(array: NDArray) -> NDArray:
    out = np.array(array, dtype=float)
    out.setflags(write=False)
    return out


def _as_contacts(contacts) -> tuple[Contact, ...]:
    if contacts is None:
        return ()
    if isinstance(contacts, Contact):
        return (contacts,)
    if isinstance(contacts, (str, bytes)) or not isinstance(contacts, Sequence):
        raise TypeError(f"`contacts` must be a sequence of dynid.simulate.Contact, got "
                        f"{type(contacts).__name__}")
    for k, contact in enumerate(contacts):
        if not isinstance(contact, Contact):
            raise TypeError(f"`contacts[{k}]` must be a dynid.simulate.Contact, got "
                            f"{type(contact).__name__}")
    return tuple(contacts)


def contact_table(robot: Robot, contacts: Sequence[Contact] | None) -> NDArray:
    """``(m, 12)`` C array, one row per contact (``TABLE_COLUMNS``), for the compiled loop;
    ``(0, 12)`` without contacts. A contact lasting to the end has ``stop = inf``."""
    rows = [[c.start, c.stop, float(c.link_index(robot)), *c.point_on(robot), *c.force,
             *c.moment] for c in _as_contacts(contacts)]
    return np.ascontiguousarray(np.array(rows, dtype=float).reshape(len(rows),
                                                                    len(TABLE_COLUMNS)))


@kernel
def external_torques_given_poses(table, time, zeta, eta, rot, pos, frame_rot, frame_pos, out):
    """``out (n,) <- sum over the contacts active at ``time`` of J^T (force, moment)``, given
    every link's pose in its parent (``rot``, ``pos`` from ``_poses``). ``frame_rot``
    ``(n, 3, 3)`` and ``frame_pos`` ``(n, 3)`` are workspace (the base-frame poses). A leaf:
    it calls nothing that is not inlined."""
    n = zeta.shape[0]
    for i in range(n):
        out[i] = 0.0
    deepest = -1
    for c in range(table.shape[0]):
        if table[c, 0] <= time < table[c, 1] and int(table[c, 2]) > deepest:
            deepest = int(table[c, 2])
    if deepest < 0:
        return
    for i in range(deepest + 1):  # base-frame poses of the links up to the deepest contact
        for r in range(3):
            for col in range(3):
                if i == 0:
                    frame_rot[i, r, col] = rot[i, r, col]
                else:
                    frame_rot[i, r, col] = (frame_rot[i - 1, r, 0] * rot[i, 0, col]
                                            + frame_rot[i - 1, r, 1] * rot[i, 1, col]
                                            + frame_rot[i - 1, r, 2] * rot[i, 2, col])
            if i == 0:
                frame_pos[i, r] = pos[i, r]
            else:
                frame_pos[i, r] = (frame_pos[i - 1, r] + frame_rot[i - 1, r, 0] * pos[i, 0]
                                   + frame_rot[i - 1, r, 1] * pos[i, 1]
                                   + frame_rot[i - 1, r, 2] * pos[i, 2])
    for c in range(table.shape[0]):
        if not table[c, 0] <= time < table[c, 1]:
            continue
        link = int(table[c, 2])
        px0, py0, pz0 = table[c, 3], table[c, 4], table[c, 5]
        x0 = (frame_pos[link, 0] + frame_rot[link, 0, 0] * px0 + frame_rot[link, 0, 1] * py0
              + frame_rot[link, 0, 2] * pz0)
        x1 = (frame_pos[link, 1] + frame_rot[link, 1, 0] * px0 + frame_rot[link, 1, 1] * py0
              + frame_rot[link, 1, 2] * pz0)
        x2 = (frame_pos[link, 2] + frame_rot[link, 2, 0] * px0 + frame_rot[link, 2, 1] * py0
              + frame_rot[link, 2, 2] * pz0)
        fx, fy, fz = table[c, 6], table[c, 7], table[c, 8]
        mx, my, mz = table[c, 9], table[c, 10], table[c, 11]
        for j in range(link + 1):
            wx = wy = wz = vx = vy = vz = 0.0
            for col in range(3):
                wx += frame_rot[j, 0, col] * zeta[j, col]
                wy += frame_rot[j, 1, col] * zeta[j, col]
                wz += frame_rot[j, 2, col] * zeta[j, col]
                vx += frame_rot[j, 0, col] * eta[j, col]
                vy += frame_rot[j, 1, col] * eta[j, col]
                vz += frame_rot[j, 2, col] * eta[j, col]
            dx, dy, dz = x0 - frame_pos[j, 0], x1 - frame_pos[j, 1], x2 - frame_pos[j, 2]
            # velocity of the point per unit rate: v + w x d
            px = vx + wy * dz - wz * dy
            py = vy + wz * dx - wx * dz
            pz = vz + wx * dy - wy * dx
            out[j] += fx * px + fy * py + fz * pz + mx * wx + my * wy + mz * wz


def external_torques(robot: Robot, q: ArrayLike, t: ArrayLike,
                     contacts: Sequence[Contact] | None) -> NDArray:
    """``tau_ext = J(q)^T (force, moment)`` ``(N, n)`` of the contacts active at each time
    ``t`` ``(N,)`` (batched; zero where none is)."""
    q = as_float_array("q", q)
    t = as_float_array("t", t)
    n = robot.n_joints
    if q.ndim != 2 or q.shape[1] != n or t.shape != (q.shape[0],):
        raise ValueError(f"`q` must have shape (N, {n}) and `t` (N,), got {q.shape} and "
                         f"{t.shape}")
    table = contact_table(robot, contacts)
    out = np.zeros(q.shape)
    active_any = np.zeros(t.size, dtype=bool)
    for row in table:
        active_any |= (row[0] <= t) & (t < row[1])
    rows = np.flatnonzero(active_any)
    if rows.size == 0:
        return out
    chain = chain_arrays(robot)
    poses = forward_kinematics(robot, q[rows])  # (m, n, 4, 4): only where a contact acts
    rotations, origins = poses[..., :3, :3], poses[..., :3, 3]
    axes = np.einsum("mjab,jb->mja", rotations, chain.zeta)
    rates = np.einsum("mjab,jb->mja", rotations, chain.eta)
    for row in table:
        active = (row[0] <= t[rows]) & (t[rows] < row[1])
        link = int(row[2])
        x = np.einsum("mab,b->ma", rotations[active, link], row[3:6]) + origins[active, link]
        w = axes[active, : link + 1]
        velocity = rates[active, : link + 1] + np.cross(w, x[:, None] - origins[active,
                                                                                 : link + 1])
        out[rows[active], : link + 1] += velocity @ row[6:9] + w @ row[9:12]
    return out


# --- the command line's contact specifications ---------------------------------------------
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SPEC = re.compile(
    rf"^(?P<start>{_NUMBER})(?P<start_unit>ms|s)?"
    rf"(?:\+(?P<duration>{_NUMBER})(?P<duration_unit>ms|s)?)?"
    rf":(?P<wrench>{_NUMBER}(?:,{_NUMBER}){{2}}(?:,{_NUMBER}){{0,3}})"
    r"(?::(?P<link>[^@:]+))?"
    rf"(?:@(?P<point>{_NUMBER},{_NUMBER},{_NUMBER}))?$")
SPEC_SYNTAX = "START[+DURATION]:FX,FY,FZ[,MX,MY,MZ][:LINK][@PX,PY,PZ]"


def parse_contact(text: str) -> Contact:
    """A contact from its command-line form ``SPEC_SYNTAX``: times in s (or with ``ms``/``s``),
    the force [N] (and moment [N m]) in the base frame, LINK a name or 1-based number (default
    the last), the point [m] in the link's frame (default the tool point on the last link, else
    the link's origin). Without ``+DURATION`` the push lasts to the end. Examples:
    ``1.0+50ms:0,0,-10`` (a 10 N pulse at the tool), ``3:5,0,0:4@0,0,0.1``."""
    match = _SPEC.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r:.60} is not {SPEC_SYNTAX} (e.g. 1.0+50ms:0,0,-10)")

    def seconds(value: str, unit: str | None) -> float:
        return float(value) * (1e-3 if unit == "ms" else 1.0)

    wrench = [float(v) for v in match["wrench"].split(",")]
    if len(wrench) not in (3, 6):
        raise ValueError(f"{text!r:.60}: give 3 force components (or 3 force and 3 moment), "
                         f"got {len(wrench)}")
    link: int | str | None = match["link"]
    if link is not None and is_index(link):
        link = int(link)
    if link == 0:
        raise ValueError(f"{text!r:.60}: links count from 1")
    return Contact(
        start=seconds(match["start"], match["start_unit"]),
        duration=(math.inf if match["duration"] is None
                  else seconds(match["duration"], match["duration_unit"])),
        force=wrench[:3], moment=wrench[3:] if len(wrench) == 6 else (0.0, 0.0, 0.0),
        link=link,
        point=None if match["point"] is None else [float(v) for v in match["point"].split(",")])
