"""`dynid report`: a self-contained HTML report of a model validated on a log."""

from __future__ import annotations

import argparse

from dynid.cli._common import output_options, prepared, print_json, validation_options


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
    validation_options(report)
    output_options(report)
    report.set_defaults(handler=_report, output_suffixes={"-o": (".html", ".htm")})


def _report(args: argparse.Namespace) -> int:
    """A self-contained HTML report of a model validated on a log."""
    from dynid.evaluation import build_report, check_compatible, validate_model, write_report
    from dynid.identification import load_model

    model = load_model(args.model)
    data = prepared(args, args.data, model.robot)
    check_compatible(model, data)
    identification = (prepared(args, args.identification, model.robot)
                      if args.identification else None)
    if identification is not None:
        check_compatible(model, identification)
    validation = validate_model(model, data, n_poses=args.poses)
    text = build_report(model, data, validation, identification=identification,
                        data_name=args.data, command=args.command_line, title=args.title)
    write_report(args.output, text)
    if args.json:
        print_json({"report": args.output, **validation.to_json()})
        return 0
    print(f"{model.robot.name}: report on {args.data} written to {args.output}")
    return 0
