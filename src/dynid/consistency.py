"""Physical consistency of link parameters, and the bounds that describe a robot's links.

A link's 10-vector is a real body's when its pseudo-inertia ``J`` is positive semidefinite
(Wensing et al. 2017): mass >= 0, inertia about the CoM >= 0 and the triangle inequality of its
principal moments (Gaz eq. 16; Jaco2 paper eq. 4). Geometric knowledge adds the centre of mass
in a box or an ellipsoid (Jaco2 eq. 5-6) and the mass inside a bounding ellipsoid (density
realizability: ``tr(Q J) >= 0``). The joint-space inertia ``M(q)`` must be positive definite
everywhere; that is checked on samples (Jaco2 paper, "Validation Methodology").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, as_vector
from dynid.inertia import MASS, N_LINK_PARAMETERS, pseudo_inertia, to_com

__all__ = [
    "ConsistencyReport",
    "LinkBounds",
    "ParameterBounds",
    "check_consistency",
    "ellipsoid_matrix",
    "mass_matrix_check",
]


@dataclass(frozen=True)
class LinkBounds:
    """One link's search region: mass [kg], CoM box in the link frame [m], optionally the
    inertia about the CoM, entries ``xx, xy, xz, yy, yz, zz`` [kg m^2], and optionally an
    axis-aligned ellipsoid (centre, semi-axes [m]) that contains the whole link (for density
    realizability)."""

    mass: tuple[float, float]
    com_lower: NDArray
    com_upper: NDArray
    inertia_lower: NDArray | None = None
    inertia_upper: NDArray | None = None
    ellipsoid_centre: NDArray | None = None
    ellipsoid_semi_axes: NDArray | None = None

    def __post_init__(self) -> None:
        low, high = (float(v) for v in self.mass)
        if not (0 <= low <= high):
            raise ValueError(f"`mass` bounds must satisfy 0 <= lower <= upper, got {self.mass}")
        object.__setattr__(self, "mass", (low, high))
        for name in ("com_lower", "com_upper"):
            object.__setattr__(self, name, as_vector(name, getattr(self, name), 3))
        if (self.com_lower > self.com_upper).any():
            raise ValueError(f"`com_lower` must be <= `com_upper`, got {self.com_lower}, "
                             f"{self.com_upper}")
        if (self.inertia_lower is None) != (self.inertia_upper is None):
            raise ValueError("`inertia_lower` and `inertia_upper` come together")
        if self.inertia_lower is not None:
            for name in ("inertia_lower", "inertia_upper"):
                object.__setattr__(self, name, as_vector(name, getattr(self, name), 6))
        if (self.ellipsoid_centre is None) != (self.ellipsoid_semi_axes is None):
            raise ValueError("`ellipsoid_centre` and `ellipsoid_semi_axes` come together")
        if self.ellipsoid_centre is not None:
            object.__setattr__(self, "ellipsoid_centre",
                               as_vector("ellipsoid_centre", self.ellipsoid_centre, 3))
            axes = as_vector("ellipsoid_semi_axes", self.ellipsoid_semi_axes, 3)
            if (axes <= 0).any():
                raise ValueError(f"`ellipsoid_semi_axes` must be > 0, got {axes}")
            object.__setattr__(self, "ellipsoid_semi_axes", axes)

    @property
    def com_centre(self) -> NDArray:
        return 0.5 * (self.com_lower + self.com_upper)


@dataclass(frozen=True)
class ParameterBounds:
    """Bounds of every link, the total mass range, and where they come from."""

    links: tuple[LinkBounds, ...]
    total_mass: tuple[float, float] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(self.links))
        if self.total_mass is not None:
            low, high = (float(v) for v in self.total_mass)
            if not 0 <= low <= high:
                raise ValueError(f"`total_mass` must satisfy 0 <= min <= max, got "
                                 f"{self.total_mass}")
            object.__setattr__(self, "total_mass", (low, high))

    @property
    def n_links(self) -> int:
        return len(self.links)

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "total_mass": list(self.total_mass) if self.total_mass else None,
            "links": [{"mass": list(b.mass),
                       "com": {"lower": b.com_lower.tolist(), "upper": b.com_upper.tolist()},
                       **({"inertia": {"lower": b.inertia_lower.tolist(),
                                       "upper": b.inertia_upper.tolist()}}
                          if b.inertia_lower is not None else {}),
                       **({"ellipsoid": {"centre": b.ellipsoid_centre.tolist(),
                                         "semi_axes": b.ellipsoid_semi_axes.tolist()}}
                          if b.ellipsoid_centre is not None else {})}
                      for b in self.links],
        }

    @classmethod
    def from_dict(cls, spec: dict, n_links: int) -> ParameterBounds:
        if not isinstance(spec, dict) or not isinstance(spec.get("links"), list):
            raise ValueError("`bounds` must be a mapping with a `links` list")
        if len(spec["links"]) != n_links:
            raise ValueError(f"`bounds.links` must list {n_links} links, got "
                             f"{len(spec['links'])}")
        links = []
        for k, link in enumerate(spec["links"]):
            try:
                inertia, ellipsoid = link.get("inertia"), link.get("ellipsoid")
                links.append(LinkBounds(
                    mass=tuple(link["mass"]), com_lower=link["com"]["lower"],
                    com_upper=link["com"]["upper"],
                    inertia_lower=inertia["lower"] if inertia else None,
                    inertia_upper=inertia["upper"] if inertia else None,
                    ellipsoid_centre=ellipsoid["centre"] if ellipsoid else None,
                    ellipsoid_semi_axes=ellipsoid["semi_axes"] if ellipsoid else None))
            except (KeyError, TypeError) as error:
                raise ValueError(f"`bounds.links[{k}]` is missing {error}") from None
        total = spec.get("total_mass")
        return cls(links=tuple(links), total_mass=tuple(total) if total else None,
                   source=str(spec.get("source", "")))


def ellipsoid_matrix(centre: ArrayLike, semi_axes: ArrayLike) -> NDArray:
    """The 4 x 4 ``Q`` of an axis-aligned ellipsoid, for density realizability: a body lies
    inside it only if ``tr(Q J) >= 0`` (Wensing et al. 2017)."""
    centre = as_vector("centre", centre, 3)
    axes = as_vector("semi_axes", semi_axes, 3)
    if (axes <= 0).any():
        raise ValueError(f"`semi_axes` must be > 0, got {axes}")
    inverse = np.diag(1.0 / axes**2)
    q = np.zeros((4, 4))
    q[:3, :3] = -inverse
    q[:3, 3] = q[3, :3] = inverse @ centre
    q[3, 3] = 1.0 - centre @ inverse @ centre
    return q


@dataclass
class ConsistencyReport:
    """Per-link checks (lists of booleans, one per link) and the smallest margins."""

    mass_positive: list[bool]
    inertia_positive: list[bool]
    triangle: list[bool]
    com_in_box: list[bool | None] = field(default_factory=list)
    density_realizable: list[bool | None] = field(default_factory=list)
    total_mass: float = 0.0
    total_mass_in_range: bool | None = None
    pseudo_inertia_min_eigenvalue: list[float] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        """Physically consistent: positive masses, positive definite inertia about the CoM and
        the triangle inequality on every link (the geometric bounds are reported apart)."""
        return all(self.mass_positive) and all(self.inertia_positive) and all(self.triangle)

    @property
    def within_bounds(self) -> bool:
        checks = [*self.com_in_box, *self.density_realizable, self.total_mass_in_range]
        return all(c for c in checks if c is not None)

    def to_json(self) -> dict:
        return {**self.__dict__, "consistent": self.consistent,
                "within_bounds": self.within_bounds}

    def lines(self) -> list[str]:
        mark = {True: "yes", False: "NO", None: "-"}
        out = ["  link   mass>0  I_com>0  triangle  CoM in box  in ellipsoid  min eig(J)"]
        for k in range(len(self.mass_positive)):
            box = self.com_in_box[k] if self.com_in_box else None
            dens = self.density_realizable[k] if self.density_realizable else None
            out.append(f"  {k + 1:>4}   {mark[self.mass_positive[k]]:>6}  "
                       f"{mark[self.inertia_positive[k]]:>7}  {mark[self.triangle[k]]:>8}  "
                       f"{mark[box]:>10}  {mark[dens]:>12}  "
                       f"{self.pseudo_inertia_min_eigenvalue[k]:>10.3g}")
        total = (f"  total mass {self.total_mass:.3f} kg"
                 + ("" if self.total_mass_in_range is None
                    else f" ({'within' if self.total_mass_in_range else 'OUTSIDE'} its range)"))
        out.append(total)
        out.append(f"  physically consistent: {mark[self.consistent]}; within the bounds: "
                   f"{mark[self.within_bounds]}")
        return out


def check_consistency(parameters: ArrayLike, bounds: ParameterBounds | None = None, *,
                      rtol: float = 1e-9) -> ConsistencyReport:
    """Check links ``(n, 10)``. ``rtol`` scales each tolerance with the link's own size (its
    mass, or its largest principal moment): round-off never decides a verdict."""
    pi = as_float_array("parameters", parameters).reshape(-1, N_LINK_PARAMETERS)
    n = pi.shape[0]
    if bounds is not None and bounds.n_links != n:
        raise ValueError(f"`bounds` has {bounds.n_links} links, `parameters` {n}")
    masses = pi[:, MASS]
    mass_positive = [bool(m > 0) for m in masses]
    inertia_positive, triangle, in_box, realizable = [], [], [], []
    eigen = np.linalg.eigvalsh(pseudo_inertia(pi))
    for k in range(n):
        if not mass_positive[k]:
            inertia_positive.append(False)
            triangle.append(False)
            in_box.append(False if bounds else None)
            realizable.append(False if bounds else None)
            continue
        _, com, inertia_com = to_com(pi[k])
        moments = np.linalg.eigvalsh(inertia_com)
        scale = max(abs(moments).max(), np.finfo(float).tiny)
        inertia_positive.append(bool(moments.min() > -rtol * scale))
        a, b, c = moments
        triangle.append(bool(a + b >= c - rtol * scale))
        if bounds is not None:
            link = bounds.links[k]
            slack = rtol * max(1.0, np.abs(link.com_upper).max())
            in_box.append(bool(((com >= link.com_lower - slack)
                                & (com <= link.com_upper + slack)).all()))
            if link.ellipsoid_centre is None:
                realizable.append(None)
            else:
                q = ellipsoid_matrix(link.ellipsoid_centre, link.ellipsoid_semi_axes)
                realizable.append(bool(np.trace(q @ pseudo_inertia(pi[k]))
                                       >= -rtol * masses[k]))
    total = float(masses.sum())
    total_ok = None
    if bounds is not None and bounds.total_mass is not None:
        low, high = bounds.total_mass
        total_ok = bool(low - rtol * high <= total <= high * (1 + rtol))
    return ConsistencyReport(
        mass_positive=mass_positive, inertia_positive=inertia_positive, triangle=triangle,
        com_in_box=in_box if bounds else [], density_realizable=realizable if bounds else [],
        total_mass=total, total_mass_in_range=total_ok,
        pseudo_inertia_min_eigenvalue=eigen[:, 0].tolist(),
    )


def mass_matrix_check(robot, parameters: ArrayLike | None = None, *, n_samples: int = 2000,
                      seed: int = 0) -> dict:
    """``M(q) > 0`` on ``n_samples`` random poses within the limits: the fraction of poses where
    it holds and the smallest eigenvalue found (one counterexample is enough to fail)."""
    from dynid.dynamics import mass_matrix
    from dynid.trajectory import random_poses

    poses = random_poses(robot, n_samples, seed=seed) if np.isfinite(
        robot.limits.lower).all() else np.random.default_rng(seed).uniform(
        -np.pi, np.pi, (n_samples, robot.n_joints))
    smallest = np.linalg.eigvalsh(mass_matrix(robot, poses, parameters=parameters))[:, 0]
    return {"n_samples": n_samples, "positive_fraction": float(np.mean(smallest > 0)),
            "min_eigenvalue": float(smallest.min()), "positive": bool((smallest > 0).all())}
