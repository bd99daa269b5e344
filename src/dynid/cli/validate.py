"""`dynid validate`: an identified model on a log (errors, residuals, consistency, M(q) > 0)."""

from __future__ import annotations

import argparse

from dynid.cli._log_options import as_identified, prepared, validation_options
from dynid.cli._outputs import FIGURE_SUFFIXES, output_options
from dynid.cli._parsing import options_named, print_json
from dynid.cli._robot_options import joint_keys


def register(commands: argparse._SubParsersAction) -> None:
    validate = commands.add_parser(
        "validate", help="an identified model on a log: errors, residuals, consistency")
    validate.add_argument("model", help="a model file from `dynid identify` (or friction, nls)")
    validate.add_argument("data", help="a log (as for `dynid identify`)")
    validate.add_argument("--plot", metavar="PNG", help="measured vs predicted torques")
    validate.add_argument("--reestimate-offsets", action="store_true",
                          help="use this log's own torque offsets (its mean residual per "
                               "joint) instead of the model's: torque sensors drift between "
                               "runs; reported as re-estimated")
    validate.add_argument("--joints", nargs="+", metavar="JOINT",
                          help="score these joints only (names or numbers from 1), e.g. when "
                               "a sensor is dead")
    validation_options(validate)
    output_options(validate)
    validate.set_defaults(handler=_validate, output_suffixes={"--plot": FIGURE_SUFFIXES})


def _validate(args: argparse.Namespace) -> int:
    """An identified model on a log: errors, residuals, consistency, M(q) > 0."""
    from dynid.evaluation import check_compatible, validate_model
    from dynid.model import load_model

    model = load_model(args.model)
    data = prepared(args, args.data, model.robot)
    data = as_identified(args, model, data)
    check_compatible(model, data)
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        try:
            with options_named({"joints": "--joints", "n_poses": "--poses"}):
                report = validate_model(model, data, n_poses=args.poses,
                                        reestimate_offsets=args.reestimate_offsets,
                                        joints=joint_keys(args.joints))
        except ValueError as error:  # named by the log: say which model too
            raise ValueError(f"{args.model}: {error}") from None
    _check_finite(report, args.model)
    if args.plot:
        from dynid.evaluation import plot_torques

        plot_torques(data.t, model.measured_torque(data),
                     model.predict(data.q, data.dq, data.ddq, data.t)
                     + (0 if report.offsets is None else report.offsets),
                     args.plot, rigid=model.rigid_torque(data.q, data.dq, data.ddq),
                     title=f"{model.robot.name}: {args.data}, measured "
                           + ("(K i, the model's drive gains) " if data.effort == "current"
                              else "") + "vs model")
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


def _check_finite(report, model: str) -> None:
    """Predictions that overflow are no validation: refuse them rather than print inf errors
    beside a consistency verdict (the verdict is about the parameters, not these torques)."""
    import numpy as np

    figures = {"rmse": report.rmse, "mae": report.mae, "rmse_rigid": report.rmse_rigid,
               "w": report.w}
    bad = [name for name, value in figures.items() if not np.all(np.isfinite(value))]
    if bad:
        raise ValueError(f"`model`: {model}'s predictions are not finite ({', '.join(bad)} "
                         "overflow): its coefficients cannot be evaluated, so it is neither "
                         "validated nor consistent")
