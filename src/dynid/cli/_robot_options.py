"""The robot a command reads: its options (--tip, --gravity, --rtol, --package-path,
--xacro-arg), the robot loaded with them, bounds files, a model or robot file, joints named or
numbered, contacts.

Library code is imported inside the functions, so that building the parser imports nothing
heavy."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._parsing import Range, options_named

ROBOT_HELP = "built-in robot name, or a .yaml / .urdf / .urdf.xacro file"


def rtol_option(parser: argparse.ArgumentParser) -> None:
    """--rtol: the relative rank tolerance of the base-parameter count."""
    parser.add_argument("--rtol", type=Range(float, high=0.5, above=0), metavar="RTOL",
                        help="relative rank tolerance of the base-parameter count: singular "
                             "values of the structural regressor below RTOL times the largest "
                             "count as zero (default 1e-4, STRUCTURAL_RTOL in "
                             "dynid.model.base_parameters: it absorbs angles written "
                             "rounded to 4-5 decimals)")


def _pair(text: str, separators: tuple[str, ...], form: str) -> tuple[str, str]:
    for separator in separators:
        name, found, value = text.partition(separator)
        if found and name.strip():
            return name.strip(), value
    raise argparse.ArgumentTypeError(f"expected {form}, got {text!r}")


def _package_path(text: str) -> tuple[str, str]:
    return _pair(text, ("=",), "NAME=DIR")


def _xacro_arg(text: str) -> tuple[str, str]:
    return _pair(text, (":=", "="), "NAME:=VALUE")


def description_options(parser: argparse.ArgumentParser) -> None:
    """How a URDF or xacro robot is read: --package-path, --xacro-arg (see `description`)."""
    parser.add_argument("--package-path", action="append", type=_package_path,
                        metavar="NAME=DIR",
                        help="where ROS package NAME is, for a xacro's $(find NAME) and "
                             "package://NAME meshes (repeatable; looked for first, before a "
                             "folder NAME above the file, ROS_PACKAGE_PATH and "
                             "AMENT_PREFIX_PATH)")
    parser.add_argument("--xacro-arg", action="append", type=_xacro_arg, metavar="NAME:=VALUE",
                        help="an argument of the robot's xacro (repeatable; NAME=VALUE too), "
                             "e.g. ur_type:=ur5e; one the xacro does not have is an error")


def description(args: argparse.Namespace, *, main: bool = True) -> dict:
    """``load_robot``'s ``packages`` and ``xacro_args`` from --package-path and --xacro-arg:
    the packages for every robot a command reads, the xacro arguments for its ROBOT argument
    (``main``; a --prior or --controller xacro takes its arguments from a robot file)."""
    out = {}
    for option, dest, key in (("--package-path", "package_path", "packages"),
                              ("--xacro-arg", "xacro_arg", "xacro_args")):
        pairs = getattr(args, dest, None) or []
        names = [name for name, _ in pairs]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"`{option}` gives {', '.join(twice)} more than once")
        if key == "packages" or main:
            out[key] = dict(pairs)
    return out


def robot_options(parser: argparse.ArgumentParser) -> None:
    """How the robot argument is read: --tip, --gravity, --package-path, --xacro-arg (see
    `loaded_robot`)."""
    parser.add_argument("--tip", metavar="LINK",
                        help="a tree URDF (an arm with a gripper): the link where the arm "
                             "ends; the joints off its chain are locked")
    parser.add_argument("--gravity", type=Range(float, -1e3, 1e3), nargs="+",
                        metavar="G",
                        help="gravity: a magnitude [m/s^2] along the robot's own gravity "
                             "direction (e.g. 9.80665, local g), or the vector X Y Z in the "
                             "base frame (a tilted mounting); default: the robot file's")
    description_options(parser)


def loaded_robot(args: argparse.Namespace, path: str | None = None, option: str = "robot"):
    """The robot named by ``path`` (default ``args.robot``) with the --tip, --gravity,
    --package-path and --xacro-arg options (``description``); a robot that cannot be loaded is
    named by ``option`` (the positional ``robot``, or ``--prior``, ``--controller``)."""
    from dynid.robot import load_robot

    with options_named({"name_or_path": option, "path": option, "tip": "--tip",
                        "xacro_args": "--xacro-arg", "packages": "--package-path"}):
        robot = load_robot(path if path is not None else args.robot,
                           tip=getattr(args, "tip", None), **description(args, main=path is None))
    return with_gravity(robot, getattr(args, "gravity", None))


def with_gravity(robot, gravity):
    """``robot`` with --gravity applied: a magnitude along its gravity direction, or a
    vector."""
    import dataclasses

    import numpy as np

    if gravity is None:
        return robot
    if len(gravity) == 3:
        return dataclasses.replace(robot, gravity=np.array(gravity, dtype=float))
    if len(gravity) != 1 or not gravity[0] > 0:
        raise ValueError(f"`--gravity` takes a magnitude > 0 or three components X Y Z, got "
                         f"{' '.join(map(str, gravity))}")
    direction = np.asarray(robot.gravity, dtype=float)
    norm = float(np.linalg.norm(direction))
    if norm == 0:
        raise ValueError(f"`--gravity`: {robot.name!r} has no gravity direction to scale; give "
                         "the vector X Y Z")
    return dataclasses.replace(robot, gravity=direction / norm * gravity[0])


def joint_keys(texts: list[str] | None) -> list[int | str] | None:
    """--joints as typed: numbers (from 1) as ints, names as text."""
    if texts is None:
        return None
    from dynid._validation import is_index

    return [int(text) if is_index(text) else text for text in texts]


def bounds_file(path: str, n_links: int):
    """A bounds file: the robot file's ``bounds:`` block as a YAML mapping (``links``,
    ``total_mass``, ``source``), or a mapping holding just that block under ``bounds``."""
    from dynid._reading import load_yaml
    from dynid.robot.bounds import ParameterBounds

    spec = load_yaml(path, what="bounds file")
    if isinstance(spec, dict) and set(spec) == {"bounds"}:
        spec = spec["bounds"]
    if not isinstance(spec, dict):
        raise ValueError(f"`--bounds`: {path} must hold the robot file's `bounds:` mapping "
                         "(links, total_mass)")
    try:
        return ParameterBounds.from_dict(spec, n_links)
    except (ValueError, TypeError) as error:
        raise ValueError(f"`--bounds`: {path}: {error}") from None


def robot_argument(text: str) -> str:
    """An argparse ``type`` for an option naming a robot (``--prior``): a built-in name or a
    file, never empty — an empty value would read as "not given" and silently mean the
    default."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a built-in robot name or a robot file, got {text!r}")
    return text


def model_or_robot(path: str, tip: str | None = None, *, xacro_args: dict | None = None,
                   packages: dict | None = None):
    """A ``dynid-model/1`` file as a LinearModel; anything else (a built-in name, a robot file,
    a URDF, a xacro) as a robot, its chain ending at ``tip`` (--tip: a tree URDF's) when given,
    a xacro read with ``xacro_args`` and ``packages`` (``description``)."""
    from dynid._reading import load_yaml
    from dynid.model import MODEL_SCHEMA, load_model
    from dynid.robot import load_robot

    file = Path(path)
    if file.is_file() and file.suffix.lower() in (".yaml", ".yml"):
        spec = load_yaml(file, what="robot or model file")
        if isinstance(spec, dict) and spec.get("schema") == MODEL_SCHEMA:
            for option, value in (("--tip", tip), ("--xacro-arg", xacro_args)):
                if value:
                    raise ValueError(f"`{option}` reads a URDF or xacro robot; {path} is a "
                                     "model file, whose robot is already chosen")
            return load_model(file)
    return load_robot(path, tip=tip, xacro_args=xacro_args, packages=packages)


def contacts_from(specs: list[str], robot) -> list:
    """The --contact specifications as Contacts on ``robot``; a bad one is an error naming
    --contact."""
    from dynid.simulate import parse_contact

    contacts = []
    for spec in specs:
        try:
            contact = parse_contact(spec)
            contact.link_index(robot)
        except (ValueError, TypeError) as error:
            raise ValueError(f"`--contact`: {error}") from None
        contacts.append(contact)
    return contacts
