"""Calibration pose selection: D- or E-optimal designs on the identification Jacobian.

Each candidate pose contributes a block ``A_c`` (3 rows for a position, 6 for a pose) of the
scaled Jacobian (``KinematicModel.scaled_rows``) over the identifiable parameters; a design's
information matrix is ``M = sum_c A_c^T A_c``. Greedy selection (each step adds the candidate
that most raises the criterion) then Fedorov exchange (swap a chosen pose for a candidate while
the criterion rises), batched over the candidates.

- ``"D"``: maximise ``log det M`` (the volume of the confidence ellipsoid shrinks);
- ``"E"``: maximise ``lambda_min(M)`` (the worst-determined direction);
- ``"A"``: minimise ``trace(M^-1)`` (the mean variance of the scaled parameters: what the
  RMS parameter error measures).

``value`` reports ``log det M``, ``lambda_min(M)`` or ``-trace(M^-1)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.calibration.model import KinematicModel

__all__ = ["MAX_CANDIDATES", "PoseSelection", "select_poses"]

# candidate poses of one selection: each holds its (p, p) information matrix (20000 x 31 x 31
# doubles: 150 MB, an E-optimal choice of 20 in ~15 s); more bring no better design (2000 and
# 20000 candidates: the same Cramer-Rao ratio to 2 %)
MAX_CANDIDATES = 20_000


@dataclass(frozen=True, eq=False)
class PoseSelection:
    """Chosen poses ``q`` ``(count, n)``, their ``indices`` into the candidates, the
    ``criterion`` ("D" or "E") and its ``value`` (``log det M`` or ``lambda_min(M)`` of the
    scaled information matrix), and ``condition`` (``sqrt(cond M)``, of the scaled Jacobian)."""

    q: NDArray
    indices: NDArray
    criterion: str
    value: float
    condition: float
    parameters: tuple[str, ...]


def _value(info: NDArray, criterion: str) -> NDArray:
    if criterion == "D":
        sign, logdet = np.linalg.slogdet(info)
        return np.where(sign > 0, logdet, -np.inf)
    return np.linalg.eigvalsh(info)[..., 0]


def _criterion(info: NDArray, criterion: str) -> float:
    if criterion == "A":
        eigen = np.linalg.eigvalsh(info)
        return -float(np.sum(1.0 / eigen)) if eigen[0] > 0 else -np.inf
    return float(_value(info, criterion))


def select_poses(model: KinematicModel, count: int, *, kind: str = "position",
                 candidates: ArrayLike | None = None, n_candidates: int = 2000,
                 criterion: str = "D", parameters=None, values: ArrayLike | None = None,
                 sigma_position: float | None = None, sigma_rotation: float | None = None,
                 max_sweeps: int = 10, seed: int | None = 0) -> PoseSelection:
    """``count`` calibration poses (module docstring) for ``kind`` ("position" or "pose")
    measurements, from ``candidates`` ``(c, n)`` or ``n_candidates`` uniform random poses
    within the joint limits (``seed``), for the ``parameters`` (default: the identifiable set
    of ``kind``) at ``values`` (default nominal). ValueError if ``count`` poses cannot
    determine them (``count * rows < parameters``).

    ``sigma_position`` [m] and ``sigma_rotation`` [rad] (pose measurements, both or neither):
    the instrument's noise, weighting the rotation rows against the position rows as the fit
    does (each residual over its standard deviation); without them a rotation of 1 rad counts
    as a displacement of the reach (``sigma_rotation = sigma_position / reach``)."""
    if not isinstance(model, KinematicModel):
        raise TypeError(f"`model` must be a KinematicModel, got {type(model).__name__}")
    if kind not in ("position", "pose"):
        raise ValueError(f"`kind` must be 'position' or 'pose' (plane contacts are placed by "
                         f"the planes, not chosen), got {kind!r}")
    if criterion not in ("D", "E", "A"):
        raise ValueError(f"`criterion` must be 'D', 'E' or 'A', got {criterion!r}")
    names = model.identifiable(kind).independent if parameters is None else tuple(parameters)
    for name in names:
        if name not in model.names:
            raise ValueError(f"`parameters`: {name!r} is no parameter of the model")
    weight = 1.0  # of the rotation rows against the position rows (unitless Jacobian)
    if kind == "position" and sigma_rotation is not None:
        raise ValueError("`sigma_rotation`: position measurements have no orientation")
    if kind == "pose" and (sigma_position is None) != (sigma_rotation is None):
        raise ValueError("`sigma_position` and `sigma_rotation` weight the rotation rows "
                         "against the position rows: give both or neither")
    for label, sigma in (("sigma_position", sigma_position), ("sigma_rotation", sigma_rotation)):
        if sigma is not None and (isinstance(sigma, bool) or not isinstance(
                sigma, (int, float, np.floating)) or not 1e-9 <= sigma < np.inf):
            raise ValueError(f"`{label}` must be a standard deviation >= 1e-9, got {sigma!r}")
    if kind == "pose" and sigma_rotation is not None:
        weight = sigma_position / (model.reach * sigma_rotation)
    columns = [model.names.index(n) for n in names]
    rows = 6 if kind == "pose" else 3
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"`count` must be a positive integer, got {count!r}")
    if count * rows < len(columns):
        raise ValueError(f"`count`: {count} {kind} measurements give {count * rows} equations "
                         f"for {len(columns)} identifiable parameters; choose at least "
                         f"{-(-len(columns) // rows)} poses")
    if candidates is None:
        if isinstance(n_candidates, bool) or not isinstance(n_candidates, (int, np.integer)) \
                or not 1 <= n_candidates <= MAX_CANDIDATES:
            raise ValueError(f"`n_candidates` must be an integer in [1, {MAX_CANDIDATES}] "
                             f"(MAX_CANDIDATES), got {n_candidates!r:.40}")
        q = model.random_poses(int(n_candidates), seed=seed)
    else:
        q = model.check_q(candidates, "candidates")
        if q.shape[0] > MAX_CANDIDATES:
            raise ValueError(f"`candidates`: {q.shape[0]} poses, more than MAX_CANDIDATES = "
                             f"{MAX_CANDIDATES} (each holds its information matrix); "
                             "thin them first")
    if q.shape[0] < count:
        raise ValueError(f"`count`: {count} poses to choose from {q.shape[0]} candidates; "
                         "give more candidates (`n_candidates`, or `candidates`)")
    _, jac = model.jacobian(values, q)
    blocks = model.scaled_rows(jac, kind).reshape(q.shape[0], rows, -1)[..., columns]
    if weight != 1.0:
        blocks[:, 3:] *= weight
    grams = np.einsum("cri,crj->cij", blocks, blocks)  # (c, p, p)
    p = len(columns)
    ridge = 1e-9 * np.trace(grams.sum(axis=0)) / p * np.eye(p)  # keeps early steps invertible

    def trials(reduced: NDArray, mask: NDArray) -> NDArray:
        """The criterion (to maximise) of ``reduced`` plus each candidate in ``mask``."""
        a = blocks[mask]
        if criterion == "E":  # screen by first-order gain on the weakest directions, then exact
            eigen, vectors = np.linalg.eigh(reduced + ridge)
            low = vectors[:, :min(4, p)]
            gain = eigen[:min(4, p)] + np.einsum("crk,crk->ck", a @ low, a @ low)
            screen = np.argsort(-gain.min(axis=1))[:32]
            out = np.full(a.shape[0], -np.inf)
            out[screen] = _value(reduced + grams[mask][screen], "E")
            return out
        inverse = np.linalg.inv(reduced + ridge)
        b = a @ inverse  # (c, r, p)
        small = np.eye(rows) + b @ a.transpose(0, 2, 1)
        if criterion == "D":  # determinant lemma
            return float(_value(reduced + ridge, "D")) + np.linalg.slogdet(small)[1]
        # A: Woodbury, tr((M + A^T A)^-1) = tr(M^-1) - tr((I + A M^-1 A^T)^-1 B B^T)
        return -(np.trace(inverse) - np.einsum(
            "cii->c", np.linalg.solve(small, b @ b.transpose(0, 2, 1))))

    chosen: list[int] = []
    info = np.zeros((p, p))
    available = np.ones(q.shape[0], dtype=bool)
    for _ in range(count):  # greedy
        gain = trials(info, available)
        best = int(np.flatnonzero(available)[int(np.argmax(gain))])
        chosen.append(best)
        available[best] = False
        info = info + grams[best]
    current = float(_criterion(info, criterion))
    for _ in range(max_sweeps):  # Fedorov exchange
        improved = False
        for slot in range(count):
            if not available.any():
                break
            reduced = info - grams[chosen[slot]]
            trial = trials(reduced, available)
            best = int(np.argmax(trial))
            if trial[best] > current + 1e-9 * max(1.0, abs(current)):
                index = int(np.flatnonzero(available)[best])
                available[chosen[slot]] = True
                available[index] = False
                chosen[slot] = index
                info = reduced + grams[index]
                current = float(_criterion(info, criterion))
                improved = True
        if not improved:
            break
    eigen = np.linalg.eigvalsh(info)
    condition = float(np.sqrt(eigen[-1] / eigen[0])) if eigen[0] > 0 else float("inf")
    indices = np.array(chosen)
    return PoseSelection(q=q[indices], indices=indices, criterion=criterion, value=current,
                         condition=condition, parameters=tuple(names))
