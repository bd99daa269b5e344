"""Serial chains from URDF, parsed by pinocchio (urdfdom); fixed joints merged into parents."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pinocchio as pin

from dynid._reading import read_bytes
from dynid.robot._joint import Joint
from dynid.robot._robot import STANDARD_GRAVITY, JointLimits, Robot, Source
from dynid.robot.inertia import check_physical, from_pinocchio_order

__all__ = ["load_urdf"]

# pinocchio joint types dynid reads, by kind ("RUB": continuous, nq = 2 as cos/sin)
_SUPPORTED = {
    **dict.fromkeys(["JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRUBX",
                     "JointModelRUBY", "JointModelRUBZ", "JointModelRevoluteUnaligned",
                     "JointModelRevoluteUnboundedUnaligned"], "revolute"),
    **dict.fromkeys(["JointModelPX", "JointModelPY", "JointModelPZ",
                     "JointModelPrismaticUnaligned"], "prismatic"),
}


@contextlib.contextmanager
def _parser_messages() -> Iterator[list[str]]:
    """Collect what the C++ parser writes to file descriptor 2.

    urdfdom reports some malformed elements (an unparsable inertial, say) on stderr and goes
    on with the element dropped; dynid turns those messages into an error instead of a model
    with silently missing inertia.
    """
    messages: list[str] = []
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield messages
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            messages.extend(sink.read().decode(errors="replace").splitlines())


def _finite_or_inf(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values) & (np.abs(values) < 1e300)
    return np.where(finite, values, np.copysign(np.inf, values))


def load_urdf(path: str | Path, *, name: str | None = None, tool_frame: str | None = None,
              gravity: tuple[float, float, float] = STANDARD_GRAVITY,
              physical: bool = True) -> Robot:
    """A Robot from a URDF file of a fixed-base serial chain of revolute/prismatic joints.

    Link frames are the URDF joint (child link) frames; inertias of links attached by fixed
    joints are merged into the moving link before them. ``tool_frame`` names a URDF link or
    frame on the last moving link to use as the tool. Raises ValueError for a file that cannot
    be parsed (or is not a regular file within ``dynid._reading.MAX_TEXT_BYTES``), a link that
    is not a physical body (unless ``physical=False``: values kept as published, such as
    Franka's CAD link 4), a kinematic loop (a link with two parent joints), a tree (a link
    with two moving children), or an unsupported joint type.
    """
    path = Path(path)
    read_bytes(path, what="URDF")  # a regular file within the size limit, before the parser
    try:
        with _parser_messages() as messages:
            # mimic=True keeps a <mimic> joint a mimic joint (rejected below), not a free one
            model = pin.buildModelFromUrdf(str(path), mimic=True)
    except (RuntimeError, ValueError) as error:
        detail = "; ".join([str(error), *(m.strip() for m in messages if m.strip())])
        raise ValueError(
            f"`path`: cannot parse URDF {str(path)!r}: {detail} (dynid needs a serial chain: "
            "one parent joint per link, no loops)"
        ) from None
    errors = [line.strip() for line in messages if line.strip().startswith("Error")]
    if errors:
        raise ValueError(f"`path`: cannot parse URDF {str(path)!r}: {'; '.join(errors)}")
    n = model.njoints - 1
    if n == 0:
        raise ValueError(f"`path`: URDF {str(path)!r} has no moving joint")
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))  # fills each joint's motion subspace
    joints, params = [], []
    for j in range(1, model.njoints):
        joint_name = model.names[j]
        if model.parents[j] != j - 1:
            siblings = [model.names[k] for k in range(1, model.njoints)
                        if model.parents[k] == model.parents[j]]
            raise ValueError(
                f"`path`: URDF {str(path)!r} is a tree, not a serial chain: joints {siblings} "
                f"share the parent {model.names[model.parents[j]]!r}"
            )
        shortname = model.joints[j].shortname()
        if shortname not in _SUPPORTED:
            raise ValueError(
                f"`path`: joint {joint_name!r} has unsupported type {shortname}; "
                "dynid supports revolute, continuous and prismatic joints (no mimic joints)"
            )
        kind = _SUPPORTED[shortname]
        subspace = np.asarray(data.joints[j].S, dtype=float).ravel()  # (linear, angular)
        axis = subspace[3:] if kind == "revolute" else subspace[:3]
        joints.append(Joint(joint_name, kind, axis=axis,
                            pre=model.jointPlacements[j].homogeneous))
        params.append(from_pinocchio_order(model.inertias[j].toDynamicParameters()))
        if physical:
            try:
                check_physical(params[-1], f"{path.name}: the link of joint {joint_name}")
            except ValueError as error:
                raise ValueError(f"{error}; a file known to hold such values (as published) "
                                 "loads with load_urdf(path, physical=False)") from None
    lower, upper, velocity, effort = [], [], [], []
    for j in range(1, model.njoints):
        idx_q, idx_v = model.joints[j].idx_q, model.joints[j].idx_v
        continuous = model.joints[j].nq == 2
        low, high = model.lowerPositionLimit[idx_q], model.upperPositionLimit[idx_q]
        unspecified = continuous or (low == 0.0 and high == 0.0)  # urdfdom's default: 0, 0
        lower.append(-np.inf if unspecified else low)
        upper.append(np.inf if unspecified else high)
        velocity.append(model.velocityLimit[idx_v])
        effort.append(model.effortLimit[idx_v])
    velocity, effort = _finite_or_inf(velocity), _finite_or_inf(effort)
    limits = JointLimits(
        lower=_finite_or_inf(lower), upper=_finite_or_inf(upper),
        velocity=np.where(velocity > 0, velocity, np.inf), acceleration=np.full(n, np.inf),
        torque=np.where(effort > 0, effort, np.inf),
    )
    link_names = []
    for j in range(1, model.njoints):
        bodies = [f.name for f in model.frames
                  if f.parentJoint == j and f.type == pin.FrameType.BODY]
        link_names.append(bodies[0] if bodies else f"link{j}")
    tool = np.eye(4)
    if tool_frame is not None:
        if not model.existFrame(tool_frame):
            raise ValueError(f"`tool_frame`: no frame {tool_frame!r} in {str(path)!r}")
        frame = model.frames[model.getFrameId(tool_frame)]
        if frame.parentJoint != n:
            raise ValueError(f"`tool_frame`: {tool_frame!r} is not on the last moving link")
        tool = frame.placement.homogeneous
    return Robot(
        name=name or model.name or path.stem, joints=tuple(joints), parameters=np.array(params),
        limits=limits, gravity=np.asarray(gravity, dtype=float), tool=tool, convention="urdf",
        link_names=tuple(link_names), source=Source(url=str(path)),
    )
