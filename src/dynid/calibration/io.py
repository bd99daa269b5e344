"""Calibration measurement files: CSV and NPZ (``read_measurements`` / ``write_measurements``)
and ROS 2 bags of a pose topic beside a JointState topic (``read_measurement_bag``).

**CSV** (UTF-8, a byte-order mark allowed): a header row, then one measurement per row. A
file holds one kind of measurement (``dynid.calibration.Measurements``), found from its
columns:

- joint readings: ``q1..qn`` [rad] (numbered from 1 without gaps), or, when ``joints`` names
  the robot's joints, one column per joint name, read in the order of ``joints``;
- ``x, y, z`` [m]: a measured position (kind ``"position"``);
- ``x, y, z`` and the orientation, as a unit quaternion ``qx, qy, qz, qw`` (a norm within
  ``QUATERNION_TOLERANCE`` of 1 is normalised, any other is refused) or as the rotation matrix
  ``r11, r12, r13, r21, ..., r33`` (row by row, a proper rotation), never both: a full pose
  (``"pose"``);
- ``plane``: the integer index of the plane the tool point touched (``"plane"``; no ``x, y,
  z``).

Optional per-row noise: ``sigma`` (or ``sigma_position``) [m], ``sigma_rotation`` [rad];
without the column, the keyword argument gives it for every row; a column and a keyword
together are an error (one of them would be ignored). ``kind="position"`` reads the positions
of a pose file and ignores its orientation columns. Any other column is an error naming it:
a misspelt ``sigma_rot`` is never silently dropped.

**Units** are SI unless a column name ends in a unit suffix, converted at once: ``_m`` or
``_mm`` for ``x, y, z, sigma, sigma_position`` (``x_mm``); ``_rad``, ``_mrad`` or ``_deg`` for
``sigma_rotation``; ``_rad`` or ``_deg`` for joint columns (revolute joints: a prismatic
joint's reading is in metres and takes no suffix). Brackets (``x[mm]``) are refused with the
suffix to write instead. A column given twice (``x`` and ``x_mm``) is an error.

**NPZ**: the arrays of ``Measurements``, in SI units: ``q`` ``(m, n)`` (joints in the robot's
order: an NPZ holds no names, ``joints`` only checks their count), ``position`` ``(m, 3)``,
``rotation`` ``(m, 3, 3)`` or ``quaternion`` ``(m, 4)`` ordered ``x, y, z, w`` (the scalar
last, as ROS), ``plane`` ``(m,)``, ``sigma_position`` and ``sigma_rotation``, each ``(m,)`` or
a scalar; the kind as for CSV. Any other array is an error naming it.

``write_measurements`` writes either format atomically; CSV floats in Python's shortest
round-trip form (``repr``) and rotations as ``r11..r33``, so that a set reads back exactly.

Every file is read through ``dynid._reading`` (size limits, strict numbers, NPZ and bag
guards); every error is a ValueError naming the file.
"""

from __future__ import annotations

import difflib
import math
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._files import atomic_write
from dynid._reading import FileError, read_csv, read_npz, regular_file
from dynid._validation import as_float_array, is_index
from dynid.calibration.measurements import KINDS, Measurements

__all__ = [
    "POSE_MESSAGES",
    "QUATERNION_TOLERANCE",
    "MeasurementGapWarning",
    "quaternion_to_rotation",
    "read_joint_positions",
    "read_measurement_bag",
    "read_measurements",
    "write_joint_positions",
    "write_measurements",
]

QUATERNION_TOLERANCE = 1e-6  # |‖q‖ - 1| a quaternion may have and still be normalised
POSE_MESSAGES = ("geometry_msgs/msg/PoseStamped", "geometry_msgs/msg/TransformStamped",
                 "geometry_msgs/msg/PoseWithCovarianceStamped")

_LENGTH = {"m": 1.0, "mm": 1e-3}
_ANGLE = {"rad": 1.0, "mrad": 1e-3, "deg": math.pi / 180}
_JOINT = {"rad": 1.0, "deg": math.pi / 180}
_POSITION = ("x", "y", "z")
_QUATERNION = ("qx", "qy", "qz", "qw")
_MATRIX = tuple(f"r{i}{j}" for i in (1, 2, 3) for j in (1, 2, 3))
# the columns other than joints, each with the units its name may end in (None: unitless)
_COLUMNS: dict[str, dict[str, float] | None] = {
    **dict.fromkeys(_POSITION, _LENGTH), **dict.fromkeys(_QUATERNION + _MATRIX, None),
    "plane": None, "sigma": _LENGTH, "sigma_position": _LENGTH, "sigma_rotation": _ANGLE}
_NPZ_ARRAYS = ("q", "position", "rotation", "quaternion", "plane", "sigma_position",
               "sigma_rotation")


class MeasurementGapWarning(UserWarning):
    """Poses of a bag dropped: no joint reading within ``max_gap`` on both sides of them."""


# -- CSV and NPZ ----------------------------------------------------------------------------

def read_measurements(path: str | Path, *, joints: Sequence[str] | None = None,
                      kind: str | None = None, sigma_position: ArrayLike | None = None,
                      sigma_rotation: ArrayLike | None = None) -> Measurements:
    """One set of calibration measurements from a CSV or NPZ file (formats in the module
    docstring; the suffix picks the reader).

    ``joints``: the robot's joint names (CSV columns named so are read in this order; the
    count is checked either way). ``kind``: ``"position"``, ``"pose"`` or ``"plane"``; default:
    what the file's columns hold. ``sigma_position`` [m] and ``sigma_rotation`` [rad]: a
    scalar or ``(m,)``, for files without the per-row columns.
    """
    path = Path(path)
    if kind is not None and kind not in KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(KINDS)} (or None: from the file's "
                         f"columns), got {kind!r:.60}")
    joints = _joint_names(joints)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        fields = _read_csv(path, joints)
    elif suffix == ".npz":
        fields = _read_npz(path, joints)
    else:
        raise ValueError(f"`path`: {path.name!r:.80} has the suffix {path.suffix!r:.20}; "
                         "measurement files are .csv or .npz")
    return _measurements(path.name, fields, kind, sigma_position, sigma_rotation)


def write_measurements(measurements: Measurements, path: str | Path, *,
                       joints: Sequence[str] | None = None) -> Path:
    """Write ``measurements`` as CSV or NPZ (by suffix), atomically; ``read_measurements``
    reads it back exactly (with the same ``joints``). ``joints``: CSV joint columns named so
    (default ``q1..qn``); an NPZ holds no names and takes none."""
    if not isinstance(measurements, Measurements):
        raise TypeError(f"`measurements` must be a Measurements set, got "
                        f"{type(measurements).__name__}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise ValueError(f"`path` must end in .csv or .npz, got {path.name!r:.80}")
    joints = _joint_names(joints)
    m = measurements
    if joints is not None and len(joints) != m.n_joints:
        raise ValueError(f"`joints` names {len(joints)} joints, the measurements have "
                         f"{m.n_joints}")
    arrays = {"q": m.q, "sigma_position": m.sigma_position}
    for name in ("position", "rotation", "sigma_rotation", "plane"):
        if getattr(m, name) is not None:
            arrays[name] = getattr(m, name)
    if suffix == ".npz":
        if joints is not None:
            raise ValueError("`joints`: an NPZ file holds no joint names (its `q` columns are "
                             "in the robot's order); write a .csv to name them")
        return atomic_write(path, lambda tmp: np.savez(tmp, **arrays))
    header = list(joints) if joints is not None else [f"q{j + 1}" for j in range(m.n_joints)]
    table = [m.q]
    if m.position is not None:
        header += list(_POSITION)
        table.append(m.position)
    if m.rotation is not None:
        header += list(_MATRIX)
        table.append(m.rotation.reshape(-1, 9))
    header.append("sigma_position")
    table.append(m.sigma_position[:, None])
    if m.kind == "pose":
        header.append("sigma_rotation")
        table.append(np.asarray(m.sigma_rotation)[:, None])
    rows = np.hstack(table).tolist()
    plane = None if m.plane is None else m.plane.tolist()

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="\n") as out:
            out.write(",".join(header + (["plane"] if plane is not None else [])) + "\n")
            for k, row in enumerate(rows):
                cells = [repr(value) for value in row]
                if plane is not None:
                    cells.append(str(plane[k]))
                out.write(",".join(cells) + "\n")

    return atomic_write(path, write)


def read_joint_positions(path: str | Path, n_joints: int) -> NDArray:
    """Joint positions ``(m, n_joints)`` [rad, m] from a CSV (columns ``q1..qn``, with the
    unit suffixes of the module; other measurement columns are allowed and ignored) or an NPZ
    (its ``q``): a list of calibration poses, or the poses of a measurement file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        q = _read_csv(path, None)["q"]
    elif suffix == ".npz":
        q = _read_npz(path, None)["q"]
    else:
        raise ValueError(f"`path`: {path.name!r:.80} has the suffix {path.suffix!r:.20}; "
                         "joint positions are read from .csv or .npz")
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != n_joints or q.shape[0] == 0:
        raise FileError(f"{path.name}: joint positions of {q.shape[-1] if q.ndim == 2 else '?'} "
                        f"joints, the robot has {n_joints}")
    if not np.isfinite(q).all():
        raise FileError(f"{path.name}: joint positions must be finite")
    return q


def write_joint_positions(path: str | Path, q: ArrayLike) -> Path:
    """Joint positions ``(m, n)`` as a CSV ``q1..qn`` (floats in their shortest round-trip
    form), atomically; ``read_joint_positions`` reads them back exactly."""
    q = as_float_array("q", q)
    if q.ndim != 2 or 0 in q.shape:
        raise ValueError(f"`q` must be (m, n) joint positions, got shape {q.shape}")
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise ValueError(f"`path` must end in .csv, got {path.name!r:.80}")
    rows = q.tolist()

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="\n") as out:
            out.write(",".join(f"q{j + 1}" for j in range(q.shape[1])) + "\n")
            for row in rows:
                out.write(",".join(repr(value) for value in row) + "\n")

    return atomic_write(path, write)


def quaternion_to_rotation(quaternion: ArrayLike) -> NDArray:
    """Rotation matrices ``(*, 3, 3)`` of unit quaternions ``(*, 4)`` ordered ``x, y, z, w``
    (ROS's order; the scalar part last). The quaternions must be unit (normalise first)."""
    x, y, z, w = np.moveaxis(np.asarray(quaternion, dtype=np.float64), -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def _joint_names(joints: Sequence[str] | None) -> tuple[str, ...] | None:
    if joints is None:
        return None
    if isinstance(joints, str) or not isinstance(joints, Sequence):
        raise TypeError(f"`joints` must be a sequence of joint names, got "
                        f"{type(joints).__name__}")
    names = tuple(joints)
    bad = [name for name in names if not isinstance(name, str) or not name
           or name != name.strip() or re.search(r'[,"\r\n]', name)]
    if not names or bad:
        raise ValueError(f"`joints` must be non-empty names without commas, quotes, line "
                         f"breaks or edge spaces, got {bad[0] if bad else names!r:.60}")
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"`joints` names a joint twice: {repeated!r:.80}")
    reserved = [name for name in names if name in _COLUMNS]
    if reserved:
        raise ValueError(f"`joints`: {reserved[0]!r:.40} is a column name of measurement files "
                         f"({', '.join(_COLUMNS)}); rename the joint")
    return names


def _base(column: str) -> tuple[str, str | None]:
    """(name, unit suffix or None) of a column: ``x_mm`` -> (``x``, ``mm``)."""
    if column in _COLUMNS:
        return column, None
    base, underscore, unit = column.rpartition("_")
    return (base, unit) if underscore and base else (column, None)


def _read_csv(path: Path, joints: tuple[str, ...] | None) -> dict:
    """The fields of a measurement CSV (SI units) and its joint count, from its columns."""
    header, values = read_csv(path, what="measurement file")
    if header and header[0].startswith("\ufeff"):  # a UTF-8 byte-order mark (spreadsheets)
        header = [header[0].removeprefix("\ufeff").strip(), *header[1:]]
    name = path.name
    columns: dict[str, NDArray] = {}  # base name -> values in SI units
    given: dict[str, str] = {}  # base name -> the column it came from
    named = numbered = 0
    for k, column in enumerate(header):
        if re.search(r"[\[\](){}]", column):
            parts = re.findall(r"\w+", column)
            instead = "_".join(parts[:2]) if len(parts) >= 2 else "x_mm"
            raise FileError(f"{name}: column {column!r:.40}: a unit is a suffix, not brackets: "
                            f"write {instead!r:.40} (units: m, mm; rad, mrad, deg)")
        base, unit = column, None
        is_joint = (joints is not None and column in joints) or \
            (column[:1] == "q" and is_index(column[1:]))
        if not is_joint and column not in _COLUMNS:
            base, unit = _base(column)
            is_joint = (joints is not None and base in joints) or \
                (base[:1] == "q" and is_index(base[1:]))
            if not is_joint and base not in _COLUMNS:
                raise FileError(f"{name}: unknown column {column!r:.40}{_hint(column, joints)}")
        units = _JOINT if is_joint else _COLUMNS[base]
        factor = 1.0
        if unit is not None:
            if units is None or unit not in units:
                expected = "none" if units is None else ", ".join(units)
                raise FileError(f"{name}: column {column!r:.40}: unknown unit {unit!r:.20} for "
                                f"{base!r:.40} (its units: {expected})")
            factor = units[unit]
        key = "sigma_position" if base == "sigma" else base
        if key in given:
            raise FileError(f"{name}: columns {given[key]!r:.40} and {column!r:.40} give "
                            f"{key!r:.40} twice")
        given[key] = column
        if is_joint:
            if joints is not None and base in joints:
                named += 1
            else:
                numbered += 1
        columns[key] = values[:, k] * factor if factor != 1.0 else values[:, k]
    fields = {"q": _joint_columns(name, columns, joints, named, numbered)}
    for group, key in ((_POSITION, "position"), (_QUATERNION, "quaternion"),
                       (_MATRIX, "rotation")):
        present = [column for column in group if column in columns]
        if present and len(present) != len(group):
            missing = [column for column in group if column not in columns]
            raise FileError(f"{name} has {', '.join(present)} but lacks {', '.join(missing)}")
        if present:
            fields[key] = np.stack([columns[column] for column in group], axis=1)
    if "rotation" in fields and "quaternion" in fields:
        raise FileError(f"{name} has both a quaternion (qx, qy, qz, qw) and a rotation matrix "
                        "(r11..r33): give the orientation once")
    if "rotation" in fields:
        fields["rotation"] = fields["rotation"].reshape(-1, 3, 3)
    for key in ("plane", "sigma_position", "sigma_rotation"):
        if key in columns:
            fields[key] = columns[key]
    return fields


def _hint(column: str, joints: tuple[str, ...] | None) -> str:
    known = [*_COLUMNS, *(joints or ())]
    close = difflib.get_close_matches(column, known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    if joints is None:
        return ("; joint columns are q1..qn, or the robot's joint names with `joints`; the "
                f"other columns: {', '.join(_COLUMNS)}")
    return f"; the columns are the joints {', '.join(joints)!s:.80} and {', '.join(_COLUMNS)}"


def _joint_columns(name: str, columns: dict[str, NDArray], joints: tuple[str, ...] | None,
                   named: int, numbered: int) -> NDArray:
    numbered_keys: dict[int, str] = {}
    for key in columns:
        if key[:1] == "q" and is_index(key[1:]) and not (joints and key in joints):
            if int(key[1:]) in numbered_keys:
                raise FileError(f"{name}: columns {numbered_keys[int(key[1:])]!r} and {key!r:.40} "
                                "are the same joint")
            numbered_keys[int(key[1:])] = key
    numbers = sorted(numbered_keys)
    if named and numbered:
        raise FileError(f"{name} has joint columns named after `joints` and numbered ones "
                        f"(q{numbers[0]}); use one or the other")
    if named:
        missing = [joint for joint in joints if joint not in columns]
        if missing:
            raise FileError(f"{name} lacks the columns of the joints {missing!r:.80} "
                            "(named by `joints`)")
        return np.stack([columns[joint] for joint in joints], axis=1)
    if not numbers:
        raise FileError(f"{name} has no joint columns: q1..qn"
                        + (f" or {', '.join(joints)!s:.80}" if joints else ""))
    if numbers != list(range(1, len(numbers) + 1)):
        raise FileError(f"{name}: joint columns q1..qn must be numbered from 1 without gaps, "
                        f"got {['q' + str(k) for k in numbers]!r:.80}")
    if joints is not None and len(numbers) != len(joints):
        raise FileError(f"{name} has {len(numbers)} joint columns, `joints` names "
                        f"{len(joints)}")
    return np.stack([columns[numbered_keys[k]] for k in numbers], axis=1)


def _read_npz(path: Path, joints: tuple[str, ...] | None) -> dict:
    arrays = read_npz(path, required=("q",), optional=_NPZ_ARRAYS[1:],
                      what="measurement file")
    name = path.name
    import zipfile

    with zipfile.ZipFile(path) as archive:  # read_npz opened it already: a valid archive
        stored = sorted(member.removesuffix(".npy") for member in archive.namelist())
    unknown = [key for key in stored if key not in _NPZ_ARRAYS]
    if unknown:
        raise FileError(f"{name}: unknown arrays {unknown!r:.120} (a measurement NPZ holds "
                        f"{', '.join(_NPZ_ARRAYS)}; quaternions ordered x, y, z, w)")
    if "rotation" in arrays and "quaternion" in arrays:
        raise FileError(f"{name} has both `rotation` and `quaternion`: give the orientation "
                        "once")
    q = arrays["q"]
    if q.ndim != 2:
        raise FileError(f"{name}: array `q` must be (m, n) joint readings, got shape {q.shape}")
    if joints is not None and q.shape[1] != len(joints):
        raise FileError(f"{name}: array `q` has {q.shape[1]} joints, `joints` names "
                        f"{len(joints)}")
    for key, shape in (("position", (3,)), ("quaternion", (4,)), ("rotation", (3, 3)),
                       ("plane", ())):
        if key in arrays and arrays[key].shape != (q.shape[0], *shape):
            raise FileError(f"{name}: array `{key}` must have shape "
                            f"{(q.shape[0], *shape)} for {q.shape[0]} measurements, got "
                            f"{arrays[key].shape}")
    for key, array in arrays.items():
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            index = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
            raise FileError(f"{name}: array `{key}` holds NaN or inf (first at {index})")
    return dict(arrays)


def _measurements(name: str, fields: dict, kind: str | None, sigma_position: ArrayLike | None,
                  sigma_rotation: ArrayLike | None) -> Measurements:
    """The Measurements of the fields a file holds; every error names the file."""
    has_position = "position" in fields
    has_rotation = "rotation" in fields or "quaternion" in fields
    has_plane = "plane" in fields
    if has_plane and (has_position or has_rotation):
        raise FileError(f"{name} has both plane contacts (`plane`) and measured positions: a "
                        "file holds one kind of measurement")
    found = "plane" if has_plane else "pose" if has_rotation else \
        "position" if has_position else None
    if found is None:
        raise FileError(f"{name} holds no measurement: it needs x, y, z (positions), with "
                        "qx, qy, qz, qw or r11..r33 (poses), or plane (plane contacts)")
    if has_rotation and not has_position:
        raise FileError(f"{name} has orientations but no positions (x, y, z): a pose needs both")
    kind = found if kind is None else kind
    needs = {"position": (has_position, "x, y, z"),
             "pose": (has_position and has_rotation, "x, y, z and an orientation"),
             "plane": (has_plane, "plane")}[kind]
    if not needs[0]:
        raise FileError(f"{name}: `kind` {kind!r} needs {needs[1]}; the file holds {found} "
                        "measurements")
    values = {"kind": kind, "q": fields["q"]}
    values["sigma_position"] = _noise(name, "sigma_position", fields, sigma_position,
                                      "[m]", "sigma")
    if kind == "pose":
        values["sigma_rotation"] = _noise(name, "sigma_rotation", fields, sigma_rotation,
                                          "[rad]")
        rotation = fields.get("rotation")
        if rotation is None:
            rotation = quaternion_to_rotation(_unit_quaternions(name, fields["quaternion"]))
        values["rotation"] = rotation
    elif sigma_rotation is not None:
        raise ValueError(f"`sigma_rotation`: {kind} measurements ({name}) have no orientation")
    if kind != "plane":
        values["position"] = fields["position"]
    else:
        values["plane"] = fields["plane"]
    try:
        return Measurements(**values)
    except (TypeError, ValueError) as error:
        raise FileError(f"{name}: {error}") from None


def _noise(name: str, key: str, fields: dict, keyword: ArrayLike | None, unit: str,
           alias: str | None = None) -> ArrayLike:
    column = fields.get(key)
    columns = f"`{alias}` or `{key}`" if alias else f"`{key}`"
    if column is not None and keyword is not None:
        raise ValueError(f"`{key}` is given twice: by {name}'s {columns} and by the keyword; "
                         "drop one")
    if column is None and keyword is None:
        raise ValueError(f"`{key}` {unit} is missing: {name} has no {columns} column and the "
                         "keyword argument was not given")
    return column if column is not None else keyword


def _unit_quaternions(name: str, quaternion: NDArray) -> NDArray:
    """Quaternions ``(m, 4)`` normalised, each within ``QUATERNION_TOLERANCE`` of unit norm."""
    norm = np.linalg.norm(quaternion, axis=1)
    bad = np.abs(norm - 1.0) > QUATERNION_TOLERANCE
    if bad.any():
        k = int(np.argmax(bad))
        raise FileError(f"{name}: measurement {k + 1} has a quaternion of norm {norm[k]:.9g}, "
                        f"not a unit quaternion (within {QUATERNION_TOLERANCE:g})")
    return quaternion / norm[:, None]


# -- ROS 2 bags -----------------------------------------------------------------------------

def read_measurement_bag(path: str | Path, *, joints: Sequence[str],
                         pose_topic: str | None = None, joint_topic: str | None = None,
                         sigma_position: ArrayLike, sigma_rotation: ArrayLike | None = None,
                         kind: str = "pose", max_gap: float = 0.01) -> Measurements:
    """Measurements from a ROS 2 bag (MCAP): the tool frame from a pose topic
    (``POSE_MESSAGES``: ``PoseStamped``, ``TransformStamped`` or ``PoseWithCovarianceStamped``,
    its covariance not read; default: the bag's only such topic) and the joint readings from a
    ``sensor_msgs/msg/JointState`` topic (default: the only one), picked by name in the order
    of ``joints`` (required: the robot's joint names; a JointState message's own order is
    not trusted), paired by their header stamps (the recording time where a
    publisher leaves them zero).

    The joint positions are interpolated linearly at each pose's stamp between the joint
    messages before and after it; a pose without a joint message within ``max_gap`` [s] on
    both sides (before the joint data starts, after it ends, or in a gap of the joint stream)
    is dropped with a ``MeasurementGapWarning`` naming how many; a bag where every pose is
    dropped is an error. The two streams must share a clock. ``path``: an ``.mcap`` file or
    the folder ``ros2 bag record`` writes (holding one). ``kind``: ``"pose"`` (needs
    ``sigma_rotation`` [rad]) or ``"position"`` (the positions only); ``sigma_position`` [m].
    Poses with a quaternion farther than ``QUATERNION_TOLERANCE`` from unit norm are refused.
    """
    from dynid.data.rosbag import JOINT_STATE, _rows, _topic, read_bag, stamp_seconds

    if kind not in ("pose", "position"):
        raise ValueError(f"`kind` must be 'pose' or 'position' (what a pose topic measures), "
                         f"got {kind!r:.60}")
    if isinstance(max_gap, bool) or not isinstance(max_gap, (int, float)) or \
            not 0 < max_gap < math.inf:
        raise ValueError(f"`max_gap` must be a positive number of seconds, got {max_gap!r:.40}")
    if joints is None:
        raise ValueError("`joints` must name the robot's joints in its order (the JointState "
                         "messages' own order is not trusted), got None")
    joints = _joint_names(joints)
    if kind == "position" and sigma_rotation is not None:
        raise ValueError("`sigma_rotation`: position measurements have no orientation")
    if kind == "pose" and sigma_rotation is None:
        raise ValueError("`sigma_rotation` [rad] is missing: pose measurements need it")

    def read(reader, summary, name: str):
        poses = _topic(summary, pose_topic, name, POSE_MESSAGES, "pose_topic")
        states = _topic(summary, joint_topic, name, (JOINT_STATE,), "joint_topic")
        stamps, frames = [], []
        for _, _, record, message in reader.iter_decoded_messages(topics=[poses]):
            stamps.append(stamp_seconds(message.header.stamp, record))
            frames.append(_pose(message))
        if not stamps:
            raise FileError(f"{name}: the topic {poses} holds no message")
        times, q, _names = _rows(reader.iter_decoded_messages(topics=[states]), joints, name,
                                states, fields=("position",))
        return np.array(stamps), np.array(frames, dtype=float), np.array(times), \
            np.array(q, dtype=float), poses, states

    path = _bag_file(Path(path))
    name = path.name
    stamps, frames, times, q, poses, states = read_bag(path, read)
    for what, values in (("pose", frames), ("joint position", q)):
        if not np.isfinite(values).all():
            raise FileError(f"{name}: a {what} message holds NaN or inf")
    order = np.argsort(times, kind="stable")
    times, q = times[order], q[order]
    if (np.diff(times) == 0).any():  # the same stamp twice: keep the last message
        keep = np.append(np.diff(times) != 0, True)
        times, q = times[keep], q[keep]
    after = np.searchsorted(times, stamps, side="left")  # first joint stamp >= the pose's
    exact = (after < times.size) & (times[np.minimum(after, times.size - 1)] == stamps)
    before = np.where(exact, after, after - 1)
    inside = (before >= 0) & (after < times.size)
    lo, hi = np.clip(before, 0, times.size - 1), np.clip(after, 0, times.size - 1)
    near = inside & (stamps - times[lo] <= max_gap) & (times[hi] - stamps <= max_gap)
    if not near.any():
        raise FileError(f"{name}: no pose on {poses} has joint readings on {states} within "
                        f"`max_gap` = {max_gap:g} s on both sides (poses "
                        f"{stamps.min():.6f}..{stamps.max():.6f} s, joints "
                        f"{times[0]:.6f}..{times[-1]:.6f} s): do the two share a clock?")
    if not near.all():
        warnings.warn(f"{name}: {int((~near).sum())} of {near.size} poses on {poses} dropped: "
                      f"no joint reading within `max_gap` = {max_gap:g} s on both sides",
                      MeasurementGapWarning, stacklevel=2)
    lo, hi, at = lo[near], hi[near], stamps[near]
    span = times[hi] - times[lo]
    weight = np.divide(at - times[lo], span, out=np.zeros_like(at), where=span > 0)
    joint_q = q[lo] + weight[:, None] * (q[hi] - q[lo])
    frames = frames[near]
    fields = {"q": joint_q, "position": frames[:, :3]}
    if kind == "pose":
        fields["quaternion"] = frames[:, 3:]
    return _measurements(name, fields, kind, sigma_position, sigma_rotation)


def _bag_file(path: Path) -> Path:
    """The MCAP file of a bag: ``path`` itself, or the one ``.mcap`` in the folder ``ros2 bag
    record`` writes."""
    from dynid.data.rosbag import bag_file

    bag = bag_file(path)
    if bag is None:
        raise ValueError(f"`path`: {path.name} is no ROS 2 bag (an .mcap file, or a folder "
                         "holding one)")
    return regular_file(bag, "ROS 2 bag")


def _pose(message) -> list[float]:
    """``[x, y, z, qx, qy, qz, qw]`` of a PoseStamped, TransformStamped or
    PoseWithCovarianceStamped message."""
    if hasattr(message, "transform"):
        point, turn = message.transform.translation, message.transform.rotation
    else:
        pose = message.pose.pose if hasattr(message.pose, "pose") else message.pose
        point, turn = pose.position, pose.orientation
    return [point.x, point.y, point.z, turn.x, turn.y, turn.z, turn.w]
