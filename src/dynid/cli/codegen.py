"""`dynid codegen`: an identified model's dynamics as dependency-free C99 (or header-only C++)
for a real-time loop."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._common import output_options, print_json

# literal, like every choice list of the parser (`--help` imports nothing heavy); the same as
# dynid.codegen.LANGUAGES and SUFFIXES
_LANGUAGES = ("c", "cpp")
_SUFFIXES = (".h", ".c", ".hpp", ".hh")


def register(commands: argparse._SubParsersAction) -> None:
    codegen = commands.add_parser(
        "codegen", help="an identified model as C99 (or C++) for a 1 kHz control loop: "
                        "inverse dynamics with friction, M(q), g(q), c(q, dq), C(q, dq)")
    codegen.add_argument("model", metavar="MODEL",
                         help="a model file (dynid identify, friction, retrieve ...); it must "
                              "have friction (linear columns or a fitted model)")
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
    output_options(codegen)
    codegen.set_defaults(handler=_codegen, output_suffixes={"-o": _SUFFIXES},
                         derived_outputs=_beside)


def _beside(args: argparse.Namespace) -> dict[str, Path]:
    """C writes the header and the source together: the one `-o` does not name."""
    path = Path(args.output)
    suffix = path.suffix.lower()
    if args.language == "cpp" or (args.language is None and suffix in (".hpp", ".hh")):
        return {}
    if suffix == ".h":
        return {"-o (its .c)": path.with_suffix(".c")}
    if suffix == ".c":
        return {"-o (its .h)": path.with_suffix(".h")}
    return {}


def _codegen(args: argparse.Namespace) -> int:
    """Generate the model's code and write it."""
    from dynid.codegen import generate
    from dynid.identification import load_model

    model = load_model(args.model)
    code = generate(model, args.output, language=args.language, prefix=args.prefix,
                    parameters=args.parameters)
    functions = ["inverse_dynamics", "mass_matrix", "gravity", "coriolis", "coriolis_matrix",
                 "friction", "friction_state_init", "friction_state_step",
                 "friction_state_rate"]
    names = [f"{code.prefix}::{f}" if code.language == "cpp" else f"{code.prefix}_{f}"
             for f in functions]
    if args.json:
        print_json({"robot": model.robot.name, "language": code.language,
                    "prefix": code.prefix, "files": [str(p) for p in code.paths],
                    "functions": names, "lines": {name: text.count("\n") for name, text
                                                  in code.files.items()}})
        return 0
    files = " and ".join(str(p) for p in code.paths)
    print(f"{model.robot.name}: {'C99' if code.language == 'c' else 'C++'} written to {files} "
          f"({model.robot.n_joints} joints, friction {model.friction.name}"
          + (f" + fitted {model.fitted_friction.name}" if model.fitted_friction else "")
          + f"; {names[0]}, {names[1]}, ...)")
    return 0
