"""Built-in robots: YAML data files shipped in ``dynid/robot/data``, each citing its source."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

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


def load_robot(name_or_path: str | Path) -> Robot:
    """A built-in robot by name (``dynid robots`` lists them), or a ``.yaml`` / ``.urdf`` file."""
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"`name_or_path` must be a str or Path, got {type(name_or_path).__name__}")
    text = str(name_or_path)
    if text in builtin_robots():
        return _builtin(text)
    path = Path(text)
    if path.is_file():
        if path.suffix.lower() == ".urdf":
            from dynid.robot._urdf import load_urdf  # pinocchio loads with the first URDF

            return load_urdf(path)
        return load_robot_file(path)
    raise ValueError(
        f"`name_or_path`: {text!r} is neither a built-in robot ({', '.join(builtin_robots())}) "
        "nor an existing file"
    )
