"""Which physical parameters the data determine, and which a prior or a bound holds.

A fit sees the physical parameters ``pi`` (each link's mass, first moments ``m c`` and
inertia, the rotor inertias, the friction coefficients) only through the base parameters
``pi_b = G pi`` (``dynid.model.base_parameters``). A linear quantity ``e^T pi`` is fixed by the
data exactly when ``e`` lies in the row space of ``G``; where it lies in ``G``'s null space the
data say nothing about it, and a constrained fit (CLS-3, log-Cholesky) or NLS returns what its
prior (the robot's own values, where the fit starts or is pulled) or its bounds make of it.
A link mass read off such a fit may be the prior's, not a measurement.

Each quantity is a set of standard parameters (one, or a link's six inertia entries) and is
classified by the principal angles between their span and the row space: the cosines are the
singular values of ``Q_R[idx]`` for an orthonormal basis ``Q_R`` of that row space. A
direction whose angle to the row space is within ``tol`` of zero is *determined*, one within
``tol`` of a right angle is *held* (in the null space), any other is *partly* determined: the
data fix it only in combination with others (a rotor inertia and its link's ``Izz`` when
joint 1 is vertical: only their sum). The columns of ``G`` are first scaled to their largest
entry (membership of a span of unit vectors in a row space does not depend on the columns'
scales, the angles would), and ``tol`` is the rank decision's ``rtol`` (1e-4 for a robot's
structure: what it takes for zero, this takes for zero too). The CoM ``c = m c / m`` is not
linear: it is determined when the mass and the three first moments are, held when the first
moments are, else partly.

A constrained fit's solution may sit on a bound — a mass at its limit, a CoM on a face of its
box, an inertia on the edge of physical consistency, a rotor inertia at 0 — where the bound,
not the data, sets the value (``bounds_at``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.model.base_parameters import BaseParameters
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import (
    FIRST_MOMENT,
    INERTIA,
    INERTIA_ENTRIES,
    MASS,
    N_LINK_PARAMETERS,
    physical_margin,
    to_com,
)

__all__ = ["BOUND_RTOL", "CONSISTENCY_RTOL", "STATUSES", "Identifiability", "Quantity", "bounds_at",
           "physical_identifiability"]

STATUSES = ("determined", "partly", "held")
# a value within this fraction of its bounds' width from a bound sits on it: Clarabel stops
# an active bound ~1e-5 inside it (the Panda's cls3 total mass 16.0000837 on [16, 20], a CoM
# -0.04999956 on [-0.05, 0.05]); a free value is this close by chance 2e-4 of the time
BOUND_RTOL = 1e-4
# a link whose pseudo-inertia's lowest eigenvalue is within this of its largest entry sits on
# the edge of physical consistency (CLS-3's LMI active: the solver stops ~1e-6 inside it)
CONSISTENCY_RTOL = 1e-5
_DEFAULT_TOL = 1e-8  # the angle tolerance when the base parameters do not record their rtol


@dataclass(frozen=True)
class Quantity:
    """One physical quantity and what fixes it.

    ``kind``: "mass", "com", "inertia", "rotor inertia" or "friction"; ``owner``: the link or
    joint name; ``parameters``: the standard parameters it is classified through;
    ``status``: one of ``STATUSES``; ``determined``/``held``: how many of its directions the
    data fix / say nothing about (of ``len(parameters)``; the CoM counts its first moments);
    ``partners``: the parameters a partly determined quantity is fixed together with;
    ``bound``: where the solution sits on a bound (e.g. "upper", "x lower", "consistency
    limit"), else None; ``std``: the data's standard deviation of a determined scalar, when a
    fit's is known."""

    kind: str
    owner: str
    parameters: tuple[str, ...]
    status: str
    determined: int
    held: int
    partners: tuple[str, ...] = ()
    bound: str | None = None
    std: float | None = None

    @property
    def source(self) -> str:
        """What sets the value: "data", "data with others", "prior" or "bound"."""
        if self.bound is not None:
            return "bound"
        return {"determined": "data", "partly": "data with others", "held": "prior"}[
            self.status]

    def words(self) -> str:
        """The classification as a user reads it, e.g. "held by the prior"."""
        at = f" ({self.bound})" if self.bound else ""
        if self.status == "held":
            return f"held by its bound{at}" if self.bound else "held by the prior"
        if self.status == "determined":
            sigma = f", std {self.std:.3g}" if self.std is not None else ""
            return f"determined{sigma}" + (f", on its bound{at}" if self.bound else "")
        detail = []
        if len(self.parameters) > 1 and self.kind != "com":
            detail.append(f"{self.determined} of {len(self.parameters)} determined, "
                          f"{self.held} held")
        if self.partners:
            detail.append("only with " + ", ".join(self.partners[:3])
                          + (", ..." if len(self.partners) > 3 else ""))
        return ("partly" + (f" ({'; '.join(detail)})" if detail else "")
                + (f", on its bound{at}" if self.bound else ""))

    def to_json(self) -> dict:
        return {"kind": self.kind, "owner": self.owner, "parameters": list(self.parameters),
                "status": self.status, "source": self.source, "determined": self.determined,
                "held": self.held, "partners": list(self.partners), "bound": self.bound,
                "std": self.std}


@dataclass(frozen=True)
class Identifiability:
    """Every physical quantity of a model with its classification (``Quantity``)."""

    quantities: tuple[Quantity, ...]
    tolerance: float
    notes: tuple[str, ...] = field(default=())

    def find(self, kind: str, owner: str) -> Quantity:
        for quantity in self.quantities:
            if quantity.kind == kind and quantity.owner == owner:
                return quantity
        raise KeyError(f"no {kind!r} of {owner!r}")

    def counts(self) -> dict[str, int]:
        """How many quantities have each status."""
        return {status: sum(q.status == status for q in self.quantities)
                for status in STATUSES}

    def to_json(self) -> dict:
        return {"tolerance": self.tolerance, "counts": self.counts(), "notes": list(self.notes),
                "quantities": [q.to_json() for q in self.quantities]}

    @classmethod
    def from_json(cls, entry) -> Identifiability:
        """Back from ``to_json`` (a model file's ``report.identifiability``); ValueError on
        anything else."""
        try:
            quantities = tuple(Quantity(
                kind=str(q["kind"]), owner=str(q["owner"]),
                parameters=tuple(str(p) for p in q["parameters"]), status=str(q["status"]),
                determined=int(q["determined"]), held=int(q["held"]),
                partners=tuple(str(p) for p in q.get("partners", ())),
                bound=None if q.get("bound") is None else str(q["bound"]),
                std=None if q.get("std") is None else float(q["std"]))
                for q in entry["quantities"])
            found = cls(quantities=quantities, tolerance=float(entry["tolerance"]),
                        notes=tuple(str(n) for n in entry.get("notes", ())))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"`report.identifiability` is not an identifiability table "
                             f"({error!r:.80})") from None
        if any(q.status not in STATUSES for q in quantities):
            raise ValueError(f"`report.identifiability`: a status outside {STATUSES}")
        return found

    def by_link(self) -> list[tuple[str, dict[str, Quantity]]]:
        """``[(link, {kind: quantity})]``: each link's mass, CoM and inertia, with its joint's
        rotor inertia (joint k drives link k) when identified."""
        links = [q for q in self.quantities if q.kind in ("mass", "com", "inertia")]
        owners = list(dict.fromkeys(q.owner for q in links))
        rotors = [q for q in self.quantities if q.kind == "rotor inertia"]
        out = []
        for k, owner in enumerate(owners):
            row = {q.kind: q for q in links if q.owner == owner}
            if len(rotors) == len(owners):
                row["rotor inertia"] = rotors[k]
            out.append((owner, row))
        return out

    def lines(self) -> list[str]:
        """A compact table: one line per link (mass, CoM, inertia, rotor inertia), then the
        friction coefficients that the data do not determine alone, then the notes."""
        counts = self.counts()
        out = [f"  physical parameters (what sets each: the data, or the prior and the bounds): "
               f"{counts['determined']} determined, {counts['partly']} only in combination, "
               f"{counts['held']} held by the prior or a bound"]
        for owner, row in self.by_link():
            out.append(f"    {owner}: " + "; ".join(f"{kind} {quantity.words()}"
                                                   for kind, quantity in row.items()))
        friction = [q for q in self.quantities if q.kind == "friction"]
        loose = [q for q in friction if q.status != "determined" or q.bound]
        if friction:
            out.append("    friction: " + ("every coefficient determined" if not loose else
                                           "; ".join(f"{q.parameters[0]} {q.words()}"
                                                     for q in loose)))
        out += [f"    {note}" for note in self.notes]
        return out


def _row_space(regrouping: NDArray) -> NDArray:
    """``(p, r)`` an orthonormal basis of the row space of ``G`` with its columns scaled to
    their largest entry (a zero column stays zero)."""
    largest = np.abs(regrouping).max(axis=0)
    scaled = regrouping / np.where(largest > 0, largest, 1.0)
    basis, _ = np.linalg.qr(scaled.T)
    return basis


def _angles(basis: NDArray, index: Sequence[int], tol: float) -> tuple[int, int]:
    """How many directions of the span of the unit vectors ``index`` lie in the row space
    (``basis``), and how many in its null space, to ``tol``."""
    cosines = np.zeros(len(index))
    found = np.linalg.svd(basis[list(index)], compute_uv=False)
    cosines[:found.size] = np.minimum(found, 1.0)
    sines = np.sqrt(np.maximum(1.0 - cosines**2, 0.0))
    return int((sines <= tol).sum()), int((cosines <= tol).sum())


def _status(size: int, determined: int, held: int) -> str:
    if determined == size:
        return "determined"
    return "held" if held == size else "partly"


def _partners(base: BaseParameters, index: Sequence[int]) -> tuple[str, ...]:
    """The other parameters of the base parameters that ``index`` enter."""
    rows = np.flatnonzero((base.regrouping[:, list(index)] != 0).any(axis=1))
    others = np.flatnonzero((base.regrouping[rows] != 0).any(axis=0))
    return tuple(base.names[j] for j in others if j not in set(index))


def _std(base: BaseParameters, index: int, std: NDArray | None) -> float | None:
    """A determined parameter's std: its base parameter's, when that row is it alone."""
    if std is None or index not in set(base.independent.tolist()):
        return None
    row = int(np.searchsorted(base.independent, index))
    if np.count_nonzero(base.regrouping[row]) != 1 or not np.isfinite(std[row]):
        return None
    return float(std[row] / base.regrouping[row, index])


def physical_identifiability(base: BaseParameters, n_joints: int, *,
                             rotor_inertia: bool = False,
                             link_names: Sequence[str] | None = None,
                             joint_names: Sequence[str] | None = None,
                             std: ArrayLike | None = None,
                             bounds: dict[tuple[str, str], str] | None = None,
                             notes: Sequence[str] = ()) -> Identifiability:
    """Classify every physical quantity of the parameters ``base`` regroups (the column
    layout of ``model_columns``: ``10 n`` link parameters, ``n`` rotor inertias with
    ``rotor_inertia``, the friction coefficients) as determined, partly determined or held
    (module docstring). ``std`` ``(r,)``: a fit's standard deviations of the base parameters
    (a determined mass, rotor inertia or friction coefficient alone in its base parameter
    gets its own); ``bounds``: ``{(kind, owner): where}`` from ``bounds_at``."""
    rigid = N_LINK_PARAMETERS * n_joints
    rotor = n_joints if rotor_inertia else 0
    if base.n_parameters < rigid + rotor:
        raise ValueError(f"`base` regroups {base.n_parameters} parameters, fewer than the "
                         f"{rigid + rotor} of {n_joints} links"
                         + (" and their rotor inertias" if rotor else ""))
    links = tuple(link_names) if link_names is not None else tuple(
        f"link{k + 1}" for k in range(n_joints))
    joints = tuple(joint_names) if joint_names is not None else tuple(
        f"joint{k + 1}" for k in range(n_joints))
    for name, given in (("link_names", links), ("joint_names", joints)):
        if len(given) != n_joints:
            raise ValueError(f"`{name}` must have {n_joints} entries, got {len(given)}")
    sigma = None if std is None else np.asarray(std, dtype=float)
    if sigma is not None and sigma.shape != (base.rank,):
        raise ValueError(f"`std` must have shape ({base.rank},), got {sigma.shape}")
    tol = base.rtol if base.rtol is not None else _DEFAULT_TOL
    basis = _row_space(base.regrouping)
    bounds = bounds or {}
    out = []

    def add(kind: str, owner: str, index: list[int], counted: list[int] | None = None,
            whole: list[int] | None = None) -> None:
        counted = index if counted is None else counted
        determined, held = _angles(basis, counted, tol)
        status = _status(len(counted), determined, held)
        if whole is not None and status == "determined" and \
                _angles(basis, whole, tol)[0] < len(whole):
            status = "partly"  # the CoM: first moments determined, the mass not
        partners = _partners(base, whole or index) if status == "partly" else ()
        scalar = std_of = None
        if len(index) == 1:
            scalar = index[0]
        if status == "determined" and scalar is not None:
            std_of = _std(base, scalar, sigma)
        out.append(Quantity(kind=kind, owner=owner,
                            parameters=tuple(base.names[j] for j in (whole or index)),
                            status=status, determined=determined, held=held,
                            partners=partners, bound=bounds.get((kind, owner)), std=std_of))

    for k, owner in enumerate(links):
        start = N_LINK_PARAMETERS * k
        mass = [start + MASS]
        moments = list(range(start + FIRST_MOMENT.start, start + FIRST_MOMENT.stop))
        add("mass", owner, mass)
        add("com", owner, mass + moments, counted=moments, whole=mass + moments)
        add("inertia", owner, list(range(start + INERTIA.start, start + INERTIA.stop)))
    for j in range(rotor):
        add("rotor inertia", joints[j], [rigid + j])
    for j in range(rigid + rotor, base.n_parameters):
        add("friction", base.names[j], [j])
    return Identifiability(quantities=tuple(out), tolerance=float(tol), notes=tuple(notes))


def bounds_at(parameters: ArrayLike, bounds: ParameterBounds | None, *,
              link_names: Sequence[str], rotor: ArrayLike | None = None,
              joint_names: Sequence[str] = ()) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Where a constrained solution ``parameters`` ``(n, 10)`` sits on its ``bounds``:
    ``{(kind, owner): where}`` — a mass at its lower or upper bound, CoM axes on a face of
    their box, inertia entries (about the CoM) at theirs or a link on the edge of physical
    consistency (its pseudo-inertia singular: the LMI of CLS-3 active), a rotor inertia at 0
    (``rotor`` ``(n,)``, kept >= 0) — and notes for the whole robot (the total mass at its
    range). Within ``BOUND_RTOL`` of the bounds' width (``CONSISTENCY_RTOL`` for the edge of
    consistency)."""
    table = np.asarray(parameters, dtype=float)
    out: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    if bounds is not None:
        if bounds.n_links != table.shape[0]:
            raise ValueError(f"`bounds` has {bounds.n_links} links, `parameters` "
                             f"{table.shape[0]}")
        mass, com, inertia = to_com(table)
        for k, (link, owner) in enumerate(zip(bounds.links, link_names, strict=True)):
            side = _side(mass[k], *link.mass)
            if side:
                out[("mass", owner)] = f"{side} {link.mass[0 if side == 'lower' else 1]:.4g} kg"
            faces = [f"{axis} {s}" for axis, s in zip(
                "xyz", (_side(c, lo, hi) for c, lo, hi in
                        zip(com[k], link.com_lower, link.com_upper, strict=True)), strict=True)
                if s]
            if faces and mass[k] > 0:
                out[("com", owner)] = ", ".join(faces)
            entries = []
            if link.inertia_lower is not None:
                values = np.array([inertia[k][a, b] for a, b in
                                   ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))])
                entries = [f"{e} {s}" for e, s in zip(INERTIA_ENTRIES, (
                    _side(v, lo, hi) for v, lo, hi in zip(values, link.inertia_lower,
                                                          link.inertia_upper, strict=True)),
                    strict=True) if s]
            margin = physical_margin(table[k])
            if margin <= CONSISTENCY_RTOL:
                entries.append("consistency limit")
            if entries:
                out[("inertia", owner)] = ", ".join(entries)
        if bounds.total_mass is not None:
            side = _side(float(mass.sum()), *bounds.total_mass)
            if side:
                notes.append(f"the total mass {mass.sum():.4g} kg sits on its {side} bound: "
                             "the masses share what the bound sets")
    if rotor is not None:
        values = np.asarray(rotor, dtype=float)
        scale = max(float(np.abs(values).max(initial=0.0)), 1e-12)
        for owner, value in zip(joint_names, values, strict=True):
            if value <= BOUND_RTOL * scale:
                out[("rotor inertia", owner)] = "lower 0"
    return out, notes


def _side(value: float, lower: float, upper: float) -> str | None:
    """"lower"/"upper" when ``value`` sits on that bound (``BOUND_RTOL`` of the width)."""
    width = upper - lower
    reach = BOUND_RTOL * (width if width > 0 else max(abs(lower), abs(upper), 1.0))
    if value <= lower + reach:
        return "lower"
    if value >= upper - reach:
        return "upper"
    return None
