"""Parameter bounds: the region in which each link's physical parameters lie (mass, CoM box,
inertia about the CoM, a bounding ellipsoid) and the total-mass range, as a robot description
gives them. The checks that use them live in ``dynid.model.consistency``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._reading import check_keys
from dynid._validation import as_vector

__all__ = ["LinkBounds", "ParameterBounds", "ellipsoid_matrix"]


@dataclass(frozen=True)
class LinkBounds:
    """One link's search region: mass [kg], CoM box in the link frame [m], optionally the
    inertia about the CoM, entries ``xx, xy, xz, yy, yz, zz`` [kg m^2], and optionally an
    axis-aligned ellipsoid (centre, semi-axes [m]) that contains the whole link (for density
    realizability). ``basis`` says what a derived box came from ("collision", "visual",
    "segment"; see ``dynid.robot.derived_bounds``), empty for written bounds."""

    mass: tuple[float, float]
    com_lower: NDArray
    com_upper: NDArray
    inertia_lower: NDArray | None = None
    inertia_upper: NDArray | None = None
    ellipsoid_centre: NDArray | None = None
    ellipsoid_semi_axes: NDArray | None = None
    basis: str = ""

    def __post_init__(self) -> None:
        if len(self.mass) != 2:
            raise ValueError(f"`mass` bounds must be [lower, upper], got {self.mass}")
        low, high = (float(v) for v in self.mass)
        if not (0 <= low <= high < np.inf):
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
            if (self.inertia_lower > self.inertia_upper).any():
                raise ValueError(f"`inertia_lower` must be <= `inertia_upper`, got "
                                 f"{self.inertia_lower}, {self.inertia_upper}")
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
    """Bounds of every link, the total mass range, and where they come from.

    ``derived``: True for bounds that dynid derived from a robot description that has none
    written (a URDF: ``dynid.robot.derived_bounds``), False for bounds a robot file, a bounds
    file or the caller wrote. Written out (``to_dict``), derived bounds become written ones:
    the file is the user's to edit.
    """

    links: tuple[LinkBounds, ...]
    total_mass: tuple[float, float] | None = None
    source: str = ""
    derived: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(self.links))
        if self.total_mass is not None:
            low, high = (float(v) for v in self.total_mass)
            if not 0 <= low <= high < np.inf:
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
        check_keys(spec, ("source", "total_mass", "links"), "bounds")
        if len(spec["links"]) != n_links:
            raise ValueError(f"`bounds.links` must list {n_links} links, got "
                             f"{len(spec['links'])}")
        links = []
        for k, link in enumerate(spec["links"]):
            where = f"bounds.links[{k}]"
            if not isinstance(link, dict):
                raise ValueError(f"`{where}` must be a mapping, got {link!r:.60}")
            check_keys(link, ("mass", "com", "inertia", "ellipsoid"), where)
            for key, allowed in (("com", ("lower", "upper")), ("inertia", ("lower", "upper")),
                                 ("ellipsoid", ("centre", "semi_axes"))):
                if link.get(key) is not None:
                    if not isinstance(link[key], dict):
                        raise ValueError(f"`{where}.{key}` must be a mapping, got "
                                         f"{link[key]!r:.60}")
                    check_keys(link[key], allowed, f"{where}.{key}")
            try:
                inertia, ellipsoid = link.get("inertia"), link.get("ellipsoid")
                links.append(LinkBounds(
                    mass=tuple(link["mass"]), com_lower=link["com"]["lower"],
                    com_upper=link["com"]["upper"],
                    inertia_lower=inertia["lower"] if inertia else None,
                    inertia_upper=inertia["upper"] if inertia else None,
                    ellipsoid_centre=ellipsoid["centre"] if ellipsoid else None,
                    ellipsoid_semi_axes=ellipsoid["semi_axes"] if ellipsoid else None))
            except KeyError as error:
                raise ValueError(f"`{where}` is missing {error}") from None
            except (TypeError, ValueError) as error:
                raise ValueError(f"`{where}`: {error}") from None
        total = spec.get("total_mass")
        if total is not None and (not isinstance(total, list) or len(total) != 2):
            raise ValueError(f"`bounds.total_mass` must be [min, max], got {total!r:.60}")
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
