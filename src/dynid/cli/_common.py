"""What more than one command shares: option groups and what they ask for (the linear friction
columns, a preprocessed log), model-or-robot files, JSON and progress output, output checks.

Library code is imported inside the functions, so that building the parser imports nothing
heavy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

# The friction models a command can name (literal, like every choice list of the parser:
# `--help` imports nothing heavy). Linear in their parameters: regressor columns.
LINEAR_FRICTION = ("none", "viscous-coulomb", "arctan")
# Nonlinear: fitted by `dynid identify --method nls` or `dynid friction`.
NONLINEAR_FRICTION = ("sigmoid", "stribeck", "lugre")

ROBOT_HELP = "built-in robot name, or a .yaml / .urdf / .urdf.xacro file"

# a written or simulated time series: at most this many samples from the command line (10^7:
# 2.8 h at 1 kHz, ~2 GB for 7 joints)
MAX_CLI_SAMPLES = 10_000_000


class Range:
    """An argparse ``type``: a finite number of ``kind`` (int or float) in a range, so that
    every numeric option is checked before any work, with its range shown in ``--help``.

    ``low``/``high``: inclusive bounds (None: unbounded); ``above``: an exclusive lower bound.
    """

    def __init__(self, kind: type, low: float | None = None, high: float | None = None, *,
                 above: float | None = None) -> None:
        self.kind, self.low, self.high, self.above = kind, low, high, above
        self.__name__ = kind.__name__  # argparse names the type in its messages

    def __call__(self, text: str):
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if self.kind is int else 'a number'}, got {text!r}"
            ) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if (self.low is not None and value < self.low) or \
                (self.high is not None and value > self.high) or \
                (self.above is not None and value <= self.above):
            raise argparse.ArgumentTypeError(f"expected {self}, got {text}")
        return value

    def __str__(self) -> str:
        """Interval notation: ``[1, 50]``, ``(0, 3600]``, ``[0, inf)``."""
        left = f"({_show(self.above)}" if self.above is not None else \
            f"[{_show(self.low)}" if self.low is not None else "(-inf"
        right = f"{_show(self.high)}]" if self.high is not None else "inf)"
        return f"{left}, {right}"


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e16 else f"{value:g}"


SEED = Range(int, 0, 2**32 - 1)


class RangeHelp(argparse.HelpFormatter):
    """``--help`` shows each numeric option's range."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if isinstance(action.type, Range) and text is not None:
            text = f"{text} [{action.type}]"
        return text


class Parser(argparse.ArgumentParser):
    """dynid's parsers: numeric ranges in the help."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", RangeHelp)
        super().__init__(*args, **kwargs)


def check_samples(duration: float, rate: float, what: str) -> None:
    """A time series the command writes stays within ``MAX_CLI_SAMPLES``."""
    if duration * rate > MAX_CLI_SAMPLES:
        raise ValueError(f"{what}: {duration:g} s at {rate:g} Hz is {duration * rate:.3g} "
                         f"samples, more than {MAX_CLI_SAMPLES:,}; lower the rate or the "
                         "duration")


def print_json(payload: dict) -> None:
    from dynid._files import to_builtin

    print(json.dumps(to_builtin(payload, nonfinite_as_none=True), indent=2))


def stderr_progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress lines go to stderr, so that stdout stays clean for --json."""
    return (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None


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


def rtol_option(parser: argparse.ArgumentParser) -> None:
    """--rtol: the relative rank tolerance of the base-parameter count."""
    parser.add_argument("--rtol", type=Range(float, high=0.5, above=0), metavar="RTOL",
                        help="relative rank tolerance of the base-parameter count: singular "
                             "values of the structural regressor below RTOL times the largest "
                             "count as zero (default 1e-4, STRUCTURAL_RTOL in "
                             "dynid.model.base_parameters: it absorbs angles written "
                             "rounded to 4-5 decimals)")


def step_options(parser: argparse.ArgumentParser) -> None:
    """The preprocessing steps' options: --resample, --cutoff, --order, --trim."""
    parser.add_argument("--resample", type=Range(float, high=100_000, above=0), metavar="HZ",
                        help="resample to this rate (irregular logs are resampled at their "
                             "median rate anyway)")
    parser.add_argument("--cutoff", type=Range(float, high=100_000, above=0), metavar="HZ",
                        help="zero-phase Butterworth low-pass (default 5 Hz when the log has "
                             "no ddq; none otherwise)")
    parser.add_argument("--order", type=Range(int, 1, 10), default=4,
                        help="Butterworth order (default %(default)s)")
    parser.add_argument("--trim", type=Range(float, 0, 86_400), metavar="S",
                        help="seconds dropped at both ends (default 0.5 when filtered here)")


def preprocessing_options(parser: argparse.ArgumentParser, *, split: bool = True,
                          steps: bool = True) -> None:
    """How a log is read and prepared (see `prepared`); with ``split``, --validate too; without
    ``steps``, only how it is read (--columns, --units, --effort)."""
    parser.add_argument("--columns", metavar="SPEC|FILE.yaml",
                        help="read a CSV through a column mapping FIELD=PATTERN,... (fields t, "
                             "q, dq, ddq, tau or current; `*` stands for the joint number or "
                             "name), e.g. 't=time,q=pos_*,dq=vel_*,current=cur_*', or a YAML "
                             "file of them (see dynid.data.io); other columns are ignored")
    parser.add_argument("--units", metavar="SPEC",
                        help="units of the log's fields FIELD=UNIT,..., e.g. "
                             "'t=ms,q=deg,dq=deg/s,current=mA' (t: s ms us ns; q: rad deg; "
                             "dq: rad/s deg/s; ddq: rad/s^2 deg/s^2; tau: N m, mN m; current: "
                             "A mA); default SI")
    parser.add_argument("--effort", choices=("torque", "current"),
                        help="what a bag's effort field or the log's tau column holds: joint "
                             "torques or motor currents (default: as the file says, else "
                             "torque)")
    if not steps:
        return
    parser.add_argument("--as-is", action="store_true",
                        help="use the log exactly as it is: no resampling, filtering, "
                             "differentiation or trimming (it must carry ddq)")
    parser.add_argument("--mmap", action="store_true",
                        help="with --as-is: memory-map an NPZ log (uncompressed, SI units) "
                             "instead of reading it in: a log longer than memory, streamed")
    step_options(parser)
    if split:
        parser.add_argument("--validate", type=Range(float, 0.01, 0.99), metavar="FRACTION",
                            help="hold out this final fraction of the log and report its RMSE "
                                 "(default: none held out)")


def read_log(args: argparse.Namespace, path: str, robot=None, *, mmap: bool = False):
    """The log at ``path`` as it was recorded, read through --columns, --units, --effort; a
    ROS 2 bag's or a named CSV's joints are picked by ``robot``'s joint names."""
    from dynid.data import read_dataset

    joints = list(robot.joint_names) if robot is not None else None
    return read_dataset(path, joint_names=joints, columns=getattr(args, "columns", None),
                        units=getattr(args, "units", None), effort=getattr(args, "effort", None),
                        mmap=mmap)


def prepared(args: argparse.Namespace, path: str, robot=None):
    """The log at ``path`` read (``read_log``) and preprocessed as the options say (--as-is:
    not at all)."""
    from dynid.data import prepare

    as_is = getattr(args, "as_is", False)
    mmap = getattr(args, "mmap", False)
    if mmap and not as_is:
        raise ValueError("`--mmap` streams a log as it is: give --as-is too (a mapped log is "
                         "not filtered or resampled)")
    if as_is:
        given = [flag for flag, dest in (("--resample", "resample"), ("--cutoff", "cutoff"),
                                         ("--trim", "trim")) if getattr(args, dest) is not None]
        if given:
            raise ValueError(f"`--as-is` uses the log as it is: it excludes {', '.join(given)}")
    data = read_log(args, path, robot, mmap=mmap)
    if as_is:
        return prepare(data, as_is=True)
    return prepare(data, rate=args.resample, cutoff=args.cutoff, order=args.order,
                   trim_seconds=args.trim)


def scheduler_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help=f"a Dask scheduler (tcp://host:8786) whose workers {what} "
                             "(needs dynid[dask]; default: this machine)")


@contextlib.contextmanager
def dask_client(args: argparse.Namespace):
    """The Dask client of --scheduler (None without it), closed after."""
    address = getattr(args, "scheduler", None)
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("`--scheduler` needs Dask: pip install 'dynid[dask]'") from None
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        raise ValueError(f"`--scheduler`: no Dask scheduler at {address} ({error})") from None
    with client:
        yield client


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

    with options_named({"name_or_path": option}):
        robot = load_robot(path if path is not None else args.robot,
                           tip=getattr(args, "tip", None), **description(args, main=path is None))
    return with_gravity(robot, getattr(args, "gravity", None))


# a library keyword in backquotes, with an index (`logs[1]`)
_KEYWORD = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?`")


@contextlib.contextmanager
def options_named(spelling: Mapping[str, str | None]) -> Iterator[None]:
    """A ValueError or TypeError of library code inside names the command's options, not the
    keywords the command gave them by: each `keyword` of ``spelling`` in its message becomes
    its option (`substeps` -> `--control-rate`), `keyword[k]` the option's value k + 1
    (`--reference` #2), and two keywords that are one option here read once (`rate` /
    `substeps` -> `--control-rate`). A keyword spelt None has no option here: the advice to
    give it goes (", or give `substeps`")."""
    try:
        yield
    except (ValueError, TypeError) as error:
        text = spelt(str(error), spelling)
        if text == str(error):
            raise
        raise (ValueError if isinstance(error, ValueError) else TypeError)(text) from None


def spelt(text: str, spelling: Mapping[str, str | None]) -> str:
    """``text`` with the keywords of ``spelling`` spelt as options (see ``options_named``)."""
    for name in (name for name, value in spelling.items() if value is None):
        keyword = rf"(?:give |raise )?`{re.escape(name)}`"
        text = re.sub(rf"{keyword}(?:, or |, | or | / )", "", text)
        text = re.sub(rf"(?:,? or | / |, ){keyword}", "", text)
    spelling = {name: value for name, value in spelling.items() if value is not None}

    def option(match: re.Match) -> str:
        name, index = match.group(1), match.group(2)
        if name not in spelling:
            return match.group(0)
        return f"`{spelling[name]}`" + ("" if index is None else f" #{int(index) + 1}")

    text = _KEYWORD.sub(option, text)
    return re.sub(r"(`[^`]+`)(?:(?: / | or |, | and )\1)+(?![\w#])", r"\1", text)


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


class _Renamed(argparse.Action):
    """An option's old spelling: refused, naming the new one (one spelling across commands)."""

    def __init__(self, option_strings, dest, *, new: str, **kwargs) -> None:
        self.new = new
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = " ".join(values) if isinstance(values, list) else (values or "")
        parser.error(f"`{option_string}` is spelt `{self.new}` now, as in every dynid "
                     f"command: {self.new} {given}".rstrip())


def renamed_option(parser: argparse.ArgumentParser, old: str, new: str, *,
                   nargs: str | None = None) -> None:
    """Refuse ``old``, an earlier spelling of ``new``, with the new spelling."""
    parser.add_argument(old, action=_Renamed, new=new, nargs=nargs,
                        dest=f"renamed_{old.lstrip('-').replace('-', '_')}")


def nls_friction(robot, given: str | None) -> str:
    """The friction model NLS fits: ``given`` (--friction), else the robot file's when NLS
    fits it, else stribeck — one default for identify and compare."""
    from dynid.identification import NLS_FRICTION_MODELS

    if given is not None:
        return given
    return robot.friction.name if robot.friction.name in NLS_FRICTION_MODELS else "stribeck"


def current_options(parser: argparse.ArgumentParser) -> None:
    """What fixes the scale of motor-current logs (see `scale_from_options`): a payload log with
    its known payload, or known drive gains."""
    parser.add_argument("--payload-log", metavar="LOG",
                        help="currents: a current log with a known payload on the last link; "
                             "fixes the drive gains' scale (with --payload-mass)")
    parser.add_argument("--payload-mass", type=Range(float, high=1e4, above=0), metavar="KG",
                        help="currents: the payload's mass [kg]")
    parser.add_argument("--payload-com", type=Range(float, -100, 100), nargs=3,
                        metavar=("X", "Y", "Z"),
                        help="currents: the payload's CoM in the tool frame [m] (default: "
                             "identified)")
    parser.add_argument("--gain", action="append", metavar="JOINT=K", type=known_gain,
                        help="currents: a known drive gain [N m/A] (joint name or number); "
                             "fixes the scale without a payload log; repeatable")


# a drive gain's size [N m/A] (torque per motor current, gear ratio included), either sign
DRIVE_GAIN_LIMITS = (1e-6, 1e6)


def robot_argument(text: str) -> str:
    """An argparse ``type`` for an option naming a robot (``--prior``): a built-in name or a
    file, never empty — an empty value would read as "not given" and silently mean the
    default."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a built-in robot name or a robot file, got {text!r}")
    return text


def drive_gain(text: str) -> float:
    """An argparse type: a drive gain [N m/A], nonzero, of either sign, its size within
    ``DRIVE_GAIN_LIMITS``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number [N m/A], got {text!r}") from None
    low, high = DRIVE_GAIN_LIMITS
    if not low <= abs(value) <= high:  # NaN, inf and 0 fail too
        raise argparse.ArgumentTypeError(
            f"expected a finite nonzero gain [N m/A] (torque per current) of size {low:g} to "
            f"{high:g}, got {text!r}")
    return value


def known_gain(text: str) -> tuple:
    """`--gain JOINT=K`: a joint (name or 1-based number) and its gain [N m/A]."""
    joint, separator, value = text.partition("=")
    if not separator or not joint:
        raise argparse.ArgumentTypeError(f"expected JOINT=K (e.g. 1=0.85 or joint1=0.85), got "
                                         f"{text!r}")
    gain = drive_gain(value)
    from dynid._validation import is_index

    return (int(joint) if is_index(joint) else joint, gain)


def scale_from_options(args: argparse.Namespace, robot, logs) -> dict:
    """For motor-current logs, what fixes their scale (Gautier & Briot 2014): the payload log
    and its known payload, and the known gains, as keywords of the fits; ``{}`` for torque
    logs."""
    from dynid.identification import KnownPayload

    efforts = {log.effort for log in logs}
    if "current" not in efforts:
        if args.payload_log or args.gain or args.payload_mass is not None:
            raise ValueError("`--payload-log`, `--payload-mass` and `--gain` fix the scale of "
                             "motor-current logs; these logs hold torques (a current log says "
                             "so in its columns, or give --effort current)")
        return {}
    if efforts != {"current"}:
        raise ValueError("the logs mix torques and motor currents: give logs of one kind")
    if (args.payload_log is None) != (args.payload_mass is None):
        raise ValueError("`--payload-log` and `--payload-mass` come together: the log with "
                         "the payload, and its known mass")
    if args.payload_com is not None and args.payload_log is None:
        raise ValueError("`--payload-com` describes the payload of `--payload-log`")
    payload_log = payload = None
    if args.payload_log is not None:
        payload_log = prepared(args, args.payload_log, robot)
        if payload_log.effort != "current":
            raise ValueError(f"`--payload-log` {args.payload_log} holds torques; it must log "
                             "motor currents like the other logs")
        payload = KnownPayload(args.payload_mass, args.payload_com)
    if payload is None and not args.gain:
        raise ValueError("motor currents fix the dynamics only up to a scale: from currents "
                         "alone only the ratios of the parameters and drive gains are "
                         "identifiable. Fix the scale with `--payload-log LOG --payload-mass "
                         "KG` (a log with a known payload on the last link) or `--gain "
                         "JOINT=K` (one known drive gain, e.g. from the drive's datasheet)")
    return {"payload_data": payload_log, "payload": payload, "gains": dict(args.gain or [])}


def validation_options(parser: argparse.ArgumentParser) -> None:
    """What validating a model on a log takes: the M(q) > 0 sampling and the log's
    preprocessing."""
    parser.add_argument("--poses", type=Range(int, 1, 100_000), default=1000, metavar="N",
                        help="poses sampled for the M(q) > 0 check (default %(default)s)")
    preprocessing_options(parser, split=False)


def friction_options(parser: argparse.ArgumentParser, *, nonlinear: bool = False,
                     nls: str = "with --method nls (default there: the robot file's, else "
                                "stribeck)") -> None:
    """--friction, and the arctan shape constants --kv and --delta (see `linear_friction`);
    ``nonlinear``: sigmoid, stribeck and lugre too, for NLS (``nls`` says when and its
    default)."""
    if nonlinear:
        parser.add_argument("--friction", choices=[*LINEAR_FRICTION, *NONLINEAR_FRICTION],
                            help="friction model: linear columns (default: the robot file's "
                                 "model when linear, else viscous-coulomb, as for a URDF); "
                                 f"sigmoid, stribeck and lugre {nls}")
    else:
        parser.add_argument("--friction", choices=LINEAR_FRICTION,
                            help="linear friction columns (default: the robot file's model "
                                 "when linear, else viscous-coulomb, as for a URDF)")
    parser.add_argument("--kv", type=Range(float, high=1e6, above=0),
                        help="arctan: sign-shape constant k_v [s/rad] (default: the robot "
                             "file's arctan value, else dynid.friction.DEFAULT_ARCTAN_K_V)")
    parser.add_argument("--delta", type=Range(float, 0, 1e6),
                        help="arctan: Stribeck-shape constant [s/rad] (default: the robot "
                             "file's arctan value, else dynid.friction.DEFAULT_ARCTAN_DELTA)")


def linear_friction(robot, args: argparse.Namespace):
    """The linear friction columns asked for: --friction, else the robot file's, else
    viscous + Coulomb + offset."""
    from dynid.friction import (
        DEFAULT_ARCTAN_DELTA,
        DEFAULT_ARCTAN_K_V,
        Arctan,
        NoFriction,
        ViscousCoulomb,
    )
    from dynid.identification import default_friction

    n = robot.n_joints
    if (args.kv is not None or args.delta is not None) and args.friction != "arctan":
        raise ValueError("`--kv` and `--delta` shape the arctan model: add `--friction arctan`")
    if args.friction in NONLINEAR_FRICTION:
        raise ValueError(f"`--friction {args.friction}` is not linear in its parameters: fit "
                         "it with `dynid identify --method nls` (jointly with the links) or "
                         "`dynid friction` (on the residuals)")
    if args.friction is None:
        return default_friction(robot)
    if args.friction == "none":
        return NoFriction(n)
    if args.friction == "viscous-coulomb":
        return ViscousCoulomb.zeros(n)
    own = robot.friction if isinstance(robot.friction, Arctan) else None
    k_v = args.kv if args.kv is not None else (own.k_v if own else DEFAULT_ARCTAN_K_V)
    delta = args.delta if args.delta is not None else (own.delta if own else DEFAULT_ARCTAN_DELTA)
    return Arctan.template(n, k_v=k_v, delta=delta)


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
