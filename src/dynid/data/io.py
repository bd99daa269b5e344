"""Dataset files: time series (CSV, NPZ, the Panda log folder) and static samples of a
controller's M(q) and g(q) (CSV, NPZ); every write is atomic.

Time series (``read_dataset`` / ``write_dataset``; ROS 2 bags: ``dynid.data.rosbag``):

- CSV with a header row ``t, q1..qn, dq1..dqn, tau1..taun`` and optionally ``ddq1..ddqn``;
  SI units (s, rad, rad/s, N m, rad/s^2); one sample per row;
- NPZ with arrays ``t`` (N,), ``q``, ``dq``, ``tau`` (N, n) and optionally ``ddq`` (N, n).

Static samples (``read_static``): NPZ with ``q`` (N, n), ``M`` (N, n, n), ``g`` (N, n); or CSV with
a header ``q1..qn``, then the lower triangle of M row by row ``M11, M21, M22, M31, ...`` (``Mi_j``
is also accepted), then ``g1..gn``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid._files import atomic_write
from dynid._reading import MAX_TABLE_BYTES, parse_numbers, read_csv, read_npz, read_text
from dynid.data.dataset import Dataset, StaticData, lower_triangle, static_rows
from dynid.data.rosbag import read_rosbag

__all__ = ["PANDA_LOG_FILES", "read_dataset", "read_panda_log", "read_static", "write_dataset"]


def _columns(header: list[str], prefix: str, path: Path) -> list[int]:
    """Indices of ``prefix1, prefix2, ...`` in order (ValueError if absent or with gaps)."""
    found = {}
    for c, name in enumerate(header):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            found[int(name[len(prefix):])] = c
    if sorted(found) != list(range(1, len(found) + 1)):
        raise ValueError(
            f"`path`: {path.name} columns {prefix}1..{prefix}n must be numbered from 1 "
            f"without gaps, got {sorted(found)}"
        )
    return [found[k] for k in range(1, len(found) + 1)]


PANDA_LOG_FILES = {"t": "exciting_traj_time.txt", "q": "exciting_traj_positions.txt",
                   "dq": "exciting_traj_velocity.txt", "tau": "exciting_traj_torques.txt"}


def read_panda_log(folder: str | Path, n_joints: int = 7) -> Dataset:
    """The Panda log format of Gaz et al. (``rbt_log_exciting_traj1/``): one value per line;
    the time file one line per sample [s], positions [rad], velocities [rad/s] and link-side
    torques [N m] ``n_joints`` consecutive lines per sample."""
    folder = Path(folder)
    arrays = {}
    for name, filename in PANDA_LOG_FILES.items():
        path = folder / filename
        values = parse_numbers(read_text(path, what="log file", limit=MAX_TABLE_BYTES),
                               filename)
        if values.shape[1] != 1:
            raise ValueError(f"`path`: {filename} must hold one value per line")
        arrays[name] = values[:, 0]
    n_samples = arrays["t"].size
    for name in ("q", "dq", "tau"):
        if arrays[name].size != n_joints * n_samples:
            raise ValueError(
                f"`path`: {PANDA_LOG_FILES[name]} has {arrays[name].size} values, expected "
                f"{n_joints} per time stamp ({n_joints * n_samples})"
            )
        arrays[name] = arrays[name].reshape(n_samples, n_joints)
    return _named(folder, Dataset, **arrays,
                  metadata={"source": str(folder), "format": "panda log"})


def _named(path: Path, build, **fields):
    """``build(**fields)`` with a wrong-type error turned into a ValueError naming the file."""
    try:
        return build(**fields)
    except (TypeError, ValueError) as error:
        raise ValueError(f"`path`: {path.name}: {error}") from None


def read_dataset(path: str | Path, *, joint_names: Sequence[str] | None = None) -> Dataset:
    """Read a time series: CSV or NPZ (formats in the module docstring), a ROS 2 bag (an
    ``.mcap`` file, or the folder ``ros2 bag record`` writes; ``dynid.data.read_rosbag``, its
    joints picked by ``joint_names``), or a folder in the Panda log format
    (``read_panda_log``)."""
    path = Path(path)
    if path.suffix.lower() == ".db3":
        raise ValueError(f"`path`: {path.name} is a SQLite ROS 2 bag; dynid reads MCAP bags "
                         "(convert with `ros2 bag convert`, or record with `-s mcap`)")
    if path.is_dir():
        bags = sorted(path.glob("*.mcap"))
        if len(bags) > 1:
            raise ValueError(f"`path`: the bag folder {path.name} holds {len(bags)} MCAP files "
                             f"({', '.join(b.name for b in bags)}); give one of them")
        if bags:
            return read_rosbag(bags[0], joints=joint_names)
        return read_panda_log(path)
    if path.suffix.lower() == ".mcap":
        return read_rosbag(path, joints=joint_names)
    if path.suffix.lower() == ".npz":
        arrays = read_npz(path, required=("t", "q", "dq", "tau"), optional=("ddq", "M", "g"),
                          what="log")
        return _named(path, Dataset, **arrays, metadata={"source": str(path)})
    header, values = read_csv(path, what="log")
    if "t" not in header:
        raise ValueError(f"`path`: {path.name} has no `t` column (header: {', '.join(header)})")
    columns = {prefix: _columns(header, prefix, path) for prefix in ("q", "dq", "ddq", "tau")}
    n = len(columns["q"])
    for prefix in ("dq", "tau"):
        if len(columns[prefix]) != n or n == 0:
            raise ValueError(
                f"`path`: {path.name} must have columns q1..qn, dq1..dqn, tau1..taun for the "
                f"same n; got {n} q, {len(columns['dq'])} dq, {len(columns['tau'])} tau"
            )
    if columns["ddq"] and len(columns["ddq"]) != n:
        raise ValueError(
            f"`path`: {path.name} has {len(columns['ddq'])} ddq columns for {n} joints"
        )
    expected = 1 + (4 if columns["ddq"] else 3) * n
    if len(header) != expected:
        raise ValueError(
            f"`path`: {path.name} has {len(header)} columns, expected {expected} "
            "(t, q1..qn, dq1..dqn, tau1..taun[, ddq1..ddqn])"
        )
    return _named(
        path, Dataset, t=values[:, header.index("t")], q=values[:, columns["q"]],
        dq=values[:, columns["dq"]],
        tau=values[:, columns["tau"]],
        ddq=values[:, columns["ddq"]] if columns["ddq"] else None,
        metadata={"source": str(path)},
    )


def write_dataset(path: str | Path, data: Dataset) -> Path:
    """Write a dataset as CSV or NPZ (by suffix), atomically."""
    path = Path(path)
    arrays = {"t": data.t, "q": data.q, "dq": data.dq, "tau": data.tau}
    for name in ("ddq", "M", "g"):
        if getattr(data, name) is not None:
            arrays[name] = getattr(data, name)
    if path.suffix.lower() == ".npz":
        return atomic_write(path, lambda tmp: np.savez(tmp, **arrays))
    if path.suffix.lower() != ".csv":
        raise ValueError(f"`path` must end in .csv or .npz, got {path.name!r}")
    if data.M is not None:
        raise ValueError("`path`: M(q), g(q) samples need the .npz format")
    n = data.n_joints
    header = ["t"] + [f"{p}{j + 1}" for p in ("q", "dq", "tau") for j in range(n)]
    table = [data.t[:, None], data.q, data.dq, data.tau]
    if data.ddq is not None:
        header += [f"ddq{j + 1}" for j in range(n)]
        table.append(data.ddq)
    matrix = np.hstack(table)
    return atomic_write(path, lambda tmp: np.savetxt(tmp, matrix, delimiter=",",
                                                     header=",".join(header), comments="",
                                                     fmt="%.17g"))


def read_static(path: str | Path) -> StaticData:
    """Read static samples of M(q), g(q) from NPZ or CSV (formats in the module docstring)."""
    path = Path(path)
    if path.suffix.lower() == ".npz":
        arrays = read_npz(path, required=("q", "M", "g"), what="static samples")
        return _named(path, StaticData, **arrays, metadata={"source": str(path)})
    header, values = read_csv(path, what="log")
    q_columns = _columns(header, "q", path)
    n = len(q_columns)
    g_columns = _columns(header, "g", path)
    if n == 0 or len(g_columns) != n:
        raise ValueError(
            f"`path`: {path.name} must have columns q1..qn and g1..gn for the same n, got "
            f"{n} q and {len(g_columns)} g"
        )
    rows, cols = lower_triangle(n)
    mass = np.zeros((values.shape[0], n, n))
    for i, j, name in zip(rows, cols, static_rows(n), strict=False):
        names = (name, f"M{i + 1}_{j + 1}")  # the written name, or the always-unambiguous one
        column = next((header.index(name) for name in names if name in header), None)
        if column is None:
            raise ValueError(f"`path`: {path.name} lacks the column {names[0]} (or {names[1]})")
        mass[:, i, j] = mass[:, j, i] = values[:, column]
    expected = 2 * n + len(rows)
    if len(header) != expected:
        raise ValueError(
            f"`path`: {path.name} has {len(header)} columns, expected {expected} "
            "(q1..qn, the lower triangle of M row by row, g1..gn)"
        )
    return _named(path, StaticData, q=values[:, q_columns], M=mass, g=values[:, g_columns],
                      metadata={"source": str(path)})
