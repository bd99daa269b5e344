"""Streaming least squares: logs of any length folded, chunk by chunk, into small triangular
factors; the (N, n, r) regressor is never held.

Every group of rows — one joint of one log (and one time block of it, for the held-out choice
of a prior's weight) — keeps the upper-triangular factor ``R_g`` of its ``[W_g y_g]``
(``A_g^T A_g = R_g^T R_g``) and its row count. A chunk of a few thousand samples is built
(regressor, friction and offset columns), and each joint's rows are folded into their group's
factor. A joint's rows are zero in the columns of the links before it (and in every other
joint's offset columns), and among the columns they touch some are combinations of the others
at every state (a joint's row alone does not separate every base parameter): each group folds
only its own independent columns (its ``Layout``), which makes the folding several times
cheaper on a 7-joint arm and each group's factor well conditioned.

From the factors, every linear estimate is a small problem: OLS stacks them all; WLS weighs
each group by its noise level, estimated from the group's own residual ``|R_g [x; -1]|``;
the constrained methods stack the groups of the kept time blocks. ``Factors.merged`` is the
reduction of factors folded apart (other chunks, other logs, other machines): it checks that
both sides hold the same columns, and the row counts say whether every chunk was folded in.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from dynid.data.dataset import Dataset, check_unchanged, release_pages
from dynid.dynamics import friction_regressor, regressor, rotor_regressor
from dynid.model.base_parameters import base_parameters

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
    square ``(k, k)`` (padded with zero rows while fewer rows than columns are in): one
    Householder QR."""
    k = rows.shape[1]
    stacked = rows if factor is None else np.vstack([factor, rows])
    out = np.linalg.qr(stacked, mode="r")
    if out.shape[0] < k:
        out = np.vstack([out, np.zeros((k - out.shape[0], k))])
    return out


# A group's factor preconditions the Gram updates of the rows after it (see _Group) once it
# holds this many rows — enough of a log to stand for the rest of it (16 chunks: 64 s at
# 1 kHz) — and, its columns scaled to unit norm, its condition number is below the bound
PRECONDITION_AFTER = 16 * CHUNK_SAMPLES
PRECONDITION_BELOW = 1e8


class _Group:
    """The factor of one group's rows, folded in two ways.

    While its factor ``R`` is missing or ill-conditioned, each chunk is folded by Householder
    QR. Once ``R`` is well conditioned it preconditions the rest: with ``B = A R^-1``,
    ``R^T R + A^T A = R^T (I + B^T B) R``, so only the Gram matrix ``G`` of ``B`` accumulates
    (two matrix products, about 5x faster than the QR of a 4096 x 48 chunk) and the factor is
    ``chol(I + G) R``. ``B`` is near-orthonormal in its columns' scale, so its Gram loses no
    accuracy; when the rows have doubled (trace G > k) the factor is rebuilt and the
    preconditioner refreshed.
    """

    __slots__ = ("base", "gram", "inverse", "rows")

    def __init__(self, base: NDArray | None = None, rows: int = 0) -> None:
        self.base, self.gram, self.inverse, self.rows = base, None, None, rows
        if base is not None:
            self._precondition()

    def add(self, rows: NDArray) -> None:
        self.rows += rows.shape[0]
        if self.inverse is None:
            self.base = fold(self.base, rows)
            self._precondition()
            return
        b = rows @ self.inverse
        # the upper triangle of B^T B (symmetric: half the products of b.T @ b)
        self.gram = scipy.linalg.blas.dsyrk(1.0, b.T, beta=1.0, c=self.gram,
                                            overwrite_c=True)  # b.T: Fortran order, no copy
        if np.trace(self.gram) > self.gram.shape[0]:  # the rows have doubled: rebuild
            self.base = self.factor()
            self._precondition()

    def factor(self) -> NDArray:
        if self.gram is None or not self.gram.any():
            return self.base
        k = self.gram.shape[0]
        upper = np.triu(self.gram)
        return np.linalg.cholesky(np.eye(k) + upper + np.triu(upper, 1).T).T @ self.base

    def _precondition(self) -> None:
        if self.rows < PRECONDITION_AFTER:
            return
        norms = np.linalg.norm(self.base, axis=0)
        if not (norms > 0).all() or np.linalg.cond(self.base / norms) > PRECONDITION_BELOW:
            self.gram = self.inverse = None
            return
        k = self.base.shape[0]
        # A R^-1 = A D^-1 (R D^-1)^-1 with D the column norms: R D^-1 is well conditioned
        # (R itself need not be: the columns' units differ), so its inverse is accurate
        self.inverse = np.asfortranarray(scipy.linalg.solve_triangular(
            self.base / norms, np.eye(k)) / norms[:, None])
        self.gram = np.zeros((k, k), order="F")


@dataclass(frozen=True)
class Layout:
    """Which unknowns a group's rows touch, ``columns`` (the rest are zero there by
    structure), and how: at every state the rows over ``columns`` equal their
    ``independent`` columns (positions in ``columns``) times ``regrouping``
    ``(len(independent), len(columns))`` — None: all columns independent."""

    columns: NDArray
    independent: NDArray
    regrouping: NDArray | None = None

    @classmethod
    def every(cls, n_columns: int) -> Layout:
        return cls(np.arange(n_columns), np.arange(n_columns))

    def spread(self, values: NDArray) -> NDArray:
        """Values over the independent columns ``(..., r)`` -> over ``columns``."""
        return values if self.regrouping is None else values @ self.regrouping

    def same(self, other: Layout) -> bool:
        return (np.array_equal(self.columns, other.columns)
                and np.array_equal(self.independent, other.independent)
                and (self.regrouping is None) == (other.regrouping is None)
                and (self.regrouping is None
                     or np.array_equal(self.regrouping, other.regrouping)))


@dataclass
class Factors:
    """Triangular factors of ``[W y]`` per group of rows, over ``n_columns`` unknowns.

    ``layouts[g]`` says which unknowns group g's rows touch and which of those it folds;
    ``factor(g)`` is the ``(r + 1, r + 1)`` factor of its independent columns and the target;
    ``rows[g]`` counts the rows folded in.
    """

    n_columns: int
    layouts: dict = field(default_factory=dict)  # group key -> Layout
    groups: dict = field(default_factory=dict)  # group key -> its fold (_Group)

    def add(self, key: Hashable, layout: Layout, rows: NDArray) -> None:
        """Fold ``rows`` ``(m, r + 1)`` (the values of ``layout``'s independent columns, then
        the target) into group ``key``."""
        if key in self.layouts:
            if not self.layouts[key].same(layout):
                raise ValueError(f"group {key!r}: folded with other columns before")
        else:
            self.layouts[key] = layout
            self.groups[key] = _Group()
        self.groups[key].add(rows)

    @property
    def rows(self) -> dict:
        return {key: group.rows for key, group in self.groups.items()}

    @property
    def n_rows(self) -> int:
        return sum(group.rows for group in self.groups.values())

    def keys(self) -> list:
        return sorted(self.groups, key=repr)

    def factor(self, key: Hashable) -> NDArray:
        return self.groups[key].factor()

    def merged(self, other: Factors) -> Factors:
        """The factors of both sides' rows (the reduction of factors folded apart)."""
        if other.n_columns != self.n_columns:
            raise ValueError(f"factors over {self.n_columns} and {other.n_columns} unknowns "
                             "cannot be merged")
        out = Factors(self.n_columns, dict(self.layouts), dict(self.groups))
        for key, group in other.groups.items():
            if key in out.groups:
                if not out.layouts[key].same(other.layouts[key]):
                    raise ValueError(f"group {key!r}: the two sides hold other columns")
                out.groups[key] = _Group(fold(self.factor(key), group.factor()),
                                         self.groups[key].rows + group.rows)
            else:
                out.layouts[key] = other.layouts[key]
                out.groups[key] = group
        return out

    def scattered(self, key: Hashable) -> NDArray:
        """Group ``key``'s factor over every unknown ``(k + 1, n_columns + 1)``."""
        factor, layout = self.factor(key), self.layouts[key]
        out = np.zeros((factor.shape[0], self.n_columns + 1))
        out[:, layout.columns] = layout.spread(factor[:, :-1])
        out[:, -1] = factor[:, -1]
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
        for key, layout in self.layouts.items():
            own = x[layout.columns]
            vector = np.append(own if layout.regrouping is None else layout.regrouping @ own,
                               -1.0)
            out[key] = float(np.sum((self.factor(key) @ vector) ** 2))
        return out

    def target_squares(self) -> float:
        """``|y|^2`` over every group."""
        return float(sum(np.sum(self.factor(key)[:, -1] ** 2) for key in self.groups))


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
                chunk: int = CHUNK_SAMPLES, factors: Factors | None = None) -> Factors:
    """Factors of an in-memory regressor: ``(N, n, p)`` with targets ``(N, n)`` (one group
    per joint, or per ``groups`` label ``(N,)`` and joint), or ``(m, p)`` with ``(m,)`` (one
    group), added to ``factors`` when given (a regressor built piece by piece). Every column
    is kept in every group (no structure is known)."""
    p = regressor.shape[-1]
    out = Factors(p) if factors is None else factors
    every = Layout.every(p)
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


def joint_layouts(model, n_deviations: int, n_logs: int) -> list[list[Layout]]:
    """Per log and joint, the ``Layout`` of its rows over the unknowns (base parameters, then
    the logs' offset deviations): the columns nonzero at random states (zero there means zero
    by structure: the links before the joint, other joints' offsets), reduced to independent
    ones by rref — kept only where that reduction reproduces the rows to 1e-10 (else every
    column is folded)."""
    robot = model.robot
    n = robot.n_joints
    rank = model.base.rank
    states = np.random.default_rng(0).uniform(-np.pi, np.pi, (3, 4 * (rank + n_logs) + 64, n))
    base = model.base_regressor(*states)  # (S, n, r)
    out = []
    for k in range(n_logs):
        offsets = deviation_block(k, n_logs, 1, n)[0] if n_deviations else np.zeros((n, 0))
        joints = []
        for j in range(n):
            touched = np.flatnonzero(np.any(base[:, j, :] != 0, axis=0))
            own = np.flatnonzero(offsets[j])
            columns = np.concatenate([touched, rank + own]).astype(int)
            rows = np.column_stack([base[:, j, touched],
                                    np.broadcast_to(offsets[j, own], (base.shape[0], own.size))])
            joints.append(_reduced(columns, rows))
        out.append(joints)
    return out


def _reduced(columns: NDArray, rows: NDArray) -> Layout:
    """The layout of ``rows`` over ``columns``, its dependent columns regrouped when exact."""
    scale = np.abs(rows).max()
    if scale == 0:
        return Layout(columns, np.arange(columns.size))
    try:
        found = base_parameters(rows, rtol=1e-9)
    except ValueError:
        return Layout(columns, np.arange(columns.size))
    independent, regrouping = found.independent, found.regrouping
    if independent.size == columns.size:
        return Layout(columns, np.arange(columns.size))
    if np.abs(rows[:, independent] @ regrouping - rows).max() > 1e-10 * scale:
        return Layout(columns, np.arange(columns.size))
    return Layout(columns, independent, regrouping)


def fold_logs(model, logs: Sequence[Dataset], n_deviations: int, *, blocks: int = 1,
              targets: Callable[[int, slice], NDArray] | None = None,
              chunk: int = CHUNK_SAMPLES, factors: Factors | None = None,
              progress: Callable[[int], None] | None = None,
              instruments: Sequence[Dataset | Iterable[Dataset]] | None = None,
              moments: Moments | None = None, client=None,
              weights: Callable[[Hashable, Layout, NDArray], NDArray] | None = None
              ) -> Factors:
    """The factors of ``model``'s base regressor (and ``n_deviations`` per-log offset
    columns) against each log's torques, group ``(log, block, joint)`` (``blocks`` time blocks
    per log: block b holds the b-th of ``blocks`` equal parts of the log), chunk by chunk.

    ``targets(k, rows)`` gives log k's targets on a slice of its samples instead of its
    ``tau``; ``factors`` continues earlier factors; ``progress(samples)`` hears of every
    chunk. With ``instruments`` (one simulated log per log, the same samples: a Dataset, or
    an iterator of its consecutive pieces, one held at a time) their regressor's moments
    with the measured one are added to ``moments`` along (IDIM-IV). ``weights(key, layout,
    rows)`` gives each row of a group's chunk ``rows`` ``(m, r + 1)`` (as ``Factors.add``
    takes them) a weight >= 0 ``(m,)``, by which its squared residual counts: the rows are
    folded times its square root (iteratively reweighted least squares re-folds the logs
    with new weights each pass).
    ``client``: a Dask ``distributed.Client``: the logs' pieces (``PIECE_SAMPLES``) are folded
    on its workers and their factors reduced here (see ``fold_on_cluster``)."""
    if client is not None:
        if (targets is not None or instruments is not None or factors is not None
                or weights is not None):
            raise ValueError("`client`: only the factors of the logs' own torques are folded "
                             "on a cluster (not targets, instruments, weights or earlier "
                             "factors)")
        return fold_on_cluster(client, model, logs, n_deviations, blocks=blocks, chunk=chunk,
                               progress=progress)
    pieces = [(k, log, 0, log.n_samples) for k, log in enumerate(logs)]
    out = Factors(model.base.rank + n_deviations) if factors is None else factors
    if instruments is not None:
        instruments = [_InOrder(source, log.n_samples)
                       for source, log in zip(instruments, logs, strict=True)]
    folded = _fold_pieces(model, pieces, len(logs), n_deviations, out, blocks=blocks,
                          targets=targets, chunk=chunk, progress=progress,
                          instruments=instruments, moments=moments, weights=weights)
    for k, instrument in enumerate(instruments or []):
        instrument.finish(k)
    return folded


class _InOrder:
    """The states ``(q, dq, ddq)`` of an instrument log, taken in consecutive rows: a Dataset
    (possibly memory-mapped), or an iterator of consecutive Dataset pieces (a simulation run
    piece by piece, ``dynid.simulate.closed_loop_pieces``) of which one is held at a time."""

    def __init__(self, source, n_samples: int) -> None:
        self._whole = source if isinstance(source, Dataset) else None
        if self._whole is not None and source.n_samples != n_samples:
            raise ValueError(f"an instrument log has {source.n_samples} samples, its log "
                             f"{n_samples}")
        self._pieces = None if self._whole is not None else iter(source)
        self._piece, self._used, self._next, self._n_samples = None, 0, 0, n_samples

    def take(self, rows: slice) -> tuple[NDArray, NDArray, NDArray]:
        if rows.start != self._next:
            raise ValueError(f"instrument rows taken out of order: {rows.start}, expected "
                             f"{self._next}")
        self._next = rows.stop
        if self._whole is not None:
            out = tuple(np.asarray(getattr(self._whole, name)[rows])
                        for name in ("q", "dq", "ddq"))
            release_pages(self._whole, rows)
            return out
        parts, wanted = [], rows.stop - rows.start
        while wanted > 0:
            if self._piece is None or self._used == self._piece.n_samples:
                self._piece, self._used = next(self._pieces, None), 0
                if self._piece is None:
                    raise ValueError(f"an instrument log ended after {rows.stop - wanted} "
                                     f"samples, its log has {self._n_samples}")
            take = min(wanted, self._piece.n_samples - self._used)
            rows_here = slice(self._used, self._used + take)
            parts.append([getattr(self._piece, name)[rows_here]
                          for name in ("q", "dq", "ddq")])
            self._used, wanted = self._used + take, wanted - take
        return tuple(np.concatenate(columns) for columns in zip(*parts, strict=True))

    def finish(self, k: int) -> None:
        """ValueError unless every sample of the instrument was used (log ``k``)."""
        left = (self._pieces is not None
                and ((self._piece is not None and self._used < self._piece.n_samples)
                     or next(self._pieces, None) is not None))
        if left or self._next != self._n_samples:
            raise ValueError(f"the instrument of log {k + 1} is longer than the log "
                             f"({self._n_samples} samples)")


def _fold_pieces(model, pieces, n_logs: int, n_deviations: int, out: Factors, *,
                 blocks: int = 1, targets=None, chunk: int = CHUNK_SAMPLES, progress=None,
                 instruments=None, moments=None, weights=None) -> Factors:
    """Fold ``pieces`` ``(k, log, first, total)`` — the samples of log k from its sample
    ``first`` on, of ``total`` in the whole log — into ``out``."""
    # the products of a chunk are small: one BLAS thread runs them at full speed, and more
    # collapse on a busy machine (2 threads beside 2 busy processes: 15x slower, measured)
    with threadpool_limits(limits=1, user_api="blas"):
        n = model.robot.n_joints
        layouts = joint_layouts(model, n_deviations, n_logs)
        for k, log, first, total in pieces:
            gathers = [_gathers(model, layout, log_index=k, n_logs=n_logs,
                                n_deviations=n_deviations) for layout in layouts[k]]
            band = _dead_band(model, log)
            for start in range(0, log.n_samples, chunk):
                rows = slice(start, min(start + chunk, log.n_samples))
                q, dq, ddq = (np.asarray(getattr(log, name)[rows])
                              for name in ("q", "dq", "ddq"))
                parts = _model_parts(model, q, dq, ddq)
                target = np.asarray(log.tau[rows] if targets is None else targets(k, rows))
                if instruments is not None:
                    z = _with_deviations(model.base_regressor(*instruments[k].take(rows)),
                                         k, n_deviations, n)
                    w = _with_deviations(model.base_regressor(q, dq, ddq), k, n_deviations, n)
                    kept = (slice(None) if band is None else
                            np.abs(dq) >= band)  # the dead band, as the factors' rows
                    moments.add(z[kept].reshape(-1, z.shape[-1]),
                                w[kept].reshape(-1, w.shape[-1]), target[kept].ravel())
                block = (first + np.arange(rows.start, rows.stop)) * blocks // total
                edges = np.flatnonzero(np.diff(block)) + 1  # a block's rows are contiguous
                for b, mine in zip(block[np.r_[0, edges]],
                                   np.split(np.arange(block.size), edges), strict=True):
                    mine = slice(mine[0], mine[-1] + 1)
                    for j, layout in enumerate(layouts[k]):
                        own = np.empty((mine.stop - mine.start, layout.independent.size + 1))
                        for which, local, dest in gathers[j][0]:
                            own[:, dest] = parts[which][mine, j][:, local]
                        for dest, value in gathers[j][1]:
                            own[:, dest] = value
                        own[:, -1] = target[mine, j]
                        if band is not None and band[j] > 0:
                            own = own[np.abs(dq[mine, j]) >= band[j]]
                        if weights is not None:
                            own *= np.sqrt(weights((k, int(b), j), layout, own))[:, None]
                        out.add((k, int(b), j), layout, own)
                check_unchanged(log)
                release_pages(log, rows)
                if progress is not None:
                    progress(rows.stop - rows.start)
    return out


# Samples per task on a cluster: big enough that a task's overhead (sending the model,
# mapping the file) is small, small enough to spread a day's log over many workers
PIECE_SAMPLES = 1 << 18


@dataclass(frozen=True)
class _MappedPiece:
    """Samples ``rows`` of a memory-mapped log file, mapped again by the worker (a shared
    file system): nothing of the log travels; ``bytes``: the file's size when read."""

    path: str
    bytes: int
    rows: slice

    def load(self) -> Dataset:
        from dynid.data.io import read_dataset

        log = read_dataset(self.path, mmap=True, rows=self.rows)
        if log.metadata["memory_mapped"]["bytes"] != self.bytes:
            raise ValueError(f"the memory-mapped log {self.path} changed under the run: "
                             f"{self.bytes} bytes when read, "
                             f"{log.metadata['memory_mapped']['bytes']} on a worker")
        return log


def _fold_task(task: tuple) -> Factors:
    """One piece folded on a worker, with one compiled-kernel thread (a worker stands for one
    core; more threads than cores collapse)."""
    import numba

    numba.set_num_threads(1)
    model, source, k, first, total, n_logs, n_deviations, blocks, chunk = task
    log = source.load() if isinstance(source, _MappedPiece) else source
    out = Factors(model.base.rank + n_deviations)
    return _fold_pieces(model, [(k, log, first, total)], n_logs, n_deviations, out,
                        blocks=blocks, chunk=chunk)


def fold_on_cluster(client, model, logs: Sequence[Dataset], n_deviations: int, *,
                    blocks: int = 1, chunk: int = CHUNK_SAMPLES,
                    progress: Callable[[int], None] | None = None) -> Factors:
    """``fold_logs`` on a Dask cluster: each piece of ``PIECE_SAMPLES`` samples of every log
    is one task (a memory-mapped log is mapped again by the worker, others travel), and the
    pieces' factors are merged here in order — the same factors as one fold, to rounding.
    The merged row count must be every sample's: a lost piece is an error, never a partial
    factor (the scheduler reruns the tasks of a worker that dies)."""
    from distributed import as_completed

    tasks, sizes = [], []
    for k, log in enumerate(logs):
        mapped = log.metadata.get("memory_mapped")
        for first in range(0, log.n_samples, PIECE_SAMPLES):
            rows = slice(first, min(first + PIECE_SAMPLES, log.n_samples))
            source = (_MappedPiece(mapped["path"], mapped["bytes"], rows) if mapped
                      else log.select(rows))
            tasks.append((model, source, k, first, log.n_samples, len(logs), n_deviations,
                          blocks, chunk))
            sizes.append(rows.stop - rows.start)
    futures = client.map(_fold_task, tasks, pure=False)
    index = {future.key: i for i, future in enumerate(futures)}
    try:
        for future in as_completed(futures):
            future.result()  # a failed task raises here, with the worker's error
            if progress is not None:
                progress(sizes[index[future.key]])
        results = client.gather(futures)
    finally:
        client.cancel(futures)
    out = Factors(model.base.rank + n_deviations)
    for result in results:
        out = out.merged(result)
    expected = sum(log.n_samples for log in logs) * model.robot.n_joints
    if out.n_rows != expected:
        raise ValueError(f"the cluster folded {out.n_rows} rows of {expected}: a piece was "
                         "lost; rerun")
    return out


def _dead_band(model, log: Dataset) -> NDArray | None:
    """The speeds below which each joint's rows of ``log`` are left out of the fit
    (``dynid.data.preprocess.dead_band``, recorded by ``prepare`` when it derived the
    accelerations), for a model with friction columns; None: every row counts."""
    band = log.metadata.get("dead_band")
    if band is None or not model.has_friction:
        return None
    band = np.asarray(band, dtype=float)
    if band.shape != (model.robot.n_joints,) or not (band >= 0).all():
        raise ValueError(f"`dead_band` of {log.metadata.get('source', 'a log')} must be "
                         f"{model.robot.n_joints} speeds >= 0, got {band.tolist()}")
    return band


def _model_parts(model, q: NDArray, dq: NDArray, ddq: NDArray) -> list[NDArray]:
    """``model_columns``' parts, not joined: the rigid-body regressor, the rotor-inertia and
    the friction columns ``(N, n, .)`` each."""
    parts = [regressor(model.robot, q, dq, ddq)]
    if model.rotor_inertia:
        parts.append(rotor_regressor(ddq, model.robot.transmission))
    parts.append(friction_regressor(model.friction, dq, model.robot.transmission))
    return parts


def _gathers(model, layout: Layout, *, log_index: int, n_logs: int, n_deviations: int
             ) -> tuple[list[tuple[int, NDArray, NDArray]], list[tuple[int, float]]]:
    """Where a group's folded columns come from: ``(part, columns in that part, positions in
    the group's rows)`` for each part of ``_model_parts`` (a base column is one of the model's
    full columns, ``base.independent``), and ``(position, value)`` of its offset-deviation
    columns (constant on a log)."""
    rank = model.base.rank
    folded = layout.columns[layout.independent]
    states = np.random.default_rng(0).uniform(-1.0, 1.0, (3, 2, model.robot.n_joints))
    sizes = [part.shape[-1] for part in _model_parts(model, *states)]
    starts = np.cumsum([0, *sizes])
    is_base = folded < rank
    full = np.full(folded.size, -1)
    full[is_base] = model.base.independent[folded[is_base]]
    parts = []
    for which, (first, end) in enumerate(itertools.pairwise(starts)):
        inside = is_base & (full >= first) & (full < end)
        if inside.any():
            parts.append((which, full[inside] - first, np.flatnonzero(inside)))
    constants = []
    if n_deviations:
        n = model.robot.n_joints
        offsets = deviation_block(log_index, n_logs, 1, n)[0]
        for position in np.flatnonzero(~is_base):
            column = int(folded[position]) - rank
            constants.append((int(position), float(offsets[column % n, column])))
    return parts, constants


def _with_deviations(part: NDArray, k: int, n_deviations: int, n: int) -> NDArray:
    """A chunk of log k's base regressor with the logs' offset-deviation columns."""
    if not n_deviations:
        return part
    return np.concatenate([part, deviation_block(k, n_deviations // n + 1, part.shape[0], n)],
                          axis=-1)

