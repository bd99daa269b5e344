"""A dynid Robot as a pinocchio Model (the reference oracle in tests, and URDF-style export).

Pinocchio attaches each body's inertia to its joint frame; dynid to the link frame, which for
standard DH sits ``post`` further on (see ``dynid.robot.Joint``). The placement of joint i in
joint i-1's frame is therefore ``post_{i-1} @ pre_i``, and each link's parameters are carried
from the link frame into the joint frame before conversion to pinocchio's parameter order.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from dynid.robot._robot import Robot
from dynid.robot.inertia import to_pinocchio_order, transform_parameters

__all__ = ["to_pinocchio"]

_ALIGNED = {
    ("revolute", 0): pin.JointModelRX,
    ("revolute", 1): pin.JointModelRY,
    ("revolute", 2): pin.JointModelRZ,
    ("prismatic", 0): pin.JointModelPX,
    ("prismatic", 1): pin.JointModelPY,
    ("prismatic", 2): pin.JointModelPZ,
}


def _joint_model(kind: str, axis: np.ndarray):
    for k in range(3):
        if np.array_equal(axis, np.eye(3)[k]):
            return _ALIGNED[(kind, k)]()
    if kind == "revolute":
        return pin.JointModelRevoluteUnaligned(axis)
    return pin.JointModelPrismaticUnaligned(axis)


def to_pinocchio(robot: Robot, parameters: np.ndarray | None = None) -> pin.Model:
    """A pinocchio Model with the same kinematics, inertias and gravity as ``robot``.

    Frames ``link1..linkn`` (the dynid link frames) and ``tool`` are added as operational frames.
    """
    params = robot.parameters if parameters is None else np.asarray(parameters).reshape(-1, 10)
    model = pin.Model()
    model.name = robot.name
    model.gravity.linear = np.asarray(robot.gravity, dtype=float)
    parent = 0
    previous_post = np.eye(4)
    for joint, pi, link_name in zip(robot.joints, params, robot.link_names, strict=True):
        placement = pin.SE3(previous_post @ joint.pre)
        joint_id = model.addJoint(parent, _joint_model(joint.kind, joint.axis), placement,
                                  joint.name)
        in_joint = transform_parameters(pi, joint.post[:3, :3], joint.post[:3, 3])
        model.appendBodyToJoint(joint_id, pin.Inertia.FromDynamicParameters(
            to_pinocchio_order(in_joint)), pin.SE3.Identity())
        model.addFrame(pin.Frame(link_name, joint_id, pin.SE3(joint.post), pin.FrameType.OP_FRAME))
        parent, previous_post = joint_id, joint.post
    model.addFrame(pin.Frame("tool", parent, pin.SE3(previous_post @ robot.tool),
                             pin.FrameType.OP_FRAME))
    model.armature = np.asarray(robot.rotor_inertia, dtype=float)
    return model
