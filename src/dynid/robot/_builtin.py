"""Built-in robots: YAML data files shipped in ``dynid/robot/data``, each citing its source; and
robots by name from the optional example-robot-data (``dynid.robot._example_robot_data``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from dynid.robot._example_robot_data import (
    CATALOG,
    INSTALL,
    PREFIX,
    example_robot,
    example_robots,
    load_example_robot,
)
from dynid.robot._robot import Robot
from dynid.robot._yaml import load_robot_file

__all__ = ["builtin_robots", "load_robot"]


def builtin_robots() -> list[str]:
    """Names of the built-in robots."""
    folder = resources.files("dynid.robot") / "data"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


@cache
def _builtin(name: str) -> Robot:
    with resources.as_file(resources.files("dynid.robot") / "data" / f"{name}.yaml") as path:
        return load_robot_file(path)


def load_robot(name_or_path: str | Path, *, tip: str | None = None,
               xacro_args: Mapping[str, object] | None = None,
               packages: Mapping[str, str | Path] | None = None) -> Robot:
    """A robot by name or from a file.

    In this order: a built-in robot (``dynid robots`` lists them), a ``.yaml`` robot file, a
    ``.urdf`` file or a xacro (``.urdf.xacro``, ``.xacro``), an arm of example-robot-data
    (``ur10``, ``kinova``, ...; ``example-robot-data:NAME`` always; the optional extra
    ``pip install 'dynid[robots]'``). ``tip``: the link where a URDF robot's arm ends (see
    ``load_urdf``; a robot file's ``tip`` and a catalog arm's are overridden). ``xacro_args``
    and ``packages``: a xacro's arguments and where ROS packages are (see ``load_urdf``; over a
    robot file's own); a robot by name takes no xacro arguments and needs no packages.
    """
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"`name_or_path` must be a str or Path, got {type(name_or_path).__name__}")
    if tip is not None and not isinstance(tip, str):
        raise TypeError(f"`tip` must be a link name (str), got {type(tip).__name__}")
    text = str(name_or_path)
    if text in builtin_robots():
        if tip is not None:
            raise ValueError(f"`tip` picks the arm's chain of a URDF robot; {text!r} is a "
                             "built-in table robot")
        _no_xacro_args(xacro_args, text)
        return _builtin(text)
    path = Path(text)
    if path.is_file():
        if path.suffix.lower() in (".urdf", ".xacro"):
            from dynid.robot._urdf import load_urdf  # pinocchio loads with the first URDF

            return load_urdf(path, tip=tip, xacro_args=xacro_args, packages=packages)
        return load_robot_file(path, tip=tip, xacro_args=xacro_args, packages=packages)
    entry = example_robot(text)
    if entry is not None:
        _no_xacro_args(xacro_args, text)
        name = PREFIX + entry.name if entry.name in builtin_robots() else entry.name
        return load_example_robot(entry, name=name, tip=tip)
    installed = [name for name, _ in example_robots(builtin_robots())]
    others = (f"a robot of example-robot-data ({', '.join(installed)})" if installed else
              f"a robot of example-robot-data ({', '.join(e.name for e in CATALOG[:4])}, ...: "
              f"{INSTALL})")
    raise ValueError(
        f"`name_or_path`: {text!r} is neither a built-in robot ({', '.join(builtin_robots())}), "
        f"{others} nor an existing file"
    )


def _no_xacro_args(xacro_args: Mapping[str, object] | None, name: str) -> None:
    if xacro_args:
        raise ValueError(f"`xacro_args` are a xacro description's; {name!r} is a robot by "
                         "name")
