"""An identified linear model: base parameters (and linear friction) with their values.

``tau = Y_b(q, dq, ddq) coefficients`` where ``Y_b`` is the robot's torque regressor with the
friction model's columns appended, reduced to the representative columns of ``base``. The same
coefficients rebuild ``M(q)``, ``g(q)`` and ``c(q, dq)`` (rigid body only). A friction model
with fitted values (sigmoid, Stribeck, LuGre, ...: on the residuals or jointly) adds on top.

Model files (``save_model`` / ``load_model``) are YAML, schema ``dynid-model/1``: the robot (a
``dynid-robot/1`` mapping), the friction model, the regrouping (representatives and each base
parameter's terms), the coefficients with their standard deviations, and the fit report.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike, NDArray

from dynid._files import atomic_write, parse_yaml, to_builtin
from dynid._validation import as_vector, frozen_copy
from dynid.dynamics import coriolis_torque, gravity_torque, mass_matrix, regressor, rnea
from dynid.dynamics._inputs import joint_arrays
from dynid.friction.models import FrictionModel, friction_from_dict
from dynid.identification._compress import BLOCK_ROWS
from dynid.identification.base_parameters import BaseParameters
from dynid.identification.estimators import relative_std_percent
from dynid.robot import Robot, robot_from_dict, robot_to_dict

__all__ = ["MODEL_SCHEMA", "LinearModel", "load_model", "save_model"]

MODEL_SCHEMA = "dynid-model/1"
_CHUNK = BLOCK_ROWS  # samples per regressor block: bounds the memory of the full regressor


@dataclass(frozen=True)
class LinearModel:
    """Identified base parameters of ``robot`` with linear ``friction`` columns.

    ``friction`` is the template whose columns were identified (its own coefficient values are
    not used); ``coefficients`` and ``std`` are (r,) in the order of ``base.independent``;
    ``report`` holds the fit's figures (method, rank, condition number, relative error, ...);
    ``fitted_friction`` (any model, with its own fitted values) adds its torque to the
    prediction.

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

    def __post_init__(self) -> None:
        for name in ("coefficients", "std"):
            value = frozen_copy(as_vector(name, getattr(self, name), self.base.rank,
                                          allow_inf=True))
            object.__setattr__(self, name, value)
        extra = self.fitted_friction
        if extra is not None and extra.n_joints != self.robot.n_joints:
            raise ValueError(f"`fitted_friction` has {extra.n_joints} joints, the robot "
                             f"{self.robot.n_joints}")

    @property
    def n_rigid(self) -> int:
        """Number of standard rigid-body parameters (10 n)."""
        return self.base.n_parameters - len(self.friction.coefficient_names())

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
        rigid = self.base.regrouping[:, : self.n_rigid]
        rows = np.flatnonzero(np.abs(rigid).max(axis=1) > 0)
        implied = rigid[rows] @ self.robot.parameters.ravel()
        target = self.coefficients[rows]
        if np.linalg.norm(implied - target) <= 1e-9 * max(np.linalg.norm(target), 1e-300):
            return np.array(self.robot.parameters)
        return None

    def inverse_dynamics(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike,
                         t: ArrayLike | None = None) -> NDArray:
        """Joint torques ``(*, n)`` on batches: the compiled RNEA with the identified
        (equivalent) parameters plus friction — the same as ``predict``."""
        return self.predict(q, dq, ddq, t)

    def with_physical_parameters(self, parameters: ArrayLike, *, method: str) -> LinearModel:
        """This model carried by the full link parameters ``parameters`` ``(n, 10)`` (e.g. a
        feasible set retrieved from its coefficients): the rigid-body coefficients become
        theirs and the friction coefficients stay. The standard deviations stay those of the
        identification the set came from (the data's uncertainty about each base parameter);
        the fit's own figures (relative error) are dropped from the report, the data's
        (rank, condition number, samples) kept; ``method`` names the step."""
        robot = self.robot.with_parameters(parameters)
        full = np.concatenate([robot.parameters.ravel(),
                               self.equivalent_parameters[self.n_rigid:]])
        kept = {k: v for k, v in self.report.items()
                if k not in ("relative_error_percent", "dropped", "status")}
        return dataclasses.replace(
            self, robot=robot, coefficients=self.base.regrouping @ full,
            report={**kept, "method": method, "from_method": self.report.get("method", "?")})

    @property
    def _rigid(self) -> Robot:
        return self.robot.with_parameters(self.equivalent_parameters[: self.n_rigid])

    def base_regressor(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """``(N, n, r)``: rigid-body and friction columns reduced to the base parameters."""
        (q, dq, ddq), _ = joint_arrays(self.robot, q=q, dq=dq, ddq=ddq)
        out = np.empty((q.shape[0], self.robot.n_joints, self.base.rank))
        for start in range(0, q.shape[0], _CHUNK):
            block = slice(start, start + _CHUNK)
            full = np.concatenate([regressor(self.robot, q[block], dq[block], ddq[block]),
                                   self.friction.regressor(dq[block])], axis=-1)
            out[block] = self.base.reduce(full)
        return out

    def friction_torque(self, dq: ArrayLike, t: ArrayLike | None = None) -> NDArray:
        """The identified friction torques ``(*, n)``: the linear columns' and the fitted
        model's (along the time series ``t`` when it has a state, else at steady state)."""
        velocities = np.asarray(dq, dtype=float)
        flat = velocities.reshape(-1, self.robot.n_joints) if velocities.ndim else velocities
        out = self.friction.regressor(flat) @ self.equivalent_parameters[self.n_rigid:]
        extra = self.fitted_friction
        if extra is not None:
            out = out + (extra.torque_along(t, flat) if t is not None else extra.torque(flat))
        return out.reshape(velocities.shape)

    def rigid_torque(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """The rigid-body part of the prediction ``(N, n)``, no friction."""
        return rnea(self._rigid, q, dq, ddq)

    def predict(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike,
                t: ArrayLike | None = None) -> NDArray:
        """Joint torques ``(N, n)``, friction included (``t``: see ``friction_torque``)."""
        return self.rigid_torque(q, dq, ddq) + self.friction_torque(dq, t)

    def mass_matrix(self, q: ArrayLike) -> NDArray:
        """``M^(q)`` ``(N, n, n)`` from the identified coefficients."""
        return mass_matrix(self._rigid, q)

    def gravity_torque(self, q: ArrayLike) -> NDArray:
        """``g^(q)`` ``(N, n)``."""
        return gravity_torque(self._rigid, q)

    def coriolis_torque(self, q: ArrayLike, dq: ArrayLike) -> NDArray:
        """``c^(q, dq)`` ``(N, n)`` (the Christoffel terms of ``M^``)."""
        return coriolis_torque(self._rigid, q, dq)

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


def model_to_dict(model: LinearModel) -> dict:
    base = model.base
    return {
        "schema": MODEL_SCHEMA,
        "robot": (robot_to_dict(model.robot) if model.robot.table is not None
                  else _urdf_reference(model.robot)),
        "friction": model.friction.to_dict(),
        "base_parameters": {
            "method": base.method,
            "tolerance": base.tolerance,
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


def _urdf_reference(robot: Robot) -> dict:
    """A URDF robot by reference: the file's absolute path and hash, plus what the file does
    not hold (name, gravity, tool)."""
    path = Path(robot.source.url).resolve()
    return {"urdf": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "name": robot.name, "gravity": robot.gravity.tolist(), "tool": robot.tool.tolist()}


def _load_urdf_reference(spec: dict) -> Robot:
    path = Path(spec["urdf"])
    if not path.is_file():
        raise ValueError(f"the model's URDF {str(path)!r} no longer exists")
    if hashlib.sha256(path.read_bytes()).hexdigest() != spec["sha256"]:
        raise ValueError(f"the model's URDF {str(path)!r} changed since the model was saved")
    from dynid.robot import load_urdf  # pinocchio loads with the first URDF

    robot = load_urdf(path, name=spec["name"], gravity=tuple(spec["gravity"]))
    return dataclasses.replace(robot, tool=np.array(spec["tool"], dtype=float))


def save_model(model: LinearModel, path: str | Path) -> Path:
    """Write ``model`` as a ``dynid-model/1`` YAML file (atomically)."""
    text = yaml.safe_dump(model_to_dict(model), sort_keys=False)
    return atomic_write(path, lambda tmp: tmp.write_text(text))


def load_model(path: str | Path) -> LinearModel:
    """Read a ``dynid-model/1`` file back into a LinearModel that predicts torques."""
    path = Path(path)
    try:
        spec = parse_yaml(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ValueError(f"`path`: cannot read model file {str(path)!r}: {error}") from None
    if not isinstance(spec, dict) or spec.get("schema") != MODEL_SCHEMA:
        raise ValueError(f"`path`: {path.name} is not a {MODEL_SCHEMA} file")
    try:
        robot = (_load_urdf_reference(spec["robot"]) if "urdf" in spec["robot"]
                 else robot_from_dict(spec["robot"]))
        friction = friction_from_dict(spec["friction"], robot.n_joints)
        block = spec["base_parameters"]
        names = tuple(block["parameters"])
        rows = block["coefficients"]
        index = {name: k for k, name in enumerate(names)}
        independent = np.array([index[row["name"]] for row in rows])
        regrouping = np.zeros((len(rows), len(names)))
        for k, row in enumerate(rows):
            for name, value in row["terms"].items():
                regrouping[k, index[name]] = float(value)
        base = BaseParameters(independent=independent, regrouping=regrouping, names=names,
                              tolerance=float(block["tolerance"]), method=str(block["method"]))
        return LinearModel(
            robot=robot, friction=friction, base=base,
            coefficients=np.array([float(row["value"]) for row in rows]),
            std=np.array([float(row["std"]) for row in rows]),
            report=dict(spec.get("report") or {}),
            fitted_friction=(friction_from_dict(spec["fitted_friction"], robot.n_joints)
                             if spec.get("fitted_friction") else None),
        )
    except (KeyError, TypeError) as error:
        raise ValueError(f"`path`: {path.name} is missing or has a malformed {error}") from None
