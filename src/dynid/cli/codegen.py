"""`dynid codegen`: an identified model's dynamics as dependency-free C99 (or header-only C++)
for a real-time loop."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dynid.cli._outputs import output_options
from dynid.cli._parsing import print_json

# literal, like every choice list of the parser (`--help` imports nothing heavy); the same as
# dynid.codegen.LANGUAGES and SUFFIXES
_LANGUAGES = ("c", "cpp")
_SUFFIXES = (".h", ".c", ".hpp", ".hh")
_EFFORTS = ("torque", "current")  # dynid.codegen.EFFORTS


def register(commands: argparse._SubParsersAction) -> None:
    codegen = commands.add_parser(
        "codegen", help="an identified model as C99 (or C++) for a 1 kHz control loop: "
                        "inverse dynamics (with the model's friction), M(q), g(q), c(q, dq), "
                        "C(q, dq)")
    codegen.add_argument("model", metavar="MODEL",
                         help="a model file (dynid identify, identify-static, friction, "
                              "retrieve ...); a model without friction gives code without "
                              "friction terms, one with drive gains current conversions too")
    codegen.add_argument("-o", "--output", required=True, metavar="FILE",
                         help="arm.h or arm.c: C99, both files written side by side; arm.hpp "
                              "(or arm.h with --language cpp): one header-only C++ file")
    codegen.add_argument("--language", choices=_LANGUAGES,
                         help="c (default for .h and .c) or cpp (default for .hpp and .hh)")
    codegen.add_argument("--prefix", metavar="NAME",
                         help="C: the functions' prefix, NAME_inverse_dynamics ...; C++: the "
                              "namespace (default: the robot's name)")
    codegen.add_argument("--parameters", choices=("equivalent", "physical"),
                         default="equivalent",
                         help="the numbers the code is written from: the identified "
                              "coefficients as an equivalent parameter vector (default, what "
                              "dynid evaluates) or the full link parameters of a constrained, "
                              "NLS or retrieved model (the same torques to rounding)")
    codegen.add_argument("--effort", choices=_EFFORTS, default="torque",
                         help="torque (default): the dynamics in joint torques; current: also "
                              "inverse_dynamics_current and gravity_current, the motor currents "
                              "[A] = torque / K (friction included), for a model with drive "
                              "gains (identified from motor currents)")
    output_options(codegen)
    codegen.set_defaults(handler=_codegen, output_suffixes={"-o": _SUFFIXES},
                         derived_outputs=_beside)


def _beside(args: argparse.Namespace) -> dict[str, Path]:
    """C writes the header and the source together: the one `-o` does not name (exactly the
    file `generate` writes, so that it is checked against every input too)."""
    from dynid.codegen import output_files

    named = Path(args.output)
    if named.suffix.lower() not in _SUFFIXES:
        return {}  # refused by its suffix
    return {f"-o (its {path.suffix})": path for path in output_files(named, args.language)
            if path != named}


def _codegen(args: argparse.Namespace) -> int:
    """Generate the model's code and write it."""
    from dynid.codegen import generate
    from dynid.model import load_model

    model = load_model(args.model)
    if args.effort == "current" and model.drive_gains is None:
        raise ValueError(f"`--effort current`: {args.model} has no drive gains (it was "
                         "identified from joint torques), so there is no K to turn its torques "
                         "into motor currents: generate torques (--effort torque), or identify "
                         "the model from current logs")
    code = generate(model, args.output, language=args.language, prefix=args.prefix,
                    parameters=args.parameters, effort=args.effort)
    def named(function: str) -> str:
        return f"{code.prefix}::{function}" if code.language == "cpp" else \
            f"{code.prefix}_{function}"

    names = [named(function) for function in code.functions]
    files = " and ".join(str(p) for p in code.paths)
    if not code.friction:
        print(f"dynid: note: {args.model}: the model has no friction (friction 'none', none "
              f"fitted): the code written has no friction terms; inverse_dynamics is "
              "M ddq + c + g alone", file=sys.stderr)
    if args.json:
        print_json({"robot": model.robot.name, "language": code.language,
                    "prefix": code.prefix, "files": [str(p) for p in code.paths],
                    "functions": names, "friction": code.friction,
                    "drive_gains": code.drive_gains, "effort": code.effort,
                    "lines": {name: text.count("\n") for name, text in code.files.items()}})
        return 0
    friction = (f"friction {model.friction.name}"
                + (f" + fitted {model.fitted_friction.name}" if model.fitted_friction else "")
                if code.friction else "no friction")
    print(f"{model.robot.name}: {'C99' if code.language == 'c' else 'C++'} written to {files} "
          f"({model.robot.n_joints} joints, {friction}, "
          + ("effort: motor currents, inverse_dynamics_current and gravity_current [A]; "
             if code.effort == "current" else "")
          + ("drive gains: torque_from_current, current_from_torque" if code.drive_gains
             else "torques only, no drive gains")
          + f"; {named('inverse_dynamics')}, {named('mass_matrix')}, ...)")
    return 0
