"""Streaming least squares: logs of any length folded, chunk by chunk, into small triangular
factors; the (N, n, r) regressor is never held.

Every group of rows — one joint of one log (and one time block of it, for the held-out choice
of a prior's weight) — keeps the upper-triangular factor ``R_g`` of its ``[W_g y_g]``
(``A_g^T A_g = R_g^T R_g``) and its row count. A chunk of a few thousand samples is built
(regressor, friction and offset columns), and each joint's rows are folded into their group's
factor by one QR. A joint's rows are zero in the columns of the links before it (and in every
other joint's offset columns): each group keeps only its structurally nonzero columns, which
makes the folding about 3x cheaper on a 7-joint arm.

From the factors, every linear estimate is a small problem: OLS stacks them all; WLS weighs
each group by its noise level, estimated from the group's own residual ``|R_g [x; -1]|``;
the constrained methods stack the groups of the kept time blocks. ``Factors.merged`` is the
reduction of factors folded apart (other chunks, other logs, other machines): it checks that
both sides hold the same columns, and the row counts say whether every chunk was folded in.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset, check_unchanged

# Samples per chunk: the chunk's regressor (CHUNK x n x p doubles, 3.5 MB for a Panda) stays in
# cache, and the QR per joint is still tall enough to run at full speed
CHUNK_SAMPLES = 4096


def deviation_block(k: int, n_logs: int, n_samples: int, n: int) -> NDArray:
    """The deviation columns ``(N_k, n, (L - 1) n)`` on log k's rows (see the module)."""
    out = np.zeros((n_samples, n, (n_logs - 1) * n))
    eye = np.eye(n)
    if k < n_logs - 1:
        out[:, :, k * n:(k + 1) * n] = eye
    else:
        out[:] = np.tile(-eye, n_logs - 1)
    return out


def fold(factor: NDArray | None, rows: NDArray) -> NDArray:
    """The factor of ``[previous rows; rows]`` from the previous ``factor`` (None: none yet),
    square ``(k, k)`` (padded with zero rows while fewer rows than columns are in)."""
    k = rows.shape[1]
    stacked = rows if factor is None else np.vstack([factor, rows])
    out = np.linalg.qr(stacked, mode="r")
    if out.shape[0] < k:
        out = np.vstack([out, np.zeros((k - out.shape[0], k))])
    return out


@dataclass
class Factors:
    """Triangular factors of ``[W y]`` per group of rows, over ``n_columns`` unknowns.

    ``columns[g]`` lists the unknowns group g's rows can touch (the rest are structurally zero
    there); ``factors[g]`` is the ``(k + 1, k + 1)`` factor of those columns and the target;
    ``rows[g]`` counts the rows folded in.
    """

    n_columns: int
    columns: dict[Hashable, NDArray] = field(default_factory=dict)
    factors: dict[Hashable, NDArray] = field(default_factory=dict)
    rows: dict[Hashable, int] = field(default_factory=dict)

    def add(self, key: Hashable, columns: NDArray, rows: NDArray) -> None:
        """Fold ``rows`` ``(m, k + 1)`` (the ``columns``' values, then the target) into group
        ``key``."""
        if key in self.columns:
            if not np.array_equal(self.columns[key], columns):
                raise ValueError(f"group {key!r}: folded with other columns before")
        else:
            self.columns[key] = np.asarray(columns)
        self.factors[key] = fold(self.factors.get(key), rows)
        self.rows[key] = self.rows.get(key, 0) + rows.shape[0]

    @property
    def n_rows(self) -> int:
        return sum(self.rows.values())

    def keys(self) -> list:
        return sorted(self.factors, key=repr)

    def merged(self, other: Factors) -> Factors:
        """The factors of both sides' rows (the reduction of factors folded apart)."""
        if other.n_columns != self.n_columns:
            raise ValueError(f"factors over {self.n_columns} and {other.n_columns} unknowns "
                             "cannot be merged")
        out = Factors(self.n_columns, dict(self.columns), dict(self.factors), dict(self.rows))
        for key in other.factors:
            if key in out.factors:
                if not np.array_equal(out.columns[key], other.columns[key]):
                    raise ValueError(f"group {key!r}: the two sides hold other columns")
                out.factors[key] = fold(out.factors[key], other.factors[key])
                out.rows[key] += other.rows[key]
            else:
                out.columns[key] = other.columns[key]
                out.factors[key] = other.factors[key]
                out.rows[key] = other.rows[key]
        return out

    def scattered(self, key: Hashable) -> NDArray:
        """Group ``key``'s factor over every unknown ``(k + 1, n_columns + 1)``."""
        factor = self.factors[key]
        out = np.zeros((factor.shape[0], self.n_columns + 1))
        out[:, [*self.columns[key], self.n_columns]] = factor
        return out

    def stacked(self, keys: Sequence[Hashable] | None = None,
                scale: Callable[[Hashable], float] | None = None) -> NDArray:
        """One ``(p + 1, p + 1)`` factor of the groups ``keys`` (default all), each group's
        rows multiplied by ``scale(key)``: the compressed ``[W y]`` of a (weighted) fit."""
        keys = self.keys() if keys is None else list(keys)
        if not keys:
            raise ValueError("no rows to fit")
        parts = [self.scattered(key) * (1.0 if scale is None else scale(key)) for key in keys]
        return fold(None, np.vstack(parts))

    def residual_squares(self, x: NDArray) -> dict:
        """``|W_g x - y_g|^2`` of every group at the unknowns ``x`` ``(n_columns,)``."""
        out = {}
        for key, factor in self.factors.items():
            vector = np.append(x[self.columns[key]], -1.0)
            out[key] = float(np.sum((factor @ vector) ** 2))
        return out

    def target_squares(self) -> float:
        """``|y|^2`` over every group."""
        return float(sum(np.sum(factor[:, -1] ** 2) for factor in self.factors.values()))


@dataclass
class Moments:
    """The instrumental-variable sums ``Z^T W``, ``Z^T y``, ``Z^T Z`` over ``rows`` rows."""

    n_columns: int
    zw: NDArray = None
    zy: NDArray = None
    zz: NDArray = None
    rows: int = 0

    def __post_init__(self) -> None:
        p = self.n_columns
        self.zw = np.zeros((p, p)) if self.zw is None else self.zw
        self.zy = np.zeros(p) if self.zy is None else self.zy
        self.zz = np.zeros((p, p)) if self.zz is None else self.zz

    def add(self, z: NDArray, w: NDArray, y: NDArray) -> None:
        """Rows ``(m, p)`` of instruments and regressor, targets ``(m,)``."""
        self.zw += z.T @ w
        self.zy += z.T @ y
        self.zz += z.T @ z
        self.rows += w.shape[0]


def from_arrays(regressor: NDArray, targets: NDArray, groups: NDArray | None = None,
                chunk: int = CHUNK_SAMPLES) -> Factors:
    """Factors of an in-memory regressor: ``(N, n, p)`` with targets ``(N, n)`` (one group
    per joint, or per ``groups`` label ``(N,)`` and joint), or ``(m, p)`` with ``(m,)`` (one
    group). Every column is kept in every group (no structure is known)."""
    p = regressor.shape[-1]
    out = Factors(p)
    every = np.arange(p)
    if regressor.ndim == 2:
        for start in range(0, regressor.shape[0], chunk * 8):
            part = slice(start, start + chunk * 8)
            out.add(0, every, np.column_stack([regressor[part], targets[part]]))
        return out
    n = regressor.shape[1]
    labels = np.zeros(regressor.shape[0], dtype=int) if groups is None else np.asarray(groups)
    for start in range(0, regressor.shape[0], chunk):
        part = slice(start, start + chunk)
        for label in np.unique(labels[part]):
            rows = np.flatnonzero(labels[part] == label) + start
            for j in range(n):
                out.add((int(label), j), every,
                        np.column_stack([regressor[rows, j, :], targets[rows, j]]))
    return out


def joint_columns(model, n_deviations: int, n_logs: int) -> list[NDArray]:
    """Per joint, the unknowns (base parameters, then the logs' offset deviations) its rows
    can touch: the base regressor's columns that are nonzero for that joint at random states
    (zero there means zero by structure: the links before the joint), and its own offsets."""
    robot = model.robot
    n = robot.n_joints
    rng = np.random.default_rng(0)
    states = rng.uniform(-np.pi, np.pi, (3, 8, n))
    base = model.base_regressor(*states)  # (8, n, r)
    out = []
    for j in range(n):
        touched = np.flatnonzero(np.any(base[:, j, :] != 0, axis=0))
        own = [model.base.rank + k * n + j for k in range(n_logs - 1)] if n_deviations else []
        out.append(np.concatenate([touched, np.array(own, dtype=int)]).astype(int))
    return out


def fold_logs(model, logs: Sequence[Dataset], n_deviations: int, *, blocks: int = 1,
              targets: Callable[[int, slice], NDArray] | None = None,
              chunk: int = CHUNK_SAMPLES, factors: Factors | None = None,
              progress: Callable[[int], None] | None = None,
              instruments: Sequence[Dataset] | None = None,
              moments: Moments | None = None) -> Factors:
    """The factors of ``model``'s base regressor (and ``n_deviations`` per-log offset
    columns) against each log's torques, group ``(log, block, joint)`` (``blocks`` time blocks
    per log: block b holds the b-th of ``blocks`` equal parts of the log), chunk by chunk.

    ``targets(k, rows)`` gives log k's targets on a slice of its samples instead of its
    ``tau``; ``factors`` continues earlier factors; ``progress(samples)`` hears of every
    chunk. With ``instruments`` (one simulated log per log, the same samples) their
    regressor's moments with the measured one are added to ``moments`` along (IDIM-IV)."""
    n = model.robot.n_joints
    rank = model.base.rank
    columns = joint_columns(model, n_deviations, len(logs))
    out = Factors(rank + n_deviations) if factors is None else factors
    for k, log in enumerate(logs):
        total = log.n_samples
        for start in range(0, total, chunk):
            rows = slice(start, min(start + chunk, total))
            q, dq, ddq = (np.asarray(getattr(log, name)[rows]) for name in ("q", "dq", "ddq"))
            part = _with_deviations(model.base_regressor(q, dq, ddq), k, n_deviations, n)
            target = np.asarray(log.tau[rows] if targets is None else targets(k, rows))
            if instruments is not None:
                other = instruments[k]
                z = _with_deviations(model.base_regressor(
                    *(np.asarray(getattr(other, name)[rows]) for name in ("q", "dq", "ddq"))),
                    k, n_deviations, n)
                moments.add(z.reshape(-1, z.shape[-1]), part.reshape(-1, part.shape[-1]),
                            target.ravel())
            block = np.arange(rows.start, rows.stop) * blocks // total
            for b in np.unique(block):
                mine = block == b
                for j in range(n):
                    out.add((k, int(b), j), columns[j],
                            np.column_stack([part[mine, j][:, columns[j]], target[mine, j]]))
            check_unchanged(log)
            if progress is not None:
                progress(rows.stop - rows.start)
    return out


def _with_deviations(part: NDArray, k: int, n_deviations: int, n: int) -> NDArray:
    """A chunk of log k's base regressor with the logs' offset-deviation columns."""
    if not n_deviations:
        return part
    return np.concatenate([part, deviation_block(k, n_deviations // n + 1, part.shape[0], n)],
                          axis=-1)

