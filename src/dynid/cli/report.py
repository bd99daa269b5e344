"""`dynid report`: a self-contained HTML report of a model validated on a log."""

from __future__ import annotations

import argparse

from dynid.cli._log_options import as_identified, on_joint_side, prepared, validation_options
from dynid.cli._outputs import output_options
from dynid.cli._parsing import print_json


def register(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser(
        "report", help="a self-contained HTML report of a model validated on a log")
    report.add_argument("model", help="a model file from `dynid identify` (or nls, friction)")
    report.add_argument("data", help="the validation log")
    report.add_argument("-o", "--output", required=True, metavar="REPORT.html",
                        help="the HTML file to write")
    report.add_argument("--identification", metavar="LOG",
                        help="the log the model was fitted on: its trajectory is plotted")
    report.add_argument("--title", help="the report's title (default: dynid report: ROBOT)")
    report.add_argument("--collisions", metavar="LOG",
                        help="a log to run collision detection on (`dynid detect`): its "
                             "events, score and plot become a section; needs --calibration")
    report.add_argument("--calibration", metavar="LOG",
                        help="with --collisions: a collision-free log that sets the thresholds")
    report.add_argument("--contact", action="append", metavar="SPEC",
                        help="with --collisions: a true contact, to score the detection (the "
                             "syntax of `dynid simulate --contact`); repeatable")
    validation_options(report)
    output_options(report)
    report.set_defaults(handler=_report, output_suffixes={"-o": (".html", ".htm")})


def _report(args: argparse.Namespace) -> int:
    """A self-contained HTML report of a model validated on a log."""
    from dynid.evaluation import build_report, check_compatible, validate_model, write_report
    from dynid.model import load_model

    model = load_model(args.model)
    data = as_identified(args, model, prepared(args, args.data, model.robot))
    check_compatible(model, data)
    identification = (as_identified(args, model, prepared(args, args.identification,
                                                          model.robot))
                      if args.identification else None)
    if identification is not None:
        check_compatible(model, identification)
    if (args.calibration or args.contact) and not args.collisions:
        raise ValueError("`--calibration` and `--contact` go with `--collisions LOG`")
    sections = []
    if args.collisions:
        if not args.calibration:
            raise ValueError("`--collisions` needs `--calibration LOG`: a collision-free log "
                             "of the robot that sets the detection thresholds")
        from dynid.cli._robot_options import contacts_from
        from dynid.data import read_dataset
        from dynid.monitor import detect_collisions, detection_section

        joints = list(model.robot.joint_names)
        contacts = contacts_from(args.contact or [], model.robot)
        collisions, calibration = (  # --motor-side: the monitor's logs are the motors' too
            on_joint_side(args, read_dataset(path, joint_names=joints), model.robot)
            for path in (args.collisions, args.calibration))
        detection = detect_collisions(model, collisions, calibration=calibration)
        sections.append(detection_section(detection, contacts, log_name=args.collisions))
    try:
        validation = validate_model(model, data, n_poses=args.poses)
    except ValueError as error:  # named by the log: say which model too
        raise ValueError(f"{args.model}: {error}") from None
    text = build_report(model, data, validation, identification=identification,
                        data_name=args.data, command=args.command_line, title=args.title,
                        sections=sections)
    write_report(args.output, text)
    if args.json:
        print_json({"report": args.output, **validation.to_json()})
        return 0
    print(f"{model.robot.name}: report on {args.data} written to {args.output}")
    return 0
