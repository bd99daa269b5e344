"""An identified linear model: base parameters (and linear friction) with their values.

``tau = Y_b(q, dq, ddq) coefficients`` where ``Y_b`` is the robot's torque regressor with the
friction model's columns appended, reduced to the representative columns of ``base``. The same
coefficients rebuild ``M(q)``, ``g(q)`` and ``c(q, dq)`` (rigid body only).

Model files (``save_model`` / ``load_model``) are YAML, schema ``dynid-model/1``: the robot (a
``dynid-robot/1`` mapping), the friction model, the regrouping (representatives and each base
parameter's terms), the coefficients with their standard deviations, and the fit report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike, NDArray

from dynid._files import atomic_write, to_builtin
from dynid.dynamics import regressor
from dynid.dynamics._inputs import joint_arrays
from dynid.dynamics.static_regressor import lower_triangle, static_regressor
from dynid.friction import FrictionModel, friction_from_dict
from dynid.identifiability import BaseParameters
from dynid.robot import Robot, load_urdf, robot_from_dict, robot_to_dict

__all__ = ["MODEL_SCHEMA", "LinearModel", "load_model", "save_model"]

MODEL_SCHEMA = "dynid-model/1"
_CHUNK = 16_384  # samples per regressor block: bounds the memory of the full regressor


@dataclass(frozen=True)
class LinearModel:
    """Identified base parameters of ``robot`` with linear ``friction`` columns.

    ``friction`` is the template whose columns were identified (its own coefficient values are
    not used); ``coefficients`` and ``std`` are (r,) in the order of ``base.independent``;
    ``report`` holds the fit's figures (method, rank, condition number, relative error, ...).
    """

    robot: Robot
    friction: FrictionModel
    base: BaseParameters
    coefficients: NDArray
    std: NDArray
    report: dict = field(default_factory=dict)

    @property
    def n_rigid(self) -> int:
        """Number of standard rigid-body parameters (10 n)."""
        return self.base.n_parameters - len(self.friction.coefficient_names())

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

    def predict(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """Joint torques ``(N, n)``, friction included."""
        return self.base_regressor(q, dq, ddq) @ self.coefficients

    def _rigid(self, rows: NDArray) -> NDArray:
        """Rigid-body regressor rows ``(..., 10 n)`` -> their base-parameter values."""
        padded = np.zeros((*rows.shape[:-1], self.base.n_parameters))
        padded[..., : self.n_rigid] = rows
        return self.base.reduce(padded) @ self.coefficients

    def mass_matrix(self, q: ArrayLike) -> NDArray:
        """``M^(q)`` ``(N, n, n)`` from the identified coefficients."""
        (q,), _ = joint_arrays(self.robot, q=q)
        n = self.robot.n_joints
        values = self._rigid(static_regressor(self.robot, q)[:, : n * (n + 1) // 2])
        out = np.zeros((q.shape[0], n, n))
        rows, cols = lower_triangle(n)
        out[:, rows, cols] = values
        out[:, cols, rows] = values
        return out

    def gravity_torque(self, q: ArrayLike) -> NDArray:
        """``g^(q)`` ``(N, n)``."""
        (q,), _ = joint_arrays(self.robot, q=q)
        zero = np.zeros_like(q)
        return self._rigid(regressor(self.robot, q, zero, zero))

    def coriolis_torque(self, q: ArrayLike, dq: ArrayLike) -> NDArray:
        """``c^(q, dq)`` ``(N, n)`` (the Christoffel terms of ``M^``)."""
        (q, dq), _ = joint_arrays(self.robot, q=q, dq=dq)
        return self._rigid(regressor(self.robot, q, dq, np.zeros_like(q), gravity=np.zeros(3)))

    def table(self) -> list[dict]:
        """One row per base parameter: name, expression, value, std, relative std [%]."""
        expressions = self.base.expressions()
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(self.coefficients != 0,
                                100 * self.std / np.abs(self.coefficients), np.inf)
        return [
            {"name": name, "expression": text, "value": float(value), "std": float(sigma),
             "relative_std_percent": float(rel)}
            for name, text, value, sigma, rel in zip(
                self.base.base_names, expressions, self.coefficients, self.std, relative,
                strict=True)
        ]


def model_to_dict(model: LinearModel) -> dict:
    base = model.base
    return {
        "schema": MODEL_SCHEMA,
        "robot": (robot_to_dict(model.robot) if model.robot.table is not None
                  else {"urdf": model.robot.source.url}),
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
    }


def save_model(model: LinearModel, path: str | Path) -> Path:
    """Write ``model`` as a ``dynid-model/1`` YAML file (atomically)."""
    text = yaml.safe_dump(model_to_dict(model), sort_keys=False)
    return atomic_write(path, lambda tmp: tmp.write_text(text))


def load_model(path: str | Path) -> LinearModel:
    """Read a ``dynid-model/1`` file back into a LinearModel that predicts torques."""
    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ValueError(f"`path`: cannot read model file {str(path)!r}: {error}") from None
    if not isinstance(spec, dict) or spec.get("schema") != MODEL_SCHEMA:
        raise ValueError(f"`path`: {path.name} is not a {MODEL_SCHEMA} file")
    try:
        robot = (load_urdf(spec["robot"]["urdf"]) if "urdf" in spec["robot"]
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
        )
    except (KeyError, TypeError) as error:
        raise ValueError(f"`path`: {path.name} is missing or has a malformed {error}") from None
