"""What a command may write, checked before any work: every output option, never an input, a
folder that exists, one path once (``check_outputs``); the ``--json`` and ``--quiet`` options."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

# what matplotlib writes for `--plot` (dynid.evaluation.save_figure)
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


# the options that name files a command writes, by argparse destination
OUTPUT_FLAGS = {"output": "-o", "parameters_output": "--parameters-output", "plot": "--plot",
                "urdf": "--urdf", "truth": "--truth"}


# options whose values are text, never a file (a title, a C prefix, a name, a column spec
# typed out): not looked up as paths, so a long one is not "File name too long"
TEXT_OPTIONS = frozenset({"command", "command_line", "data_command", "robot_command", "title",
                          "prefix", "name", "tip", "units", "scheduler", "contact", "joints",
                          "language", "parameters"})


def outputs_of(args: argparse.Namespace) -> dict[str, Path]:
    """Every file the command will write, by the option that names it: the output options, and
    what a command writes beside them (``derived_outputs``, set by the command). An empty name
    is an error naming its option."""
    named = {}
    for dest, flag in OUTPUT_FLAGS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"`{flag}` is empty: give the name of the file to write")
        named[flag] = Path(value)
    derived = getattr(args, "derived_outputs", None)
    return {**named, **(derived(args) if derived is not None and named else {})}


def check_outputs(args: argparse.Namespace) -> None:
    """Before any work: every output is a new path or a regular file in a writable folder
    (never a folder, a device node or a symbolic link), has a suffix the command can write,
    and is none of the command's inputs nor a file an input references (a robot file's URDF,
    a model's robot: compared by resolved path and by inode, so a hard link or another
    spelling such as ``sub/../arm.urdf`` is caught too) nor another output."""
    from dynid._files import check_writable

    if getattr(args, "command", None) == "demo":  # writes a folder of its own: checked there
        return
    outputs = outputs_of(args)
    suffixes = getattr(args, "output_suffixes", {})
    for flag, path in outputs.items():
        check_writable(path, f"`{flag}`")
        allowed = suffixes.get(flag)
        if allowed and path.suffix.lower() not in allowed:
            listed = ", ".join(allowed[:-1]) + " or " + allowed[-1] if len(allowed) > 1 \
                else allowed[0]
            raise ValueError(f"`{flag}` must end in {listed}, got {path.name!r}")
    inputs: list[tuple[Path, str]] = []
    for dest, value in _string_arguments(args):
        if dest in OUTPUT_FLAGS or not _is_file(Path(value)):
            continue
        inputs.append((Path(value), repr(value)))
        inputs += [(path, f"{path.name!r}, which {value!r} references")
                   for path in referenced_files(Path(value))]
    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        for source, what in inputs:
            if _same_file(path, source):
                raise ValueError(f"`{flag}` {str(path)!r} is an input of this command "
                                 f"({what}): writing it would destroy the input; choose "
                                 "another name")
        resolved = path.resolve()
        if resolved in seen:
            raise ValueError(f"`{flag}` and `{seen[resolved]}` name the same file "
                             f"{str(path)!r}")
        seen[resolved] = flag


def referenced_files(path: Path) -> list[Path]:
    """The files a robot or model file stands on: a robot file's ``urdf:`` (relative to its
    folder), a model's robot's (relative to the model's folder, and its absolute fallback).
    Nothing for a file that is not such YAML (the command's own reading reports it)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        return []
    from dynid._reading import load_yaml

    try:
        spec = load_yaml(path, what="robot or model file")
    except (ValueError, OSError):
        return []
    if not isinstance(spec, dict):
        return []
    robot = spec.get("robot") if isinstance(spec.get("robot"), dict) else spec
    found = []
    for key in ("urdf", "urdf_absolute"):
        value = robot.get(key)
        if isinstance(value, str) and value:
            candidate = Path(value)
            candidate = candidate if candidate.is_absolute() else path.parent / candidate
            if _is_file(candidate):
                found.append(candidate)
    return found


def _is_file(path: Path) -> bool:
    """An existing file (False for text that cannot name one: too long, a NUL byte)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _string_arguments(args: argparse.Namespace):
    for dest, value in vars(args).items():
        if dest in TEXT_OPTIONS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item:
                yield dest, item


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def output_options(parser: argparse.ArgumentParser, *, quiet: bool = False) -> None:
    """--json, and --quiet for the commands that report progress."""
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    if quiet:
        parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
