"""Where a ROS package is: a description's ``package://NAME/...`` and xacro's ``$(find NAME)``.

One resolver for both. A package NAME is looked for, first found wins:

1. the folders given by name (``packages={"NAME": DIR}``; the CLI's ``--package-path NAME=DIR``);
2. a folder named NAME above the description (or NAME beside one of those folders: a
   workspace's ``src/``), up to ``ANCESTORS`` levels;
3. ``ROS_PACKAGE_PATH``: each entry the package itself or a folder holding it;
4. ``AMENT_PREFIX_PATH``: ``PREFIX/share/NAME``, where a sourced ROS 2 install keeps it.

Nothing is downloaded and no folder is crawled beyond these. Standard library only: the xacro
child process (``dynid.robot._xacro``) loads this file by its path, without dynid's packages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ANCESTORS", "PackageNotFound", "find_package", "resolve_package_url"]

ANCESTORS = 8  # folders above the description searched for a package NAME
PREFIX = "package://"


class PackageNotFound(ValueError):
    """A ROS package that none of the places above holds; the message says how to give it."""

    def __init__(self, name: str, what: str) -> None:
        super().__init__(
            f"ROS package {name!r} ({what}) is not found: give its folder with --package-path "
            f"{name}=DIR (in Python: packages={{{name!r}: DIR}}), or add the folder that holds "
            f"it to ROS_PACKAGE_PATH (looked above the description, in ROS_PACKAGE_PATH and in "
            f"AMENT_PREFIX_PATH's share/)")
        self.package = name


def _environment_folders(variable: str) -> list[Path]:
    return [Path(entry) for entry in os.environ.get(variable, "").split(os.pathsep) if entry]


def find_package(name: str, near: str | Path, packages: Mapping[str, str | Path] | None = None,
                 *, what: str = "") -> Path:
    """The folder of ROS package ``name`` for a description in folder ``near`` (see the module;
    ``packages`` maps names to folders, given first). PackageNotFound (a ValueError) names the
    package and the option that gives it; ``what`` says where it was asked for."""
    if packages and name in packages:
        return Path(packages[name])
    near = Path(near)
    for root in [near, *list(near.parents)[:ANCESTORS], *_environment_folders("ROS_PACKAGE_PATH")]:
        for candidate in (root if root.name == name else None, root / name):
            if candidate is not None and candidate.is_dir():
                return candidate
    for prefix in _environment_folders("AMENT_PREFIX_PATH"):
        if (prefix / "share" / name).is_dir():
            return prefix / "share" / name
    raise PackageNotFound(name, what or f"$(find {name})")


def resolve_package_url(filename: str, near: str | Path,
                        packages: Mapping[str, str | Path] | None = None) -> Path:
    """The file a ``package://NAME/rest`` URL names (PackageNotFound when NAME is not found)."""
    if not filename.startswith(PREFIX):
        raise ValueError(f"{filename!r} is not a {PREFIX} URL")
    name, _, inside = filename[len(PREFIX):].partition("/")
    return find_package(name, near, packages, what=filename) / inside
