"""Robot files: dynid's own YAML schema ``dynid-robot/1``.

```yaml
schema: dynid-robot/1
name: panda
description: one line
source: {citation: "...", url: "...", notes: "..."}
kinematics:
  convention: mdh             # mdh | dh (see dynid.robot.Joint for the formulas)
  joints:                     # base to tip; SI units, radians
    - {name: joint1, type: revolute, a: 0.0, alpha: 0.0, d: 0.333, theta: 0.0}
    - {name: joint2, type: revolute, a: 0.0, alpha: -pi/2, d: 0.0, theta: 0.0}
  tool: {a: 0.0, alpha: 0.0, d: 0.107, theta: 0.0}   # optional fixed frame on the last link:
                                                     # one row, or a 4 x 4 matrix (any frame)
gravity: [0.0, 0.0, -9.81]    # base frame, m/s^2
limits:                       # rad or m; per second; N m or N
  position: {lower: [...], upper: [...]}
  velocity: [...]             # velocity, acceleration, torque: each optional (not published;
  acceleration: [...]         #   .inf per joint says the same); excite derives missing
  torque: [...]               #   acceleration limits (dynid.excitation.limits)
inertia:
  frame: link                 # each link's own frame of the convention above
  about: com                  # com: mass, com, inertia about the CoM | origin: see below
  physical: true              # optional; false: values as published, not a physical body;
                              # nearest: as published, loaded as the nearest physical bodies
  links:
    - {name: link1, mass: 4.97, com: [x, y, z], inertia: [xx, xy, xz, yy, yz, zz]}
rotor_inertia: [...]          # optional; per joint, reflected to the joint [kg m^2]; default 0
transmission:                 # optional: how the motors drive the joints, theta = G q (see
                              #   dynid.robot.Transmission); default direct drive
  reductions: [...]           #   per joint, signed, nonzero: motor k turns r_k per turn of
                              #   joint k
  couplings:                  #   optional: joint j also turns motor k,
    - {motor: joint6, joint: joint5, ratio: 0.5}   # theta_k = r_k (q_k + ratio q_j); motor:
                              #   the joint it drives; each a name or a number 1..n
  motors: [...]               #   optional: the actuators' names (default motor1..n)
drive_gains:                  # optional: each drive's torque per motor current K [N m/A]
  nominal: [...]              #   optional; per joint, nonzero
  range: [[lo, hi], ...]      #   optional; per joint, of one sign: bounds K when identified
friction:                     # optional; model: none | viscous-coulomb | arctan | sigmoid |
                              # stribeck | lugre (stribeck, lugre: offset fo optional)
  model: sigmoid
  parameters: {phi1: [...], phi2: [...], phi3: [...]}
bounds:                       # optional: the search region of the constrained methods and
  source: "..."               #   retrieval; default derived (dynid.robot.derived_bounds)
  total_mass: [16.0, 20.0]    # kg
  links:                      # mass [kg]; CoM box in the link frame [m]; inertia about the CoM
    - {mass: [0, 10], com: {lower: [...], upper: [...]},
       inertia: {lower: [xx, xy, xz, yy, yz, zz], upper: [...]}}
```

A robot file may point at a URDF instead of giving a kinematics table (``urdf`` and
``kinematics`` exclude each other): the URDF gives the chain, its limits, link parameters and
priors (see ``dynid.robot.load_urdf``), and the file adds or overrides the rest:

```yaml
schema: dynid-robot/1
name: arm                     # optional; default the URDF's robot name
urdf: arm.urdf                # relative to this file's folder (or absolute); or a xacro,
                              #   arm.urdf.xacro, expanded with:
xacro_args: {ur_type: ur5e}   # optional: its arguments (an unknown one is an error)
packages: {my_arm: ../my_arm} # optional: ROS package folders, for $(find NAME) and
                              #   package://NAME (relative to this file's folder; see
                              #   dynid.robot.load_urdf for where else they are looked for)
tip: flange                   # optional: the link where the arm ends (a tree URDF needs one)
tool: [[...], ...]            # optional 4 x 4 tool frame on the last link (default the tip's)
gravity: [0.0, 0.0, -9.81]
limits:                       # optional; each entry overrides the URDF's (which has no
  acceleration: [...]         #   acceleration limits: excite derives them, see
                              #   dynid.excitation.limits)
inertia:                      # optional: link parameters instead of the URDF's (as above), or
  physical: false             #   just `physical: false` (or nearest) for a URDF whose values
                              #   are published
rotor_inertia: [...]          # optional; default the URDF's transmissions' (else 0)
transmission: {...}           # optional (as above); default the URDF's <transmission>s
drive_gains: {...}            # optional (as above)
friction: {...}               # optional; default the URDF's <dynamics> (else none)
bounds: {...}                 # optional; default derived from the URDF (see
                              #   dynid.robot.derived_bounds); written bounds replace them
```

A revolute row's ``theta`` and a prismatic row's ``d`` are constant offsets added to q. Angles
(``alpha``, ``theta``) are numbers or exact multiples of pi written ``pi``, ``-pi/2``,
``3*pi/4``, ``0.5*pi``: a rounded 1.5708 leaves a 4e-6 rad error in every transform.

The schema is strict: an unknown key is an error (with the closest known key as a suggestion),
every value is type-checked, the inertia of every link must be physically valid (mass >= 0 and
the pseudo-inertia positive semi-definite: the inertia about the CoM positive semi-definite
with the triangle inequality) unless ``inertia.physical`` is false (values kept as a source
published them, say why in ``source.notes``) or ``nearest`` (the values as published in the
file, each link that is no body loaded as the nearest one: ``inertia.nearest_physical``); a miss
within ``inertia.ROUNDING_RTOL`` (2 %: a published table's rounding) loads with one
``RoundedInertiaWarning`` naming the links. Bounds must be ordered; without ``bounds:`` they
are derived (``dynid.robot.derived_bounds``).
With ``about: origin`` each link gives ``mass``, ``first_moment`` (m c) and ``inertia`` about the
link-frame origin instead (the 10-vector of ``dynid.robot.inertia``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dynid._files import atomic_write
from dynid._reading import check_keys, dump_yaml, load_yaml
from dynid.friction.models import friction_from_dict
from dynid.robot._joint import PrismaticDH, PrismaticMDH, RevoluteDH, RevoluteMDH, check_transform
from dynid.robot._robot import (
    STANDARD_GRAVITY,
    JointLimits,
    Robot,
    Source,
    check_drive_gains,
)
from dynid.robot._transmission import Transmission
from dynid.robot._urdf_tree import DERIVED_NOTE
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import (
    FIRST_MOMENT,
    INERTIA,
    MASS,
    N_LINK_PARAMETERS,
    PHYSICAL_RTOL,
    check_links_physical,
    from_com,
    nearest_physical,
    physical_margin,
)

__all__ = ["SCHEMA", "load_robot_file", "robot_from_dict", "robot_to_dict", "save_robot"]

SCHEMA = "dynid-robot/1"
# `inertia.physical: nearest`: the links as published, loaded as the nearest physical bodies
NEAREST = "nearest"

_ROWS = {
    ("mdh", "revolute"): (RevoluteMDH, ("a", "alpha", "d"), "theta"),
    ("mdh", "prismatic"): (PrismaticMDH, ("a", "alpha", "theta"), "d"),
    ("dh", "revolute"): (RevoluteDH, ("d", "a", "alpha"), "theta"),
    ("dh", "prismatic"): (PrismaticDH, ("theta", "a", "alpha"), "d"),
}


def _get(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict):
        raise ValueError(f"`{where}` must be a mapping, got {type(mapping).__name__}")
    if key not in mapping or mapping[key] is None:
        raise ValueError(f"`{where}.{key}` is missing")
    return mapping[key]


# an exact multiple of pi as a person writes it: pi, -pi/2, 3*pi/4, 0.5*pi, 2 pi / 3
_PI = re.compile(r"\s*([+-])?\s*"  # sign
                 r"(?:(\d+(?:\.\d*)?|\.\d+)\s*\*?\s*)?"  # factor
                 r"pi\s*(?:/\s*(\d+(?:\.\d*)?))?\s*")  # divisor


def _angle(value: Any, where: str) -> float:
    """A number, or a multiple of pi written as text (see the module docstring)."""
    if isinstance(value, str):
        match = _PI.fullmatch(value)
        if match is None:
            raise ValueError(f"`{where}` must be a number or a multiple of pi such as "
                             f"'-pi/2' or '3*pi/4', got {value!r}")
        sign, factor, divisor = match.groups()
        if float(divisor or 1.0) == 0:
            raise ValueError(f"`{where}` divides by zero: {value!r}")
        angle = float(factor or 1.0) * np.pi / float(divisor or 1.0)
        if not np.isfinite(angle):
            raise ValueError(f"`{where}` must be finite, got {value!r}")
        return -angle if sign == "-" else angle
    return _number(value, where)


def _number(value: Any, where: str, *, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"`{where}` must be a number, got {value!r:.60}")
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"`{where}` must be finite, got {value!r}")
    return float(value)


def _numbers(value: Any, size: int, where: str, *, allow_inf: bool = False) -> np.ndarray:
    if not isinstance(value, (list, tuple)) or len(value) != size:
        raise ValueError(f"`{where}` must be a list of {size} numbers, got {value!r:.80}")
    return np.array([_number(v, f"{where}[{k}]", allow_inf=allow_inf)
                     for k, v in enumerate(value)])


def _row(convention: str, spec: dict, where: str, *, fixed: bool = False):
    kind = _get(spec, "type", where)
    if (convention, kind) not in _ROWS:
        raise ValueError(f"`{where}.type` must be 'revolute' or 'prismatic', got {kind!r:.40}")
    check_keys(spec, ("type", "a", "alpha", "d", "theta") if fixed else
               ("name", "type", "a", "alpha", "d", "theta"), where)
    cls, constants, offset = _ROWS[(convention, kind)]

    def value(key: str, given: Any) -> float:
        read = _angle if key in ("alpha", "theta") else _number
        return read(given, f"{where}.{key}")

    values = {key: value(key, _get(spec, key, where)) for key in constants}
    return cls(**values, offset=value(offset, spec.get(offset, 0.0)))


def _physical_claim(spec: dict) -> bool | str:
    """``inertia.physical``: true (checked), false (kept as published) or ``nearest``."""
    claimed = spec.get("physical", True)
    if not (isinstance(claimed, bool) or claimed == NEAREST):
        raise ValueError(f"`inertia.physical` must be true, false or {NEAREST}, got "
                         f"{claimed!r:.40}")
    return claimed


def _link_parameters(spec: dict, n: int, physical: bool,
                     file_name: str = "robot file") -> tuple[np.ndarray, tuple[str, ...]]:
    check_keys(_mapping(spec, "inertia"), ("frame", "about", "physical", "links"), "inertia")
    claimed = _physical_claim(spec)
    physical = physical and claimed is True
    about = _get(spec, "about", "inertia")
    if about not in ("com", "origin"):
        raise ValueError(f"`inertia.about` must be 'com' or 'origin', got {about!r}")
    frame = spec.get("frame", "link")
    if frame != "link":
        raise ValueError(f"`inertia.frame` must be 'link', got {frame!r}")
    links = _get(spec, "links", "inertia")
    if not isinstance(links, list) or len(links) != n:
        raise ValueError(f"`inertia.links` must list {n} links (one per joint), got {links!r:.80}")
    params, names = [], []
    for k, link in enumerate(links):
        where = f"inertia.links[{k}]"
        check_keys(_mapping(link, where), ("name", "mass", "com", "inertia") if about == "com"
                   else ("name", "mass", "first_moment", "inertia"), where)
        mass = _number(_get(link, "mass", where), f"{where}.mass")
        if mass < 0:
            raise ValueError(f"`{where}.mass` must be >= 0, got {mass}")
        inertia = _numbers(_get(link, "inertia", where), 6, f"{where}.inertia")
        if about == "com":
            com = _numbers(_get(link, "com", where), 3, f"{where}.com")
            params.append(from_com(mass, com, inertia))
        else:
            first = _numbers(_get(link, "first_moment", where), 3, f"{where}.first_moment")
            pi = np.empty(N_LINK_PARAMETERS)
            pi[MASS], pi[FIRST_MOMENT], pi[INERTIA] = mass, first, inertia
            params.append(pi)
        names.append(_text(link.get("name", f"link{k + 1}"), f"{where}.name"))
    if physical:
        check_links_physical(
            np.array(params), [f"inertia.links[{k}]" for k in range(n)], where=file_name,
            escape=("set `inertia.physical: false` in the robot file (and say why in "
                    "`source.notes`)"))
    if claimed == NEAREST:
        return nearest_physical(np.array(params)), tuple(names)
    return np.array(params), tuple(names)


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"`{where}` must be a mapping, got {type(value).__name__}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise ValueError(f"`{where}` must be text, got {value!r:.60}")
    return str(value)


def _limits(spec: dict | None, n: int) -> JointLimits:
    if spec is None:
        return JointLimits.unbounded(n)
    check_keys(_mapping(spec, "limits"),
               ("position", "velocity", "acceleration", "torque"), "limits")
    position = _get(spec, "position", "limits")
    check_keys(_mapping(position, "limits.position"), ("lower", "upper"), "limits.position")

    def read(mapping: dict, key: str, where: str) -> np.ndarray:
        # .inf / -.inf: not specified (a continuous joint, a limit the maker does not publish)
        return _numbers(_get(mapping, key, where), n, f"{where}.{key}", allow_inf=True)

    def published(key: str) -> np.ndarray:
        """A rate or effort limit; left out: not published (as ``.inf``; excite derives an
        acceleration limit where there is none, dynid.excitation.limits)."""
        return read(spec, key, "limits") if spec.get(key) is not None else np.full(n, np.inf)

    return JointLimits(
        lower=read(position, "lower", "limits.position"),
        upper=read(position, "upper", "limits.position"),
        velocity=published("velocity"),
        acceleration=published("acceleration"),
        torque=published("torque"),
    )


_KEYS = ("schema", "name", "description", "source", "kinematics", "gravity", "limits",
         "inertia", "friction", "bounds", "rotor_inertia", "drive_gains", "transmission")


def robot_from_dict(spec: dict, *, physical: bool = True, folder: str | Path | None = None,
                    tip: str | None = None, file_name: str = "robot file",
                    xacro_args: Mapping[str, object] | None = None,
                    packages: Mapping[str, str | Path] | None = None) -> Robot:
    """A Robot from the parsed ``dynid-robot/1`` mapping (ValueError naming any bad field).

    ``physical``: every link's inertia must be physically valid (a robot file's claim); a
    model file's equivalent parameters need not be. ``folder``: where a ``urdf:`` path is
    relative to (default the working folder); ``tip``: the arm's tip link of a ``urdf:`` robot
    (overrides the file's ``tip``); ``xacro_args`` and ``packages``: a ``urdf:`` xacro's
    arguments and ROS package folders, each entry over the file's; ``file_name``: how warnings
    name the file.

    Links whose inertia misses physical consistency by rounding (``inertia.ROUNDING_RTOL``)
    load with one ``RoundedInertiaWarning``; a gross miss raises ValueError naming the link
    and ``inertia.physical: false``.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"a robot file must hold a mapping, got {type(spec).__name__}")
    if "urdf" in spec:
        return _robot_from_urdf(spec, physical=physical, folder=folder, tip=tip,
                                file_name=file_name, xacro_args=xacro_args, packages=packages)
    if tip is not None:
        raise ValueError("`tip` picks the arm's chain of a URDF robot; this robot file gives "
                         "a kinematics table")
    if xacro_args:
        raise ValueError("`xacro_args` are a xacro description's; this robot file gives a "
                         "kinematics table")
    check_keys(spec, _KEYS, "robot")
    schema = spec.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise ValueError(f"`schema` must be {SCHEMA!r}, got {schema!r:.60}")
    name = _text(_get(spec, "name", "robot"), "name")
    kinematics = _get(spec, "kinematics", "robot")
    check_keys(_mapping(kinematics, "kinematics"), ("convention", "joints", "tool"),
               "kinematics")
    convention = _get(kinematics, "convention", "kinematics")
    if convention not in ("mdh", "dh"):
        raise ValueError(f"`kinematics.convention` must be 'mdh' or 'dh', got {convention!r}")
    joint_specs = _get(kinematics, "joints", "kinematics")
    if not isinstance(joint_specs, list) or not joint_specs:
        raise ValueError("`kinematics.joints` must be a non-empty list")
    rows = [_row(convention, _mapping(j, f"kinematics.joints[{k}]"), f"kinematics.joints[{k}]")
            for k, j in enumerate(joint_specs)]
    n = len(rows)
    tool = None
    if isinstance(kinematics.get("tool"), list):  # a general frame (a calibrated tool)
        tool = _tool_matrix(kinematics["tool"], "kinematics.tool")
    elif kinematics.get("tool") is not None:
        if not isinstance(kinematics["tool"], dict):
            raise ValueError(f"`kinematics.tool` must be a mapping (one row) or a 4 x 4 "
                             f"matrix, got {kinematics['tool']!r:.60}")
        tool = _row(convention, {"type": "revolute", **kinematics["tool"]}, "kinematics.tool",
                    fixed=True)
    parameters, link_names = _link_parameters(_get(spec, "inertia", "robot"), n, physical,
                                              file_name)
    source = spec.get("source") or {}
    if not isinstance(source, dict):
        raise ValueError(f"`source` must be a mapping (citation, url, notes), got {source!r:.60}")
    check_keys(source, ("citation", "url", "notes"), "source")
    build = Robot.from_mdh if convention == "mdh" else Robot.from_dh
    robot = build(
        name, rows, parameters, tool=tool,
        joint_names=[_text(j.get("name", f"joint{k + 1}"), f"kinematics.joints[{k}].name")
                     for k, j in enumerate(joint_specs)],
        limits=_limits(spec.get("limits"), n),
        gravity=_numbers(spec.get("gravity", list(STANDARD_GRAVITY)), 3, "gravity"),
        friction=friction_from_dict(spec.get("friction"), n),
        rotor_inertia=(_numbers(spec["rotor_inertia"], n, "rotor_inertia")
                       if spec.get("rotor_inertia") is not None else None),
        link_names=link_names,
        **_drive_gains(spec.get("drive_gains"), n),
        bounds=(ParameterBounds.from_dict(spec["bounds"], n) if spec.get("bounds") is not None
                else None),
        description=_text(spec.get("description", ""), "description"),
        source=Source(**{k: _text(source.get(k, ""), f"source.{k}")
                         for k in ("citation", "url", "notes")}),
    )
    if spec.get("transmission") is not None:
        robot = robot.with_transmission(_transmission(spec["transmission"], robot))
    if robot.bounds is None and physical:  # a description without bounds: derived, as a URDF's
        from dynid.robot.derived_bounds import derive_bounds

        robot = dataclasses.replace(robot, bounds=derive_bounds(robot, source=file_name))
    return robot


def load_robot_file(path: str | Path, *, tip: str | None = None,
                    xacro_args: Mapping[str, object] | None = None,
                    packages: Mapping[str, str | Path] | None = None) -> Robot:
    """Read a ``dynid-robot/1`` YAML file (``tip``, ``xacro_args``, ``packages``: see
    ``robot_from_dict``)."""
    path = Path(path)
    spec = load_yaml(path, what="robot file")
    try:
        return robot_from_dict(spec, folder=path.parent, tip=tip, file_name=path.name,
                               xacro_args=xacro_args, packages=packages)
    except (ValueError, TypeError) as error:
        text = str(error)  # named once: some messages name the file themselves
        raise ValueError(text if text.startswith(f"{path.name}: ") else
                         f"{path.name}: {text}") from None


# --- robot files that point at a URDF ------------------------------------------------------------

_URDF_KEYS = ("schema", "name", "description", "source", "urdf", "xacro_args", "packages",
              "tip", "tool", "gravity", "limits", "inertia", "rotor_inertia", "friction",
              "bounds", "drive_gains", "transmission")


def _string_mapping(spec: Any, key: str) -> dict[str, str]:
    """A ``name: value`` mapping of the file (``xacro_args``, ``packages``) as text."""
    if spec is None:
        return {}
    out = {}
    for name, value in _mapping(spec, key).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(name, str) or not isinstance(value, (str, int, float)):
            raise ValueError(f"`{key}.{name}` must be text or a number, got {value!r:.60}")
        out[name] = str(value)
    return out


def _robot_from_urdf(spec: dict, *, physical: bool, folder: str | Path | None,
                     tip: str | None, file_name: str,
                     xacro_args: Mapping[str, object] | None = None,
                     packages: Mapping[str, str | Path] | None = None) -> Robot:
    """The URDF the file points at, with the file's additions (see the module docstring)."""
    from dynid.robot._urdf import load_urdf  # pinocchio loads with the first URDF

    check_keys(spec, _URDF_KEYS, "robot")
    if "kinematics" in spec:
        raise ValueError("give `urdf` or `kinematics`, not both")
    schema = spec.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise ValueError(f"`schema` must be {SCHEMA!r}, got {schema!r:.60}")
    file = _text(_get(spec, "urdf", "robot"), "urdf")
    path = Path(file)
    if not path.is_absolute() and folder is not None:
        path = Path(folder) / path
    if not path.is_file():
        raise ValueError(f"`urdf`: {file!r} is not a file (looked for {str(path)!r}; a "
                         "relative path is relative to the robot file's folder)")
    if tip is None and spec.get("tip") is not None:
        tip = _text(spec["tip"], "tip")
    inertia = spec.get("inertia")
    overrides = inertia is not None and "links" in _mapping(inertia, "inertia")
    claimed: bool | str = True
    if inertia is not None and not overrides:
        check_keys(inertia, ("physical",), "inertia")
        claimed = _physical_claim(inertia)
    gravity = _numbers(spec.get("gravity", list(STANDARD_GRAVITY)), 3, "gravity")
    given_packages = {name: str(Path(folder) / value if folder is not None else value)
                      for name, value in _string_mapping(spec.get("packages"), "packages").items()}
    robot = load_urdf(path, name=_text(spec["name"], "name") if spec.get("name") else None,
                      tip=tip, gravity=tuple(gravity),
                      physical=physical and claimed is True and not overrides,
                      xacro_args={**_string_mapping(spec.get("xacro_args"), "xacro_args"),
                                  **(xacro_args or {})},
                      packages={**given_packages, **(packages or {})})
    n = robot.n_joints
    changes: dict[str, Any] = {"limits": _limit_overrides(spec.get("limits"), robot.limits)}
    if claimed == NEAREST:
        changes["parameters"] = nearest_physical(robot.parameters)
    if overrides:
        parameters, names = _link_parameters(inertia, n, physical, file_name)
        changes["parameters"] = parameters
        if any("name" in link for link in inertia["links"] if isinstance(link, dict)):
            changes["link_names"] = names
    if spec.get("tool") is not None:
        changes["tool"] = _tool_matrix(spec["tool"], "tool")
    if spec.get("rotor_inertia") is not None:
        changes["rotor_inertia"] = _numbers(spec["rotor_inertia"], n, "rotor_inertia")
    if spec.get("friction") is not None:
        changes["friction"] = friction_from_dict(spec["friction"], n)
    changes.update(_drive_gains(spec.get("drive_gains"), n))
    if spec.get("transmission") is not None:
        changes["transmission"] = _transmission(spec["transmission"], robot)
    if spec.get("bounds") is not None:
        changes["bounds"] = ParameterBounds.from_dict(spec["bounds"], n)
    if spec.get("description") is not None:
        changes["description"] = _text(spec["description"], "description")
    source = spec.get("source") or {}
    if not isinstance(source, dict):
        raise ValueError(f"`source` must be a mapping (citation, notes), got {source!r:.60}")
    check_keys(source, ("citation", "notes"), "source")
    notes = [_text(source["notes"], "source.notes")] if source.get("notes") else []
    notes += [note for note in robot.source.notes.splitlines() if note and not (
        "bounds" in changes and note.startswith(DERIVED_NOTE))]
    if "bounds" in changes:
        notes.append("bounds as written in the robot file")
    changes["source"] = dataclasses.replace(
        robot.source, citation=_text(source.get("citation", ""), "source.citation"),
        notes="\n".join(notes))
    return dataclasses.replace(robot, **changes)


def _transmission(spec: Any, robot: Robot) -> Transmission:
    """The ``transmission:`` entry (module docstring) of ``robot``'s joints, validated: the
    reductions, each coupling's motor and joint (a joint name or a number 1..n), once each."""
    n = robot.n_joints
    check_keys(_mapping(spec, "transmission"), ("reductions", "couplings", "motors"),
               "transmission")
    reductions = _numbers(_get(spec, "reductions", "transmission"), n,
                          "transmission.reductions")
    coupling = np.eye(n)
    couplings = spec.get("couplings") or []
    if not isinstance(couplings, list):
        raise ValueError(f"`transmission.couplings` must be a list of {{motor, joint, ratio}}, "
                         f"got {couplings!r:.60}")
    if len(couplings) > n * (n - 1):
        raise ValueError(f"`transmission.couplings` has {len(couplings)} entries, more than "
                         f"the {n * (n - 1)} pairs of {n} joints")
    for k, entry in enumerate(couplings):
        where = f"transmission.couplings[{k}]"
        check_keys(_mapping(entry, where), ("motor", "joint", "ratio"), where)
        motor, joint = (robot.joint_indices([_get(entry, key, where)], f"{where}.{key}")[0]
                        for key in ("motor", "joint"))
        if motor == joint:
            raise ValueError(f"`{where}`: motor {motor + 1} and its own joint: that is its "
                             "reduction, not a coupling")
        if coupling[motor, joint] != 0:
            raise ValueError(f"`{where}` couples motor {motor + 1} to joint {joint + 1} again")
        coupling[motor, joint] = _number(_get(entry, "ratio", where), f"{where}.ratio")
    names = spec.get("motors")
    if names is not None and (not isinstance(names, list) or len(names) != n):
        raise ValueError(f"`transmission.motors` must be a list of {n} names, got "
                         f"{names!r:.60}")
    motor_names = tuple(_text(name, f"transmission.motors[{k}]")
                        for k, name in enumerate(names or []))
    try:
        return Transmission(reductions, coupling, motor_names)
    except ValueError as error:
        raise ValueError(f"`transmission`: {error}") from None


def _transmission_dict(robot: Robot) -> dict:
    """The ``transmission:`` entry of ``robot`` (nothing for direct drive)."""
    transmission = robot.transmission
    if transmission.direct:
        return {}
    out: dict[str, Any] = {"reductions": transmission.reductions.tolist()}
    if not transmission.uncoupled:
        out["couplings"] = [{"motor": robot.joint_names[k], "joint": robot.joint_names[j],
                             "ratio": ratio} for k, j, ratio in transmission.couplings()]
    if transmission.motor_names != Transmission.identity(robot.n_joints).motor_names:
        out["motors"] = list(transmission.motor_names)
    return {"transmission": out}


def _drive_gains(spec: Any, n: int) -> dict[str, np.ndarray]:
    """The Robot fields of a ``drive_gains:`` entry (``nominal`` and/or ``range``), validated
    (``dynid.robot.check_drive_gains``); empty when the file gives none."""
    if spec is None:
        return {}
    check_keys(_mapping(spec, "drive_gains"), ("nominal", "range"), "drive_gains")
    out: dict[str, np.ndarray] = {}
    if spec.get("nominal") is not None:
        out["drive_gains"] = _numbers(spec["nominal"], n, "drive_gains.nominal")
    if spec.get("range") is not None:
        pairs = spec["range"]
        if not isinstance(pairs, list) or len(pairs) != n:
            raise ValueError(f"`drive_gains.range` must be a list of {n} pairs [lo, hi] (one "
                             f"per joint), got {pairs!r:.80}")
        out["drive_gain_range"] = np.array([_numbers(pair, 2, f"drive_gains.range[{k}]")
                                            for k, pair in enumerate(pairs)])
    if not out:
        raise ValueError("`drive_gains` must give `nominal`, `range` or both")
    check_drive_gains(out.get("drive_gains"), out.get("drive_gain_range"), n)
    return out


def _drive_gains_dict(robot: Robot) -> dict:
    """The ``drive_gains:`` entry of ``robot`` (nothing when it states none)."""
    out = {}
    if robot.drive_gains is not None:
        out["nominal"] = robot.drive_gains.tolist()
    if robot.drive_gain_range is not None:
        out["range"] = robot.drive_gain_range.tolist()
    return {"drive_gains": out} if out else {}


def _limit_overrides(spec: dict | None, limits: JointLimits) -> JointLimits:
    """``limits`` with the entries ``spec`` gives replaced (each one optional)."""
    if spec is None:
        return limits
    check_keys(_mapping(spec, "limits"),
               ("position", "velocity", "acceleration", "torque"), "limits")
    n = limits.n_joints
    values = {"lower": limits.lower, "upper": limits.upper, "velocity": limits.velocity,
              "acceleration": limits.acceleration, "torque": limits.torque}
    if spec.get("position") is not None:
        position = _mapping(spec["position"], "limits.position")
        check_keys(position, ("lower", "upper"), "limits.position")
        for key in ("lower", "upper"):
            if position.get(key) is not None:
                values[key] = _numbers(position[key], n, f"limits.position.{key}",
                                       allow_inf=True)
    for key in ("velocity", "acceleration", "torque"):
        if spec.get(key) is not None:
            values[key] = _numbers(spec[key], n, f"limits.{key}", allow_inf=True)
    return JointLimits(**values)


def _urdf_robot_to_dict(robot: Robot, folder: str | Path | None) -> dict:
    """The ``urdf:`` form of a URDF robot: the file referenced (relative to ``folder``), and
    what the URDF does not say or says otherwise written out."""
    from dynid.robot._urdf import load_urdf
    from dynid.robot._urdf_tree import read_tree

    path = Path(robot.source.url)
    if not robot.source.url or not path.is_file():
        raise ValueError(f"`robot`: {robot.name!r} is a URDF robot whose file "
                         f"{robot.source.url!r} is not found; it cannot be referenced")
    path = path.resolve()
    read = {"xacro_args": dict(robot.source.xacro_args), "packages": dict(robot.source.packages)}
    tip, tool = _tip_and_tool(read_tree(path, **read), robot)
    with warnings.catch_warnings():  # the URDF's own warnings were given when it was loaded
        warnings.simplefilter("ignore")
        described = load_urdf(path, tip=tip, physical=False, **read)
    out: dict[str, Any] = {"schema": SCHEMA, "name": robot.name}
    if robot.description:
        out["description"] = robot.description
    if robot.source.citation:
        out["source"] = {"citation": robot.source.citation}
    out["urdf"] = _reference(path, folder)
    if read["xacro_args"]:
        out["xacro_args"] = read["xacro_args"]
    if read["packages"]:
        out["packages"] = {name: _reference(Path(value), folder)
                           for name, value in read["packages"].items()}
    out["tip"] = tip
    if tool is not None:
        out["tool"] = tool.tolist()
    out["gravity"] = robot.gravity.tolist()
    limits: dict[str, Any] = {}
    position = {key: getattr(robot.limits, key).tolist() for key in ("lower", "upper")
                if not np.array_equal(getattr(robot.limits, key), getattr(described.limits, key))}
    if position:
        limits["position"] = position
    for key in ("velocity", "acceleration", "torque"):
        mine = getattr(robot.limits, key)
        if key == "acceleration" or not np.array_equal(mine, getattr(described.limits, key)):
            limits[key] = mine.tolist()  # acceleration always: a URDF has none, edit them here
    out["limits"] = limits
    same = (robot.parameters.shape == described.parameters.shape and np.allclose(
        robot.parameters, described.parameters, rtol=1e-12, atol=1e-15))
    physical = bool((physical_margin(robot.parameters) >= -PHYSICAL_RTOL).all())
    if not same:
        out["inertia"] = {
            "frame": "link", "about": "origin", **({} if physical else {"physical": False}),
            "links": [{"name": name, "mass": float(pi[MASS]),
                       "first_moment": pi[FIRST_MOMENT].tolist(),
                       "inertia": pi[INERTIA].tolist()}
                      for name, pi in zip(robot.link_names, robot.parameters, strict=True)]}
    elif not physical:
        out["inertia"] = {"physical": False}
    if robot.rotor_inertia.any():
        out["rotor_inertia"] = robot.rotor_inertia.tolist()
    out["friction"] = robot.friction.to_dict()
    out.update(_drive_gains_dict(robot))
    mine, urdfs = robot.transmission, described.transmission
    if not (np.array_equal(mine.matrix, urdfs.matrix)
            and mine.motor_names == urdfs.motor_names):  # the URDF's own is read again
        out["transmission"] = _transmission_dict(robot).get(
            "transmission", {"reductions": [1.0] * robot.n_joints})
    if robot.bounds is not None:
        out["bounds"] = robot.bounds.to_dict()
    return out


def _reference(path: Path, folder: str | Path | None) -> str:
    """``path`` as a robot file at ``folder`` refers to it: relative beside or below the file,
    absolute from afar."""
    path = path.resolve()
    if folder is not None:
        relative = os.path.relpath(path, Path(folder).resolve())
        if not relative.startswith(os.path.join(os.pardir, os.pardir)):
            return relative
    return str(path)


def _tip_and_tool(tree, robot: Robot) -> tuple[str, np.ndarray | None]:
    """The tip link that gives ``robot``'s chain and tool frame: the last moving link, or a
    link fixed to it whose frame is the tool; else the last moving link and the tool."""
    last = robot.link_names[-1]
    scale = max(1.0, float(np.abs(robot.tool[:3, 3]).max()))
    stack = [(last, np.eye(4))]
    while stack:
        link, placement = stack.pop()
        if np.abs(placement - robot.tool).max() <= 1e-12 * scale:
            return link, None
        stack += [(joint.child, placement @ joint.origin) for joint in tree.children.get(link, [])
                  if joint.type == "fixed"]
    return last, np.array(robot.tool)


def _row_dict(row, name: str | None = None) -> dict:
    convention = "mdh" if isinstance(row, (RevoluteMDH, PrismaticMDH)) else "dh"
    kind = "revolute" if isinstance(row, (RevoluteMDH, RevoluteDH)) else "prismatic"
    _, constants, offset = _ROWS[(convention, kind)]
    out = {"name": name, "type": kind} if name else {}
    out.update({key: float(getattr(row, key)) for key in constants})
    out[offset] = float(row.offset)
    return out


def robot_to_dict(robot: Robot, *, folder: str | Path | None = None) -> dict:
    """The ``dynid-robot/1`` mapping of a robot built from an MDH or DH table, or of a URDF
    robot (the ``urdf:`` form, the file referenced relative to ``folder``: where the robot
    file goes; absolute without it).

    Inertia is written ``about: origin`` (the exact 10-vector, valid for zero masses too).
    """
    if robot.table is None and robot.convention == "urdf":
        return _urdf_robot_to_dict(robot, folder)
    if robot.table is None:
        raise ValueError(
            f"`robot`: {robot.name!r} was built from {robot.convention}, not an MDH/DH table; "
            "only table-based robots can be written as dynid-robot/1 files"
        )
    kinematics: dict[str, Any] = {
        "convention": robot.convention,
        "joints": [_row_dict(row, name) for row, name in zip(robot.table, robot.joint_names,
                                                               strict=True)],
    }
    if not np.allclose(robot.tool, np.eye(4)):
        fixed = {"mdh": RevoluteMDH, "dh": RevoluteDH}[robot.convention]
        try:
            kinematics["tool"] = _row_dict(_tool_row(robot.tool, fixed))
        except ValueError:  # no one row gives it (a calibrated tool): the frame itself
            kinematics["tool"] = np.asarray(robot.tool).tolist()
    limits = robot.limits
    return {
        "schema": SCHEMA,
        "name": robot.name,
        "description": robot.description,
        "source": {"citation": robot.source.citation, "url": robot.source.url,
                   "notes": robot.source.notes},
        "kinematics": kinematics,
        "gravity": robot.gravity.tolist(),
        "limits": {
            "position": {"lower": limits.lower.tolist(), "upper": limits.upper.tolist()},
            "velocity": limits.velocity.tolist(),
            "acceleration": limits.acceleration.tolist(),
            "torque": limits.torque.tolist(),
        },
        "inertia": {
            "frame": "link",
            "about": "origin",
            **({} if (physical_margin(robot.parameters) >= -PHYSICAL_RTOL).all()
               else {"physical": False}),
            "links": [
                {"name": name, "mass": float(pi[MASS]),
                 "first_moment": pi[FIRST_MOMENT].tolist(), "inertia": pi[INERTIA].tolist()}
                for name, pi in zip(robot.link_names, robot.parameters, strict=True)
            ],
        },
        **({"rotor_inertia": robot.rotor_inertia.tolist()} if robot.rotor_inertia.any()
           else {}),
        "friction": robot.friction.to_dict(),
        **_drive_gains_dict(robot),
        **_transmission_dict(robot),
        # derived bounds are derived again on loading (the same parameters give the same)
        **({"bounds": robot.bounds.to_dict()} if robot.bounds is not None
           and not robot.bounds.derived else {}),
    }


def _tool_matrix(value: Any, where: str) -> np.ndarray:
    """A tool frame given as a 4 x 4 matrix (4 lists of 4 numbers), checked rigid."""
    if not (isinstance(value, list) and len(value) == 4
            and all(isinstance(row, list) for row in value)):
        raise ValueError(f"`{where}` must be a 4 x 4 matrix (4 lists of 4 numbers), got "
                         f"{value!r:.60}")
    return check_transform(where, np.array(
        [_numbers(row, 4, f"{where}[{k}]") for k, row in enumerate(value)]))


def _tool_row(tool: np.ndarray, row_type):
    """The fixed row that reproduces ``tool`` (ValueError if one row cannot)."""
    rotation, p = tool[:3, :3], tool[:3, 3]
    if row_type is RevoluteMDH:  # Rx(alpha) Tx(a) Rz(theta) Tz(d): p = (a, -s(alpha) d, c(alpha) d)
        alpha = np.arctan2(-rotation[1, 2], rotation[2, 2])
        theta = np.arctan2(-rotation[0, 1], rotation[0, 0])
        d = -np.sin(alpha) * p[1] + np.cos(alpha) * p[2]
        row = RevoluteMDH(a=p[0], alpha=alpha, d=d, offset=theta)
    else:  # Rz(theta) Tz(d) Tx(a) Rx(alpha): p = (a cos(theta), a sin(theta), d)
        theta = np.arctan2(rotation[1, 0], rotation[0, 0])
        alpha = np.arctan2(rotation[2, 1], rotation[2, 2])
        a = np.cos(theta) * p[0] + np.sin(theta) * p[1]
        row = RevoluteDH(d=p[2], a=a, alpha=alpha, offset=theta)
    scale = max(1.0, float(np.abs(p).max()))
    if np.abs(row.fixed() - tool).max() > 1e-12 * scale:
        raise ValueError(
            "`robot.tool` cannot be written as one DH/MDH row; it needs a general frame"
        )
    return row


def save_robot(robot: Robot, path: str | Path) -> None:
    """Write a robot as a ``dynid-robot/1`` YAML file (atomically); a URDF robot's file points
    at its URDF by a path relative to ``path``'s folder."""
    text = dump_yaml(robot_to_dict(robot, folder=Path(path).parent), sort_keys=False,
                     default_flow_style=None)
    atomic_write(path, lambda tmp: tmp.write_text(text))

