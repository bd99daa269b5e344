"""`dynid validate`: an identified model on a log (errors, residuals, consistency, M(q) > 0)."""

from __future__ import annotations

import argparse

from dynid.cli._common import (
    FIGURE_SUFFIXES,
    output_options,
    prepared,
    print_json,
    validation_options,
)


def register(commands: argparse._SubParsersAction) -> None:
    validate = commands.add_parser(
        "validate", help="an identified model on a log: errors, residuals, consistency")
    validate.add_argument("model", help="a model file from `dynid identify` (or friction, nls)")
    validate.add_argument("data", help="a log (as for `dynid identify`)")
    validate.add_argument("--plot", metavar="PNG", help="measured vs predicted torques")
    validation_options(validate)
    output_options(validate)
    validate.set_defaults(handler=_validate, output_suffixes={"--plot": FIGURE_SUFFIXES})


def _validate(args: argparse.Namespace) -> int:
    """An identified model on a log: errors, residuals, consistency, M(q) > 0."""
    from dynid.evaluation import check_compatible, validate_model
    from dynid.identification import load_model

    model = load_model(args.model)
    data = prepared(args, args.data, model.robot)
    check_compatible(model, data)
    report = validate_model(model, data, n_poses=args.poses)
    if args.plot:
        from dynid.evaluation import plot_torques

        plot_torques(data.t, data.tau, model.predict(data.q, data.dq, data.ddq, data.t),
                     args.plot, rigid=model.rigid_torque(data.q, data.dq, data.ddq),
                     title=f"{model.robot.name}: {args.data}, measured vs model")
    if args.json:
        print_json({"model": args.model, "data": args.data,
                    "preprocessing": data.metadata.get("preprocessing", []),
                    **report.to_json(), "plot": args.plot})
        return 0
    print(f"{model.robot.name}: {args.model} on {args.data}")
    print("\n".join(report.lines()))
    if args.plot:
        print(f"  plot written to {args.plot}")
    return 0
