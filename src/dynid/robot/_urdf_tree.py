"""A URDF read as a tree by dynid itself, before pinocchio builds the chain from it.

What this adds to pinocchio's parser:

- **safe XML**: the file is read by ``dynid._reading.read_bytes`` (a regular file within the
  size limit) and a document with a DOCTYPE or an entity declaration is refused before it is
  parsed (no entity expansion, no external entities: defusedxml's policy, by hand);
- **the arm's chain**: the movable joints must form one chain from the root, unless a ``tip``
  link is given; then the movable joints on the path from the root to the tip are the arm's and
  every other movable joint (a gripper's fingers, a second arm) is locked at its zero (or the
  limit nearest zero) and carried, as a fixed body, by the link it hangs from. A mimic joint, or
  a trailing joint named like an end effector (gripper, finger, jaw, claw, hand), is never taken
  as an arm joint without a tip;
- **xacro**: a ``.xacro`` description (or a URDF that uses xacro elements) is expanded first
  (``dynid.robot._xacro``), with its arguments and the ROS packages given by name;
- **priors** the URDF states for the drives: ``<dynamics damping friction>`` (viscous and
  Coulomb friction; Franka's ``mu_viscous`` and ``mu_coulomb`` where those are absent) and
  ``<transmission>`` reductions and rotor inertias;
- **geometry** per link (``<collision>``, else ``<visual>``), for derived bounds.
"""

from __future__ import annotations

import hashlib
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

import numpy as np
from numpy.typing import NDArray

from dynid._reading import read_bytes
from dynid.robot._robot import MAX_LENGTH
from dynid.robot._xacro import check_packages, check_xacro_args, expand_xacro, is_xacro

__all__ = ["URDFTree", "URDFWarning", "description_digest", "read_tree"]

MOVABLE = ("revolute", "continuous", "prismatic", "floating", "planar")
JOINT_TYPES = (*MOVABLE, "fixed")
# a trailing joint named like this is an end effector's, not an arm's (unless a tip says so);
# joint names only: a wrist joint's child link is often called "gripper" or "hand"
END_EFFECTOR = re.compile(r"grip|finger|jaw|claw|hand|tool_changer", re.IGNORECASE)
_MAX_LISTED = 12
# elements nested in one another: a URDF needs 4 (robot, link, visual, geometry, mesh); deeper
# is refused before a recursive step (ElementTree's serialiser, urdfdom) meets it
MAX_XML_DEPTH = 64
DERIVED_NOTE = "bounds derived from the description"  # how source.notes says so


class URDFWarning(UserWarning):
    """Something in a URDF that dynid does not read (a transmission of another kind, an
    attribute of ``<dynamics>`` it has no use for): named, never dropped silently."""


def local(tag: str) -> str:
    """An element's name without its namespace (``{http://drake.mit.edu}rotor_inertia``)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def rpy_matrix(rpy: NDArray) -> NDArray:
    """URDF roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def matrix_rpy(rotation: NDArray) -> NDArray:
    """The inverse of ``rpy_matrix`` (pitch in [-pi/2, pi/2])."""
    pitch = np.arctan2(-rotation[2, 0], np.hypot(rotation[0, 0], rotation[1, 0]))
    if np.hypot(rotation[0, 0], rotation[1, 0]) < 1e-12:  # gimbal lock: yaw absorbs roll
        return np.array([np.arctan2(-rotation[1, 2], rotation[1, 1]), pitch, 0.0])
    return np.array([np.arctan2(rotation[2, 1], rotation[2, 2]), pitch,
                     np.arctan2(rotation[1, 0], rotation[0, 0])])


class _Refused(Exception):
    pass


def _refuse(*_args) -> None:
    raise _Refused


def _check_declarations(data: bytes) -> str | None:
    """What makes the document unsafe to parse (a DOCTYPE or an entity declaration, elements
    nested deeper than ``MAX_XML_DEPTH``), if any. Expat reads by events: no recursion."""
    parser = expat.ParserCreate()
    found: list[str] = []
    depth = [0]

    def start(*_args) -> None:
        depth[0] += 1
        if depth[0] > MAX_XML_DEPTH:
            found.append(f"elements nested more than {MAX_XML_DEPTH} deep (line "
                         f"{parser.CurrentLineNumber}; a URDF needs 5)")
            raise _Refused

    def end(*_args) -> None:
        depth[0] -= 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end

    def doctype(*_args) -> None:
        found.append("a DOCTYPE declaration")
        raise _Refused

    def entity(*_args) -> None:
        found.append("an entity declaration")
        raise _Refused

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    parser.ExternalEntityRefHandler = _refuse
    try:
        parser.Parse(data, True)
    except _Refused:
        return found[0] if found else "an external entity"
    except expat.ExpatError:
        return None  # malformed: ElementTree names the fault below
    return None


@dataclass(frozen=True)
class URDFJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: NDArray  # (4, 4): the joint frame in the parent link's frame
    axis: NDArray  # (3,)
    lower: float | None
    upper: float | None
    mimic: str | None
    element: ET.Element = field(repr=False)


@dataclass
class URDFTree:
    """The links and joints of a URDF, as the file states them (a xacro's as expanded)."""

    path: Path
    root_element: ET.Element
    name: str
    links: dict[str, ET.Element]
    joints: dict[str, URDFJoint]
    parent_joint: dict[str, URDFJoint]  # link -> the joint that carries it
    children: dict[str, list[URDFJoint]]  # link -> the joints it carries
    root: str
    packages: dict[str, str] = field(default_factory=dict)  # ROS package folders given by name
    xacro_args: dict[str, str] = field(default_factory=dict)  # a xacro's arguments, as given
    digest: str = ""  # sha256 of the file (of every file a xacro read: dynid.robot._xacro)
    xacro_warnings: tuple[str, ...] = ()

    def fail(self, message: str) -> ValueError:
        return ValueError(f"`path`: cannot parse URDF {str(self.path)!r}: {message}")

    def path_to(self, link: str) -> list[URDFJoint]:
        """The joints from the root to ``link``, root first."""
        out = []
        while link in self.parent_joint:
            joint = self.parent_joint[link]
            out.append(joint)
            link = joint.parent
        return out[::-1]

    def movable(self) -> list[URDFJoint]:
        return [j for j in self.joints.values() if j.type in MOVABLE]

    def movable_ancestor(self, joint: URDFJoint) -> URDFJoint | None:
        """The nearest movable joint above ``joint`` (None: it hangs from the root body)."""
        link = joint.parent
        while link in self.parent_joint:
            above = self.parent_joint[link]
            if above.type in MOVABLE:
                return above
            link = above.parent
        return None

    def subtree_links(self, link: str) -> list[str]:
        out, stack = [], [link]
        while stack:
            current = stack.pop()
            out.append(current)
            stack.extend(j.child for j in self.children.get(current, []))
        return out

    def leaves_below(self, joint: URDFJoint) -> list[str]:
        return [link for link in self.subtree_links(joint.child) if not self.children.get(link)]


def _floats(text: str | None, count: int, where: str, tree_fail, default=None) -> NDArray:
    if text is None:
        if default is None:
            raise tree_fail(f"{where} is missing")
        return np.array(default, dtype=float)
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        raise tree_fail(f"{where} must be {count} numbers, got {text!r:.60}") from None
    if values.size != count or not np.isfinite(values).all():
        raise tree_fail(f"{where} must be {count} finite numbers, got {text!r:.60}")
    return values


def origin_matrix(element: ET.Element | None, where: str, fail) -> NDArray:
    """The (4, 4) transform of an ``<origin xyz rpy>`` element (identity when absent)."""
    out = np.eye(4)
    if element is None:
        return out
    out[:3, 3] = _floats(element.get("xyz"), 3, f"{where} origin xyz", fail, (0.0, 0.0, 0.0))
    if np.abs(out[:3, 3]).max() > MAX_LENGTH:
        raise fail(f"{where} origin xyz must lie within {MAX_LENGTH:g} m "
                   f"(dynid.robot.MAX_LENGTH: the dynamics would overflow), got "
                   f"{element.get('xyz')!r:.60}")
    out[:3, :3] = rpy_matrix(_floats(element.get("rpy"), 3, f"{where} origin rpy", fail,
                                     (0.0, 0.0, 0.0)))
    return out


def _parse(data: bytes, fail) -> ET.Element:
    refused = _check_declarations(data)
    if refused is not None:
        raise fail(f"it holds {refused}, which dynid refuses (no DTDs, entities or deep "
                   "nesting in a URDF)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as error:
        raise fail(f"{error} (not well-formed XML)") from None


def _uses_xacro(root: ET.Element) -> bool:
    return any("xacro" in element.tag.partition("}")[0] for element in root.iter()
               if isinstance(element.tag, str) and element.tag.startswith("{"))


def read_tree(path: str | Path, *, xacro_args: Mapping[str, object] | None = None,
              packages: Mapping[str, str | Path] | None = None) -> URDFTree:
    """The URDF at ``path`` as a tree (ValueError for an unsafe or malformed file, a link with
    two parents, or no single root). A xacro (``.xacro``, or a URDF that uses xacro elements)
    is expanded with ``xacro_args``; ``packages`` maps ROS package names to folders, for
    ``$(find NAME)`` and ``package://NAME`` (``dynid.robot._packages``)."""
    path = Path(path)
    xacro_args, packages = check_xacro_args(xacro_args), check_packages(packages)

    def fail(message: str) -> ValueError:
        return ValueError(f"`path`: cannot parse URDF {str(path)!r}: {message}")

    expansion = None
    if is_xacro(path):
        expansion = expand_xacro(path, args=xacro_args, packages=packages)
        root = _parse(expansion.text.encode("utf-8"), fail)
    else:
        data = read_bytes(path, what="URDF")
        root = _parse(data, fail)
        if _uses_xacro(root):  # a xacro named .urdf: expanded as it is meant to be
            expansion = expand_xacro(path, args=xacro_args, packages=packages)
            root = _parse(expansion.text.encode("utf-8"), fail)
        elif xacro_args:
            raise ValueError(f"`xacro_args`: {str(path)!r} is a URDF, not a xacro; it takes "
                             "no arguments")
    digest = expansion.digest if expansion else hashlib.sha256(data).hexdigest()
    if local(root.tag) != "robot":
        raise fail(f"the document element must be <robot>, got <{local(root.tag)}>")
    links: dict[str, ET.Element] = {}
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise fail("a <link> has no name")
        if name in links:
            raise fail(f"link {name!r} is defined twice")
        links[name] = element
    joints: dict[str, URDFJoint] = {}
    parent_joint: dict[str, URDFJoint] = {}
    children: dict[str, list[URDFJoint]] = {}
    for element in root.findall("joint"):
        name = element.get("name")
        if not name:
            raise fail("a <joint> has no name")
        if name in joints:
            raise fail(f"joint {name!r} is defined twice")
        kind = element.get("type")
        if kind not in JOINT_TYPES:
            raise fail(f"joint {name!r} has type {kind!r}; URDF joints are "
                       f"{', '.join(JOINT_TYPES)}")
        parent = (element.find("parent").get("link")
                  if element.find("parent") is not None else None)
        child = (element.find("child").get("link")
                 if element.find("child") is not None else None)
        for role, link in (("parent", parent), ("child", child)):
            if not link:
                raise fail(f"joint {name!r} has no <{role} link=...>")
            if link not in links:
                raise fail(f"joint {name!r} names the {role} link {link!r}, which is not defined")
        where = f"joint {name!r}"
        axis_element = element.find("axis")
        axis = _floats(axis_element.get("xyz") if axis_element is not None else None, 3,
                       f"{where} axis xyz", fail, (1.0, 0.0, 0.0))
        limit = element.find("limit")
        lower = upper = None
        if limit is not None and kind in ("revolute", "prismatic"):
            lower = float(_floats(limit.get("lower"), 1, f"{where} limit lower", fail, (0.0,))[0])
            upper = float(_floats(limit.get("upper"), 1, f"{where} limit upper", fail, (0.0,))[0])
            if lower == upper == 0.0:
                lower = upper = None  # urdfdom's default: not specified
        mimic = element.find("mimic")
        joint = URDFJoint(name=name, type=kind, parent=parent, child=child,
                          origin=origin_matrix(element.find("origin"), where, fail), axis=axis,
                          lower=lower, upper=upper,
                          mimic=mimic.get("joint", "?") if mimic is not None else None,
                          element=element)
        if child in parent_joint:
            raise fail(f"link {child!r} has two parent joints ({parent_joint[child].name!r}, "
                       f"{name!r}) (dynid needs a serial chain: one parent joint per link, "
                       "no loops)")
        joints[name] = joint
        parent_joint[child] = joint
        children.setdefault(parent, []).append(joint)
    if not links:
        raise fail("it has no <link> (a URDF names its links, a root link first, and the "
                   "joints between them)")
    roots = [link for link in links if link not in parent_joint]
    if len(roots) != 1:
        detail = "none (a loop)" if not roots else ", ".join(map(repr, roots[:_MAX_LISTED]))
        raise fail(f"a URDF has one root link, this one {detail} (dynid needs a serial chain: "
                   "one parent joint per link, no loops)")
    return URDFTree(path=path, root_element=root, name=root.get("name") or path.stem,
                    links=links, joints=joints, parent_joint=parent_joint, children=children,
                    root=roots[0], packages=packages, xacro_args=xacro_args, digest=digest,
                    xacro_warnings=expansion.warnings if expansion else ())


def description_digest(path: str | Path, *, xacro_args: Mapping[str, object] | None = None,
                       packages: Mapping[str, str | Path] | None = None) -> str:
    """The sha256 a model file checks its robot's description by: of the URDF file, or of
    every file a xacro reads (includes, YAML), in order (``dynid.robot._xacro``)."""
    return read_tree(path, xacro_args=xacro_args, packages=packages).digest


def _listing(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_MAX_LISTED])
    return shown + (f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else "")


def _unique_chains(tree: URDFTree, links: list[str]) -> list[str]:
    """``links`` less those whose chain of movable joints an earlier one already gives."""
    seen, out = set(), []
    for link in links:
        chain = tuple(j.name for j in tree.path_to(link) if j.type in MOVABLE)
        if chain not in seen:
            seen.add(chain)
            out.append(link)
    return out


def select_chain(tree: URDFTree, tip: str | None) -> tuple[list[URDFJoint], list[URDFJoint]]:
    """The arm's joints (root to tip) and the movable joints to lock (see the module)."""
    source = repr(str(tree.path))
    movable = tree.movable()
    if tip is not None:
        if not isinstance(tip, str) or tip not in tree.links:
            raise ValueError(f"`tip`: URDF {source} has no link {tip!r}; its links: "
                             f"{_listing(list(tree.links))}")
        arm = [j for j in tree.path_to(tip) if j.type in MOVABLE]
        if not arm:
            raise ValueError(f"`tip`: no moving joint between the root link {tree.root!r} and "
                             f"{tip!r} in URDF {source}")
        for joint in arm:
            if joint.mimic is not None:
                raise ValueError(
                    f"`tip`: joint {joint.name!r} on the chain to {tip!r} is a mimic joint "
                    f"(it follows {joint.mimic!r}); dynid needs independent joints: give a tip "
                    f"before it, such as {joint.parent!r}")
        names = {j.name for j in arm}
        return arm, [j for j in movable if j.name not in names]
    if not movable:
        raise ValueError(f"`path`: URDF {source} has no moving joint")
    followers: dict[str | None, list[URDFJoint]] = {}
    for joint in movable:
        above = tree.movable_ancestor(joint)
        followers.setdefault(above.name if above else None, []).append(joint)
    branching = [key for key, group in followers.items() if len(group) > 1]
    if branching:
        # the branch nearest the root: the one whose common link has the shortest path
        def depth(key: str | None) -> int:
            return 0 if key is None else len(tree.path_to(tree.joints[key].child))

        key = min(branching, key=depth)
        siblings = followers[key]
        paths = [[tree.root, *(j.child for j in tree.path_to(s.parent))] for s in siblings]
        common = [links[0] for links in zip(*paths, strict=False) if len(set(links)) == 1]
        branch = common[-1]
        before = [branch] if any(j.type in MOVABLE for j in tree.path_to(branch)) else []
        leaves = _unique_chains(tree, before + [leaf for s in siblings
                                                for leaf in tree.leaves_below(s)])
        raise ValueError(
            f"`path`: URDF {source} is a tree, not a serial chain: joints "
            f"{[s.name for s in siblings]} share the parent {branch!r}; give the tip link of "
            f"the arm (load_urdf(path, tip=...), `tip:` in a robot file, --tip): one of "
            f"{_listing(leaves)}"
            + (f" ({branch!r}: the joints after it are locked and carried by the last arm "
               "link)" if before else ""))
    chain, key = [], None
    while key in followers:
        chain.append(followers[key][0])
        key = chain[-1].name
    for joint in chain:
        if joint.mimic is not None:
            raise ValueError(
                f"`path`: joint {joint.name!r} has unsupported type mimic (it follows "
                f"{joint.mimic!r}); dynid supports revolute, continuous and prismatic joints "
                f"(no mimic joints): give a tip link before it, such as tip={joint.parent!r}, "
                "and it is locked")
    trailing = []
    for joint in reversed(chain):
        if not END_EFFECTOR.search(joint.name):
            break
        trailing.append(joint)
    if trailing and len(trailing) < len(chain):
        first = trailing[-1]
        raise ValueError(
            f"`path`: URDF {source}: joint {first.name!r} looks like an end effector's "
            f"(gripper, finger, jaw, hand), not an arm joint; give the tip link of the arm: "
            f"tip={first.parent!r} (the joints after it are locked and carried by the last "
            f"arm link), or tip={chain[-1].child!r} to take them as arm joints")
    return chain, []


def _lock_value(joint: URDFJoint) -> float:
    low = joint.lower if joint.lower is not None else -np.inf
    high = joint.upper if joint.upper is not None else np.inf
    return float(np.clip(0.0, low, high))


def _motion(joint: URDFJoint, q: float) -> NDArray:
    out = np.eye(4)
    axis = joint.axis / max(np.linalg.norm(joint.axis), 1e-300)
    if joint.type == "prismatic":
        out[:3, 3] = q * axis
    elif joint.type in ("revolute", "continuous"):
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        out[:3, :3] = np.eye(3) + np.sin(q) * k + (1 - np.cos(q)) * k @ k
    return out


def locked_document(tree: URDFTree, locked: list[URDFJoint]) -> tuple[str, list[str]]:
    """The URDF as text with the ``locked`` joints made fixed at their lock values, and a line
    for each lock."""
    if not locked:
        return ET.tostring(tree.root_element, encoding="unicode"), []
    document = ET.fromstring(ET.tostring(tree.root_element))  # a copy
    elements = {e.get("name"): e for e in document.findall("joint")}
    lines = []
    for joint in locked:
        element = elements[joint.name]
        q = _lock_value(joint)
        placement = joint.origin @ _motion(joint, q)
        element.set("type", "fixed")
        for tag in ("mimic", "limit", "dynamics", "safety_controller", "calibration", "axis",
                    "origin"):
            for child in element.findall(tag):
                element.remove(child)
        origin = ET.SubElement(element, "origin")
        origin.set("xyz", " ".join(f"{v:.17g}" for v in placement[:3, 3]))
        origin.set("rpy", " ".join(f"{v:.17g}" for v in matrix_rpy(placement[:3, :3])))
        lines.append(f"{joint.name} at {q:g}")
    return ET.tostring(document, encoding="unicode"), lines


# --- priors: <dynamics>, <transmission> --------------------------------------------------------

# <dynamics> attributes read as the friction prior, by what they become: the URDF standard's
# (damping: viscous fv [N m s/rad; N s/m prismatic], friction: Coulomb fc [N m; N]) and, where
# a joint lacks one, franka_description's (FR3, FER, FP3 write both; Franka documents neither
# mu_*, and its mu_viscous of 16 N m s/rad beside damping 0.003 is no joint's viscous friction:
# the standard attribute wins wherever both are given)
_DYNAMICS_FRICTION = {"fv": ("damping", "mu_viscous"), "fc": ("friction", "mu_coulomb")}
# franka_description's other <dynamics> attributes: not friction, no use to rigid joints
_DYNAMICS_NOTED = ("D", "K")


@dataclass
class Priors:
    """What the URDF says of the arm's drives, per arm joint, and what it said that dynid
    did not read."""

    damping: NDArray
    friction: NDArray
    has_dynamics: bool
    reduction: NDArray  # nan: not given
    rotor_inertia: NDArray  # reflected to the joint; nan: not given
    notes: list[str]
    ignored: list[str]
    # G's off-diagonal entries (motor k, joint j) -> G[k, j] (a differential's), and the
    # actuators' names by the joint each drives
    coupling: dict[tuple[int, int], float] = field(default_factory=dict)
    motors: dict[int, str] = field(default_factory=dict)


def _number(text: str | None, where: str, tree: URDFTree) -> float:
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise tree.fail(f"{where} must be a number, got {text!r:.40}") from None
    if not np.isfinite(value):
        raise tree.fail(f"{where} must be finite, got {text!r:.40}")
    return value


def _value(element: ET.Element, where: str, tree: URDFTree) -> float:
    """A number given as ``value="..."`` (drake:...) or as the element's text."""
    text = element.get("value") if element.get("value") is not None else (element.text or "")
    return _number(text.strip(), where, tree)


def read_priors(tree: URDFTree, arm: list[URDFJoint]) -> Priors:
    """The arm joints' friction prior from ``<dynamics>`` (``_DYNAMICS_FRICTION``), and the
    transmissions' reductions and rotor inertias (``<actuator><mechanicalReduction>``; Drake's
    ``drake:rotor_inertia`` and ``drake:gear_ratio``: reflected inertia
    ``gear_ratio^2 rotor_inertia``)."""
    n = len(arm)
    index = {j.name: k for k, j in enumerate(arm)}
    values = {"fv": np.zeros(n), "fc": np.zeros(n)}
    notes: list[str] = []
    ignored: list[str] = []
    has_dynamics = False
    unknown: dict[str, list[str]] = {}
    # (attribute read, attribute passed over, its value, what it became) -> joints
    read_by: dict[tuple[str, ...], list[str]] = {}
    noted: dict[str, list[str]] = {}
    known = {a for pair in _DYNAMICS_FRICTION.values() for a in pair}
    for k, joint in enumerate(arm):
        element = joint.element.find("dynamics")
        if element is None:
            continue
        has_dynamics = True
        for attribute in element.attrib:
            if attribute in _DYNAMICS_NOTED:
                noted.setdefault(attribute, []).append(joint.name)
            elif attribute not in known:
                unknown.setdefault(attribute, []).append(joint.name)
        for key, (standard, franka) in _DYNAMICS_FRICTION.items():
            given = {a: _number(element.get(a), f"joint {joint.name!r} dynamics {a}", tree)
                     for a in (standard, franka) if element.get(a) is not None}
            if not given:
                continue
            chosen = standard if standard in given else franka
            values[key][k] = given[chosen]
            if chosen == franka:
                read_by.setdefault((franka, key), []).append(joint.name)
            elif franka in given and given[franka] != given[standard]:
                read_by.setdefault((standard, franka, f"{given[franka]:g}",
                                    f"{given[standard]:g}"), []).append(joint.name)
    every = [j.name for j in arm]
    ignored += _by_joints(unknown, every)
    if has_dynamics:
        notes.append("friction prior from <dynamics>: damping as viscous fv [N m s/rad], "
                     "friction as Coulomb fc [N m]")
    for key, names in read_by.items():
        joints = _joints(names, every)
        if len(key) == 2:
            notes.append(f"Franka's {key[0]} as {key[1]} ({joints}: no "
                         f"{_DYNAMICS_FRICTION[key[1]][0]} given)")
        else:
            standard, franka, passed, used = key
            notes.append(f"{standard} {used} read, not Franka's {franka} {passed} ({joints}: "
                         "the URDF standard's attribute first)")
    notes += [f"{line} not read: franka_description's, not friction"
              for line in _by_joints(noted, every)]
    reduction, rotor = np.full(n, np.nan), np.full(n, np.nan)
    priors = Priors(damping=values["fv"], friction=values["fc"], has_dynamics=has_dynamics,
                    reduction=reduction, rotor_inertia=rotor, notes=notes, ignored=ignored)
    # the URDF's own and ros2_control's (<ros2_control><transmission>, <plugin> for <type>)
    for element in [*tree.root_element.findall("transmission"),
                    *tree.root_element.findall("ros2_control/transmission")]:
        if _kind(element).endswith("DifferentialTransmission"):
            _read_differential(element, tree, index, priors)
        else:
            _read_transmission(element, tree, index, reduction, rotor, notes, ignored,
                               priors.motors)
    return priors


def _joints(names: list[str], every: list[str]) -> str:
    if len(names) > 1 and names == every:
        return f"all {len(names)} arm joints"
    return f"joint{'s' if len(names) > 1 else ''} {', '.join(names)}"


def _by_joints(attributes: dict[str, list[str]], every: list[str]) -> list[str]:
    """``{attribute: joints}`` as lines, attributes of the same joints in one."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for attribute, names in attributes.items():
        groups.setdefault(tuple(names), []).append(attribute)
    return [f"<dynamics> attribute{'s' if len(group) > 1 else ''} {', '.join(group)} "
            f"({_joints(list(names), every)})" for names, group in groups.items()]


_KNOWN_INTERFACE = ("hardwareInterface", "role")
MAX_REFLECTED_INERTIA = 1e12  # kg m^2: MAX_MASS MAX_LENGTH^2, as a link's inertia


def _kind(element) -> str:
    """A transmission's type: ``type=``, ``<type>`` (ROS) or ``<plugin>`` (ros2_control)."""
    return element.get("type") or (element.findtext("type") or element.findtext("plugin")
                                   or "").strip()


def _reduction_of(part, where: str, tree: URDFTree) -> float:
    """A ``<joint>``'s or ``<actuator>``'s mechanical reduction (default 1, as ros2_control)."""
    for child in part:
        if local(child.tag) in ("mechanicalReduction", "mechanical_reduction"):
            return _value(child, f"{where} {local(child.tag)}", tree)
    return 1.0


def _by_role(parts, prefix: str) -> list:
    """``parts`` ordered by their role (``role="joint1"`` or ``<role>``), else as written."""
    def role(part) -> str:
        return part.get("role") or (part.findtext("role") or "").strip()
    roles = [role(part) for part in parts]
    if sorted(roles) == [f"{prefix}1", f"{prefix}2"]:
        return [part for _, part in sorted(zip(roles, parts, strict=True))]
    return list(parts)


def _read_differential(element, tree: URDFTree, index: dict, priors: Priors) -> None:
    """A differential (ros2_control's ``DifferentialTransmission``): actuators ``a1, a2``
    with reductions ``ar1, ar2`` drive joints ``j1, j2`` (``jr1, jr2``), ``a1 = ar1 (jr1 j1 +
    jr2 j2)``, ``a2 = ar2 (jr1 j1 - jr2 j2)``: G's 2 x 2 block, actuator k the motor of joint
    k; an actuator's ``drake:rotor_inertia`` reflected by ``G[k, k]^2``."""
    name = element.get("name", "?")
    where = f"transmission {name!r}"
    kind = _kind(element)
    joints = _by_role(element.findall("joint"), "joint")
    actuators = _by_role(element.findall("actuator"), "actuator")
    names = [j.get("name") for j in joints]
    driven = set(np.flatnonzero(np.isfinite(priors.reduction))) | {k for k, _ in priors.coupling}
    reason = None
    if len(joints) != 2 or len(actuators) != 2:
        reason = "a differential has 2 joints and 2 actuators"
    elif not all(n in index for n in names):
        reason = "not all its joints are arm joints"
    elif names[0] == names[1] or {index[n] for n in names} & driven:
        reason = "a joint it drives is driven by another transmission"
    if reason is not None:
        priors.ignored.append(f"{where} ({kind}, {len(joints)} joints, {len(actuators)} "
                              f"actuators): {reason}")
        return
    a, b = (index[n] for n in names)
    jr = [_reduction_of(j, where, tree) for j in joints]
    ar = [_reduction_of(x, where, tree) for x in actuators]
    block = {(a, a): ar[0] * jr[0], (a, b): ar[0] * jr[1], (b, a): ar[1] * jr[0],
             (b, b): -ar[1] * jr[1]}
    priors.reduction[a], priors.reduction[b] = block[a, a], block[b, b]
    priors.coupling[a, b], priors.coupling[b, a] = block[a, b], block[b, a]
    for k, actuator in zip((a, b), actuators, strict=True):
        if actuator.get("name"):
            priors.motors[k] = actuator.get("name")
        for child in actuator:
            if local(child.tag) == "rotor_inertia":
                value = _value(child, f"{where} rotor_inertia", tree)
                if value < 0:
                    raise tree.fail(f"{where} rotor_inertia must be >= 0, got {value}")
                reflected = block[k, k] ** 2 * value if abs(block[k, k]) < 1e150 else np.inf
                if not reflected <= MAX_REFLECTED_INERTIA:
                    raise tree.fail(f"{where}: the reflected rotor inertia {reflected:.3g} "
                                    f"kg m^2 is beyond {MAX_REFLECTED_INERTIA:g}; check the "
                                    "reductions and the rotor inertia")
                priors.rotor_inertia[k] = reflected
    priors.notes.append(f"{where}: a differential of {names[0]} and {names[1]} (G block "
                        f"[[{block[a, a]:g}, {block[a, b]:g}], [{block[b, a]:g}, "
                        f"{block[b, b]:g}]])")


def _read_transmission(element, tree, index, reduction, rotor, notes, ignored,
                       motors=None) -> None:
    name = element.get("name", "?")
    where = f"transmission {name!r}"
    kind = _kind(element)
    joints = element.findall("joint")
    actuators = element.findall("actuator")
    arm_joints = [j.get("name") for j in joints if j.get("name") in index]
    if not arm_joints:
        if joints:
            notes.append(f"{where} drives {', '.join(str(j.get('name')) for j in joints)}, "
                         "not an arm joint: not read")
        return
    simple = kind == "" or kind.endswith("SimpleTransmission")
    if not simple or len(joints) != 1 or len(actuators) > 1:
        ignored.append(f"{where} ({kind or 'no type'}, {len(joints)} joints, {len(actuators)} "
                       "actuators): only simple one-joint transmissions are read")
        return
    k = index[arm_joints[0]]
    ratio = rotor_value = gear = None
    for child in element:
        tag = local(child.tag)
        if tag in ("type", "plugin", "joint", "actuator"):
            continue
        if tag == "mechanicalReduction":  # the pre-Indigo form, at the transmission's level
            ratio = _value(child, f"{where} mechanicalReduction", tree)
        else:
            ignored.append(f"{where}: <{tag}>")
    parts = [*joints, *actuators]
    for part in parts:
        for child in part:
            tag = local(child.tag)
            if tag in _KNOWN_INTERFACE:
                continue
            if tag in ("mechanicalReduction", "mechanical_reduction"):
                ratio = _value(child, f"{where} {tag}", tree)
            elif tag == "rotor_inertia":
                rotor_value = _value(child, f"{where} rotor_inertia", tree)
            elif tag == "gear_ratio":
                gear = _value(child, f"{where} gear_ratio", tree)
            else:
                ignored.append(f"{where}: <{local(part.tag)}><{tag}>")
    if ratio is not None or gear is not None:
        reduction[k] = gear if gear is not None else ratio
    if motors is not None and actuators and actuators[0].get("name"):
        motors[k] = actuators[0].get("name")
    if rotor_value is not None:
        if rotor_value < 0:
            raise tree.fail(f"{where} rotor_inertia must be >= 0, got {rotor_value}")
        factor = gear if gear is not None else (ratio if ratio is not None else 1.0)
        reflected = float(np.float64(factor) ** 2 * rotor_value) if abs(factor) < 1e150 \
            else np.inf  # float ** 2 raises OverflowError past 1e154
        if not reflected <= MAX_REFLECTED_INERTIA:
            raise tree.fail(
                f"{where}: the reflected rotor inertia (reduction {factor:g})^2 x "
                f"rotor_inertia {rotor_value:g} = {reflected:.3g} kg m^2 is beyond "
                f"{MAX_REFLECTED_INERTIA:g} (the dynamics would overflow); check the "
                "reduction and the rotor inertia")
        rotor[k] = reflected


def warn_ignored(path: Path, ignored: list[str]) -> None:
    if ignored:
        warnings.warn(f"{path.name}: not read by dynid: {'; '.join(ignored)}", URDFWarning,
                      stacklevel=3)
