"""End-effector measurements for geometric calibration: what was measured, at which joint readings.

Three kinds, one per set (fit several sets together to mix them):

- ``"position"``: a tool point measured in the measurement frame (laser tracker, camera marker,
  the position part of motion capture): ``position`` ``(m, 3)`` [m];
- ``"pose"``: the tool frame measured whole (motion capture): ``position`` ``(m, 3)`` [m] and
  ``rotation`` ``(m, 3, 3)`` (proper rotations);
- ``"plane"``: the tool point touches plane ``plane[k]`` (a contact or a planar constraint);
  the planes are unknown and estimated with the kinematics; there is no ``position``.

``sigma_position`` ``(m,)``: the standard deviation of each measured coordinate [m] (for a plane
contact: of the point's distance to its plane); ``sigma_rotation`` ``(m,)``: of each rotation
component [rad] (poses only). Per measurement, so that a set may mix instruments; each at
least ``MIN_SIGMA`` (1e-9 m or rad). Measured coordinates within ``MAX_COORDINATE`` (1e3 m).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, frozen_copy

__all__ = ["KINDS", "MAX_COORDINATE", "MAX_PLANES", "MIN_SIGMA", "Measurements"]

MeasurementKind = Literal["position", "pose", "plane"]
KINDS: tuple[str, ...] = ("position", "pose", "plane")
MAX_PLANES = 64  # distinct planes in one set: each adds 3 unknowns to the fit
MIN_SIGMA = 1e-9  # [m or rad] the least standard deviation: below, a weight of 1e18 or more
MAX_COORDINATE = 1e3  # [m] a measured coordinate beyond this is a unit mistake, not a robot


def _sigma(name: str, value: ArrayLike, m: int) -> NDArray:
    values = np.broadcast_to(as_float_array(name, value), (m,)) if np.ndim(value) == 0 else \
        as_float_array(name, value)
    if values.shape != (m,):
        raise ValueError(f"`{name}` must be a scalar or one value per measurement ({m},), got "
                         f"shape {values.shape}")
    if (values < MIN_SIGMA).any():
        k = int(np.argmax(values < MIN_SIGMA))
        unit = "m" if name == "sigma_position" else "rad"
        raise ValueError(f"`{name}` must be a standard deviation >= MIN_SIGMA = {MIN_SIGMA:g} "
                         f"{unit}; measurement {k + 1}: {values[k]:g}")
    return frozen_copy(np.array(values, dtype=np.float64))


@dataclass(frozen=True, eq=False)
class Measurements:
    """One set of end-effector measurements (see the module docstring)."""

    kind: MeasurementKind
    q: NDArray
    sigma_position: NDArray | float
    position: NDArray | None = None
    rotation: NDArray | None = None
    sigma_rotation: NDArray | float | None = None
    plane: NDArray | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"`kind` must be one of {', '.join(KINDS)}, got {self.kind!r}")
        q = as_float_array("q", self.q)
        if q.ndim != 2 or q.shape[0] == 0 or q.shape[1] == 0:
            raise ValueError(f"`q` must be (m, n) joint readings, m >= 1, got shape {q.shape}")
        m = q.shape[0]
        object.__setattr__(self, "q", frozen_copy(np.array(q)))
        object.__setattr__(self, "sigma_position", _sigma("sigma_position",
                                                          self.sigma_position, m))
        wants = {"position": self.kind != "plane", "rotation": self.kind == "pose",
                 "sigma_rotation": self.kind == "pose", "plane": self.kind == "plane"}
        for name, wanted in wants.items():
            given = getattr(self, name) is not None
            if given != wanted:
                need = "needs" if wanted else "takes no"
                raise ValueError(f"`{name}`: a {self.kind!r} measurement set {need} `{name}`")
        if self.position is not None:
            position = as_float_array("position", self.position)
            if position.shape != (m, 3):
                raise ValueError(f"`position` must be ({m}, 3) [m], got shape {position.shape}")
            if (np.abs(position) > MAX_COORDINATE).any():
                k = int(np.argmax((np.abs(position) > MAX_COORDINATE).any(axis=1)))
                raise ValueError(f"`position`: measurement {k + 1} has a coordinate beyond "
                                 f"MAX_COORDINATE = {MAX_COORDINATE:g} m ({position[k]}); "
                                 "positions are in metres (a file's columns in millimetres "
                                 "are named x_mm, y_mm, z_mm)")
            object.__setattr__(self, "position", frozen_copy(np.array(position)))
        if self.rotation is not None:
            rotation = as_float_array("rotation", self.rotation)
            if rotation.shape != (m, 3, 3):
                raise ValueError(f"`rotation` must be ({m}, 3, 3), got shape {rotation.shape}")
            error = np.abs(rotation @ rotation.transpose(0, 2, 1) - np.eye(3)).max(axis=(1, 2))
            bad = (error > 1e-6) | (np.linalg.det(rotation) < 0)
            if bad.any():
                k = int(np.argmax(bad))
                raise ValueError(f"`rotation`: measurement {k + 1} is not a proper rotation "
                                 "(orthonormal, det +1)")
            object.__setattr__(self, "rotation", frozen_copy(np.array(rotation)))
            object.__setattr__(self, "sigma_rotation", _sigma("sigma_rotation",
                                                              self.sigma_rotation, m))
        if self.plane is not None:
            plane = np.asarray(self.plane)
            if plane.shape != (m,) or (not np.issubdtype(plane.dtype, np.integer) \
                    and not (np.issubdtype(plane.dtype, np.floating)
                             and (np.abs(plane) < 2**53).all()  # finite, cast exactly
                             and (plane == np.round(plane)).all())):
                raise ValueError(f"`plane` must be ({m},) integer plane indices, got "
                                 f"{plane.dtype} of shape {plane.shape}")
            plane = np.array(plane, dtype=np.int64)
            if (plane < 0).any():
                raise ValueError("`plane` indices must be >= 0")
            labels = np.unique(plane)
            if labels.size > MAX_PLANES:
                raise ValueError(f"`plane`: {labels.size} distinct planes, more than "
                                 f"MAX_PLANES = {MAX_PLANES}")
            if (np.bincount(np.searchsorted(labels, plane)) < 3).any():
                raise ValueError("`plane`: every plane needs at least 3 contacts to be located")
            plane.setflags(write=False)
            object.__setattr__(self, "plane", plane)

    @property
    def n_measurements(self) -> int:
        return self.q.shape[0]

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]

    def __len__(self) -> int:
        return self.n_measurements

    def subset(self, rows: ArrayLike) -> Measurements:
        """The measurements at ``rows`` (indices or a boolean mask), as a new set."""
        picked = np.asarray(rows)
        if picked.dtype == bool:
            if picked.shape != (len(self),):
                raise ValueError(f"`rows`: a mask must have one entry per measurement "
                                 f"({len(self)},), got shape {picked.shape}")
        elif picked.ndim != 1 or not np.issubdtype(picked.dtype, np.integer) or (
                picked.size and not (-len(self) <= picked.min() and picked.max() < len(self))):
            raise ValueError(f"`rows` must be a boolean mask or integer indices of the "
                             f"{len(self)} measurements")
        rows = np.arange(len(self))[picked]
        if rows.size == 0:
            raise ValueError("`rows` selects no measurement")

        def take(value):
            return None if value is None else value[rows]
        return replace(self, q=self.q[rows], sigma_position=self.sigma_position[rows],
                       position=take(self.position), rotation=take(self.rotation),
                       sigma_rotation=take(self.sigma_rotation), plane=take(self.plane))

    def split(self, heldout: float, *, seed: int = 0) -> tuple[Measurements, Measurements]:
        """A random split into (fit, held-out) sets, ``heldout`` the held-out fraction in
        (0, 1); each part keeps at least one measurement. Plane sets split per plane, so
        that both parts keep every plane's contacts (at least 3 each)."""
        if not 0.0 < heldout < 1.0:
            raise ValueError(f"`heldout` must be a fraction in (0, 1), got {heldout!r}")
        rng = np.random.default_rng(seed)
        groups = [np.arange(len(self))] if self.plane is None else \
            [np.flatnonzero(self.plane == k) for k in np.unique(self.plane)]
        least = 1 if self.plane is None else 3
        mask = np.zeros(len(self), dtype=bool)
        for rows in groups:
            count = round(heldout * rows.size)
            count = min(max(count, least), rows.size - least)
            if count < least:
                raise ValueError(f"`heldout`: {rows.size} measurements"
                                 f"{'' if self.plane is None else ' on one plane'} cannot be "
                                 f"split so that both parts keep {least}")
            mask[rng.choice(rows, count, replace=False)] = True
        return self.subset(~mask), self.subset(mask)
