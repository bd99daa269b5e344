"""Serial chains from URDF, parsed by pinocchio (urdfdom); fixed joints merged into parents.

dynid reads the file itself first (``dynid.robot._urdf_tree``): safe XML, a xacro expanded
(``dynid.robot._xacro``), the arm's chain (a ``tip`` link for a tree such as an arm with a
gripper), the drives' priors (``<dynamics>``, ``<transmission>``) and each link's geometry,
from which the parameter bounds are derived (``dynid.robot.derived_bounds``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pinocchio as pin

from dynid.friction.models import ViscousCoulomb
from dynid.robot._geometry import link_geometry
from dynid.robot._joint import Joint
from dynid.robot._robot import MAX_JOINTS, STANDARD_GRAVITY, JointLimits, Robot, Source
from dynid.robot._transmission import Transmission
from dynid.robot._urdf_tree import (
    DERIVED_NOTE,
    URDFTree,
    URDFWarning,
    locked_document,
    origin_matrix,
    read_priors,
    read_tree,
    select_chain,
    warn_ignored,
)
from dynid.robot.derived_bounds import LinkExtent, derive_bounds
from dynid.robot.inertia import check_links_physical, from_pinocchio_order

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
              physical: bool = True, tip: str | None = None,
              xacro_args: Mapping[str, object] | None = None,
              packages: Mapping[str, str | Path] | None = None) -> Robot:
    """A Robot from a URDF file of a fixed-base chain of revolute/prismatic joints.

    A xacro (``arm.urdf.xacro``, or a URDF that uses xacro elements) is expanded first, with
    ``xacro_args`` ({name: value}; an argument it does not have is an error).
    ``packages`` ({name: folder}) says where ROS packages are, for ``$(find NAME)`` and
    ``package://NAME`` meshes, before a folder NAME above the file, ``ROS_PACKAGE_PATH`` and
    ``AMENT_PREFIX_PATH`` (``dynid.robot._packages``). Both are kept in ``source``
    (``xacro_args``, ``packages``), so a robot or model file written from the robot reads it
    again alike.

    Link frames are the URDF joint (child link) frames; inertias of links attached by fixed
    joints are merged into the moving link before them. ``tip`` names the link where the arm
    ends: the movable joints from the root to it are the arm's, every other movable joint (a
    gripper's fingers) is locked at zero (or its limit nearest zero) and its links carried by
    the link they hang from; the tip's frame is the tool frame. Without a tip the movable
    joints must form one chain, none of them a mimic joint or a trailing end-effector joint
    (named gripper, finger, jaw, hand, ...): the error lists the candidate tips.
    ``tool_frame`` names a URDF link or frame on the last moving link to use as the tool
    (default: the tip's frame, else the last link's).

    What the URDF says of the drives becomes the robot's priors: ``<dynamics damping
    friction>`` the friction model (viscous-Coulomb, no offset: damping the viscous ``fv``
    [N m s/rad], friction the Coulomb ``fc`` [N m]; on a joint that gives one of them only as
    franka_description's ``mu_viscous`` / ``mu_coulomb``, that one; the standard attribute
    wins where both are given), transmissions' rotor inertias (Drake's
    ``drake:rotor_inertia`` times ``drake:gear_ratio`` squared) ``rotor_inertia``; reductions,
    locked joints, the geometry used and the friction attributes read are listed in
    ``source.notes`` (franka_description's ``D`` and ``K`` noted there as not read); anything
    else in ``<dynamics>`` or ``<transmission>`` is named in a ``URDFWarning``, as are xacro's
    own warnings. A robot file's ``friction:`` replaces the URDF's prior. ``bounds`` are
    derived from the description (``dynid.robot.derived_bounds``; ``bounds.derived`` is True).

    Raises ValueError for a file that cannot be parsed (or is not a regular file within
    ``dynid._reading.MAX_TEXT_BYTES``, or holds a DOCTYPE or entity declaration), a link that
    is grossly not a physical body (unless ``physical=False``: values kept as published, such as
    Franka's CAD link 4), a kinematic loop (a link with two parent joints), a tree without a
    tip, or an unsupported joint type. Links that miss physical consistency by a rounding
    margin (``dynid.robot.inertia.ROUNDING_RTOL``) load with one ``RoundedInertiaWarning``.
    """
    path = Path(path)
    tree = read_tree(path, xacro_args=xacro_args, packages=packages)
    if tree.xacro_warnings:
        warnings.warn(f"{path.name}: xacro says: {'; '.join(tree.xacro_warnings)}", URDFWarning,
                      stacklevel=2)
    arm, locked = select_chain(tree, tip)
    if len(arm) > MAX_JOINTS:  # before pinocchio builds them
        raise ValueError(f"`path`: URDF {str(path)!r} has {len(arm)} arm joints, more than "
                         f"dynid's MAX_JOINTS = {MAX_JOINTS} for one chain; give a tip link "
                         "nearer the root (--tip, `tip:` in a robot file): the joints after "
                         "it are locked")
    text, lock_lines = locked_document(tree, locked)
    try:
        with _parser_messages() as messages:
            # mimic=True keeps a <mimic> joint a mimic joint (rejected below), not a free one
            model = pin.buildModelFromXML(text, mimic=True)
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
        check_links_physical(
            np.array(params), [f"the link of joint {j.name}" for j in joints], where=path.name,
            escape=(f"write a robot file (say {path.stem}.yaml) holding `urdf: {path.name}` and "
                    "`inertia: {physical: false}`, and give that file in place of the URDF "
                    "(in Python: load_urdf(path, physical=False))"))
    if [j.name for j in joints] != [j.name for j in arm]:  # an internal invariant
        raise AssertionError(f"pinocchio's joints {[j.name for j in joints]} are not the arm's "
                             f"{[j.name for j in arm]}")
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
    frame_name = tool_frame if tool_frame is not None else tip
    if frame_name is not None:
        what = "`tool_frame`" if tool_frame is not None else "`tip`"
        frame = _frame(model, frame_name)
        if frame is None:
            raise ValueError(f"{what}: no frame {frame_name!r} in {str(path)!r}")
        if frame.parentJoint != n:
            raise ValueError(f"{what}: {frame_name!r} is not on the last moving link")
        tool = frame.placement.homogeneous
    notes = []
    if tip is not None:
        notes.append(f"tip link {tip!r}: arm joints {arm[0].name} to {arm[-1].name}")
    if lock_lines:
        notes.append("locked (not arm joints; their links carried by the link they hang "
                     f"from): {', '.join(lock_lines)}")
    priors = read_priors(tree, arm)
    friction = (ViscousCoulomb(priors.damping, priors.friction, np.zeros(n))
                if priors.has_dynamics else None)
    notes += priors.notes
    given = np.isfinite(priors.reduction)
    if given.any():
        notes.append("transmission reductions: " + ", ".join(
            f"{arm[k].name} {priors.reduction[k]:g}" for k in np.flatnonzero(given)))
    rotor = None
    if np.isfinite(priors.rotor_inertia).any():
        rotor = np.where(np.isfinite(priors.rotor_inertia), priors.rotor_inertia, 0.0)
        notes.append("rotor inertia (reflected, kg m^2) from the transmissions: " + ", ".join(
            f"{arm[k].name} {rotor[k]:g}" for k in np.flatnonzero(
                np.isfinite(priors.rotor_inertia))))
    elif given.any():
        notes.append("no rotor inertia in the transmissions: rotor_inertia stays 0")
    warn_ignored(path, priors.ignored)
    transmission = _transmission(priors, arm, path)
    try:
        robot = Robot(
            name=name or model.name or path.stem, joints=tuple(joints),
            parameters=np.array(params), limits=limits, gravity=np.asarray(gravity, dtype=float),
            tool=tool, convention="urdf", link_names=tuple(link_names), friction=friction,
            rotor_inertia=rotor, source=_source(tree), transmission=transmission,
        )
    except ValueError as error:  # a value beyond what the dynamics hold: name the file
        raise ValueError(f"{path.name}: {error}") from None
    extents, problems = _extents(model, tree, n)
    bounds = derive_bounds(robot, extents, source=path.name)
    if problems:
        notes.append(f"derived bounds: {len(problems)} geometry element(s) not read ("
                     f"{problems[0]}{', ...' if len(problems) > 1 else ''}): those links fall "
                     "back to their visual geometry or the segment between joint origins")
    notes.append(f"{DERIVED_NOTE} (none written): dynid.robot.derived_bounds")
    return dataclasses.replace(robot, bounds=bounds, source=_source(tree, "\n".join(notes)))


def _source(tree: URDFTree, notes: str = "") -> Source:
    """Where the robot comes from: the file, and how a xacro was read (its arguments, the
    packages given)."""
    return Source(url=str(tree.path), notes=notes, xacro_args=tree.xacro_args,
                  packages=tree.packages)



def _frame(model, name: str):
    """The frame called ``name``: the link's (BODY) where a joint has the same name."""
    for kind in (pin.FrameType.BODY, pin.FrameType.OP_FRAME, None):
        matches = [f for f in model.frames if f.name == name and (kind is None or f.type == kind)]
        if matches:
            return matches[0]
    return None


def _extents(model, tree: URDFTree, n: int) -> tuple[list[LinkExtent], list[str]]:
    """Each moving link's extent in its joint frame: the bounding box of the geometry of the
    URDF links it carries (with their frame origins and its joint origin), or, without
    geometry, of the frame origins it carries and the next joint's origin (a segment)."""
    folder = tree.path.parent

    def read_origin(element, where):
        return origin_matrix(element, where, tree.fail)

    extents, problems = [], []
    for j in range(1, n + 1):
        frames = [f for f in model.frames if f.parentJoint == j
                  and f.type in (pin.FrameType.BODY, pin.FrameType.OP_FRAME)]
        points = [np.zeros(3), *(f.placement.translation for f in frames)]
        corners, bases = [], set()
        for frame in frames:
            if frame.type != pin.FrameType.BODY or frame.name not in tree.links:
                continue
            geometry = link_geometry(tree.links[frame.name], folder, read_origin,
                                     tree.packages)
            problems += geometry.problems
            if geometry.basis:
                placement = frame.placement.homogeneous
                corners.append(geometry.corners @ placement[:3, :3].T + placement[:3, 3])
                bases.add(geometry.basis)
        if corners:
            cloud = np.vstack([*corners, np.array(points)])
            basis = "+".join(sorted(bases)) if len(bases) > 1 else bases.pop()
        else:
            if j < n:
                points.append(model.jointPlacements[j + 1].translation)
            cloud, basis = np.array(points), "segment"
        extents.append(LinkExtent(cloud.min(axis=0), cloud.max(axis=0), basis))
    return extents, problems


def _transmission(priors, arm, path: Path) -> Transmission | None:
    """The transmissions' ``G`` (``dynid.robot.Transmission``): the reductions read (1 where
    none), a differential's off-diagonal entries, the actuators' names; None without any
    transmission read (direct drive)."""
    given = np.isfinite(priors.reduction)
    if not given.any() and not priors.coupling:
        return None
    matrix = np.diag(np.where(given, priors.reduction, 1.0))
    for (k, j), value in priors.coupling.items():
        matrix[k, j] = value
    names = [priors.motors.get(k, f"{joint.name}_motor") for k, joint in enumerate(arm)]
    if len(set(names)) != len(names):  # actuators named alike: dynid's names instead
        names = []
    try:
        return Transmission.from_matrix(matrix, names)
    except ValueError as error:
        raise ValueError(f"{path.name}: the transmissions give no valid transmission: "
                         f"{error}") from None
