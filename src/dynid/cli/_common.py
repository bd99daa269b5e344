"""What more than one command shares: option groups and what they ask for (the linear friction
columns, a preprocessed log), model-or-robot files, JSON and progress output, output checks.

Library code is imported inside the functions, so that building the parser imports nothing
heavy.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

# The friction models a command can name (literal, like every choice list of the parser:
# `--help` imports nothing heavy). Linear in their parameters: regressor columns.
LINEAR_FRICTION = ("none", "viscous-coulomb", "arctan")
# Nonlinear: fitted by `dynid identify --method nls` or `dynid friction`.
NONLINEAR_FRICTION = ("sigmoid", "stribeck", "lugre")

ROBOT_HELP = "built-in robot name, or a .yaml / .urdf file"


def print_json(payload: dict) -> None:
    from dynid._files import to_builtin

    print(json.dumps(to_builtin(payload, nonfinite_as_none=True), indent=2))


def stderr_progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress lines go to stderr, so that stdout stays clean for --json."""
    return (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None


def check_output(path: str | None, flag: str = "-o") -> None:
    """Fail before the work, not after it, when an output folder is missing."""
    if path and not Path(path).parent.is_dir():
        raise ValueError(f"`{flag}`: folder {str(Path(path).parent)!r} does not exist")


def output_options(parser: argparse.ArgumentParser, *, quiet: bool = False) -> None:
    """--json, and --quiet for the commands that report progress."""
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    if quiet:
        parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def preprocessing_options(parser: argparse.ArgumentParser, *, split: bool = True) -> None:
    """How a log is prepared (see `prepared`); with ``split``, --validate too."""
    parser.add_argument("--resample", type=float, metavar="HZ",
                        help="resample to this rate (irregular logs are resampled at their "
                             "median rate anyway)")
    parser.add_argument("--cutoff", type=float, metavar="HZ",
                        help="zero-phase Butterworth low-pass (default 5 Hz when the log has "
                             "no ddq; none otherwise)")
    parser.add_argument("--order", type=int, default=4,
                        help="Butterworth order (default %(default)s)")
    parser.add_argument("--trim", type=float, metavar="S",
                        help="seconds dropped at both ends (default 0.5 when filtered here)")
    if split:
        parser.add_argument("--validate", type=float, metavar="FRACTION",
                            help="hold out this final fraction of the log and report its RMSE "
                                 "(default: none held out)")


def prepared(args: argparse.Namespace, path: str):
    """The log at ``path`` read and preprocessed as the options say."""
    from dynid.data import prepare, read_dataset

    return prepare(read_dataset(path), rate=args.resample, cutoff=args.cutoff,
                   order=args.order, trim_seconds=args.trim)


def validation_options(parser: argparse.ArgumentParser) -> None:
    """What validating a model on a log takes: the M(q) > 0 sampling and the log's
    preprocessing."""
    parser.add_argument("--poses", type=int, default=1000, metavar="N",
                        help="poses sampled for the M(q) > 0 check (default %(default)s)")
    preprocessing_options(parser, split=False)


def friction_options(parser: argparse.ArgumentParser, *, nonlinear: bool = False) -> None:
    """--friction, and the arctan shape constants --kv and --delta (see `linear_friction`)."""
    if nonlinear:
        parser.add_argument("--friction", choices=[*LINEAR_FRICTION, *NONLINEAR_FRICTION],
                            help="friction model: linear columns (default: the robot file's "
                                 "model when linear, else viscous-coulomb); sigmoid, stribeck "
                                 "and lugre with --method nls (default there: the robot "
                                 "file's, else stribeck)")
    else:
        parser.add_argument("--friction", choices=LINEAR_FRICTION,
                            help="linear friction columns (default: the robot file's model "
                                 "when linear, else viscous-coulomb)")
    parser.add_argument("--kv", type=float,
                        help="arctan: sign-shape constant k_v [s/rad] (default: the robot "
                             "file's arctan value, else dynid.friction.DEFAULT_ARCTAN_K_V)")
    parser.add_argument("--delta", type=float,
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


def model_or_robot(path: str):
    """A ``dynid-model/1`` file as a LinearModel; anything else (a built-in name, a robot file,
    a URDF) as a robot."""
    from dynid._reading import load_yaml
    from dynid.identification import MODEL_SCHEMA, load_model
    from dynid.robot import load_robot

    file = Path(path)
    if file.is_file() and file.suffix.lower() in (".yaml", ".yml"):
        spec = load_yaml(file, what="robot or model file")
        if isinstance(spec, dict) and spec.get("schema") == MODEL_SCHEMA:
            return load_model(file)
    return load_robot(path)
