"""`dynid detect`: collisions in a log, by the momentum observer on an identified model."""

from __future__ import annotations

import argparse

from dynid.cli._outputs import FIGURE_SUFFIXES, output_options
from dynid.cli._parsing import Range, print_json, renamed_option
from dynid.cli._robot_options import description_options


def register(commands: argparse._SubParsersAction) -> None:
    detect = commands.add_parser(
        "detect", help="collisions in a log: the momentum observer on an identified model")
    detect.add_argument("model", metavar="MODEL",
                        help="a model file with friction (from `dynid identify ... --friction "
                             "...`), or a robot whose own parameters and friction to use (a "
                             "built-in name, robot file, URDF or xacro)")
    detect.add_argument("log", metavar="LOG", help="the log to monitor (.csv, .npz, ...)")
    detect.add_argument("--threshold", nargs="+", default=["auto"], metavar="auto|VALUE",
                        help="per-joint thresholds on |r| [N m], one value or one per joint; "
                             "auto (default): the --quantile of |r| on the --calibration log "
                             "times --margin")
    detect.add_argument("--calibration", metavar="LOG",
                        help="a collision-free log of the same robot, for --threshold auto")
    detect.add_argument("--observer-gain", type=Range(float, high=1e5, above=0), nargs="+",
                        metavar="K", help="observer gain [1/s], one value or one per joint "
                                          "(default 50: r follows a contact's torque with a "
                                          "20 ms time constant)")
    renamed_option(detect, "--gain", "--observer-gain", nargs="+")
    detect.add_argument("--quantile", type=Range(float, 0.5, 1), default=None,
                        help="--threshold auto: quantile of |r| on the calibration log "
                             "(default 0.9999)")
    detect.add_argument("--margin", type=Range(float, 1, 1e3), default=None,
                        help="--threshold auto: factor on that quantile (default 1.5)")
    detect.add_argument("--hold", type=Range(float, 0, 60), default=None, metavar="S",
                        help="samples above threshold closer than this are one event "
                             "(default 0.05 s)")
    detect.add_argument("--contact", action="append", metavar="SPEC",
                        help="a true contact, to score the detection (delay, misses, false "
                             "alarms per minute): the syntax of `dynid simulate --contact`; "
                             "repeatable")
    detect.add_argument("--plot", metavar="FILE",
                        help="the residuals, thresholds, events and contacts (.png, .pdf, "
                             ".svg)")
    description_options(detect)
    output_options(detect)
    detect.set_defaults(handler=_detect, output_suffixes={"--plot": FIGURE_SUFFIXES})


def _thresholds(values: list[str]):
    """``"auto"`` or the numbers of --threshold."""
    if values == ["auto"]:
        return "auto"
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        raise ValueError(f"`--threshold` must be auto or numbers [N m], got "
                         f"{' '.join(values)!r:.60}") from None
    if not all(v > 0 for v in numbers):  # NaN fails too
        raise ValueError(f"`--threshold` values must be > 0 N m, got {' '.join(values)}")
    return numbers[0] if len(numbers) == 1 else numbers


def _detect(args: argparse.Namespace) -> int:
    from dynid.cli._robot_options import contacts_from, description, model_or_robot
    from dynid.data import read_dataset
    from dynid.identification import robot_model
    from dynid.model import LinearModel
    from dynid.monitor import detect_collisions, score_detection
    from dynid.monitor.events import DEFAULT_HOLD
    from dynid.monitor.observer import DEFAULT_GAIN
    from dynid.monitor.thresholds import DEFAULT_MARGIN, DEFAULT_QUANTILE

    thresholds = _thresholds(args.threshold)
    if thresholds == "auto" and args.calibration is None:
        raise ValueError("`--threshold auto` needs `--calibration LOG` (a collision-free log "
                         "of the robot), or give --threshold VALUE...")
    if thresholds != "auto" and args.calibration is not None:
        raise ValueError("`--calibration` sets `--threshold auto`; given thresholds need none")
    for flag, value in (("--quantile", args.quantile), ("--margin", args.margin)):
        if value is not None and thresholds != "auto":
            raise ValueError(f"`{flag}` is for --threshold auto")
    source = model_or_robot(args.model, **description(args))
    model = source if isinstance(source, LinearModel) else robot_model(source)
    joints = list(model.robot.joint_names)
    data = read_dataset(args.log, joint_names=joints)
    calibration = (read_dataset(args.calibration, joint_names=joints)
                   if args.calibration is not None else None)
    contacts = contacts_from(args.contact or [], model.robot)
    gain = DEFAULT_GAIN if args.observer_gain is None else (
        args.observer_gain[0] if len(args.observer_gain) == 1 else args.observer_gain)
    # a log without velocities warns (NoVelocityWarning): one line on stderr
    detection = detect_collisions(
        model, data, thresholds=thresholds, calibration=calibration, gain=gain,
        quantile=DEFAULT_QUANTILE if args.quantile is None else args.quantile,
        margin=DEFAULT_MARGIN if args.margin is None else args.margin,
        hold=DEFAULT_HOLD if args.hold is None else args.hold)
    score = score_detection(detection, contacts) if contacts else None
    if args.plot:
        from dynid.evaluation.plots import save_figure
        from dynid.monitor import detection_figure

        save_figure(detection_figure(detection, contacts,
                                     title=f"{model.robot.name}: {args.log}, collision "
                                           "detection"), args.plot)
    if args.json:
        print_json({"model": args.model, "log": args.log, "calibration": args.calibration,
                    **detection.to_json(),
                    **({"score": score.to_json()} if score is not None else {}),
                    "plot": args.plot})
        return 0
    print(f"{args.log} with {args.model}:")
    print(detection.summary())
    if score is not None:
        print("  " + score.summary())
    if args.plot:
        print(f"  plot written to {args.plot}")
    return 0
