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
from numpy.typing import ArrayLike

from dynid._validation import as_float_array
from dynid.metrics import cell
from dynid.robot.bounds import ParameterBounds, ellipsoid_matrix
from dynid.robot.inertia import MASS, N_LINK_PARAMETERS, pseudo_inertia, to_com

__all__ = [
    "ConsistencyReport",
    "check_consistency",
]


# why a check of the bounds did not run (the JSON's `not_checked`, the text's "not checked")
NO_BOUNDS = "the robot has no bounds"
NO_ELLIPSOIDS = "no bounding ellipsoids in the robot's bounds"
NO_TOTAL_MASS = "no total-mass range in the robot's bounds"


@dataclass
class ConsistencyReport:
    """Per-link checks (lists of booleans, one per link) and the smallest margins.

    A check of the bounds that could not run is ``None`` (per link) or an empty list (no
    bounds at all), never a pass: ``not_checked()`` says why.
    """

    mass_positive: list[bool]
    inertia_positive: list[bool]
    triangle: list[bool]
    com_in_box: list[bool | None] = field(default_factory=list)
    density_realizable: list[bool | None] = field(default_factory=list)
    total_mass: float = 0.0
    total_mass_in_range: bool | None = None
    pseudo_inertia_min_eigenvalue: list[float] = field(default_factory=list)
    has_bounds: bool = False  # were bounds given (the robot's own, or the caller's)

    @property
    def consistent(self) -> bool:
        """Physically consistent: positive masses, positive definite inertia about the CoM and
        the triangle inequality on every link (the geometric bounds are reported apart)."""
        return all(self.mass_positive) and all(self.inertia_positive) and all(self.triangle)

    @property
    def within_bounds(self) -> bool | None:
        """Every check of the bounds that ran passed; ``None`` without bounds (nothing was
        checked: see ``not_checked``)."""
        if not self.has_bounds:
            return None
        checks = [*self.com_in_box, *self.density_realizable, self.total_mass_in_range]
        return all(c for c in checks if c is not None)

    def not_checked(self) -> dict[str, str]:
        """The checks of the bounds that did not run, each with the reason (empty: all ran)."""
        if not self.has_bounds:
            return {key: NO_BOUNDS for key in ("within_bounds", "com_in_box",
                                                 "density_realizable", "total_mass_in_range")}
        out = {}
        missing = [k + 1 for k, v in enumerate(self.density_realizable) if v is None]
        if missing and len(missing) == len(self.density_realizable):
            out["density_realizable"] = NO_ELLIPSOIDS
        elif missing:
            out["density_realizable"] = (f"no bounding ellipsoid for link"
                                         f"{'s' if len(missing) > 1 else ''} "
                                         f"{', '.join(map(str, missing))} in the robot's bounds")
        if self.total_mass_in_range is None:
            out["total_mass_in_range"] = NO_TOTAL_MASS
        return out

    def to_json(self) -> dict:
        """The checks; one that did not run is ``null``, its reason under ``not_checked``."""
        bounded = self.has_bounds
        return {"mass_positive": self.mass_positive, "inertia_positive": self.inertia_positive,
                "triangle": self.triangle,
                "com_in_box": self.com_in_box if bounded else None,
                "density_realizable": self.density_realizable if bounded else None,
                "total_mass": self.total_mass, "total_mass_in_range": self.total_mass_in_range,
                "pseudo_inertia_min_eigenvalue": self.pseudo_inertia_min_eigenvalue,
                "consistent": self.consistent, "within_bounds": self.within_bounds,
                "not_checked": self.not_checked()}

    def lines(self) -> list[str]:
        mark = {True: "yes", False: "NO", None: "-"}
        out = ["  link   mass>0  I_com>0  triangle  CoM in box  in ellipsoid  min eig(J)"]
        for k in range(len(self.mass_positive)):
            box = self.com_in_box[k] if self.com_in_box else None
            dens = self.density_realizable[k] if self.density_realizable else None
            out.append(f"  {k + 1:>4}   {mark[self.mass_positive[k]]:>6}  "
                       f"{mark[self.inertia_positive[k]]:>7}  {mark[self.triangle[k]]:>8}  "
                       f"{mark[box]:>10}  {mark[dens]:>12}  "
                       f"{cell(self.pseudo_inertia_min_eigenvalue[k], '.3g'):>10}")
        total = (f"  total mass {cell(self.total_mass, '.3f')} kg"
                 + ("" if self.total_mass_in_range is None
                    else f" ({'within' if self.total_mass_in_range else 'OUTSIDE'} its range)"))
        out.append(total)
        skipped = self.not_checked()
        if self.has_bounds and "density_realizable" in skipped:
            out.append(f"  in ellipsoid: not checked ({skipped['density_realizable']})")
        out.append(f"  physically consistent: {mark[self.consistent]}; within the bounds: "
                   f"{self.bounds_verdict()}")
        return out

    def bounds_verdict(self) -> str:
        """The verdict on the bounds as text: yes, NO, or not checked (and why)."""
        if self.within_bounds is None:
            return f"not checked ({NO_BOUNDS})"
        return "yes" if self.within_bounds else "NO"


def check_consistency(parameters: ArrayLike, bounds: ParameterBounds | None = None, *,
                      rtol: float = 1e-9) -> ConsistencyReport:
    """Check links ``(n, 10)``. ``rtol`` scales each tolerance with the link's own size (its
    mass, or its largest principal moment): round-off never decides a verdict."""
    pi = as_float_array("parameters", parameters).reshape(-1, N_LINK_PARAMETERS)
    n = pi.shape[0]
    if bounds is not None and bounds.n_links != n:
        raise ValueError(f"`bounds` has {bounds.n_links} links, `parameters` {n}")
    masses = pi[:, MASS]
    # a link with a non-finite entry (or one whose CoM form overflows) passes no check
    finite = np.isfinite(pi).all(axis=1)
    mass_positive = [bool(m > 0) and bool(ok) for m, ok in zip(masses, finite, strict=True)]
    inertia_positive, triangle, in_box, realizable = [], [], [], []
    eigen = np.full((n, 4), np.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        pseudo = pseudo_inertia(np.where(finite[:, None], pi, 0.0))
        usable = finite & np.isfinite(pseudo).all(axis=(1, 2))
        eigen[usable] = np.linalg.eigvalsh(pseudo[usable])
    for k in range(n):
        with np.errstate(over="ignore", invalid="ignore"):
            com_form = to_com(pi[k]) if mass_positive[k] else None
        if com_form is not None and not (np.isfinite(com_form[1]).all()
                                         and np.isfinite(com_form[2]).all()):
            mass_positive[k] = False
        if not mass_positive[k]:
            inertia_positive.append(False)
            triangle.append(False)
            in_box.append(False if bounds else None)
            realizable.append(False if bounds else None)
            continue
        _, com, inertia_com = com_form
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
    total = float(masses.sum()) if finite.all() else float("nan")
    total_ok = None
    if bounds is not None and bounds.total_mass is not None:
        low, high = bounds.total_mass
        total_ok = bool(low - rtol * high <= total <= high * (1 + rtol))
    return ConsistencyReport(
        mass_positive=mass_positive, inertia_positive=inertia_positive, triangle=triangle,
        com_in_box=in_box if bounds else [], density_realizable=realizable if bounds else [],
        total_mass=total, total_mass_in_range=total_ok,
        pseudo_inertia_min_eigenvalue=eigen[:, 0].tolist(), has_bounds=bounds is not None,
    )


