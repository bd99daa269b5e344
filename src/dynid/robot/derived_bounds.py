"""Parameter bounds derived from a robot's description, for a robot that has none written.

A URDF states each link's mass, CoM and inertia (CAD values) and usually its shape (collision
or visual geometry), never the search region that the constrained methods (CLS-1/2/3,
log-Cholesky, NLS, feasible-parameter retrieval) need. ``derive_bounds`` builds one, per link in
its dynid link frame (for a URDF: the frame of the link's joint), from:

- **mass**: ``[LINK_MASS_BAND[0] m, LINK_MASS_BAND[1] m]`` around the description's mass
  ``m`` (0.5 m to 1.5 m: CAD masses of real arms miss cables, grease and electronics, and
  identified link masses differ from them by tens of percent); a link lighter than
  ``MASSLESS_BELOW`` (a virtual link between two joints) gets ``[0, MASSLESS_LINK_MASS]``
  (at most 0.1 kg, and at most a tenth of the robot's total mass);
- **CoM box**: the link's **extent** padded by a margin. The extent is the axis-aligned box of
  its geometry (``basis`` "collision" or "visual": boxes, cylinders, spheres, meshes by their
  bounding boxes), padded by ``GEOMETRY_MARGIN`` (10 % of its size + 1 cm per side, for the
  parts a collision model leaves out); without geometry (``basis`` "segment"), the box of the
  segment from the link's frame origin to the next link's frame origin (the tool's for the
  last link), padded by ``SEGMENT_MARGIN`` (25 % of its length + 5 cm per side: the link's
  body around its axis). The description's own CoM always lies inside (the box is widened to
  it with a 1 cm pad where it falls outside);
- **inertia about the CoM** (entries ``xx, xy, xz, yy, yz, zz``): a body of mass at most
  ``m_max`` inside a box of sides ``L`` has second moments ``Σ_aa <= m_max L_a^2 / 4`` about
  its CoM, so ``0 <= I_xx <= m_max (L_y^2 + L_z^2) / 4`` and
  ``|I_xy| <= m_max L_x L_y / 4`` (the padded CoM box gives ``L``); widened to 1.5 times the
  description's own values where they exceed it;
- **bounding ellipsoid** (density realizability, CLS-3 only; links with geometry only): the
  ellipsoid through the corners of the padded geometry box (semi-axes sqrt(3) times its
  half-sizes), grown by steps of 25 % until the description's own link is realizable in it;
- **total mass**: ``[TOTAL_MASS_BAND[0] M, TOTAL_MASS_BAND[1] M]`` around the description's
  total ``M`` (0.7 M to 1.3 M; tighter than the sum of the link bands: a whole arm's weight is
  better known than any one link's).

A robot file (or a built-in: ``jaco2``, ``arm3``, ``panda-cad``) without ``bounds:`` gets
them too, from its segments; they are derived again each time it loads, never written back.

The result is a ``ParameterBounds`` with ``derived=True`` and a ``source`` that says how it was
made; each ``LinkBounds.basis`` names what its CoM box came from. ``dynid robot show`` prints
them as "derived"; a robot file's ``bounds:`` block replaces them, and ``dynid export arm.urdf
-o arm.yaml`` writes them out to edit. The description's own parameters always lie within the
derived bounds (mass, CoM box, inertia ranges and ellipsoid).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_vector
from dynid.robot.bounds import LinkBounds, ParameterBounds, ellipsoid_matrix
from dynid.robot.inertia import (
    FIRST_MOMENT,
    INERTIA,
    MASS,
    N_LINK_PARAMETERS,
    inertia_matrix,
    pseudo_inertia,
)

__all__ = [
    "GEOMETRY_MARGIN",
    "LINK_MASS_BAND",
    "MASSLESS_BELOW",
    "MASSLESS_LINK_MASS",
    "SEGMENT_MARGIN",
    "TOTAL_MASS_BAND",
    "LinkExtent",
    "derive_bounds",
    "segment_extents",
]

LINK_MASS_BAND = (0.5, 1.5)  # times the description's link mass
TOTAL_MASS_BAND = (0.7, 1.3)  # times the description's total mass
MASSLESS_BELOW = 1e-3  # kg: a lighter link is a virtual one
MASSLESS_LINK_MASS = 0.1  # kg: the upper mass bound of a virtual link (<= total / 10)
GEOMETRY_MARGIN = (0.10, 0.01)  # (relative to the box's size, absolute [m]) per side
SEGMENT_MARGIN = (0.25, 0.05)  # (relative to the segment's length, absolute [m]) per side
_OWN_COM_PAD = 0.01  # m: around the description's own CoM where it falls outside the box
_OWN_INERTIA_FACTOR = 1.5  # the inertia ranges hold this multiple of the description's values
_ELLIPSOID_GROWTH = 1.25  # per step, at most _ELLIPSOID_STEPS steps, else no ellipsoid
_ELLIPSOID_STEPS = 20


@dataclass(frozen=True)
class LinkExtent:
    """Where a link's material lies, in its link frame: the axis-aligned box ``[lower, upper]``
    [m] of its geometry (``basis`` "collision", "visual" or "collision+visual") or of the
    segment between its frame origin and the next one (``basis`` "segment")."""

    lower: NDArray
    upper: NDArray
    basis: str

    def __post_init__(self) -> None:
        lower = as_vector("lower", self.lower, 3)
        upper = as_vector("upper", self.upper, 3)
        if (lower > upper).any():
            raise ValueError(f"`lower` must be <= `upper`, got {lower}, {upper}")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        if self.basis not in ("collision", "visual", "collision+visual", "segment"):
            raise ValueError(f"`basis` must be 'collision', 'visual', 'collision+visual' or "
                             f"'segment', got {self.basis!r}")

    @property
    def geometric(self) -> bool:
        return self.basis != "segment"


def segment_extents(robot) -> list[LinkExtent]:
    """Each link's segment at q = 0: from its frame origin to the next link's frame origin (the
    tool frame's origin for the last link), in the link frame."""
    out = []
    for k in range(robot.n_joints):
        if k + 1 < robot.n_joints:  # the next link's frame in this one's, at q = 0
            following = robot.joints[k + 1]
            step = following.pre @ following.motion(0.0) @ following.post
        else:
            step = robot.tool
        points = np.vstack([np.zeros(3), step[:3, 3]])
        out.append(LinkExtent(points.min(axis=0), points.max(axis=0), "segment"))
    return out


def _pad(lower: NDArray, upper: NDArray, margin: tuple[float, float], *,
         length: float | None = None) -> tuple[NDArray, NDArray]:
    size = (upper - lower) if length is None else np.full(3, length)
    pad = margin[0] * size + margin[1]
    return lower - pad, upper + pad


def _mass_range(mass: float, total: float) -> tuple[float, float]:
    if mass < MASSLESS_BELOW:
        ceiling = MASSLESS_LINK_MASS if total <= 0 else min(MASSLESS_LINK_MASS, 0.1 * total)
        return 0.0, max(ceiling, LINK_MASS_BAND[1] * max(mass, 0.0))
    return LINK_MASS_BAND[0] * mass, LINK_MASS_BAND[1] * mass


def _inertia_range(mass_high: float, sides: NDArray, own: NDArray | None):
    """Entries xx, xy, xz, yy, yz, zz: the largest inertia about the CoM of a body of mass at
    most ``mass_high`` in a box of ``sides`` (see the module), widened to the own values."""
    variance = mass_high * sides**2 / 4  # largest second moment along each axis
    diagonal = {0: variance[1] + variance[2], 1: variance[0] + variance[2],
                2: variance[0] + variance[1]}
    entries = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
    lower, upper = np.zeros(6), np.zeros(6)
    for e, (a, b) in enumerate(entries):
        if a == b:
            upper[e] = diagonal[a]
        else:
            upper[e] = mass_high * sides[a] * sides[b] / 4
            lower[e] = -upper[e]
    if own is not None:
        values = np.array([own[a, b] for a, b in entries])
        upper = np.maximum(upper, _OWN_INERTIA_FACTOR * values)
        lower = np.minimum(lower, _OWN_INERTIA_FACTOR * values)
    return lower, upper


def _ellipsoid(lower: NDArray, upper: NDArray, parameters: NDArray):
    """Centre and semi-axes of the ellipsoid through the box's corners, grown until the
    link's own parameters are realizable in it (None if they never are)."""
    centre = 0.5 * (lower + upper)
    axes = np.sqrt(3.0) * np.maximum(0.5 * (upper - lower), 1e-3)
    if parameters[MASS] <= 0:
        return centre, axes
    slack = 1e-9 * parameters[MASS]
    for _ in range(_ELLIPSOID_STEPS):
        if np.trace(ellipsoid_matrix(centre, axes) @ pseudo_inertia(parameters)) >= -slack:
            return centre, axes
        axes = axes * _ELLIPSOID_GROWTH
    return None


def derive_bounds(robot, extents: Sequence[LinkExtent | None] | None = None, *,
                  parameters: ArrayLike | None = None, source: str = "") -> ParameterBounds:
    """Bounds around ``parameters`` ``(n, 10)`` (default the robot's own) from each link's
    ``extents`` (None, or a None entry: the segment to the next link; see the module for the
    bands and margins). ``source`` describes where the description comes from."""
    n = robot.n_joints
    table = np.array(robot.parameters if parameters is None else parameters, dtype=float)
    if table.shape != (n, N_LINK_PARAMETERS):
        raise ValueError(f"`parameters` must have shape ({n}, 10), got {table.shape}")
    if not np.isfinite(table).all():
        raise ValueError("`parameters` must be finite")
    segments = segment_extents(robot)
    extents = list(extents) if extents is not None else [None] * n
    if len(extents) != n:
        raise ValueError(f"`extents` must list {n} links, got {len(extents)}")
    total = float(np.maximum(table[:, MASS], 0.0).sum())
    links = []
    for k in range(n):
        pi = table[k]
        extent = extents[k] if extents[k] is not None else segments[k]
        if extent.geometric:
            lower, upper = _pad(extent.lower, extent.upper, GEOMETRY_MARGIN)
        else:
            length = float(np.linalg.norm(extent.upper - extent.lower))
            lower, upper = _pad(extent.lower, extent.upper, SEGMENT_MARGIN, length=length)
        mass = float(pi[MASS])
        own_com = pi[FIRST_MOMENT] / mass if mass > 0 else None
        if own_com is not None:
            lower = np.minimum(lower, own_com - _OWN_COM_PAD * (own_com < lower))
            upper = np.maximum(upper, own_com + _OWN_COM_PAD * (own_com > upper))
        mass_range = _mass_range(mass, total)
        own_inertia = None
        if own_com is not None:
            own_inertia = inertia_matrix(pi[INERTIA]) - mass * (
                own_com @ own_com * np.eye(3) - np.outer(own_com, own_com))
        inertia_lower, inertia_upper = _inertia_range(mass_range[1], upper - lower, own_inertia)
        ellipsoid = _ellipsoid(lower, upper, pi) if extent.geometric else None
        links.append(LinkBounds(
            mass=mass_range, com_lower=lower, com_upper=upper, inertia_lower=inertia_lower,
            inertia_upper=inertia_upper,
            ellipsoid_centre=None if ellipsoid is None else ellipsoid[0],
            ellipsoid_semi_axes=None if ellipsoid is None else ellipsoid[1],
            basis=extent.basis))
    total_range = (TOTAL_MASS_BAND[0] * total, TOTAL_MASS_BAND[1] * total) if total > 0 else None
    bases = sorted({link.basis for link in links})
    text = (f"derived by dynid from {source or 'the description'}: link masses "
            f"{LINK_MASS_BAND[0]:g}-{LINK_MASS_BAND[1]:g} x the description's, total "
            f"{TOTAL_MASS_BAND[0]:g}-{TOTAL_MASS_BAND[1]:g} x; CoM boxes from "
            f"{', '.join(bases)} (dynid.robot.derived_bounds)")
    return ParameterBounds(links=tuple(links), total_mass=total_range, source=text,
                           derived=True)
