"""`dynid friction`: friction models compared, RMSE and MAE per joint (Gilbert Tables 6-7)."""

from __future__ import annotations

import argparse

from dynid.cli._fit_options import LINEAR_FRICTION, NONLINEAR_FRICTION
from dynid.cli._log_options import prepared, preprocessing_options
from dynid.cli._outputs import output_options
from dynid.cli._parsing import Range, print_json, stderr_progress
from dynid.cli._robot_options import ROBOT_HELP, loaded_robot, robot_options

DEFAULT_MODELS = ("none", "lugre", "stribeck", "sigmoid")


def register(commands: argparse._SubParsersAction) -> None:
    friction = commands.add_parser(
        "friction", help="compare friction models: RMSE and MAE per joint (Gilbert Tables 6-7)")
    friction.add_argument("robot", help=ROBOT_HELP)
    friction.add_argument("data", help="the identification log (as for `dynid identify`)")
    friction.add_argument("--validation", metavar="LOG",
                          help="a validation log (or --validate FRACTION)")
    friction.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                          choices=["none", *LINEAR_FRICTION[1:], *NONLINEAR_FRICTION],
                          help="friction models to compare (default "
                               f"{' '.join(DEFAULT_MODELS)})")
    friction.add_argument("--method", choices=["nls", "residual"], default="nls",
                          help="nls: physical parameters and friction jointly (Gilbert, "
                               "default); residual: friction fitted on the residual of a "
                               "rigid-body OLS fit (Gaz)")
    friction.add_argument("--max-samples", type=Range(int, 10, 10_000_000), metavar="N",
                          help="nls: decimate longer logs to N samples (default 10000)")
    friction.add_argument("--model", metavar="MODEL.yaml",
                          help="residual: fit on what this model leaves (e.g. from `dynid "
                               "identify-static`), instead of a rigid-body OLS fit of DATA")
    friction.add_argument("--optimizer", choices=["least-squares", "nelder-mead"],
                          help="residual: per-joint fit (default least-squares; Gaz used "
                               "Nelder-Mead)")
    friction.add_argument("-o", "--output", metavar="MODEL.yaml",
                          help="write the model with the one friction model of --models")
    preprocessing_options(friction)
    output_options(friction, quiet=True)
    robot_options(friction)
    friction.set_defaults(handler=_friction, output_suffixes={"-o": (".yaml", ".yml")})


def _friction(args: argparse.Namespace) -> int:
    """Gilbert's Tables 6-7: each friction model fitted, RMSE and MAE per joint."""
    from dynid.data import split
    from dynid.identification import compare_friction

    robot = loaded_robot(args)
    if (args.validate is None) == (args.validation is None):
        raise ValueError("give the validation data: `--validation FILE` or `--validate "
                         "FRACTION` (one of them)")
    if args.validate is not None and not 0 < args.validate < 1:
        raise ValueError(f"`--validate` must be a fraction in (0, 1), got {args.validate}")
    data = prepared(args, args.data, robot)
    if args.validate is not None:
        data, check = split(data, 1.0 - args.validate)
    else:
        check = prepared(args, args.validation, robot)
    if check.n_joints != robot.n_joints or data.n_joints != robot.n_joints:
        raise ValueError(f"the logs must have the robot's {robot.n_joints} joints")
    options = {}
    if args.method == "nls":
        if args.model is not None or args.optimizer is not None:
            raise ValueError("`--model` and `--optimizer` are for --method residual")
        options = {"max_samples": args.max_samples or 10_000}
    else:
        if args.max_samples is not None:
            raise ValueError("`--max-samples` is for --method nls")
        from dynid.model import load_model

        options = {"optimizer": args.optimizer or "least-squares",
                   "rigid": load_model(args.model) if args.model else None}
    kept = [name for name in args.models if name != "none"]
    if args.output is not None:
        if len(kept) != 1:
            raise ValueError(f"`-o` writes one model: give one friction model in `--models` "
                             f"(besides none), got {kept}")
    table = compare_friction(robot, data, check, models=args.models, method=args.method,
                             progress=stderr_progress(args), **options)
    if args.output is not None:
        from dynid.model import save_model

        chosen = table.fitted[args.models.index(kept[0])]
        chosen.report["command"] = args.command_line
        save_model(chosen, args.output)
    if args.json:
        print_json({"robot": robot.name, **table.to_json(), "model_file": args.output})
        return 0
    way = ("physical parameters and friction fitted jointly" if args.method == "nls"
           else f"friction fitted on the residual of {args.model}" if args.model
           else "friction fitted on the residual of one rigid-body OLS fit")
    print(f"{robot.name}: friction models on {args.data} ({way}; validation "
          f"{check.n_samples} samples)")
    print("\n".join(table.lines()))
    if args.output is not None:
        print(f"  model with {kept[0]} friction written to {args.output}")
    return 0
