"""The calibration twin: a robot with known kinematic errors, measured with mocap-like noise."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from dynid.calibration.measurements import Measurements
from dynid.calibration.model import KinematicModel, project_on_planes

__all__ = ["measure", "perturbed"]


def _scale(name: str, value: float) -> float:
    if isinstance(value, bool) or not np.isfinite(value) or value < 0:
        raise ValueError(f"`{name}` must be a finite number >= 0, got {value!r}")
    return float(value)


def perturbed(model: KinematicModel, *, offset: float = 5e-3, length: float = 1e-3,
              seed: int | None = 0, kind: str = "position") -> NDArray:
    """True parameter values ``(P,)`` of a twin: the nominal values plus uniform errors on every
    parameter identifiable from ``kind`` measurements (``model.identifiable(kind)``): ``±offset``
    [rad] on every identifiable angle (joint offsets, alpha, theta, Hayati's beta, base and tool
    angles), ``±length`` [m] on every identifiable length (a, d, prismatic offsets, URDF origin
    x/y/z, base and tool translations). The others stay nominal (no measurement could tell)."""
    if not isinstance(model, KinematicModel):
        raise TypeError(f"`model` must be a KinematicModel, got {type(model).__name__}")
    offset, length = _scale("offset", offset), _scale("length", length)
    rng = np.random.default_rng(seed)
    values = np.array(model.nominal)
    for name in model.identifiable(kind).independent:
        k = model.names.index(name)
        size = offset if model.is_angle[k] else length
        values[k] += rng.uniform(-size, size)
    return values


def measure(model: KinematicModel, values: ArrayLike | None, q: ArrayLike, *,
            kind: str = "position", sigma_position: float = 1e-4, sigma_rotation: float = 1e-3,
            planes: ArrayLike | None = None, plane: ArrayLike | None = None,
            seed: int | None = 0) -> Measurements:
    """Simulated measurements of the tool of the robot with parameter ``values`` (the truth)
    at joint positions ``q`` ``(m, n)``, with Gaussian noise.

    - ``"position"``: the tool point plus ``N(0, sigma_position^2)`` per coordinate [m];
    - ``"pose"``: also the tool rotation times ``exp(N(0, sigma_rotation^2) per component)``
      [rad];
    - ``"plane"``: contacts. ``planes`` ``(k, 4)`` rows ``[nx, ny, nz, d]`` (``n . p = d`` in
      the measurement frame [m]; default: 3 planes with normals x, y, z through the median
      tool point), ``plane`` ``(m,)`` which plane each pose touches (default round robin).
      Each pose is moved (minimum-norm joint change, within the joint limits) until its tool
      point lies at a ``N(0, sigma_position^2)`` distance from its plane: the returned ``q``
      are those poses; a plane out of reach of a pose is a ValueError naming ``planes``.
    """
    if kind not in ("position", "pose", "plane"):
        raise ValueError(f"`kind` must be 'position', 'pose' or 'plane', got {kind!r}")
    values = model.check_values(values)
    q = model.check_q(q)
    for name, sigma in (("sigma_position", sigma_position), ("sigma_rotation", sigma_rotation)):
        if isinstance(sigma, bool) or not np.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"`{name}` must be a finite standard deviation > 0, got {sigma!r}")
    rng = np.random.default_rng(seed)
    m = q.shape[0]
    if kind == "plane":
        if planes is None:
            centre = np.median(model.pose(values, q)[:, :3, 3], axis=0)
            planes = np.hstack([np.eye(3), centre[:, None]])
        planes = np.array(planes, dtype=float)
        if planes.ndim != 2 or planes.shape[1] != 4 or not np.isfinite(planes).all():
            raise ValueError(f"`planes` must be (k, 4) rows [nx, ny, nz, d], got shape "
                             f"{planes.shape}")
        norms = np.linalg.norm(planes[:, :3], axis=1)
        if (norms < 1e-12).any():
            raise ValueError("`planes`: a normal is zero")
        planes = planes / norms[:, None]
        labels = np.arange(m) % planes.shape[0] if plane is None else np.asarray(plane)
        if labels.shape != (m,) or not np.issubdtype(labels.dtype, np.integer) \
                or labels.min() < 0 or labels.max() >= planes.shape[0]:
            raise ValueError(f"`plane` must be ({m},) indices into `planes`")
        distance = rng.normal(0.0, sigma_position, m)
        q, gap = project_on_planes(model, values, q, planes[labels, :3], planes[labels, 3],
                                   distance)
        far = np.abs(gap) > 1e-9 * model.reach
        if far.any():
            k = int(np.argmax(far))
            raise ValueError(f"`planes`: plane {int(labels[k])} is out of reach of pose {k + 1}"
                             f" within the joint limits (left {abs(gap[k]):.3g} m from it); "
                             "move the plane or choose other poses")
        return Measurements("plane", q, sigma_position, plane=labels)
    pose = model.pose(values, q)
    position = pose[:, :3, 3] + rng.normal(0.0, sigma_position, (m, 3))
    if kind == "position":
        return Measurements("position", q, sigma_position, position=position)
    noise = Rotation.from_rotvec(rng.normal(0.0, sigma_rotation, (m, 3))).as_matrix()
    rotation = noise @ pose[:, :3, :3]
    return Measurements("pose", q, sigma_position, position=position, rotation=rotation,
                        sigma_rotation=sigma_rotation)
