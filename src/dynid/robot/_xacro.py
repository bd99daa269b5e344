"""Xacro descriptions (``*.urdf.xacro``, ``*.xacro``), expanded to URDF as a vendor ships them.

The ``xacro`` package (PyPI) does the expansion; ROS is not needed. Its ``$(find NAME)`` asks
ROS's ament index, which is not there: dynid resolves it, as it resolves ``package://NAME``
meshes, through ``dynid.robot._packages`` (the folders given by name, a folder NAME above the
description, ``ROS_PACKAGE_PATH``, ``AMENT_PREFIX_PATH``). Arguments are given by name
(``xacro_args={"ur_type": "ur5e"}``; the CLI's ``--xacro-arg ur_type:=ur5e``); one the
description neither declares nor uses is an error (a typo would silently give another robot).

Why a child process: xacro keeps its state in module globals (the file stack, the arguments,
the symbol table) and has no hook for ``$(find)`` but its module-level functions. dynid
replaces those hooks in a child process of its own (``dynid.robot._xacro_child``), so nothing
in the caller's process is patched: concurrent loads from threads are safe, and a program that
uses xacro itself sees xacro as it left it. The child also bounds what a hostile file can do:
``XACRO_TIMEOUT`` seconds, ``XACRO_MEMORY`` bytes of address space, each file read within
``dynid._reading.MAX_TEXT_BYTES`` and free of DOCTYPEs, no include of a file that includes it,
``MAX_INCLUDE_DEPTH`` and ``MAX_XACRO_FILES``. A xacro's ``${...}`` is a Python expression
that xacro evaluates (with builtins and ``__`` names withheld): expand descriptions you would
run, as with ``xacro`` itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dynid._reading import MAX_TEXT_BYTES

__all__ = ["Expansion", "check_packages", "check_xacro_args", "expand_xacro", "is_xacro"]

XACRO_TIMEOUT = 60.0  # s: a vendor's arm expands in well under one
XACRO_MEMORY = 2 * 2**30  # bytes of address space for the child (resource.RLIMIT_AS)
MAX_INCLUDE_DEPTH = 32  # nested includes (a vendor's arm nests 3 or 4)
MAX_XACRO_FILES = 1000  # files read by one expansion, includes and YAML (FR3 reads 9)
_CHILD = Path(__file__).with_name("_xacro_child.py")


@dataclass(frozen=True)
class Expansion:
    """A xacro expanded: the URDF ``text``, every file read (the description first), a sha256
    over their contents in that order (``digest``: a model file's check that none changed),
    the arguments the description declares or uses, and xacro's own warnings."""

    text: str
    files: tuple[str, ...]
    digest: str
    arguments: tuple[str, ...]
    warnings: tuple[str, ...]


def is_xacro(path: str | Path) -> bool:
    """Whether ``path`` names a xacro description (``.xacro``, ``.urdf.xacro``)."""
    return Path(path).suffix.lower() == ".xacro"


def check_packages(packages: Mapping[str, str | Path] | None) -> dict[str, str]:
    """``packages`` as {name: absolute folder}; ValueError naming an entry that is not a
    package name and an existing folder."""
    if packages is None:
        return {}
    if not isinstance(packages, Mapping):
        raise TypeError(f"`packages` must map ROS package names to folders, got "
                        f"{type(packages).__name__}")
    out = {}
    for name, folder in packages.items():
        if not isinstance(name, str) or not name or "/" in name or name != name.strip():
            raise ValueError(f"`packages`: {name!r} is not a ROS package name")
        if not isinstance(folder, (str, Path)) or not Path(folder).is_dir():
            raise ValueError(f"`packages`: the folder of {name!r}, {str(folder)!r}, is not a "
                             "folder")
        out[name] = str(Path(folder).resolve())
    return out


def check_xacro_args(args: Mapping[str, object] | None) -> dict[str, str]:
    """``args`` as {name: text} (numbers and booleans as xacro writes them); ValueError naming
    a name that xacro cannot take."""
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise TypeError(f"`xacro_args` must map argument names to values, got "
                        f"{type(args).__name__}")
    out = {}
    for name, value in args.items():
        if not isinstance(name, str) or not name or any(c.isspace() or c in "()$"
                                                        for c in name):
            raise ValueError(f"`xacro_args`: {name!r} is not a xacro argument name")
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, (str, int, float)):
            raise ValueError(f"`xacro_args`: {name} must be text or a number, got "
                             f"{type(value).__name__}")
        out[name] = str(value)
    return out


def expand_xacro(path: str | Path, *, args: Mapping[str, object] | None = None,
                 packages: Mapping[str, str | Path] | None = None) -> Expansion:
    """The xacro at ``path`` expanded to URDF with ``args`` (see the module).

    Raises ValueError naming the file (and where xacro was: the file, the files that include
    it, the macro) for a file that cannot be read or expanded, a package not found (naming it
    and ``--package-path`` / ``ROS_PACKAGE_PATH``), an argument the description does not
    have, or an expansion past its limits.
    """
    path = Path(path)
    args, packages = check_xacro_args(args), check_packages(packages)
    where = f"`path`: cannot expand xacro {str(path)!r}"
    if not path.is_file():
        raise ValueError(f"{where}: it is not a file")
    request = {"file": str(path.resolve()), "args": args, "packages": packages,
               # where xacro and yaml are; not the working folder (the child runs isolated)
               "sys_path": [os.path.abspath(p) for p in sys.path if isinstance(p, str) and p],
               "max_bytes": MAX_TEXT_BYTES, "max_depth": MAX_INCLUDE_DEPTH,
               "max_files": MAX_XACRO_FILES, "max_memory": XACRO_MEMORY}
    if not sys.executable:
        raise ValueError(f"{where}: no Python interpreter to run xacro in (sys.executable is "
                         "empty)")
    try:
        done = subprocess.run([sys.executable, "-I", str(_CHILD)], input=json.dumps(request),
                              capture_output=True, text=True, timeout=XACRO_TIMEOUT,
                              env=os.environ.copy(), check=False)
    except subprocess.TimeoutExpired:
        raise ValueError(f"{where}: the expansion took longer than {XACRO_TIMEOUT:g} s (an "
                         "expression or a macro without end?)") from None
    except OSError as error:
        raise ValueError(f"{where}: cannot run xacro ({error})") from None
    try:
        reply = json.loads(done.stdout)
    except ValueError:
        last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()),
                    f"exit status {done.returncode}")
        raise ValueError(f"{where}: xacro stopped ({last.strip()[:300]}; a memory limit of "
                         f"{XACRO_MEMORY / 2**30:g} GiB and {XACRO_TIMEOUT:g} s hold)") from None
    if "error" in reply:
        detail = f" ({reply['where']})" if reply.get("where") else ""
        raise ValueError(f"{where}: {reply['error']}{detail}")
    unknown = sorted(set(args) - set(reply["arguments"]))
    if unknown:
        declared = ", ".join(reply["arguments"]) or "none"
        raise ValueError(f"`xacro_args`: {', '.join(map(repr, unknown))} "
                         f"{'is not an argument' if len(unknown) == 1 else 'are not arguments'}"
                         f" of {path.name} (its arguments: {declared})")
    return Expansion(text=reply["urdf"], files=tuple(reply["files"]), digest=reply["digest"],
                     arguments=tuple(reply["arguments"]), warnings=tuple(reply["warnings"]))
