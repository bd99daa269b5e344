"""Several logs in one fit: each log keeps its own torque offsets.

A joint-torque sensor drifts between runs, so every log ``l`` has its own offset ``o_l`` per
joint. The friction model's offset term ``fo`` (one column per joint, constant 1) stays the
model's offset — the mean over the logs — and each log gets a deviation with the deviations
summing to zero (effects coding): for logs ``1..L-1`` the column of joint j is +1 on log l's
rows and -1 on log L's, so ``o_l = fo + d_l`` and ``o_L = fo - sum(d)``. With one log, or
``offsets="shared"``, or a friction model without an offset term, no column is added.

``dynid.identification._stream`` folds these columns (``deviation_block``) next to each log's
base regressor; ``log_offsets`` reads every log's offsets and their standard deviations back
from the fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset, release_pages
from dynid.model.linear_model import LinearModel

Offsets = Literal["per-log", "shared"]
OFFSETS = ("per-log", "shared")


def as_logs(data: Dataset | Sequence[Dataset], *, effort: str | None = "torque"
            ) -> list[Dataset]:
    """``data`` as a non-empty list of Datasets (one log or several), each of ``effort``
    (None: any)."""
    logs = [data] if isinstance(data, Dataset) else list(data) if isinstance(
        data, (list, tuple)) else None
    if not logs or not all(isinstance(log, Dataset) for log in logs):
        raise ValueError(f"`data` must be a Dataset or a non-empty list of Datasets, got "
                         f"{type(data).__name__}")
    for k, log in enumerate(logs):
        where = "`data`" if len(logs) == 1 else f"`data[{k}]`"
        if log.ddq is None:
            raise ValueError(f"{where} has no accelerations (ddq): differentiate the "
                             "velocities first")
        if effort is not None and log.effort != effort:
            raise ValueError(
                f"{where} holds motor {log.effort}s, not joint {effort}s: identify from "
                "currents with identify_drive_gains (a payload log or a known gain fixes the "
                "scale)" if log.effort == "current" else
                f"{where} holds joint torques; every log of this fit must hold currents")
    return logs


def per_log(name: str, value, n_logs: int) -> list:
    """One value for all logs, or a list or tuple of one per log (a ValueError naming
    ``name`` otherwise)."""
    if isinstance(value, (list, tuple)):
        if len(value) != n_logs:
            raise ValueError(f"`{name}` must be one for all logs or one per log ({n_logs}), "
                             f"got {len(value)}")
        return list(value)
    return [value] * n_logs


def offset_columns(model: LinearModel) -> NDArray | None:
    """``(n,)`` positions, among the base parameters, of the friction model's offset term of
    each joint (a column that is 1 on its joint and 0 elsewhere, a base parameter of its own),
    or None when the friction model has none."""
    n = model.robot.n_joints
    dq = np.random.default_rng(0).standard_normal((4, n))
    columns = model.friction.regressor(dq)  # (4, n, c)
    first = model.n_rigid + model.n_rotor
    found = []
    for j in range(n):
        indicator = np.zeros((4, n))
        indicator[:, j] = 1.0
        match = [c for c in range(columns.shape[-1])
                 if np.array_equal(columns[..., c], indicator)]
        if not match:
            return None
        rows = np.flatnonzero(model.base.independent == first + match[0])
        if rows.size != 1 or np.count_nonzero(model.base.regrouping[rows[0]]) != 1:
            return None
        found.append(int(rows[0]))
    return np.array(found)


def deviation_names(model: LinearModel, logs: Sequence[Dataset], offsets: Offsets
                    ) -> list[str]:
    """Names of the per-log deviation columns (``d{l}_{j}``: log l, joint j, 1-based)."""
    if offsets not in OFFSETS:
        raise ValueError(f"`offsets` must be one of {OFFSETS}, got {offsets!r}")
    if offsets == "shared" or len(logs) < 2 or offset_columns(model) is None:
        return []
    n = model.robot.n_joints
    return [f"d{log + 1}_{j + 1}" for log in range(len(logs) - 1) for j in range(n)]


def log_offsets(model: LinearModel, logs: Sequence[Dataset], coefficients: NDArray,
                covariance: NDArray, n_deviations: int) -> list[dict] | None:
    """Each log's offsets and standard deviations from a fit whose unknowns are the base
    parameters then ``n_deviations`` deviation columns (``coefficients``, ``covariance``
    over all of them), or None when the friction model has no offset term. Joint-side
    offsets: through a coupled transmission the motors' offset terms act as ``C^T fo``."""
    where = offset_columns(model)
    if where is None:
        return None
    n = model.robot.n_joints
    size = model.base.rank + n_deviations
    out = []
    for k, log in enumerate(logs):
        for_log = np.zeros((n, size))  # o_k = this matrix @ unknowns
        for_log[:, where] = model.robot.transmission.coupling.T
        if n_deviations:
            r = model.base.rank
            if k < len(logs) - 1:
                for_log[np.arange(n), r + k * n + np.arange(n)] = 1.0
            else:
                for j in range(n):
                    for_log[j, r + j::n] = -1.0
        value = for_log @ coefficients
        spread = np.einsum("ij,jk,ik->i", for_log, covariance, for_log)
        out.append({"source": str(log.metadata.get("source", f"log {k + 1}")),
                    "offsets": value.tolist(), "std": np.sqrt(np.maximum(spread, 0)).tolist()})
    return out


# rows of a log's velocities read at a time
_RANGE_ROWS = 1 << 16
# A joint whose velocity stays below this [rad/s or m/s] is not moving (encoder noise level)
STILL_VELOCITY = 1e-3


def excitation_faults(logs: Sequence[Dataset], names: Sequence[str]) -> list[str]:
    """What keeps the logs from exciting each joint, in words: a joint that never moves, or
    one that moves in one direction only (its Coulomb friction and offset then look alike)."""
    # chunk by chunk: a long (memory-mapped) log is read once, its pages released after
    lowest, highest = np.full(len(names), np.inf), np.full(len(names), -np.inf)
    for log in logs:
        for start in range(0, log.n_samples, _RANGE_ROWS):
            rows = slice(start, start + _RANGE_ROWS)
            part = np.asarray(log.dq[rows])
            lowest, highest = np.minimum(lowest, part.min(axis=0)), np.maximum(
                highest, part.max(axis=0))
            release_pages(log, rows)
    out = []
    for j, name in enumerate(names):
        joint = f"joint {j + 1}" + ("" if name == f"joint{j + 1}" else f" ({name})")
        if max(highest[j], -lowest[j]) < STILL_VELOCITY:
            out.append(f"{joint} does not move")
        elif lowest[j] > -STILL_VELOCITY or highest[j] < STILL_VELOCITY:
            direction = "positive" if highest[j] >= STILL_VELOCITY else "negative"
            out.append(f"{joint} moves in one direction only ({direction} velocities: "
                       "Coulomb friction needs both)")
    return out
