"""Dependency-free C (or C++) for an identified model: inverse dynamics with the model's
friction, M(q), g(q), c(q, dq), the Coriolis matrix, friction and its state (no friction
terms for a model without friction), and current conversions for a model with drive gains.

``generate(model, path)`` writes, for ``language="c"``, a header and a source file side by side
(``arm.h`` and ``arm.c``, whichever of the two ``path`` names): C99, functions named
``<prefix>_inverse_dynamics`` ...; for ``language="cpp"``, one header-only file (``arm.hpp``)
with the same functions, ``inline``, in ``namespace <prefix>``. The code is straight-line: the
recursive Newton-Euler algorithm (and the composite-rigid-body algorithm for M, Echeandia &
Wensing's for the Coriolis matrix) written out over the model's numbers, exactly printed, with
the exact zeros dropped (``_rigid_body``). No allocation, no global state, no library but
libm's sin, cos (and, as the friction model needs them, exp, tanh, atan; pow only for a
Stribeck model whose shape exponent is neither 1 nor 2).
"""

from __future__ import annotations

import dataclasses
import keyword
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from dynid._files import atomic_write_all
from dynid.codegen import _friction, _rigid_body
from dynid.codegen._expressions import Body, Value, Var, literal
from dynid.dynamics._chain import chain_arrays
from dynid.friction.models import FRICTION_MODELS, LuGre, NoFriction
from dynid.model.linear_model import LinearModel

__all__ = ["LANGUAGES", "SUFFIXES", "GeneratedCode", "generate", "output_files"]

Language = Literal["c", "cpp"]
ParameterSet = Literal["equivalent", "physical"]

#: The languages ``generate`` writes.
LANGUAGES: tuple[str, ...] = ("c", "cpp")
#: The suffixes ``path`` may have, per language: C writes the ``.h`` and the ``.c`` together.
SUFFIXES: dict[str, tuple[str, ...]] = {"c": (".h", ".c"), "cpp": (".hpp", ".hh", ".h")}

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false class namespace new delete template "
    "this throw try catch using virtual public private protected operator friend typename "
    "std".split())
_MATH = ("sin", "cos", "exp", "tanh", "atan", "pow")
# what a quoted #include name may not hold (C99 6.4.7: ', \, // and /* are undefined in it)
_UNINCLUDABLE = re.compile(r"[\"'\\\x00-\x1f\x7f]|//|/\*")


@dataclass(frozen=True)
class GeneratedCode:
    """What ``generate`` made: ``files`` maps each file name to its text (the header first);
    ``paths`` where they were written (empty when no path was given); ``functions`` the
    functions' names without the prefix, in the order the header declares them;
    ``friction`` and ``drive_gains`` whether the model has them (and so the code)."""

    language: str
    prefix: str
    files: dict[str, str]
    paths: tuple[Path, ...] = field(default=())
    functions: tuple[str, ...] = field(default=())
    friction: bool = True
    drive_gains: bool = False
    effort: str = "torque"


def _prefix(model: LinearModel, prefix: str | None) -> str:
    if prefix is None:
        text = re.sub(r"\W", "_", model.robot.name.strip().lower(), flags=re.ASCII) or "robot"
        text = text if text[0].isalpha() else f"robot{text if text[0] == '_' else '_' + text}"
        return f"{text}_model" if text in _C_KEYWORDS or keyword.iskeyword(text) else text
    if not isinstance(prefix, str):
        raise TypeError(f"`prefix` must be text, got {type(prefix).__name__}")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", prefix) or prefix in _C_KEYWORDS:
        raise ValueError(f"`prefix` must be a C identifier (a letter, then letters, digits or "
                         f"_), not a keyword, got {prefix!r}")
    return prefix


def _shown_url(url: str) -> str:
    """A web address as it is; a file (a URDF's path) by its name alone: the generated code
    travels, the folders of the machine that made it stay there."""
    return url if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url) else Path(url).name


def _language(language: str | None, path: Path | None) -> Language:
    if language is None:
        if path is not None and path.suffix.lower() in (".hpp", ".hh"):
            return "cpp"
        return "c"
    if language not in LANGUAGES:
        raise ValueError(f"`language` must be one of {', '.join(LANGUAGES)}, got {language!r}")
    return language  # type: ignore[return-value]


def _check_path(path: Path, language: Language) -> None:
    allowed = SUFFIXES[language]
    if path.suffix.lower() not in allowed:
        raise ValueError(f"`path` for {language} must end in {' or '.join(allowed)}, got "
                         f"{path.name!r}" + (" (C writes a .h and a .c: name either)"
                                             if language == "c" else ""))
    if language == "c" and (_UNINCLUDABLE.search(path.name) or not path.stem):
        raise ValueError(f"`path`: the source file includes the header by its name, and C "
                         f"cannot #include {path.with_suffix('.h').name!r} (no quote, "
                         "apostrophe, backslash, // or /* or control character, and a name "
                         "before the suffix); choose another file name")


def check_model(model: LinearModel) -> None:
    """ValueError with the reason for a model codegen refuses: not a LinearModel, NaN or inf
    in its numbers (a model without friction, ``LinearModel.has_friction`` False, gives code
    without friction terms)."""
    if not isinstance(model, LinearModel):
        raise TypeError(f"`model` must be an identified LinearModel (dynid.load_model), got "
                        f"{type(model).__name__}")
    numbers = {"coefficients": model.coefficients, "the robot's gravity": model.robot.gravity,
               "the robot's joint geometry": np.concatenate(
                   [np.ravel(a) for a in chain_arrays(model.robot)])}
    for friction, where in ((model.friction, "friction"),
                            (model.fitted_friction, "fitted friction")):
        if friction is not None and not isinstance(friction, NoFriction):
            if type(friction) is not FRICTION_MODELS.get(getattr(friction, "name", None)):
                raise TypeError(f"`model`: its {where} must be one of dynid's friction models "
                                f"{sorted(FRICTION_MODELS)}, got {type(friction).__name__}")
            numbers[f"its {where} ({friction.name})"] = friction.per_joint()
    if not model.robot.transmission.uncoupled and isinstance(model.fitted_friction, LuGre):
        raise ValueError("`model`: a LuGre friction through a coupled transmission (each "
                         "motor's bristle state at its own speed) is not generated; fit a "
                         "static friction model, or generate without the coupling")
    for what, values in numbers.items():
        values = np.asarray(values, dtype=float)
        if not np.isfinite(values).all():
            index = int(np.flatnonzero(~np.isfinite(values.ravel()))[0])
            raise ValueError(f"`model`: NaN or inf in {what} (first at flat index "
                             f"{index}); generated code would compute NaN")


def output_files(path: str | Path, language: str | None = None) -> tuple[Path, ...]:
    """The files ``generate(model, path, language=language)`` writes, the header first: C, the
    file ``path`` names under exactly that name and its partner beside it (``arm.h`` ->
    ``arm.h``, ``arm.c``; ``ARM.H`` -> ``ARM.H``, ``ARM.c``); C++, ``path`` alone."""
    target = Path(path)
    chosen = _language(language, target)
    _check_path(target, chosen)
    if chosen == "cpp":
        return (target,)
    if target.suffix.lower() == ".h":
        return target, target.with_suffix(".c")
    return target.with_suffix(".h"), target


def _link_parameters(model: LinearModel, parameters: str) -> tuple[np.ndarray, np.ndarray]:
    """``(n, 10)`` link parameters and ``(n,)`` rotor inertias the code is written from."""
    n = model.robot.n_joints
    if parameters == "equivalent":
        return model.equivalent_parameters[:10 * n].reshape(n, 10), model.rotor_parameters
    if parameters == "physical":
        physical = model.physical_parameters
        if physical is None:
            raise ValueError("`parameters`: 'physical' needs a model whose robot carries the "
                             "identified link parameters (constrained, NLS or retrieved); this "
                             f"one ({model.report.get('method', 'base parameters')}) has only "
                             "its base coefficients: use 'equivalent'")
        rotor = (np.asarray(model.robot.rotor_inertia, dtype=float) if model.rotor_inertia
                 else np.zeros(n))
        return np.asarray(physical, dtype=float), rotor
    raise ValueError(f"`parameters` must be 'equivalent' or 'physical', got {parameters!r}")


def _inputs(name: str, n: int) -> list[Value]:
    return [Var(f"{name}[{i}]") for i in range(n)]


class _Writer:
    """Every function of one model in one language."""

    def __init__(self, model: LinearModel, prefix: str, language: Language,
                 parameters: str, effort: str = "torque") -> None:
        self.model, self.language, self.effort = model, language, effort
        self.n = model.robot.n_joints
        self.chain = chain_arrays(model.robot)
        self.pi, self.rotor = _link_parameters(model, parameters)
        transmission = model.robot.transmission
        # the rotors' share of M: diag(I_a), or C^T diag(I_a) C through a coupled transmission
        self.coupling = None if transmission.uncoupled else transmission.coupling
        self.rotors = np.diag(self.rotor) if self.coupling is None \
            else transmission.rotor_matrix(self.rotor)
        self.parameters = parameters
        cpp = language == "cpp"
        self.math = "std::" if cpp else ""
        self.names = _friction.Names(math=self.math, sign="detail::sign" if cpp else "dynid_sign",
                                     abs="detail::abs" if cpp else "dynid_abs")
        self.prefix = prefix
        self.stateful = isinstance(model.fitted_friction, LuGre)
        self.friction = model.has_friction
        self.gains = (None if model.drive_gains is None
                      else np.asarray(model.drive_gains, dtype=float))
        self._functions: list[tuple[str, str, str, list[str]]] | None = None

    def name(self, function: str) -> str:
        return function if self.language == "cpp" else f"{self.prefix}_{function}"

    # -- the functions: (name, parameters, doc, body lines) -------------------------------
    def _rigid(self, dq: bool, ddq: bool, gravity: bool) -> tuple[Body, list[Value]]:
        body = Body(self.math)
        n = self.n
        pose = _rigid_body.poses(body, self.chain, _inputs("q", n))
        zero = [0.0] * n
        tau = _rigid_body.rnea(body, self.chain, pose, self.pi,
                               _inputs("dq", n) if dq else zero,
                               _inputs("ddq", n) if ddq else zero,
                               np.asarray(self.model.robot.gravity, dtype=float) if gravity
                               else np.zeros(3))
        return body, tau

    def _friction_functions(self, vec: str) -> list[tuple[str, str, str, list[str]]]:
        n, out = self.n, []
        fitted, linear = self.model.fitted_friction, self.model.friction
        values = self.model.friction_parameters
        out.append(("friction", f"const double dq{vec}, const double *z, double tau_f{vec}",
                    "Friction torques tau_f [N m | N] at velocities dq: the identified linear "
                    "friction plus the fitted model. z: the friction state (LuGre's bristle "
                    "deflections, n_states values), or NULL for the steady state; ignored by "
                    "static friction.",
                    self._unused(self._friction_torque(linear, values, fitted),
                                 ("dq", "z"))))
        out.append(("friction_state_init", f"const double dq{vec}, double *z",
                    "The friction state z at its steady state for velocities dq (start of a "
                    "run). Does nothing when n_states is 0.",
                    self._unused(_friction.state_init(fitted, n, self.names), ("dq", "z"))))
        out.append(("friction_state_step",
                    f"const double dq_prev{vec}, const double dq{vec}, double dt, double *z",
                    "Advances the friction state z in place over dt [s] from velocities "
                    "dq_prev to dq (exact for the velocity held at their mean; stable at any "
                    "step). Does nothing when n_states is 0.",
                    self._unused(_friction.state_step(fitted, n, self.names),
                                 ("dq_prev", "dq", "dt", "z"))))
        out.append(("friction_state_rate", f"const double dq{vec}, const double *z, double *dz",
                    "dz/dt of the friction state at velocities dq and state z, for an "
                    "integrator of your own. Does nothing when n_states is 0.",
                    self._unused(_friction.state_rate(fitted, n, self.names), ("dq", "z", "dz"))))
        return out

    def _friction_torque(self, linear, values, fitted) -> list[str]:
        """``friction``'s body: per joint, or through a coupled transmission the motors'
        friction at their speeds ``u = C dq`` mapped to the joints, ``tau_f = C^T f(u)``."""
        n = self.n
        if self.coupling is None:
            return _friction.friction_torque(linear, values, fitted, n, self.names)
        c = self.coupling

        def combination(terms) -> str:
            return " + ".join(f"{literal(w, 'a coupling')} * {v}" if w != 1.0 else v
                              for w, v in terms if w != 0.0)

        return [f"double u[{n}];", f"double f[{n}];",
                *[f"u[{k}] = {combination((c[k, j], f'dq[{j}]') for j in range(n))};"
                  for k in range(n)],
                *_friction.friction_torque(linear, values, fitted, n, self.names, speed="u",
                                           target="f"),
                *[f"tau_f[{i}] = {combination((c[k, i], f'f[{k}]') for k in range(n))};"
                  for i in range(n)]]

    def functions(self) -> list[tuple[str, str, str, list[str]]]:
        """Every function, built once: (name, parameters, doc, body lines)."""
        if self._functions is None:
            self._functions = self._build()
        return self._functions

    def _build(self) -> list[tuple[str, str, str, list[str]]]:
        n, out = self.n, []
        vec = f"[{n}]"
        mat = f"[{n * n}]"
        if self.friction:
            out += self._friction_functions(vec)
        body, tau = self._rigid(dq=True, ddq=True, gravity=True)
        for i in range(n):
            body.output(f"tau[{i}]", body.sum(
                (tau[i],), *((float(self.rotors[i, j]), Var(f"ddq[{j}]")) for j in range(n)
                             if i == j or self.rotors[i, j] != 0.0)))
        if self.friction:
            lines = [*body.lines(), f"double tau_f{vec};",
                     f"{self.name('friction')}(dq, z, tau_f);",
                     *[f"tau[{i}] += tau_f[{i}];" for i in range(n)]]
            out.append(("inverse_dynamics",
                        f"const double q{vec}, const double dq{vec}, const double ddq{vec}, "
                        f"const double *z, double tau{vec}",
                        "Joint torques tau = M(q) ddq + c(q, dq) + g(q) + friction(dq, z) "
                        "[N m | N]; z as for friction (NULL: steady-state friction).",
                        self._unused(lines, ("q", "dq", "ddq", "z"))))
        else:
            out.append(("inverse_dynamics",
                        f"const double q{vec}, const double dq{vec}, const double ddq{vec}, "
                        f"double tau{vec}",
                        "Joint torques tau = M(q) ddq + c(q, dq) + g(q) [N m | N]. No friction "
                        "term: the model has no friction; add your own compensation for a "
                        "real arm.", self._unused(body.lines(), ("q", "dq", "ddq"))))

        body = Body(self.math)
        pose = _rigid_body.poses(body, self.chain, _inputs("q", n))
        matrix = _rigid_body.mass_matrix(body, self.chain, pose, self.pi)
        for i in range(n):
            for j in range(n):
                value = matrix[i][j]
                if i == j or self.rotors[i, j] != 0.0:
                    value = body.sum((value,), (float(self.rotors[i, j]),))
                body.output(f"M[{i * n + j}]", value)
        out.append(("mass_matrix", f"const double q{vec}, double M{mat}",
                    "The joint-space inertia matrix M(q), rotor inertias on its diagonal; "
                    f"row-major: M[i * {n} + j].", self._unused(body.lines(), ("q",))))

        body, tau = self._rigid(dq=False, ddq=False, gravity=True)
        for i in range(n):
            body.output(f"g[{i}]", tau[i])
        out.append(("gravity", f"const double q{vec}, double g{vec}",
                    "The gravity torques g(q) [N m | N]: what holds the arm still at q.",
                    self._unused(body.lines(), ("q",))))

        body, tau = self._rigid(dq=True, ddq=False, gravity=False)
        for i in range(n):
            body.output(f"c[{i}]", tau[i])
        out.append(("coriolis", f"const double q{vec}, const double dq{vec}, double c{vec}",
                    "The Coriolis and centrifugal torques c(q, dq) = C(q, dq) dq [N m | N].",
                    self._unused(body.lines(), ("q", "dq"))))

        body = Body(self.math)
        pose = _rigid_body.poses(body, self.chain, _inputs("q", n))
        matrix = _rigid_body.coriolis_matrix(body, self.chain, pose, self.pi, _inputs("dq", n))
        for i in range(n):
            for j in range(n):
                body.output(f"C[{i * n + j}]", matrix[i][j])
        out.append(("coriolis_matrix", f"const double q{vec}, const double dq{vec}, double C{mat}",
                    "The Coriolis matrix C(q, dq) of the Christoffel symbols: C dq = c(q, dq), "
                    f"dM/dt - 2 C skew-symmetric; row-major: C[i * {n} + j].",
                    self._unused(body.lines(), ("q", "dq"))))
        if self.effort == "current":
            out += self._current_functions(vec)
        if self.gains is not None:
            what = "an identified drive gain"
            gains = [literal(k, what) for k in self.gains]
            out.append(("torque_from_current", f"const double current{vec}, double tau{vec}",
                        "Joint torques [N m | N] from motor currents [A]: tau = K current, K the "
                        "identified drive gains [N m/A | N/A].",
                        [f"tau[{i}] = {k} * current[{i}];" for i, k in enumerate(gains)]))
            out.append(("current_from_torque", f"const double tau{vec}, double current{vec}",
                        "Motor currents [A] that give joint torques tau [N m | N]: current = "
                        "tau / K, K the identified drive gains [N m/A | N/A].",
                        [f"current[{i}] = tau[{i}] / {k};" for i, k in enumerate(gains)]))
        return out

    def _current_functions(self, vec: str) -> list[tuple[str, str, str, list[str]]]:
        """``effort="current"``: the inverse dynamics and gravity in motor currents, the
        torque functions' results over the drive gains (friction included)."""
        gains = [literal(k, "an identified drive gain") for k in self.gains]
        state = "z, " if self.friction else ""
        divide = [f"current[{i}] = current[{i}] / {k};" for i, k in enumerate(gains)]
        return [
            ("inverse_dynamics_current",
             f"const double q{vec}, const double dq{vec}, const double ddq{vec}, "
             + ("const double *z, " if self.friction else "") + f"double current{vec}",
             "Motor currents [A] that realise the motion: current = (M(q) ddq + c(q, dq) + "
             "g(q)" + (" + friction(dq, z)" if self.friction else "") + ") / K, K the "
             "identified drive gains [N m/A | N/A]"
             + ("; z as for friction (NULL: steady-state friction)." if self.friction
                else "."),
             [f"{self.name('inverse_dynamics')}(q, dq, ddq, {state}current);", *divide]),
            ("gravity_current", f"const double q{vec}, double current{vec}",
             "The motor currents [A] that hold the arm still at q: g(q) / K.",
             [f"{self.name('gravity')}(q, current);", *divide]),
        ]

    @staticmethod
    def _unused(lines: list[str], arguments: tuple[str, ...]) -> list[str]:
        """``(void)x;`` for the arguments the body never reads (clean under -Wextra)."""
        text = "\n".join(lines)
        unused = [a for a in arguments if not re.search(rf"\b{a}\b", text)]
        return [f"(void){a};" for a in unused] + lines

    # -- files ----------------------------------------------------------------------------
    def comment(self, file_name: str, functions: list[tuple[str, str, str, list[str]]],
                ) -> list[str]:
        from dynid._version import __version__

        model, robot = self.model, self.model.robot
        report = model.report
        n = self.n
        kinds = ["prismatic" if r == 0.0 else "revolute" for r in self.chain.revolute]
        joints = ", ".join(f"{name} ({kind})" for name, kind in
                           zip(robot.joint_names, kinds, strict=True))
        friction = model.friction.name + (f" + fitted {model.fitted_friction.name}"
                                           if model.fitted_friction is not None else "")
        figures = [f"{key.replace('_', ' ')} {report[key]:.4g}"
                   for key in ("relative_error_percent", "condition_number")
                   if isinstance(report.get(key), (int, float))]
        if isinstance(report.get("n_samples"), int):
            figures.append(f"{report['n_samples']} samples")
        text = "\n".join(line for *_, body in functions for line in body)
        used = [f for f in _MATH if re.search(rf"\b{f}\(", text)]
        parameters = ("the equivalent parameter vector (the identified coefficients at the "
                      "representative parameters, zero elsewhere: the model's own evaluation)"
                      if self.parameters == "equivalent" else
                      "the identified physical link parameters (m, m c, I about the link "
                      "origin per link)")
        gravity = ", ".join(repr(float(g)) for g in robot.gravity)
        paragraphs = [
            f"{file_name}: the dynamics of the identified model of robot {robot.name!r}, "
            f"generated by dynid {__version__} (dynid codegen). Do not edit: generate again "
            "from the model file.",
            f"Robot: {robot.name}, {n} joints, {robot.convention}: {joints}."
            + (f" Source: {robot.source.citation}" if robot.source.citation else "")
            + (f" {_shown_url(robot.source.url)}" if robot.source.url else ""),
            f"Model: {report.get('method', 'identified')} estimate of {model.base.rank} base "
            f"parameters ({model.base.method}), friction {friction}, rotor inertias "
            f"{'identified' if model.rotor_inertia else 'not identified'}"
            + (f"; {', '.join(figures)}" if figures else "") + "."
            + (f" Made by: {report['command']}" if isinstance(report.get("command"), str)
               else ""),
            f"Numbers: {parameters}, printed exactly (17 significant digits).",
            self.friction_note(), self.drive_note(),
            f"Units: SI. q [rad] (revolute) or [m] (prismatic), dq [rad/s | m/s], ddq "
            f"[rad/s^2 | m/s^2], torques [N m | N], dt [s], z [rad | m] (LuGre bristle "
            f"deflection). Gravity ({gravity}) m/s^2 in the base frame. Joint vectors hold "
            f"{n} doubles; matrices {n} x {n}, row-major.",
            "Straight-line recursive Newton-Euler (CRBA for M; Echeandia & Wensing 2021 for "
            "the Coriolis matrix) over the model's numbers: no allocation, no global state, "
            "reentrant. Math library: " + (", ".join(used) if used else "none") + ".",
        ]
        lines = ["/*"]
        for paragraph in paragraphs:
            safe = " ".join(paragraph.replace("*/", "* /").split())
            lines += [f" * {line}" for line in textwrap.wrap(safe, 92)] + [" *"]
        lines[-1] = " */"
        return lines

    def friction_note(self) -> str:
        """What the header says of friction: which, or that there is none."""
        if not self.friction:
            return ("Friction: NONE. The model has no friction (friction model 'none', no "
                    "fitted friction), so this code has no friction terms and no friction "
                    "functions: inverse_dynamics is M(q) ddq + c(q, dq) + g(q) alone. A "
                    "real arm's joints have friction; compensate it separately if the loop "
                    "needs it.")
        model = self.model
        fitted = model.fitted_friction
        return (f"Friction: {model.friction.name} (linear, identified)"
                + (f" + fitted {fitted.name}" if fitted is not None else "")
                + f"; {self.n if self.stateful else 0} friction states.")

    def drive_note(self) -> str:
        """What the header says of the drives: the identified gains, or that there are
        none."""
        if self.gains is None:
            return ("Drive gains: none (a model identified from joint torques). Every function "
                    "takes and returns joint torques [N m | N]; there is no current "
                    "interface: convert motor currents with your drives' own torque "
                    "constants and gear ratios.")
        gains = ", ".join(repr(float(k)) for k in self.gains)
        if self.effort == "current":
            return (f"Drive gains: identified from motor currents, K = ({gains}) [N m/A | N/A] "
                    "per joint. Effort: motor currents. inverse_dynamics_current and "
                    "gravity_current return currents [A] (the torques over K, friction "
                    "included); the other functions take and return joint torques; "
                    "torque_from_current and current_from_torque convert (tau = K current).")
        return (f"Drive gains: identified from motor currents, K = ({gains}) [N m/A | N/A] "
                "per joint. The dynamics take and return joint torques; torque_from_current "
                "and current_from_torque convert (tau = K current).")

    def c_files(self, header_name: str, source_name: str) -> dict[str, str]:
        functions = self.functions()
        stem = Path(header_name).stem
        guard = re.sub(r"\W", "_", f"DYNID_{self.prefix}_{stem}_H".upper(), flags=re.ASCII)
        upper = self.prefix.upper()
        header = [*self.comment(header_name, functions), f"#ifndef {guard}", f"#define {guard}",
                  "", "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
                  f"#define {upper}_NQ {self.n} /* joints */",
                  f"#define {upper}_N_STATES {self.n if self.stateful else 0} "
                  "/* friction states (LuGre bristle deflections) */",
                  f"#define {upper}_HAS_FRICTION {int(self.friction)} "
                  "/* 0: no friction terms, no friction functions */",
                  f"#define {upper}_HAS_DRIVE_GAINS {int(self.gains is not None)} "
                  "/* 1: torque_from_current, current_from_torque */",
                  f"#define {upper}_HAS_CURRENT_DYNAMICS {int(self.effort == 'current')} "
                  "/* 1: inverse_dynamics_current, gravity_current [A] */", ""]
        for name, arguments, doc, _ in functions:
            header += [*_doc(doc), f"void {self.name(name)}({arguments});", ""]
        header += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
        source = [*self.comment(source_name, functions), f'#include "{header_name}"', "",
                  "#include <math.h>", ""]
        source += _helpers(functions, "static double", self.names)
        for name, arguments, _, body in functions:
            source += [f"void {self.name(name)}({arguments})", "{",
                       *[f"    {line}" for line in body], "}", ""]
        return {header_name: "\n".join(header), source_name: "\n".join(source)}

    def cpp_file(self, file_name: str) -> dict[str, str]:
        functions = self.functions()
        guard = re.sub(r"\W", "_", f"DYNID_{self.prefix}_{file_name}".upper(), flags=re.ASCII)
        text = [*self.comment(file_name, functions), f"#ifndef {guard}", f"#define {guard}", "",
                "#include <cmath>", "", f"namespace {self.prefix} {{", "",
                f"constexpr int nq = {self.n}; // joints",
                f"constexpr int n_states = {self.n if self.stateful else 0}; "
                "// friction states (LuGre bristle deflections)",
                f"constexpr bool has_friction = {str(self.friction).lower()}; "
                "// false: no friction terms, no friction functions",
                f"constexpr bool has_drive_gains = {str(self.gains is not None).lower()}; "
                "// true: torque_from_current, current_from_torque",
                f"constexpr bool has_current_dynamics = "
                f"{str(self.effort == 'current').lower()}; "
                "// true: inverse_dynamics_current, gravity_current [A]", ""]
        helpers = _helpers(functions, "inline double", self.names)
        if helpers:
            text += ["namespace detail {", *helpers, "} // namespace detail", ""]
        for name, arguments, doc, body in functions:
            text += [*_doc(doc), f"inline void {name}({arguments})", "{",
                     *[f"    {line}" for line in body], "}", ""]
        text += [f"}} // namespace {self.prefix}", "", f"#endif // {guard}", ""]
        return {file_name: "\n".join(text)}


def _doc(text: str) -> list[str]:
    wrapped = textwrap.wrap(text, 92)
    return ["/* " + wrapped[0], *[" * " + line for line in wrapped[1:]], " */"] \
        if len(wrapped) > 1 else [f"/* {text} */"]


def _helpers(functions, declaration: str, names: _friction.Names) -> list[str]:
    """The sign and absolute-value helpers the bodies call (only those: no unused function)."""
    text = "\n".join(line for *_, body in functions for line in body)
    out = []
    if f"{names.sign}(" in text:
        out += [f"{declaration} {names.sign.split('::')[-1]}(double v)", "{",
                "    return (double)((v > 0.0) - (v < 0.0));", "}", ""]
    if f"{names.abs}(" in text:
        out += [f"{declaration} {names.abs.split('::')[-1]}(double v)", "{",
                "    return v < 0.0 ? -v : v;", "}", ""]
    return out


def generate(model: LinearModel, path: str | Path | None = None, *,
             language: str | None = None, prefix: str | None = None,
             parameters: str = "equivalent", effort: str = "torque") -> GeneratedCode:
    """C99 (or C++) code of ``model``'s dynamics; written to ``path`` when given.

    ``language``: ``"c"`` (default; also what a ``.h``/``.c`` path means) writes a header and
    a source beside it (``arm.h`` + ``arm.c``, whichever ``path`` names); ``"cpp"`` (the
    default for a ``.hpp``/``.hh`` path) one header-only file. ``prefix``: the C functions'
    prefix, ``<prefix>_inverse_dynamics`` (C++: the namespace); default the robot's name.
    ``parameters``: ``"equivalent"`` (default: the identified coefficients at their
    representative parameters, what ``model.inverse_dynamics`` evaluates) or ``"physical"``
    (the full link parameters of a constrained, NLS or retrieved model; the same torques to
    rounding).

    The functions (C names; joint vectors ``double[n]``, matrices row-major ``double[n * n]``):
    ``inverse_dynamics(q, dq, ddq, z, tau)`` (friction included; ``z`` the LuGre state or
    NULL), ``mass_matrix(q, M)``, ``gravity(q, g)``, ``coriolis(q, dq, c)``,
    ``coriolis_matrix(q, dq, C)``, ``friction(dq, z, tau_f)`` and the friction state's
    ``friction_state_init(dq, z)``, ``friction_state_step(dq_prev, dq, dt, z)``,
    ``friction_state_rate(dq, z, dz)``. Files are written together, atomically.

    A model without friction (friction ``none``, nothing fitted: the controller model of
    ``dynid identify-static``) gives code without friction terms: ``inverse_dynamics(q, dq,
    ddq, tau)`` (no ``z``) and no friction functions; its header says so. A model with drive
    gains (from motor currents) gets ``torque_from_current(current, tau)`` and
    ``current_from_torque(tau, current)`` too; the header of one without says that the code
    takes and returns torques. ``GeneratedCode.functions`` lists what was generated.

    ``effort``: ``"torque"`` (default) or ``"current"``: a model with drive gains gets
    ``inverse_dynamics_current(q, dq, ddq, z, current)`` (``z`` only with friction) and
    ``gravity_current(q, current)`` too, the motor currents [A] ``tau / K`` (friction
    included); a model without drive gains is refused (it has no K to divide by).

    Refused with the reason (ValueError): a model with NaN or inf numbers, an unknown
    ``language``, a ``path`` whose suffix is not the language's, a C ``path`` whose header
    name C cannot ``#include`` (a quote, a backslash, a control character).
    """
    target = Path(path) if path is not None else None
    chosen = _language(language, target)
    if target is not None:
        _check_path(target, chosen)
    check_model(model)
    _check_effort(model, effort)
    name = _prefix(model, prefix)
    writer = _Writer(model, name, chosen, parameters, effort)
    paths = output_files(target, chosen) if target is not None else None
    if chosen == "c":
        header, source = (paths[0].name, paths[1].name) if paths else (f"{name}.h", f"{name}.c")
        files = writer.c_files(header, source)
    else:
        files = writer.cpp_file(paths[0].name if paths else f"{name}.hpp")
    functions = tuple(function for function, *_ in writer.functions())
    made = GeneratedCode(chosen, name, files, functions=functions, friction=writer.friction,
                         drive_gains=writer.gains is not None, effort=effort)
    if paths is None:
        return made
    written = atomic_write_all([(path, _text_writer(text))
                                for path, text in zip(paths, files.values(), strict=True)])
    return dataclasses.replace(made, paths=tuple(written))


EFFORTS = ("torque", "current")


def _check_effort(model: LinearModel, effort: str) -> None:
    """``effort`` is one of ``EFFORTS``; currents need the model's drive gains."""
    if effort not in EFFORTS:
        raise ValueError(f"`effort` must be 'torque' or 'current', got {effort!r:.60}")
    if effort == "current" and model.drive_gains is None:
        raise ValueError("`effort`: 'current' needs a model with drive gains (identified from "
                         "motor-current logs, which give K = torque per current); this model "
                         "was identified from joint torques and has no K to turn its torques "
                         "into currents: generate torques, or identify from currents")


def _text_writer(text: str):
    return lambda tmp: tmp.write_text(text)

