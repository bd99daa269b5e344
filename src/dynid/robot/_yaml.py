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
  tool: {a: 0.0, alpha: 0.0, d: 0.107, theta: 0.0}   # optional fixed frame on the last link
gravity: [0.0, 0.0, -9.81]    # base frame, m/s^2
limits:                       # rad or m; per second; N m or N
  position: {lower: [...], upper: [...]}
  velocity: [...]
  acceleration: [...]
  torque: [...]
inertia:
  frame: link                 # each link's own frame of the convention above
  about: com                  # com: mass, com, inertia about the CoM | origin: see below
  links:
    - {name: link1, mass: 4.97, com: [x, y, z], inertia: [xx, xy, xz, yy, yz, zz]}
friction:                     # optional; model: none | viscous-coulomb | arctan | sigmoid | lugre
  model: sigmoid
  parameters: {phi1: [...], phi2: [...], phi3: [...]}
bounds:                       # optional: the search region of feasible-parameter retrieval
  source: "..."
  total_mass: [16.0, 20.0]    # kg
  links:                      # mass [kg]; CoM box in the link frame [m]; inertia about the CoM
    - {mass: [0, 10], com: {lower: [...], upper: [...]},
       inertia: {lower: [xx, xy, xz, yy, yz, zz], upper: [...]}}
```

A revolute row's ``theta`` and a prismatic row's ``d`` are constant offsets added to q.
With ``about: origin`` each link gives ``mass``, ``first_moment`` (m c) and ``inertia`` about the
link-frame origin instead (the 10-vector of ``dynid.robot.inertia``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dynid._files import atomic_write, parse_yaml
from dynid.friction.models import friction_from_dict
from dynid.robot._joint import PrismaticDH, PrismaticMDH, RevoluteDH, RevoluteMDH
from dynid.robot._robot import STANDARD_GRAVITY, JointLimits, Robot, Source
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import FIRST_MOMENT, INERTIA, MASS, N_LINK_PARAMETERS, from_com

__all__ = ["SCHEMA", "load_robot_file", "robot_from_dict", "robot_to_dict", "save_robot"]

SCHEMA = "dynid-robot/1"

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


def _number(value: Any, where: str, *, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"`{where}` must be a number, got {value!r}")
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"`{where}` must be finite, got {value!r}")
    return float(value)


def _numbers(value: Any, size: int, where: str, *, allow_inf: bool = False) -> np.ndarray:
    if not isinstance(value, (list, tuple)) or len(value) != size:
        raise ValueError(f"`{where}` must be a list of {size} numbers, got {value!r}")
    return np.array([_number(v, f"{where}[{k}]", allow_inf=allow_inf)
                     for k, v in enumerate(value)])


def _row(convention: str, spec: dict, where: str):
    kind = _get(spec, "type", where)
    if (convention, kind) not in _ROWS:
        raise ValueError(f"`{where}.type` must be 'revolute' or 'prismatic', got {kind!r}")
    cls, constants, offset = _ROWS[(convention, kind)]
    values = {key: _number(_get(spec, key, where), f"{where}.{key}") for key in constants}
    return cls(**values, offset=_number(spec.get(offset, 0.0), f"{where}.{offset}"))


def _link_parameters(spec: dict, n: int) -> tuple[np.ndarray, tuple[str, ...]]:
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
        names.append(str(link.get("name", f"link{k + 1}")))
    return np.array(params), tuple(names)


def _limits(spec: dict | None, n: int) -> JointLimits:
    if spec is None:
        return JointLimits.unbounded(n)
    position = _get(spec, "position", "limits")

    def read(mapping: dict, key: str, where: str) -> np.ndarray:
        # .inf / -.inf: not specified (a continuous joint, a limit the maker does not publish)
        return _numbers(_get(mapping, key, where), n, f"{where}.{key}", allow_inf=True)

    return JointLimits(
        lower=read(position, "lower", "limits.position"),
        upper=read(position, "upper", "limits.position"),
        velocity=read(spec, "velocity", "limits"),
        acceleration=read(spec, "acceleration", "limits"),
        torque=read(spec, "torque", "limits"),
    )


def robot_from_dict(spec: dict) -> Robot:
    """A Robot from the parsed ``dynid-robot/1`` mapping (ValueError naming any bad field)."""
    if not isinstance(spec, dict):
        raise ValueError(f"a robot file must hold a mapping, got {type(spec).__name__}")
    schema = spec.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise ValueError(f"`schema` must be {SCHEMA!r}, got {schema!r}")
    name = str(_get(spec, "name", "robot"))
    kinematics = _get(spec, "kinematics", "robot")
    convention = _get(kinematics, "convention", "kinematics")
    if convention not in ("mdh", "dh"):
        raise ValueError(f"`kinematics.convention` must be 'mdh' or 'dh', got {convention!r}")
    joint_specs = _get(kinematics, "joints", "kinematics")
    if not isinstance(joint_specs, list) or not joint_specs:
        raise ValueError("`kinematics.joints` must be a non-empty list")
    rows = [_row(convention, j, f"kinematics.joints[{k}]") for k, j in enumerate(joint_specs)]
    n = len(rows)
    tool = None
    if kinematics.get("tool") is not None:
        if not isinstance(kinematics["tool"], dict):
            raise ValueError(f"`kinematics.tool` must be a mapping, got {kinematics['tool']!r}")
        tool = _row(convention, {"type": "revolute", **kinematics["tool"]}, "kinematics.tool")
    parameters, link_names = _link_parameters(_get(spec, "inertia", "robot"), n)
    source = spec.get("source") or {}
    if not isinstance(source, dict):
        raise ValueError(f"`source` must be a mapping (citation, url, notes), got {source!r}")
    build = Robot.from_mdh if convention == "mdh" else Robot.from_dh
    return build(
        name, rows, parameters, tool=tool,
        joint_names=[str(j.get("name", f"joint{k + 1}")) for k, j in enumerate(joint_specs)],
        limits=_limits(spec.get("limits"), n),
        gravity=_numbers(spec.get("gravity", list(STANDARD_GRAVITY)), 3, "gravity"),
        friction=friction_from_dict(spec.get("friction"), n),
        link_names=link_names,
        bounds=(ParameterBounds.from_dict(spec["bounds"], n) if spec.get("bounds") is not None
                else None),
        description=str(spec.get("description", "")),
        source=Source(**{k: str(source.get(k, "")) for k in ("citation", "url", "notes")}),
    )


def load_robot_file(path: str | Path) -> Robot:
    """Read a ``dynid-robot/1`` YAML file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ValueError(f"`path`: cannot read robot file {str(path)!r}: {error}") from None
    try:
        spec = parse_yaml(text)
    except yaml.YAMLError as error:
        raise ValueError(f"`path`: {str(path)!r} is not valid YAML: {error}") from None
    try:
        return robot_from_dict(spec)
    except (ValueError, TypeError) as error:
        raise type(error)(f"{path.name}: {error}") from None


def _row_dict(row, name: str | None = None) -> dict:
    convention = "mdh" if isinstance(row, (RevoluteMDH, PrismaticMDH)) else "dh"
    kind = "revolute" if isinstance(row, (RevoluteMDH, RevoluteDH)) else "prismatic"
    _, constants, offset = _ROWS[(convention, kind)]
    out = {"name": name, "type": kind} if name else {}
    out.update({key: float(getattr(row, key)) for key in constants})
    out[offset] = float(row.offset)
    return out


def robot_to_dict(robot: Robot) -> dict:
    """The ``dynid-robot/1`` mapping of a robot built from an MDH or DH table.

    Inertia is written ``about: origin`` (the exact 10-vector, valid for zero masses too).
    """
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
        kinematics["tool"] = _row_dict(_tool_row(robot.tool, fixed))
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
            "links": [
                {"name": name, "mass": float(pi[MASS]),
                 "first_moment": pi[FIRST_MOMENT].tolist(), "inertia": pi[INERTIA].tolist()}
                for name, pi in zip(robot.link_names, robot.parameters, strict=True)
            ],
        },
        "friction": robot.friction.to_dict(),
        **({"bounds": robot.bounds.to_dict()} if robot.bounds is not None else {}),
    }


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
    """Write a table-based robot as a ``dynid-robot/1`` YAML file (atomically)."""
    text = yaml.safe_dump(robot_to_dict(robot), sort_keys=False, default_flow_style=None)
    atomic_write(path, lambda tmp: tmp.write_text(text))

