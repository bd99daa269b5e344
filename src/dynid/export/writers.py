"""Export of an identified robot: URDF and MuJoCo MJCF with the identified inertials, for a
controller or a simulator (the YAML robot file is ``dynid.robot.save_robot``).

Frames: every joint is stored as ``pre @ motion(q) @ post`` (``dynid.robot.Joint``). URDF and
MJCF attach a child link at its joint, so joint i sits at ``post_{i-1} @ pre_i`` in its parent
and each link's parameters are carried from the dynid link frame into the joint frame (through
``post``: only standard DH has one). The inertial block is the CoM and the inertia about it.
Rotor inertias (reflected): MJCF's joint ``armature``; in URDF a simple transmission per joint
with its reduction (``robot.transmission``; 1 for direct drive) and Drake's
``drake:rotor_inertia`` on the motor side (``I_a / r^2``), which ``dynid.robot.load_urdf`` reads
back; a differential (a 2 x 2 coupling of ros2_control's form) as a
``DifferentialTransmission``. Any other coupling (a coupled wrist) has no URDF counterpart, and
none has an MJCF one: it is refused, not dropped; the robot file (``dynid.robot.save_robot``)
keeps it.
Friction: URDF's ``<dynamics damping friction>`` and MJCF's ``damping``/``frictionloss`` are
viscous and Coulomb terms; they take the model's when it has them (viscous-Coulomb, Stribeck's
``fv``/``fc``, LuGre's ``sigma2``/``fc``); an offset or a sigmoid has no counterpart, and is
named in a comment.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
from numpy.typing import NDArray

from dynid._files import atomic_write
from dynid.friction.models import FrictionModel, LuGre, Stribeck, ViscousCoulomb
from dynid.robot import Robot
from dynid.robot.inertia import N_LINK_PARAMETERS, to_com, transform_parameters

__all__ = ["EXPORT_FORMATS", "check_names", "export_robot", "identified_robot", "to_mjcf",
           "to_urdf", "with_identified_gains"]

EXPORT_FORMATS = ("urdf", "mjcf")
# what the files say they are: the text is written as UTF-8, whatever the source URDF's
# declaration was (Latin-1, UTF-16)
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def check_names(robot: Robot) -> None:
    """ValueError, naming the joint or link, unless every joint and link name is text that
    is not empty, unique among the joints (links) and holds no character XML cannot: what
    an exported URDF, MJCF or robot file needs to load back. Checked before anything is
    written."""
    for kind, names in (("joint", list(robot.joint_names)), ("link", list(robot.link_names))):
        seen: dict[str, int] = {}
        for k, name in enumerate(names, start=1):
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"{kind} {k} of {robot.name!r} has an empty name "
                                 f"({name!r}): an exported robot would not load back; name it "
                                 "in the robot file")
            if _NOT_IN_XML.search(name):
                raise ValueError(f"{kind} {k} of {robot.name!r} is named {name!r}, with a "
                                 "character XML cannot hold; rename it in the robot file")
            if name in seen:
                raise ValueError(f"{kind}s {seen[name]} and {k} of {robot.name!r} are both "
                                 f"named {name!r}: an exported robot would not load back; "
                                 "give each a name of its own in the robot file")
            seen[name] = k


def _number(value: float) -> str:
    return f"{float(value):.17g}"


def _vector(values) -> str:
    return " ".join(_number(v) for v in values)


def _rpy(rotation: NDArray) -> NDArray:
    """URDF roll-pitch-yaw of a rotation, ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    import pinocchio as pin

    return np.asarray(pin.rpy.matrixToRpy(np.asarray(rotation, dtype=float)))


def _quaternion(rotation: NDArray) -> NDArray:
    """MJCF ``quat`` (w, x, y, z) of a rotation."""
    import pinocchio as pin

    q = pin.Quaternion(np.asarray(rotation, dtype=float))
    return np.array([q.w, q.x, q.y, q.z])


def _link_in_joint_frames(robot: Robot, parameters: NDArray | None) -> list[NDArray]:
    """Each link's 10-vector in its joint frame (URDF/MJCF child frame)."""
    table = robot.parameters if parameters is None else np.asarray(parameters, dtype=float)
    if table.shape != (robot.n_joints, N_LINK_PARAMETERS):
        raise ValueError(f"`parameters` must be ({robot.n_joints}, 10), got {table.shape}")
    out = []
    for k, (joint, pi) in enumerate(zip(robot.joints, table, strict=True)):
        if pi[0] <= 0:
            raise ValueError(f"link {k + 1} has mass {pi[0]:g}: a URDF/MJCF body needs a "
                             "positive mass (export a physically consistent parameter set)")
        out.append(transform_parameters(pi, joint.post[:3, :3], joint.post[:3, 3]))
    return out


def _comments(frames: str, friction_note: str) -> list[str]:
    """The header comments of an exported file: where the frames are, what friction lost."""
    lines = [f"  <!-- written by dynid: {frames}; inertials identified -->"]
    return lines + ([f"  <!-- friction: {friction_note} -->"] if friction_note else [])


def _friction_terms(friction: FrictionModel) -> tuple[NDArray | None, NDArray | None, str]:
    """Viscous and Coulomb coefficients per joint where the model has them, and a note on
    what does not carry over."""
    if isinstance(friction, ViscousCoulomb):
        note = ("" if not np.any(friction.fo) else
                "the offsets fo have no URDF/MJCF counterpart and are left out")
        return np.asarray(friction.fv), np.abs(np.asarray(friction.fc)), note
    offsets = ("" if not np.any(getattr(friction, "fo", 0.0)) else
               "; the offsets fo have no URDF/MJCF counterpart and are left out")
    if isinstance(friction, Stribeck):
        return (np.asarray(friction.fv), np.asarray(friction.fc),
                "Stribeck: fv and fc kept, the stiction term fs exp(-(|dq|/vs)^ks) left out"
                + offsets)
    if isinstance(friction, LuGre):
        return (np.asarray(friction.sigma2), np.asarray(friction.fc),
                "LuGre: sigma2 and fc kept, the bristle dynamics and stiction left out"
                + offsets)
    if friction.name == "none":
        return None, None, ""
    return None, None, f"{friction.name} friction has no URDF/MJCF counterpart: left out"


def to_urdf(robot: Robot, parameters: NDArray | None = None,
            friction: FrictionModel | None = None) -> str:
    """The URDF of ``robot`` with ``parameters`` ``(n, 10)`` (default its own) and
    ``friction`` (default its own), declared UTF-8. The base, tool link and tool joint take
    names no link or joint of the robot has (``base_link``, ``tool``, ``tool_joint``, else
    ``_1``, ``_2`` ...); names that could not load back are refused (``check_names``)."""
    check_names(robot)
    pairs = _differentials(robot)
    links = _link_in_joint_frames(robot, parameters)
    damping, coulomb, note = _friction_terms(robot.friction if friction is None else friction)
    names = robot.link_names
    base, tool_link = _free_name("base_link", names), _free_name("tool", names)
    tool_joint = _free_name(tool_link + "_joint", robot.joint_names)
    rotor = robot.rotor_inertia
    direct = robot.transmission.direct
    namespace = ' xmlns:drake="http://drake.mit.edu"' if rotor.any() else ""
    parts = [XML_DECLARATION, f"<robot name={quoteattr(robot.name)}{namespace}>",
             *_comments("link frames at their joints", note)]
    parts.append(f"  <link name={quoteattr(base)}/>")
    parent, previous_post = base, np.eye(4)
    for k, (joint, pi) in enumerate(zip(robot.joints, links, strict=True)):
        mass, com, inertia = to_com(pi)
        parts += [f"  <link name={quoteattr(names[k])}>", "    <inertial>",
                  f'      <origin xyz="{_vector(com)}" rpy="0 0 0"/>',
                  f'      <mass value="{_number(mass)}"/>',
                  f'      <inertia ixx="{_number(inertia[0, 0])}" ixy="{_number(inertia[0, 1])}" '
                  f'ixz="{_number(inertia[0, 2])}" iyy="{_number(inertia[1, 1])}" '
                  f'iyz="{_number(inertia[1, 2])}" izz="{_number(inertia[2, 2])}"/>',
                  "    </inertial>", "  </link>"]
        placement = previous_post @ joint.pre
        limits = robot.limits
        bounded = np.isfinite(limits.lower[k]) and np.isfinite(limits.upper[k])
        kind = joint.kind if bounded or joint.kind == "prismatic" else "continuous"
        parts += [f"  <joint name={quoteattr(joint.name)} type={quoteattr(kind)}>",
                  f"    <parent link={quoteattr(parent)}/>",
                  f"    <child link={quoteattr(names[k])}/>",
                  f'    <origin xyz="{_vector(placement[:3, 3])}" '
                  f'rpy="{_vector(_rpy(placement[:3, :3]))}"/>',
                  f'    <axis xyz="{_vector(joint.axis)}"/>']
        effort = limits.torque[k] if np.isfinite(limits.torque[k]) else 0.0
        velocity = limits.velocity[k] if np.isfinite(limits.velocity[k]) else 0.0
        if kind != "continuous":
            parts.append(f'    <limit lower="{_number(limits.lower[k])}" '
                         f'upper="{_number(limits.upper[k])}" effort="{_number(effort)}" '
                         f'velocity="{_number(velocity)}"/>')
        if damping is not None:
            parts.append(f'    <dynamics damping="{_number(damping[k])}" '
                         f'friction="{_number(coulomb[k])}"/>')
        parts.append("  </joint>")
        parent, previous_post = names[k], joint.post
    tool = previous_post @ robot.tool
    parts += [f"  <link name={quoteattr(tool_link)}/>",
              f"  <joint name={quoteattr(tool_joint)} type=\"fixed\">",
              f"    <parent link={quoteattr(parent)}/>",
              f"    <child link={quoteattr(tool_link)}/>",
              f'    <origin xyz="{_vector(tool[:3, 3])}" rpy="{_vector(_rpy(tool[:3, :3]))}"/>',
              "  </joint>"]
    if rotor.any() or not direct:  # reductions and rotor inertias, read back by load_urdf
        transmission = robot.transmission
        paired = {k for pair in pairs for k in pair}
        for a, b in pairs:
            parts += _differential(robot, a, b)
        for k, (joint, value) in enumerate(zip(robot.joints, rotor, strict=True)):
            if k in paired:
                continue
            reduction = transmission.reductions[k]
            motor = joint.name + "_motor" if direct else transmission.motor_names[k]
            parts += [f"  <transmission name={quoteattr(joint.name + '_transmission')}>",
                      "    <type>transmission_interface/SimpleTransmission</type>",
                      f"    <joint name={quoteattr(joint.name)}/>",
                      f"    <actuator name={quoteattr(motor)}>",
                      f"      <mechanicalReduction>{_number(reduction)}</mechanicalReduction>",
                      *([f'      <drake:rotor_inertia value="{_number(value / reduction**2)}"/>']
                        if rotor.any() else []),
                      "    </actuator>", "  </transmission>"]
    parts.append("</robot>")
    return "\n".join(parts) + "\n"


def _differentials(robot: Robot) -> list[tuple[int, int]]:
    """The joint pairs ``(a, b)`` of ``robot``'s transmission that are differentials, when
    those are its only couplings: 2 x 2 blocks coupled to nothing else, with
    ``G[a, a] G[b, b] = -G[a, b] G[b, a]`` (ros2_control's form); a coupling of another form
    is refused (``_check_uncoupled``)."""
    transmission = robot.transmission
    c, g = transmission.coupling, transmission.matrix
    pairs: list[tuple[int, int]] = []
    for k, j, _ in transmission.couplings():
        a, b = sorted((k, j))
        if (a, b) in pairs:
            continue
        outside = np.ones(robot.n_joints, dtype=bool)
        outside[[a, b]] = False
        isolated = not c[np.ix_([a, b], outside)].any() and not c[np.ix_(outside, [a, b])].any()
        scale = abs(g[a, a] * g[b, b]) + abs(g[a, b] * g[b, a])
        if not (isolated and c[a, b] != 0 and c[b, a] != 0
                and abs(g[a, a] * g[b, b] + g[a, b] * g[b, a]) <= 1e-12 * scale):
            _check_uncoupled(robot, "URDF")
        pairs.append((a, b))
    return pairs


def _differential(robot: Robot, a: int, b: int) -> list[str]:
    """A ``DifferentialTransmission`` of joints ``a, b`` (ros2_control's: ``a1 = ar1 (jr1 j1
    + jr2 j2)``, ``a2 = ar2 (jr1 j1 - jr2 j2)``) with ``jr1 = 1``, as ``load_urdf`` reads it
    back; the actuators' rotor inertias on the motor side (``I_a / G[k, k]^2``)."""
    transmission, rotor = robot.transmission, robot.rotor_inertia
    g = transmission.matrix
    ar1, jr2, ar2 = g[a, a], g[a, b] / g[a, a], g[b, a]
    names = robot.joint_names
    out = [f"  <transmission name={quoteattr(names[a] + '_' + names[b] + '_differential')}>",
           "    <type>transmission_interface/DifferentialTransmission</type>"]
    for role, k, reduction in (("actuator1", a, ar1), ("actuator2", b, ar2)):
        out += [f"    <actuator name={quoteattr(transmission.motor_names[k])} role=\"{role}\">",
                f"      <mechanicalReduction>{_number(reduction)}</mechanicalReduction>",
                *([f'      <drake:rotor_inertia value="{_number(rotor[k] / g[k, k]**2)}"/>']
                  if rotor.any() else []),
                "    </actuator>"]
    for role, k, reduction in (("joint1", a, 1.0), ("joint2", b, jr2)):
        out += [f"    <joint name={quoteattr(names[k])} role=\"{role}\">",
                f"      <mechanicalReduction>{_number(reduction)}</mechanicalReduction>",
                "    </joint>"]
    return [*out, "  </transmission>"]


def _check_uncoupled(robot: Robot, what: str) -> None:
    """ValueError where ``robot``'s transmission couples motors: ``what`` (URDF, MJCF) has no
    element that says it, and a file without it would model another arm."""
    if not robot.transmission.uncoupled:
        pairs = ", ".join(f"{robot.transmission.motor_names[k]} with {robot.joint_names[j]}"
                          for k, j, _ in robot.transmission.couplings())
        raise ValueError(f"`robot`: its transmission couples motors ({pairs}), which {what} "
                         "cannot say (its transmissions and armature are per joint; a URDF's "
                         "differential is one 2 x 2 form): keep the robot in a dynid robot "
                         "file (dynid.robot.save_robot), which holds the coupling")


def _free_name(name: str, taken) -> str:
    """``name``, or ``name_1``, ``name_2``, ... where a link of the robot is called so."""
    out, k = name, 0
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def to_mjcf(robot: Robot, parameters: NDArray | None = None,
            friction: FrictionModel | None = None) -> str:
    """The MuJoCo MJCF of ``robot`` (a fixed base; the same frames as ``to_urdf``)."""
    check_names(robot)
    _check_uncoupled(robot, "MJCF")
    links = _link_in_joint_frames(robot, parameters)
    damping, coulomb, note = _friction_terms(robot.friction if friction is None else friction)
    names = robot.link_names
    parts = [XML_DECLARATION, f"<mujoco model={quoteattr(robot.name)}>",
             *_comments("bodies at their joints", note)]
    parts += ['  <compiler angle="radian" autolimits="true"/>',
              f'  <option gravity="{_vector(robot.gravity)}"/>', "  <worldbody>"]
    previous_post, depth = np.eye(4), 2
    for k, (joint, pi) in enumerate(zip(robot.joints, links, strict=True)):
        mass, com, inertia = to_com(pi)
        placement = previous_post @ joint.pre
        pad = "  " * depth
        parts.append(f"{pad}<body name={quoteattr(names[k])} pos=\"{_vector(placement[:3, 3])}\""
                     f" quat=\"{_vector(_quaternion(placement[:3, :3]))}\">")
        full = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2],
                inertia[1, 2])
        parts.append(f'{pad}  <inertial pos="{_vector(com)}" mass="{_number(mass)}" '
                     f'fullinertia="{_vector(full)}"/>')
        limits = robot.limits
        attributes = [f"name={quoteattr(joint.name)}",
                      f'type="{"hinge" if joint.kind == "revolute" else "slide"}"',
                      f'axis="{_vector(joint.axis)}"']
        if np.isfinite(limits.lower[k]) and np.isfinite(limits.upper[k]):
            attributes.append(f'range="{_number(limits.lower[k])} {_number(limits.upper[k])}"')
        if np.isfinite(limits.torque[k]):
            attributes.append(f'actuatorfrcrange="{_number(-limits.torque[k])} '
                              f'{_number(limits.torque[k])}"')
        if damping is not None:
            attributes += [f'damping="{_number(damping[k])}"',
                           f'frictionloss="{_number(coulomb[k])}"']
        if robot.rotor_inertia[k] > 0:  # MuJoCo's armature: the reflected rotor inertia
            attributes.append(f'armature="{_number(robot.rotor_inertia[k])}"')
        parts.append(f"{pad}  <joint {' '.join(attributes)}/>")
        previous_post, depth = joint.post, depth + 1
    tool = previous_post @ robot.tool
    parts.append(f"{'  ' * depth}<site name=\"tool\" pos=\"{_vector(tool[:3, 3])}\" "
                 f"quat=\"{_vector(_quaternion(tool[:3, :3]))}\"/>")
    for level in range(depth - 1, 1, -1):
        parts.append(f"{'  ' * level}</body>")
    parts += ["  </worldbody>", "</mujoco>"]
    return "\n".join(parts) + "\n"


def identified_robot(model) -> Robot:
    """The robot of an identified ``LinearModel`` with its full link parameters and its
    friction (the fitted model when there is one, else the linear columns' values): what a
    controller or a simulator takes. A base-parameter estimate has no full set: an error says
    how to get one."""
    parameters = model.physical_parameters
    if parameters is None:
        raise ValueError("the model is a base-parameter estimate (method "
                         f"{model.report.get('method', '?')!r}) without full link parameters: "
                         "`dynid retrieve` finds a feasible set, or identify with cls3 / nls")
    friction = model.fitted_friction
    if friction is None:
        friction = model.friction.with_coefficients(model.friction_parameters)
    robot = model.robot.with_parameters(parameters).with_friction(friction)
    if model.rotor_inertia:
        robot = robot.with_rotor_inertia(model.robot.rotor_inertia)
    return with_identified_gains(robot, model.drive_gains)


def with_identified_gains(robot: Robot, gains) -> Robot:
    """``robot`` stating ``gains`` (identified from motor currents; None: unchanged) as its
    drives' nominal gains; its stated gain range kept where it holds them."""
    if gains is None:
        return robot
    kept = robot.drive_gain_range
    if kept is not None and not ((kept[:, 0] <= gains) & (gains <= kept[:, 1])).all():
        kept = None  # an unconstrained fit may leave a stated range: the identified gains win
    return robot.with_drive_gains(np.asarray(gains, float), kept)


def export_robot(robot: Robot, path: str | Path, *, format: str | None = None,
                 parameters: NDArray | None = None,
                 friction: FrictionModel | None = None) -> Path:
    """Write ``robot`` (with ``parameters`` and ``friction``, default its own) as URDF or MJCF
    (``format``, default from the suffix: ``.urdf``, ``.xml``/``.mjcf``), atomically."""
    suffix = Path(path).suffix.lower()
    chosen = format or {".urdf": "urdf", ".xml": "mjcf", ".mjcf": "mjcf"}.get(suffix)
    if chosen not in EXPORT_FORMATS:
        raise ValueError(f"`format` must be one of {EXPORT_FORMATS} (or a path ending in .urdf, "
                         f".xml, .mjcf), got {format!r} for {str(path)!r}")
    text = (to_urdf if chosen == "urdf" else to_mjcf)(robot, parameters, friction)
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
