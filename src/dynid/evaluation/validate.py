"""Validation of an identified model on a dataset: errors with and without friction (the metrics
of ``dynid.metrics``), residual statistics, physical consistency, and M(q) > 0 over the joint
space (Jaco2 paper, "Validation Methodology").

On a motor-current log the model's drive gains ``K`` turn the currents into torques, and every
error is given twice: in N m (``K i - tau^``) and in A (``i - tau^ / K``, the residual over
each joint's gain), so that it reads against both the torque budget and the drives' current
noise.

Per scored joint, the residual is also diagnosed (``dynid.evaluation.diagnostics``): the
missing term it points to (rotor inertia, Coulomb, viscous, an offset, a delayed torque
channel) with the option that adds it, and a joint whose RMSE is above half its torque's
variation is flagged — unexplained, or unexcited when that variation is within twice the
noise — with an ``UnexplainedJointWarning``."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.data.dataset import release_pages
from dynid.data.preprocess import noise_level
from dynid.dynamics import mass_matrix
from dynid.evaluation.diagnostics import (
    JointDiagnosis,
    ResidualDiagnostics,
    UnexplainedJointWarning,
    remedies,
)
from dynid.excitation.trajectory import random_poses
from dynid.metrics import NOT_FINITE_NOTE, ResidualSums, cell
from dynid.model.consistency import check_consistency
from dynid.model.linear_model import LinearModel

# Samples predicted at a time: validation of a log of any length in constant memory
VALIDATION_CHUNK = 1 << 16

__all__ = [
    "ValidationReport",
    "check_compatible",
    "mass_matrix_check",
    "model_mass_matrix_check",
    "validate_model",
]


@dataclass
class ValidationReport:
    """How well an identified model predicts a dataset, and whether it is a real body."""
    n_samples: int
    rmse: NDArray  # (n,) with friction
    mae: NDArray
    rmse_rigid: NDArray  # (n,) the rigid body alone (no friction)
    relative_error_percent: float | None  # None: undefined (see `undefined`)
    w: float  # Jaco2 eq. 9 [N m]
    w_r: float | None
    residuals: dict  # residual_statistics
    rms_torque: NDArray  # (n,) of the measured torques
    physical: bool  # the model carries a full link parameter set that reproduces it
    consistency: object | None  # ConsistencyReport of that set, None for a base-only model
    mass_matrix: dict = field(default_factory=dict)  # M(q) > 0 over sampled poses
    undefined: dict = field(default_factory=dict)  # figure -> why it has no value
    joints: list = field(default_factory=list)  # the 1-based joints scored (all by default)
    offsets: list | None = None  # re-estimated: this log's shift from the model's [N m]
    effort: str = "torque"  # what the log held: "current" adds the errors in A
    drive_gains: NDArray | None = None  # (scored joints,) the model's K [N m/A] on a current log
    drive_gains_std: NDArray | None = None
    # per scored joint: what its residual says (dynid.evaluation.diagnostics)
    diagnostics: list[JointDiagnosis] = field(default_factory=list)

    @property
    def unexplained(self) -> list[int]:
        """The 1-based joints whose RMSE is not clearly below their torque's variation."""
        return [d.joint for d in self.diagnostics if d.status == "unexplained"]

    @property
    def unexcited(self) -> list[int]:
        """The 1-based joints whose torque barely rises above the noise on this log."""
        return [d.joint for d in self.diagnostics if d.status == "unexcited"]

    def _amperes(self, values) -> NDArray:
        """Torque figures [N m] of the scored joints as currents [A]: over |K| per joint."""
        return np.asarray(values, dtype=float) / np.abs(self.drive_gains)

    @property
    def currents(self) -> dict | None:
        """On a current log, the errors in A (``rmse_current``, ``mae_current``,
        ``rmse_rigid_current``, ``rms_current``, ``residual_mean_current``), per scored
        joint; None on a torque log."""
        if self.effort != "current":
            return None
        return {"rmse_current": self._amperes(self.rmse),
                "mae_current": self._amperes(self.mae),
                "rmse_rigid_current": self._amperes(self.rmse_rigid),
                "rms_current": self._amperes(self.rms_torque),
                # signed: the mean of K i - tau^ over K is that of i - tau^ / K
                "residual_mean_current": np.asarray(self.residuals["mean"], dtype=float)
                / self.drive_gains}

    @property
    def finite(self) -> bool:
        """Every figure a finite number (a model whose torques overflow has none)."""
        figures = [self.rmse, self.mae, self.rmse_rigid, self.w,
                   self.mass_matrix.get("min_eigenvalue", 0.0),
                   *(np.asarray(v, dtype=float) for v in self.residuals.values())]
        return all(np.isfinite(np.asarray(v, dtype=float)).all() for v in figures)

    @property
    def consistent(self) -> bool:
        """Physically consistent parameters and M(q) > 0 on every sampled pose, with every
        figure finite (an overflowing model is never reported consistent)."""
        return bool(self.consistency is not None and self.consistency.consistent
                    and self.mass_matrix.get("positive", False) and self.finite)

    def to_json(self) -> dict:
        return {"n_samples": self.n_samples, "rmse": self.rmse.tolist(),
                "mae": self.mae.tolist(), "rmse_rigid": self.rmse_rigid.tolist(),
                "relative_error_percent": self.relative_error_percent, "w": self.w,
                "w_r": self.w_r, "undefined": self.undefined,
                "residuals": {k: np.asarray(v).tolist() for k, v in self.residuals.items()},
                "rms_torque": self.rms_torque.tolist(), "physical": self.physical,
                "joints": self.joints, "offsets_reestimated": self.offsets,
                "consistent": self.consistent,
                "consistency": None if self.consistency is None else
                self.consistency.to_json(), "mass_matrix": self.mass_matrix,
                "effort": self.effort,
                "diagnostics": [d.to_json() for d in self.diagnostics],
                "unexplained_joints": self.unexplained, "unexcited_joints": self.unexcited,
                **({} if self.currents is None else {
                    **{key: value.tolist() for key, value in self.currents.items()},
                    "drive_gains": {"value": self.drive_gains.tolist(),
                                    "std": self.drive_gains_std.tolist()}})}

    def lines(self) -> list[str]:
        joints = self.joints or list(range(1, self.rmse.size + 1))
        head = "  " + f"{'':<24}" + "".join(f"{'joint ' + str(j):>9}" for j in joints)

        def row(name, values, digits=4):
            return f"  {name:<24}" + "".join(
                f"{cell(v, f'.{digits}f' if abs(v) < 1e4 else '.3g'):>9}" for v in values)

        if self.relative_error_percent is None:
            summary = (f"  {self.n_samples} samples; relative error and w_r undefined "
                       f"({self.undefined['relative_error_percent']}); w {self.w:.3g} N m "
                       f"(Jaco2 eq. 9)")
        else:
            summary = (f"  {self.n_samples} samples; relative error "
                       f"{self.relative_error_percent:.3g} %, w {self.w:.3g} N m, "
                       f"w_r {self.w_r:.3g} (Jaco2 eq. 9)")
        if self.offsets is not None:
            summary += "; offsets re-estimated on this log"
        out = [summary]
        currents = self.currents
        if currents is not None:
            out.append("  a motor-current log: torques are K i with the model's drive gains; "
                       "errors in N m and in A (the N m figure over |K|)")
        out += [head]
        if currents is not None:
            out.append(row("drive gain K [N m/A]", self.drive_gains))
        out += [row("RMSE [N m]", self.rmse), row("MAE [N m]", self.mae),
                row("RMSE, no friction [N m]", self.rmse_rigid),
                row("RMS torque [N m]", self.rms_torque),
                row("residual mean [N m]", self.residuals["mean"])]
        if currents is not None:
            out += [row("RMSE [A]", currents["rmse_current"]),
                    row("MAE [A]", currents["mae_current"]),
                    row("RMSE, no friction [A]", currents["rmse_rigid_current"]),
                    row("RMS current [A]", currents["rms_current"]),
                    row("residual mean [A]", currents["residual_mean_current"])]
        out.append(row("residual lag-1 autocorr.", self.residuals["lag1_autocorrelation"], 3))
        if self.offsets is not None:
            out.append(row("offset shift, this log", [self.offsets[j - 1] for j in joints]))
        out += self._diagnosis_lines(joints)
        matrix = self.mass_matrix
        out.append(f"  M(q) > 0 on {matrix['positive_fraction'] * 100:.1f} % of "
                   f"{matrix['n_samples']} sampled poses (smallest eigenvalue "
                   f"{cell(matrix['min_eigenvalue'], '.3g')})")
        if not self.finite:
            out.append("  physically consistent: NO: figures above are not finite (the model's "
                       "torques overflow); " + NOT_FINITE_NOTE)
        elif self.consistency is None:
            out.append("  no full link parameter set (a base-parameter estimate): physical "
                       "consistency does not apply; `dynid retrieve` finds a feasible set")
        else:
            out += self.consistency.lines()
        return out

    def _diagnosis_lines(self, joints: list[int]) -> list[str]:
        """The residual diagnostics: RMSE over the torque's variation per joint, the missing
        terms named, and one line per flagged joint or named term."""
        if not self.diagnostics:
            return []
        ratio = "".join(f"{cell(100 * d.ratio, '.3g') + ' %':>9}" for d in self.diagnostics)
        named = "".join(f"{(d.named[0] if d.named else '-')[:8]:>9}" for d in self.diagnostics)
        out = [f"  {'RMSE / σ_τ (flag > 50 %)':<24}{ratio}",
               f"  {'missing term':<24}{named}"]
        for d in self.diagnostics:
            if d.flagged:
                out.append(f"  {d.status.upper()}: {d.message(f'joint {d.joint}')}")
            elif d.named:
                out.append(f"  joint {d.joint}: its residual points to {d.describe_terms()}")
        return out


def check_compatible(model, data) -> None:
    """A model and a dataset of the same robot: joint counts, and names where the data say."""
    n = model.robot.n_joints
    if data.n_joints != n:
        raise ValueError(f"the data have {data.n_joints} joints, the model's robot "
                         f"{model.robot.name!r} has {n}")
    logged, name = str(data.metadata.get("robot") or ""), model.robot.name
    # the same robot, or one a named variant of the other ("panda", "panda-identified")
    if logged and not (logged == name or logged.startswith(name + "-")
                       or name.startswith(logged + "-")):
        raise ValueError(f"the data were logged on robot {logged!r}, the model is of "
                         f"{model.robot.name!r}")


def validate_model(model, data, *, n_poses: int = 1000, seed: int = 0,
                   reestimate_offsets: bool = False,
                   joints: Sequence[int | str] | None = None) -> ValidationReport:
    """Validate an identified ``LinearModel`` on ``data`` (a ``Dataset`` with accelerations).

    Torques with and without friction (a stateful friction along the data's time), the
    metrics above, the physical consistency of the model's link parameters when it has a full
    set (constrained, NLS or retrieved models; bounds from its robot file), and ``M^(q) > 0``
    on ``n_poses`` random poses within the limits. A current log is turned into torques by the
    model's drive gains, and the report gives the errors in A too
    (``ValidationReport.currents``); a model without drive gains cannot read one (an error
    that says so). Logs of any length: predicted ``VALIDATION_CHUNK`` samples at a time (a
    stateful friction's state carried from chunk to chunk), the figures accumulated.

    ``reestimate_offsets``: the log's own torque offsets (its mean residual per joint) replace
    the model's — a torque sensor drifts between runs; the report says so and lists them.
    ``joints`` (names or 1-based numbers): score these joints only (a dead sensor on another).
    The report's ``diagnostics`` say per scored joint what its residual points to; each joint
    flagged there (unexplained or unexcited) is also an ``UnexplainedJointWarning``.
    """

    check_compatible(model, data)
    if data.ddq is None:
        raise ValueError("`data` has no accelerations (ddq): differentiate the velocities first")
    current = data.effort == "current"
    if current and model.drive_gains is None:
        raise ValueError("`data` holds motor currents [A], and the model has no drive "
                         "gains (it was identified from joint torques) to turn them into "
                         "torques: validate it on a torque log, or identify from currents "
                         "(a payload log or a known gain fixes the gains' scale)")
    picked = (model.robot.joint_indices(joints) if joints is not None
              else list(range(model.robot.n_joints)))
    if not picked:
        raise ValueError("`joints` is empty: name at least one joint to score")
    fitted = model.fitted_friction
    stateful = fitted is not None and fitted.stateful

    def torques(offsets=None):
        """(measured, predicted, rigid) of every joint, chunk by chunk; a friction state runs
        on from one chunk to the next (each chunk's states start from the last sample of the
        one before)."""
        last = None  # (index, state) of the previous chunk's last sample
        for start in range(0, data.n_samples, VALIDATION_CHUNK):
            part = data.select(slice(start, start + VALIDATION_CHUNK))
            rigid = model.rigid_torque(part.q, part.dq, part.ddq)
            if stateful:
                if last is None:
                    states = fitted.states_along(part.t, part.dq)
                else:
                    joined = slice(last[0], start + part.n_samples)
                    states = fitted.states_along(data.t[joined], data.dq[joined], last[1])[1:]
                last = (start + part.n_samples - 1, states[-1])
                friction = model.friction_torque(part.dq, states=states)
            else:
                friction = model.friction_torque(part.dq, part.t)
            predicted = rigid + friction
            if offsets is not None:
                predicted = predicted + offsets
            yield model.measured_torque(part), predicted, rigid, part
            release_pages(data, slice(start, start + part.n_samples))  # a mapped log's pages, used

    offsets = None
    if reestimate_offsets:
        offsets = sum(np.sum(measured - predicted, axis=0)
                      for measured, predicted, *_ in torques()) / data.n_samples
    with_friction, rigid_only = ResidualSums(len(picked)), ResidualSums(len(picked))
    diagnosis = ResidualDiagnostics(len(picked), _step(data))
    done = 0
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named just below
        for measured, predicted, rigid, part in torques(offsets):
            _finite_prediction(model, data, predicted[:, picked], done)
            with_friction.add(measured[:, picked], predicted[:, picked])
            rigid_only.add(measured[:, picked], rigid[:, picked])
            diagnosis.add(part.t, part.dq[:, picked], part.ddq[:, picked],
                          measured[:, picked], predicted[:, picked])
            done += measured.shape[0]
        figures = (with_friction.rmse(), with_friction.mae(), rigid_only.rmse())
    if not all(np.isfinite(f).all() for f in figures):
        raise ValueError(f"{_source(data)}: the model's torque errors overflow to inf "
                         f"(its torques reach {_peak(model, data):.3g} N m): "
                         f"{_largest(model)}; such a model cannot be validated — check its "
                         "coefficients and re-identify it")
    p95 = with_friction.percentile(
        lambda: ((m - p)[:, picked] for m, p, *_ in torques(offsets)))
    parameters = model.physical_parameters
    consistency = (check_consistency(parameters, model.robot.bounds)
                   if parameters is not None else None)
    # the relative errors divide by |tau|: a log of zero torques (none logged, the arm off)
    # leaves them undefined, and says so, while the absolute errors still stand
    undefined = {}
    error = float(np.sqrt(with_friction.squares.sum()))
    torque = float(np.sqrt(with_friction.torque_squares.sum()))
    w = error / data.n_samples  # Jaco2 eq. 9
    if torque > 0:
        relative, w_r = 100.0 * error / torque, error / torque
    else:
        reason = ("`data.tau` is zero on every joint and sample: a relative error needs "
                  "torque (were the torques logged?)")
        undefined = {"relative_error_percent": reason, "w_r": reason}
        relative, w_r = None, None
    diagnoses = diagnosis.result(
        with_friction.rmse(), noise=_noise(model, data, picked), joints=[j + 1 for j in picked],
        remedy=remedies(friction=model.friction.name, rotor_inertia=model.rotor_inertia,
                        offsets_reestimated=reestimate_offsets))
    for entry in diagnoses:
        # a log of zero torques (none logged) is said once, in `undefined`, not per joint
        if entry.flagged and torque > 0:
            name = model.robot.joint_names[entry.joint - 1]
            warnings.warn(f"{_source(data)}: " + entry.message(
                f"joint {entry.joint} ({name})"), UnexplainedJointWarning, stacklevel=2)
    return ValidationReport(
        n_samples=data.n_samples, rmse=with_friction.rmse(), mae=with_friction.mae(),
        rmse_rigid=rigid_only.rmse(), relative_error_percent=relative, w=w, w_r=w_r,
        residuals=with_friction.statistics(p95),
        rms_torque=np.sqrt(with_friction.torque_squares / data.n_samples),
        physical=parameters is not None, consistency=consistency,
        mass_matrix=model_mass_matrix_check(model, n_samples=n_poses, seed=seed),
        undefined=undefined, joints=[j + 1 for j in picked],
        offsets=None if offsets is None else offsets.tolist(),
        effort="current" if current else "torque",
        drive_gains=np.asarray(model.drive_gains)[picked] if current else None,
        drive_gains_std=np.asarray(model.drive_gains_std)[picked] if current else None,
        diagnostics=diagnoses)


def _step(data) -> float:
    """The log's median sampling step [s] (the delays scanned are whole steps of it)."""
    steps = np.diff(np.asarray(data.t[: VALIDATION_CHUNK], dtype=float))
    return float(np.median(steps)) if steps.size else 1.0


def _noise(model, data, picked: list[int]) -> NDArray:
    """The torque channel's white noise per scored joint [N m], from the log itself
    (``dynid.data.noise_level`` on its first chunk), to tell an unexcited joint from an
    unexplained one. Not the model's fit residual: a model that misses a term would count
    that term as noise and call a joint unexcited that it fails to explain. On a low-passed log
    it is a lower bound (the filter took the noise's high frequencies), so a joint near the
    noise is then called unexplained rather than unexcited: flagged either way."""
    part = data.select(slice(0, VALIDATION_CHUNK))
    if part.n_samples < 4:
        return np.full(len(picked), np.nan)
    return noise_level(model.measured_torque(part))[picked]


def _source(data) -> str:
    return str(data.metadata.get("source", "the data"))


def _peak(model, data) -> float:
    """The largest predicted torque magnitude on the first chunk (for a message)."""
    part = data.select(slice(0, VALIDATION_CHUNK))
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.abs(model.rigid_torque(part.q, part.dq, part.ddq)).max())


def _largest(model) -> str:
    coefficients = np.asarray(model.coefficients, dtype=float)
    with np.errstate(invalid="ignore"):
        k = int(np.argmax(np.where(np.isnan(coefficients), np.inf, np.abs(coefficients))))
    names = list(getattr(model.base, "base_names", []))
    name = names[k] if k < len(names) else f"coefficient {k + 1}"
    return f"its largest coefficient is {name} = {coefficients[k]:.3g}"


def _finite_prediction(model, data, predicted, start: int) -> None:
    """The predicted torques of a chunk starting at sample ``start``: finite, else an error
    naming the log, the first sample and the model's largest coefficient."""
    bad = ~np.isfinite(predicted)
    if bad.any():
        k, j = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{_source(data)}: the model predicts a torque that is not finite "
                         f"({predicted[k, j]}) at sample {start + k} (t = "
                         f"{float(data.t[start + k]):.6g} s), joint {j + 1}: "
                         f"{_largest(model)}; such a model cannot be validated — check its "
                         "coefficients and re-identify it")


def mass_matrix_check(robot, parameters: ArrayLike | None = None, *, n_samples: int = 2000,
                      seed: int = 0) -> dict:
    """``M(q) > 0`` on ``n_samples`` random poses within the limits: the fraction of poses where
    it holds and the smallest eigenvalue found (one counterexample is enough to fail)."""
    return _positive_definite(lambda q: mass_matrix(robot, q, parameters=parameters), robot,
                              n_samples, seed)


def model_mass_matrix_check(model: LinearModel, *, n_samples: int = 2000,
                            seed: int = 0) -> dict:
    """``mass_matrix_check`` of an identified model's ``M^(q)`` (its rotor inertias on the
    diagonal included): whether the estimate is a body that can be simulated and controlled."""
    return _positive_definite(model.mass_matrix, model.robot, n_samples, seed)


def _positive_definite(mass, robot, n_samples: int, seed: int) -> dict:
    poses = random_poses(robot, n_samples, seed=seed) if np.isfinite(
        robot.limits.lower).all() else np.random.default_rng(seed).uniform(
        -np.pi, np.pi, (n_samples, robot.n_joints))
    smallest = np.linalg.eigvalsh(mass(poses))[:, 0]
    return {"n_samples": n_samples, "positive_fraction": float(np.mean(smallest > 0)),
            "min_eigenvalue": float(smallest.min()), "positive": bool((smallest > 0).all())}
