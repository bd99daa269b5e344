"""An identified linear model: base parameters (and linear friction) with their values.

``tau = Y_b(q, dq, ddq) coefficients`` where ``Y_b`` is the robot's torque regressor with the
rotor-inertia columns (when identified) and the friction model's columns appended
(``dynid.model.base_parameters.model_columns``), reduced to the representative
columns of ``base``. The same coefficients rebuild ``M(q)`` (rotor inertias on its diagonal),
``g(q)`` and ``c(q, dq)``. A friction model with fitted values (sigmoid, Stribeck, LuGre, ...:
on the residuals or jointly) adds on top. A model identified from motor currents carries the
drive gains ``K`` (torque = K current) that turn a current log into torques.

Model files (``save_model`` / ``load_model``) are YAML, schema ``dynid-model/1``: the robot (a
``dynid-robot/1`` mapping), the friction model, the regrouping (representatives and each base
parameter's terms), the coefficients with their standard deviations, and the fit report.
The report's ``std_kind`` says what the standard deviations are (``STD_KINDS``); a file
written before it was recorded has none, and its σ reads as before, unlabelled ("unknown").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike, NDArray

from dynid._files import atomic_write, to_builtin
from dynid._reading import check_keys, load_yaml
from dynid._validation import as_vector, frozen_copy
from dynid.data.dataset import Dataset
from dynid.dynamics import (
    coriolis_torque,
    friction_regressor,
    gravity_torque,
    mass_matrix,
    rnea,
    rotor_torque,
)
from dynid.dynamics._inputs import joint_arrays
from dynid.friction.models import FrictionModel, NoFriction, friction_from_dict
from dynid.model._compress import BLOCK_ROWS
from dynid.model.base_parameters import (
    BaseParameters,
    check_regrouping,
    model_columns,
    model_names,
)
from dynid.robot import Robot, robot_from_dict, robot_to_dict
from dynid.robot._urdf_tree import description_digest

__all__ = ["MODEL_SCHEMA", "STD_KINDS", "LinearModel", "bootstrap_table", "load_model",
           "relative_std_percent", "save_model"]

MODEL_SCHEMA = "dynid-model/1"
#: What a model's ``std`` is, as its report's ``std_kind`` records it, with the words the
#: command line and the HTML report print beside it (``docs/workflow/estimators.md``; measured
#: by ``tests/test_sigma_coverage.py``)
STD_KINDS = {
    "covariance": "the estimate's error covariance: it covers the error on the method's twin",
    "lower bound": "a lower bound on the error: its formula leaves out the constraints, the "
                   "penalty's shrinkage, or the simulation's or the filter's approximations "
                   "(a bootstrap measures the spread)",
}
_CHUNK = BLOCK_ROWS  # samples per regressor block: bounds the memory of the full regressor


@dataclass(frozen=True)
class LinearModel:
    """Identified base parameters of ``robot`` with linear ``friction`` columns.

    ``friction`` is the template whose columns were identified (its own coefficient values are
    not used); ``coefficients`` and ``std`` are (r,) in the order of ``base.independent``;
    ``report`` holds the fit's figures (method, rank, condition number, relative error, ...);
    ``fitted_friction`` (any model, with its own fitted values) adds its torque to the
    prediction. ``rotor_inertia``: whether the columns ``Ia1..Ian`` were identified (they sit
    between the rigid-body and the friction columns). ``drive_gains`` and
    ``drive_gains_std`` ``(n,)`` [N m/A]: the identified torque-per-current gains of a model
    from motor-current logs (``identify_drive_gains``), else None.

    Evaluation uses one equivalent full parameter vector: the coefficients at the
    representatives, zero elsewhere (``Y pi^ = Y_L coefficients`` exactly). It is a numerical
    device, not a physical body (it may have negative masses), and it lets the fast batched
    dynamics compute torques, M^, g^ and c^ without building the regressor.
    """

    robot: Robot
    friction: FrictionModel
    base: BaseParameters
    coefficients: NDArray
    std: NDArray
    report: dict = field(default_factory=dict)
    fitted_friction: FrictionModel | None = None
    rotor_inertia: bool = False
    drive_gains: NDArray | None = None
    drive_gains_std: NDArray | None = None

    def __post_init__(self) -> None:
        # coefficients finite; a std may be inf (a coefficient the data do not determine)
        for name, allow_inf in (("coefficients", False), ("std", True)):
            value = frozen_copy(as_vector(name, getattr(self, name), self.base.rank,
                                          allow_inf=allow_inf))
            object.__setattr__(self, name, value)
        if (self.drive_gains is None) != (self.drive_gains_std is None):
            raise ValueError("`drive_gains` and `drive_gains_std` come together, or not at all")
        if self.drive_gains is not None:
            gains = as_vector("drive_gains", self.drive_gains, self.robot.n_joints)
            if (gains == 0).any():
                raise ValueError(f"`drive_gains` must be nonzero, got {gains}")
            object.__setattr__(self, "drive_gains", frozen_copy(gains))
            object.__setattr__(self, "drive_gains_std", frozen_copy(as_vector(
                "drive_gains_std", self.drive_gains_std, self.robot.n_joints, allow_inf=True)))
        extra = self.fitted_friction
        if extra is not None and extra.n_joints != self.robot.n_joints:
            raise ValueError(f"`fitted_friction` has {extra.n_joints} joints, the robot "
                             f"{self.robot.n_joints}")

    @property
    def has_friction(self) -> bool:
        """Whether the model has any friction: linear friction columns or a fitted model (not
        so the controller model of ``identify-static``, or an OLS fit of a description without
        friction): generated code then has no friction terms, and the momentum observer's
        residual holds the arm's friction."""
        return not (isinstance(self.friction, NoFriction)
                    and (self.fitted_friction is None
                         or isinstance(self.fitted_friction, NoFriction)))

    @property
    def n_rigid(self) -> int:
        """Number of standard rigid-body parameters (10 n)."""
        return 10 * self.robot.n_joints

    @property
    def n_rotor(self) -> int:
        """Number of rotor-inertia parameters: n when identified, else 0."""
        return self.robot.n_joints if self.rotor_inertia else 0

    @property
    def friction_parameters(self) -> NDArray:
        """The equivalent friction coefficients (the friction model's, type-major)."""
        return self.equivalent_parameters[self.n_rigid + self.n_rotor:]

    @property
    def rotor_parameters(self) -> NDArray:
        """``(n,)``: the equivalent rotor inertias (zeros when not identified; a rotor inertia
        regrouped into its link's ``ZZ`` is counted there)."""
        if not self.rotor_inertia:
            return np.zeros(self.robot.n_joints)
        return self.equivalent_parameters[self.n_rigid:self.n_rigid + self.n_rotor]

    @property
    def plant(self) -> Robot:
        """The model as a robot to simulate (the closed-loop twin of an estimate: IDIM-IV's
        instruments, DIDIM's and CLOE's simulations): its equivalent link parameters (the same
        dynamics as the coefficients), its friction model with the fitted linear coefficients,
        its rotor inertias (an equivalent one below zero, noise on a tiny one, clipped to zero:
        it would be no plant)."""
        return self.robot.with_parameters(self.equivalent_parameters[: self.n_rigid]) \
            .with_friction(self.friction.with_coefficients(self.friction_parameters)) \
            .with_rotor_inertia(np.maximum(self.rotor_parameters, 0.0))

    def measured_torque(self, data: Dataset) -> NDArray:
        """``data.tau`` as joint torques ``(N, n)``: a current log times the drive gains."""
        if data.effort == "torque":
            return data.tau
        if self.drive_gains is None:
            raise ValueError("`data` holds motor currents, and the model has no drive gains "
                             "to turn them into torques (identify from currents with "
                             "identify_drive_gains, or give a torque log)")
        return data.tau * self.drive_gains

    @property
    def equivalent_parameters(self) -> NDArray:
        """``(p,)``: the coefficients at the representative columns, zero elsewhere."""
        full = np.zeros(self.base.n_parameters)
        full[self.base.independent] = self.coefficients
        return full

    @property
    def physical_parameters(self) -> NDArray | None:
        """``(n, 10)``: the robot's link parameters when they reproduce the rigid-body
        coefficients (models from constrained, NLS or retrieval: a full set to check and to
        export), else None (a base-parameter estimate, e.g. OLS, whose robot holds the prior)."""
        stop = self.n_rigid + self.n_rotor
        rows = np.flatnonzero(self.base.independent < stop)  # the rigid-body base parameters
        rigid = self.base.regrouping[rows, :stop]
        own = np.concatenate([self.robot.parameters.ravel(),
                              self.robot.rotor_inertia if self.rotor_inertia else []])
        implied = rigid @ own
        # each row to the round-off of its own terms (a set written to a file as m, c, I_com
        # and read back moves each parameter by ~1e-16 of the largest term it enters)
        size = np.abs(rigid) @ np.abs(own)
        if np.all(np.abs(implied - self.coefficients[rows]) <= 1e-9 * size + 1e-300):
            return np.array(self.robot.parameters)
        return None

    def inverse_dynamics(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike,
                         t: ArrayLike | None = None) -> NDArray:
        """Joint torques ``(*, n)`` on batches: the compiled RNEA with the identified
        (equivalent) parameters plus friction — the same as ``predict``."""
        return self.predict(q, dq, ddq, t)

    def with_physical_parameters(self, parameters: ArrayLike, *, method: str,
                                 rotor_inertia: ArrayLike | None = None) -> LinearModel:
        """This model carried by the full link parameters ``parameters`` ``(n, 10)`` (e.g. a
        feasible set retrieved from its coefficients) and, for a model with rotor inertias,
        ``rotor_inertia`` ``(n,)`` (default: the robot's): the rigid-body coefficients become
        theirs and the friction coefficients stay. The standard deviations stay those of the
        identification the set came from (the data's uncertainty about each base parameter);
        the fit's own figures (relative error) are dropped from the report, the data's
        (rank, condition number, samples) kept; ``method`` names the step."""
        robot = self.robot.with_parameters(parameters)
        if rotor_inertia is not None:
            robot = robot.with_rotor_inertia(rotor_inertia)
        full = np.concatenate([robot.parameters.ravel(),
                               robot.rotor_inertia if self.rotor_inertia else [],
                               self.friction_parameters])
        kept = {k: v for k, v in self.report.items()
                if k not in ("relative_error_percent", "dropped", "status")}
        return dataclasses.replace(
            self, robot=robot, coefficients=self.base.regrouping @ full,
            report={**kept, "method": method, "from_method": self.report.get("method", "?")})

    @property
    def _geometry(self) -> Robot:
        """The robot without its rotor inertias (added by hand: equivalent values need not be
        >= 0); the dynamics take the link parameters from ``_links`` (an equivalent vector may
        hold negative masses, which a Robot refuses)."""
        return self.robot.with_rotor_inertia(None)

    @property
    def _links(self) -> NDArray:
        return self.equivalent_parameters[: self.n_rigid].reshape(self.robot.n_joints, 10)

    def base_regressor(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """``(N, n, r)``: rigid-body, rotor-inertia and friction columns reduced to the base
        parameters."""
        (q, dq, ddq), _ = joint_arrays(self.robot, q=q, dq=dq, ddq=ddq)
        out = np.empty((q.shape[0], self.robot.n_joints, self.base.rank))
        for start in range(0, q.shape[0], _CHUNK):
            block = slice(start, start + _CHUNK)
            full = model_columns(self.robot, q[block], dq[block], ddq[block],
                                 friction=self.friction, rotor_inertia=self.rotor_inertia)
            out[block] = self.base.reduce(full)
        return out

    def friction_torque(self, dq: ArrayLike, t: ArrayLike | None = None, *,
                        states: ArrayLike | None = None) -> NDArray:
        """The identified friction torques ``(*, n)``: the linear columns' and the fitted
        model's (along the time series ``t`` when it has a state, else at steady state; or at
        the given ``states`` ``(N, n)`` of a stateful model, ``states_along`` a long log piece
        by piece)."""
        velocities = np.asarray(dq, dtype=float)
        flat = velocities.reshape(-1, self.robot.n_joints) if velocities.ndim else velocities
        transmission = self.robot.transmission
        out = friction_regressor(self.friction, flat, transmission) @ self.friction_parameters
        extra = self.fitted_friction
        if extra is not None:  # the motors' friction at their speeds, mapped (C^T f(C dq))
            speeds = transmission.motor_speeds(flat)
            if states is not None:
                if not extra.stateful:
                    raise ValueError(f"`states`: the fitted {extra.name!r} friction has no "
                                     "state")
                torque = extra.torque_with_state(speeds, np.asarray(states, dtype=float))
            else:
                torque = extra.torque_along(t, speeds) if t is not None else \
                    extra.torque(speeds)
            out = out + transmission.to_joints(torque[..., None])[..., 0]
        return out.reshape(velocities.shape)

    def rigid_torque(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """The rigid-body and rotor-inertia part of the prediction ``(N, n)``, no friction."""
        torque = rnea(self._geometry, q, dq, ddq, parameters=self._links)
        if not self.rotor_inertia:
            return torque
        return torque + rotor_torque(self.robot, np.asarray(ddq), self.rotor_parameters)

    def predict(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike,
                t: ArrayLike | None = None) -> NDArray:
        """Joint torques ``(N, n)``, friction included (``t``: see ``friction_torque``)."""
        return self.rigid_torque(q, dq, ddq) + self.friction_torque(dq, t)

    def mass_matrix(self, q: ArrayLike) -> NDArray:
        """``M^(q)`` ``(N, n, n)`` from the identified coefficients."""
        out = mass_matrix(self._geometry, q, parameters=self._links)
        if self.rotor_inertia and self.robot.transmission.uncoupled:
            index = np.arange(self.robot.n_joints)
            out[..., index, index] += self.rotor_parameters
        elif self.rotor_inertia:  # C^T diag(I_a) C: a coupled transmission's rotors
            out += self.robot.transmission.rotor_matrix(self.rotor_parameters)
        return out

    def gravity_torque(self, q: ArrayLike) -> NDArray:
        """``g^(q)`` ``(N, n)``."""
        return gravity_torque(self._geometry, q, parameters=self._links)

    def coriolis_torque(self, q: ArrayLike, dq: ArrayLike) -> NDArray:
        """``c^(q, dq)`` ``(N, n)`` (the Christoffel terms of ``M^``)."""
        return coriolis_torque(self._geometry, q, dq, parameters=self._links)

    @property
    def std_kind(self) -> str:
        """What ``std`` is: one of ``STD_KINDS``, or "unknown" (a model file written before
        the report recorded it)."""
        return str(self.report.get("std_kind", "unknown"))

    def table(self) -> list[dict]:
        """One row per base parameter: name, expression, value, std, relative std [%]."""
        relative = relative_std_percent(self.coefficients, self.std)
        return [
            {"name": name, "expression": text, "value": float(value), "std": float(sigma),
             "relative_std_percent": float(rel)}
            for name, text, value, sigma, rel in zip(
                self.base.base_names, self.base.expressions(), self.coefficients, self.std,
                relative, strict=True)
        ]


def model_to_dict(model: LinearModel, *, folder: str | Path | None = None) -> dict:
    """The ``dynid-model/1`` mapping; ``folder``: where the file goes (a URDF robot is then
    referenced relative to it)."""
    base = model.base
    robot = (robot_to_dict(model.robot) if model.robot.table is not None
             else _urdf_reference(model.robot, folder))
    if model.robot.bounds is not None and "bounds" not in robot:
        # bounds derived from the description are kept as written: a model's robot holds the
        # identified parameters, which bounds derived again on loading would be centred on
        robot["bounds"] = model.robot.bounds.to_dict()
    return {
        "schema": MODEL_SCHEMA,
        "robot": robot,
        "friction": model.friction.to_dict(),
        "rotor_inertia": model.rotor_inertia,
        **({"drive_gains": {"value": model.drive_gains.tolist(),
                            "std": model.drive_gains_std.tolist()}}
           if model.drive_gains is not None else {}),
        "base_parameters": {
            "method": base.method,
            "tolerance": base.tolerance,
            **({"rtol": base.rtol} if base.rtol is not None else {}),
            "parameters": list(base.names),
            "coefficients": [
                {"name": row["name"], "expression": row["expression"],
                 "terms": {base.names[j]: float(base.regrouping[k, j])
                           for j in np.flatnonzero(base.regrouping[k])},
                 "value": row["value"], "std": row["std"],
                 "relative_std_percent": row["relative_std_percent"]}
                for k, row in enumerate(model.table())
            ],
        },
        "report": to_builtin(model.report),
        **({"fitted_friction": model.fitted_friction.to_dict()}
           if model.fitted_friction is not None else {}),
    }


def _urdf_reference(robot: Robot, folder: str | Path | None) -> dict:
    """A URDF robot as the robot file's ``urdf:`` form (its path relative to the model file's
    folder, so a model copied with its URDF still loads; its identified values written over
    the file's), plus the absolute path (the fallback) and the file's hash."""
    path = Path(robot.source.url).resolve()
    return {**robot_to_dict(robot, folder=folder), "urdf_absolute": str(path),
            "sha256": description_digest(path, xacro_args=dict(robot.source.xacro_args),
                                         packages=dict(robot.source.packages))}


def _load_urdf_reference(spec: dict, folder: Path) -> Robot:
    """The referenced URDF robot: the file relative to the model file's folder first, then
    the absolute path; its hash must match; the written values over the file's."""
    spec = dict(spec)
    absolute, digest = spec.pop("urdf_absolute", None), spec.pop("sha256", None)
    for key, value in (("urdf", spec.get("urdf")), ("sha256", digest)):
        if not isinstance(value, str):
            raise ValueError(f"`robot.{key}` must be text, got {value!r:.60}")
    tried = [folder / spec["urdf"]]
    if isinstance(absolute, str):
        tried.append(Path(absolute))
    path = next((candidate for candidate in tried if candidate.is_file()), None)
    if path is None:
        raise ValueError("the model's URDF is at none of "
                         + ", ".join(repr(str(candidate)) for candidate in tried))
    packages = spec.get("packages") or {}
    if isinstance(packages, dict):  # relative to the model file's folder, as the urdf
        packages = {name: str(folder / str(value)) for name, value in packages.items()}
    if description_digest(path, xacro_args=spec.get("xacro_args"), packages=packages) != digest:
        raise ValueError(f"the model's URDF {str(path)!r} changed since the model was saved "
                         "(its sha256 differs; a xacro's: of every file it reads)")
    return robot_from_dict({**spec, "urdf": str(path.resolve())}, physical=False,
                           folder=folder)


def save_model(model: LinearModel, path: str | Path) -> Path:
    """Write ``model`` as a ``dynid-model/1`` YAML file (atomically)."""
    path = Path(path)
    text = yaml.safe_dump(model_to_dict(model, folder=path.parent), sort_keys=False)
    return atomic_write(path, lambda tmp: tmp.write_text(text))


_KEYS = ("schema", "robot", "friction", "rotor_inertia", "drive_gains", "base_parameters",
         "report", "fitted_friction")
_BLOCK_KEYS = ("method", "tolerance", "rtol", "parameters", "coefficients")
_ROW_KEYS = ("name", "expression", "terms", "value", "std", "relative_std_percent")


def load_model(path: str | Path) -> LinearModel:
    """Read a ``dynid-model/1`` file back into a LinearModel that predicts torques.

    The file is checked strictly: unknown keys, wrong types and non-finite numbers are errors
    (but a ``std`` of ``.inf``: a coefficient the data did not determine);
    the parameter names must be the robot's and the friction's, and the coefficient rows must
    be a regrouping of exactly this robot (each row's representative its own, no name twice,
    and the rows reproducing every column of the robot's regressor at random states, to the
    tolerance of the rank decision that chose them, ``base_parameters.rtol``:
    ``check_regrouping``): a deleted, renamed, duplicated or edited row would predict wrongly.
    A negative ``std`` is refused.
    """
    path = Path(path)
    spec = load_yaml(path, what="model file")
    if not isinstance(spec, dict) or spec.get("schema") != MODEL_SCHEMA:
        raise ValueError(f"`path`: {path.name} is not a {MODEL_SCHEMA} file")
    try:
        return _model_from_dict(spec, path.parent)
    except (ValueError, TypeError) as error:
        raise ValueError(f"`path`: {path.name}: {error}") from None


def _mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"`{where}` must be a mapping, got {value!r:.60}")
    return value


def _finite(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not np.isfinite(value):
        raise ValueError(f"`{where}` must be a finite number, got {value!r:.60}")
    return float(value)


def _model_from_dict(spec: dict, folder: Path) -> LinearModel:
    check_keys(spec, _KEYS, "model")
    robot_spec = _mapping(spec.get("robot"), "robot")
    robot = (_load_urdf_reference(robot_spec, folder) if "urdf" in robot_spec
             else robot_from_dict(robot_spec, physical=False))
    friction = friction_from_dict(spec.get("friction"), robot.n_joints)
    rotor = spec.get("rotor_inertia", False)
    if not isinstance(rotor, bool):
        raise ValueError(f"`rotor_inertia` must be true or false, got {rotor!r:.60}")
    gains = gains_std = None
    if spec.get("drive_gains") is not None:
        drive = _mapping(spec["drive_gains"], "drive_gains")
        check_keys(drive, ("value", "std"), "drive_gains")
        gains = as_vector("drive_gains.value", drive.get("value"), robot.n_joints)
        gains_std = as_vector("drive_gains.std", drive.get("std"), robot.n_joints,
                              allow_inf=True)
    block = _mapping(spec.get("base_parameters"), "base_parameters")
    check_keys(block, _BLOCK_KEYS, "base_parameters")
    names = block.get("parameters")
    expected = model_names(robot, friction=friction, rotor_inertia=rotor)
    if not isinstance(names, list) or tuple(names) != expected:
        raise ValueError(f"`base_parameters.parameters` must list the robot's (rotor "
                         f"inertias') and the friction's {len(expected)} parameters in order "
                         f"({expected[0]}, "
                         f"{expected[1]}, ...), got {names!r:.80}")
    rows = block.get("coefficients")
    if not isinstance(rows, list) or not rows:
        raise ValueError("`base_parameters.coefficients` must be a non-empty list")
    index = {name: k for k, name in enumerate(names)}
    independent, values, stds = [], [], []
    regrouping = np.zeros((len(rows), len(names)))
    for k, row in enumerate(rows):
        where = f"base_parameters.coefficients[{k}]"
        check_keys(_mapping(row, where), _ROW_KEYS, where)
        if row.get("name") not in index:
            raise ValueError(f"`{where}.name` must be one of the parameters, got "
                             f"{row.get('name')!r:.60}")
        independent.append(index[row["name"]])
        for name, value in _mapping(row.get("terms"), f"{where}.terms").items():
            if name not in index:
                raise ValueError(f"`{where}.terms` names an unknown parameter {name!r:.60}")
            regrouping[k, index[name]] = _finite(value, f"{where}.terms.{name}")
        values.append(_finite(row.get("value"), f"{where}.value"))
        std = row.get("std")  # inf: a coefficient the data did not determine
        stds.append(np.inf if std == np.inf else _finite(std, f"{where}.std"))
        if not stds[-1] >= 0:
            raise ValueError(f"`{where}.std` must be >= 0 (a standard deviation), got {std!r}")
    rtol = block.get("rtol")  # absent in files written before it was recorded
    if rtol is not None and not 0 < _finite(rtol, "base_parameters.rtol") < 1:
        raise ValueError(f"`base_parameters.rtol` must be in (0, 1), got {rtol!r}")
    base = BaseParameters(independent=np.array(independent), regrouping=regrouping,
                          names=tuple(names),
                          tolerance=_finite(block.get("tolerance"), "base_parameters.tolerance"),
                          method=str(block.get("method")),
                          rtol=None if rtol is None else float(rtol))
    _check_regrouping(robot, friction, base, rotor)
    report = spec.get("report") or {}
    kind = _mapping(report, "report").get("std_kind")  # absent in older files: "unknown"
    if kind is not None and kind not in STD_KINDS:
        raise ValueError(f"`report.std_kind` must be one of {list(STD_KINDS)}, got "
                         f"{kind!r:.60}")
    fitted = spec.get("fitted_friction")
    return LinearModel(
        robot=robot, friction=friction, base=base, coefficients=np.array(values),
        std=np.array(stds), report=dict(_mapping(report, "report")),
        fitted_friction=friction_from_dict(fitted, robot.n_joints) if fitted else None,
        rotor_inertia=rotor, drive_gains=gains, drive_gains_std=gains_std,
    )


def _check_regrouping(robot: Robot, friction: FrictionModel, base: BaseParameters,
                      rotor_inertia: bool) -> None:
    """The rows must regroup this robot's regressor, ``Y = Y[:, independent] @ regrouping`` at
    random states, within what the rank decision that chose them ignores
    (``check_regrouping``), each representative with the term 1 in its own row, none twice."""
    independent = base.independent
    if len(set(independent.tolist())) != independent.size:
        raise ValueError("`base_parameters.coefficients` names a parameter twice")
    if not np.allclose(base.regrouping[np.arange(base.rank), independent], 1.0, rtol=0,
                       atol=1e-12):
        raise ValueError("`base_parameters.coefficients`: each row's own parameter must have "
                         "the term 1")
    # a static model's rows regroup the torque regressor too (identify_static checks it)
    check_regrouping(robot, base, friction=friction, rotor_inertia=rotor_inertia,
                     what="`base_parameters.coefficients`")


def relative_std_percent(coef: NDArray, std: NDArray) -> NDArray:
    """``100 std / |coef|``; inf where a coefficient is zero (dropped, or exactly zero)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(coef != 0, 100.0 * std / np.abs(coef), np.inf)


def bootstrap_table(model: LinearModel) -> list[dict] | None:
    """One row per base parameter from the model report's ``bootstrap`` entry (written by
    ``Bootstrap.annotate``, kept by ``save_model``/``load_model``): ``name``, ``value`` (the
    estimate), ``std`` (bootstrap), ``lower``, ``upper`` (the percentile interval at the
    entry's ``level``); None for a model without one."""
    entry = model.report.get("bootstrap")
    if entry is None:
        return None
    rank = model.base.rank
    if not isinstance(entry, dict):
        raise ValueError(f"`report.bootstrap` must be a mapping, got {entry!r:.60}")
    columns = {}
    for key in ("std", "lower", "upper"):
        value = entry.get(key)
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            array = np.zeros(0)
        if array.shape != (rank,) or not np.isfinite(array).all():
            raise ValueError(f"`report.bootstrap.{key}` must hold {rank} finite numbers (one "
                             f"per base parameter), got {value!r:.60}")
        columns[key] = array
    if (columns["lower"] > columns["upper"]).any():
        raise ValueError("`report.bootstrap`: a lower bound above its upper bound")
    return [{"name": name, "value": float(value), "std": float(std), "lower": float(low),
             "upper": float(high)}
            for name, value, std, low, high in zip(
                model.base.base_names, model.coefficients, columns["std"], columns["lower"],
                columns["upper"], strict=True)]
