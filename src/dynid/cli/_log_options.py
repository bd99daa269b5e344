"""The logs a command reads: the preprocessing options and the prepared log, the validation
options, the Dask scheduler.

Library code is imported inside the functions, so that building the parser imports nothing
heavy."""

from __future__ import annotations

import argparse
import contextlib

from dynid.cli._parsing import Range


def step_options(parser: argparse.ArgumentParser) -> None:
    """The preprocessing steps' options: --resample, --cutoff, --order, --trim."""
    parser.add_argument("--resample", type=Range(float, high=100_000, above=0), metavar="HZ",
                        help="resample to this rate (irregular logs are resampled at their "
                             "median rate anyway)")
    parser.add_argument("--cutoff", type=Range(float, high=100_000, above=0), metavar="HZ",
                        help="zero-phase Butterworth low-pass of the positions and velocities "
                             "(default: chosen from the log's spectrum when the log has no "
                             "ddq, and said; none otherwise); torques are never filtered")
    parser.add_argument("--order", type=Range(int, 1, 10), default=4,
                        help="Butterworth order (default %(default)s)")
    parser.add_argument("--trim", type=Range(float, 0, 86_400), metavar="S",
                        help="seconds dropped at both ends (default 0.5 when filtered here)")
    parser.add_argument("--derive-velocity", action="store_true",
                        help="ignore the log's velocities and derive them (and the "
                             "accelerations) from its positions; a log without velocities "
                             "gets them so anyway")


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
    motor_side_option(parser)
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
    data = read_dataset(path, joint_names=joints, columns=getattr(args, "columns", None),
                        units=getattr(args, "units", None), effort=getattr(args, "effort", None),
                        mmap=mmap)
    return on_joint_side(args, data, robot)


def motor_side_option(parser: argparse.ArgumentParser) -> None:
    """--motor-side: the log is the motors', mapped to the joints through the robot's
    transmission (``on_joint_side``)."""
    parser.add_argument("--motor-side", action="store_true",
                        help="the log holds motor positions, velocities and torques (or "
                             "currents, one per motor), in the joints' order: mapped to the "
                             "joints through the robot file's transmission (q = G^-1 theta, "
                             "tau = G^T tau_m) before any preprocessing")


def on_joint_side(args: argparse.Namespace, data, robot):
    """``data`` itself, or with --motor-side mapped through ``robot``'s transmission
    (``dynid.data.to_joint_side``)."""
    if not getattr(args, "motor_side", False):
        return data
    from dynid.data import to_joint_side

    if robot is None:
        raise ValueError("`--motor-side` maps a log through the robot's transmission: give "
                         "the robot")
    if robot.transmission.direct:
        raise ValueError(f"`--motor-side`: {robot.name!r} states no transmission (direct "
                         "drive), so the motors' log would be read as the joints'; give its "
                         "reductions (and couplings) under `transmission:` in the robot file")
    try:
        return to_joint_side(data, robot.transmission)
    except ValueError as error:
        raise ValueError(f"`--motor-side`: {error}") from None


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
        given += ["--derive-velocity"] * bool(getattr(args, "derive_velocity", False))
        if given:
            raise ValueError(f"`--as-is` uses the log as it is: it excludes {', '.join(given)}")
    data = read_log(args, path, robot, mmap=mmap)
    if as_is:
        return prepare(data, as_is=True)
    return prepare(data, rate=args.resample, cutoff=args.cutoff, order=args.order,
                   trim_seconds=args.trim, velocity=velocity_source(args))


def velocity_source(args: argparse.Namespace) -> str:
    """``prepare``'s ``velocity`` from --derive-velocity."""
    return "positions" if getattr(args, "derive_velocity", False) else "log"


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


def validation_options(parser: argparse.ArgumentParser) -> None:
    """What validating a model on a log takes: the M(q) > 0 sampling and the log's
    preprocessing."""
    parser.add_argument("--poses", type=Range(int, 1, 100_000), default=1000, metavar="N",
                        help="poses sampled for the M(q) > 0 check (default %(default)s)")
    preprocessing_options(parser, split=False)
    delay_option(parser, "model")


def delay_option(parser: argparse.ArgumentParser, default: str) -> None:
    """--delay: the torque channel's lag behind the positions (``default``: "auto" or
    "model")."""
    told = ("auto (default): estimated with the model's structure and compensated when "
            "significant" if default == "auto" else
            "default: the lag the model was identified with")
    parser.add_argument("--delay", type=_delay, default=default, metavar="auto|MS",
                        help="the torque channel's lag behind the positions [ms], compensated "
                             f"by pairing each torque with the states that long before it; "
                             f"{told}; 0 for none")


def _delay(text: str):
    if text in ("auto", "model"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be auto or milliseconds, got {text!r:.40}"
                                         ) from None
    if not -1000 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"must be within +-1000 ms, got {text!r:.40}")
    return value * 1e-3


def realigned(logs: list, delay: float) -> list:
    """``logs`` with their torques paired with the states ``delay`` s before them."""
    from dynid.identification.delay import shift_torques

    return [shift_torques(log, delay) for log in logs]


def as_identified(args: argparse.Namespace, model, data):
    """A validation log realigned as ``model``'s logs were (--delay: default the lag it was
    identified with, ``report["torque_delay_s"]``; or milliseconds)."""
    delay = model.report.get("torque_delay_s", 0.0) if args.delay == "model" else args.delay
    if delay == "auto":
        raise ValueError("`--delay` of a validation is the model's (default) or milliseconds; "
                         "auto estimates it while identifying")
    return realigned([data], float(delay))[0] if delay else data

