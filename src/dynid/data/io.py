"""Dataset files: time series (CSV, NPZ, the Panda log folder) and static samples of a
controller's M(q) and g(q) (CSV, NPZ); every write is atomic.

Time series (``read_dataset`` / ``write_dataset``; ROS 2 bags: ``dynid.data.rosbag``):

- CSV with a header row ``t, q1..qn, dq1..dqn, tau1..taun`` and optionally ``ddq1..ddqn``;
  a log without velocities (no ``dq`` columns or array, or none mapped) is read with central
  differences of its positions, marked so that ``prepare`` derives them again from the
  filtered positions;
  SI units (s, rad, rad/s, N m, rad/s^2); one sample per row. A log of motor currents
  (``Dataset.effort == "current"``) has ``current1..currentn`` [A] instead of ``tau1..taun``;
  a file with both is an error;
- NPZ with arrays ``t`` (N,), ``q``, ``dq``, ``tau`` (N, n) and optionally ``ddq`` (N, n); a
  current log has the array ``current`` instead of ``tau``.

Any other CSV is read through a column mapping (``read_dataset(..., columns=...)``): for each
dynid field, ``t``, ``q``, ``dq``, ``ddq`` (optional) and ``tau`` or ``current`` (a current
log), a column pattern, ``*`` standing for the joint's number or name::

    read_dataset("robot.csv", columns={"t": "time", "q": "pos_*", "dq": "vel_*",
                                       "current": "cur_*"},
                 units={"t": "ms", "q": "deg", "dq": "deg/s", "current": "mA"})

The matched columns are ordered by joint number (natural order: ``pos_2`` before ``pos_10``),
or, when ``joint_names`` is given and ``*`` matches names (``pos_joint1``), by those names
(columns of other joints, a gripper's, are then ignored). Columns no field maps are ignored.
The mapping is also given as text, ``"t=time,q=pos_*,dq=vel_*,current=cur_*"`` (the CLI's
``--columns``), or as a YAML file (``--columns mapping.yaml``) whose fields give a pattern
(``q: pos_*``), a list of column names in joint order (``q: [a1, a2, a3]``), or a mapping
with ``column`` (or ``columns``) and ``unit``::

    t: {column: time, unit: ms}
    q: {columns: "pos_*", unit: deg}
    current: {columns: "cur_*", unit: mA}

Units (``UNITS``; default SI) are given per field, as a mapping or as text
``"q=deg,dq=deg/s,current=mA"`` (the CLI's ``--units``); they apply to every format and are
converted to SI at once. ``tau`` names the effort column whatever it holds: with
``effort="current"`` (a bag's effort field, dynid's ``tau`` columns) its unit is a current's.

Static samples (``read_static``): NPZ with ``q`` (N, n), ``M`` (N, n, n), ``g`` (N, n); or CSV with
a header ``q1..qn``, then the lower triangle of M row by row ``M11, M21, M22, M31, ...`` (``Mi_j``
is also accepted), then ``g1..gn``.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.lib import format as npy_format
from numpy.typing import NDArray

from dynid._files import atomic_write
from dynid._reading import (
    MAX_TABLE_BYTES,
    check_keys,
    load_yaml,
    parse_numbers,
    read_csv,
    read_npz,
    read_text,
)
from dynid._validation import is_index
from dynid.data.dataset import (
    DERIVED_VELOCITY,
    EFFORTS,
    Dataset,
    StaticData,
    lower_triangle,
    static_rows,
)
from dynid.data.rosbag import bag_file, read_rosbag

__all__ = ["MAPPED_FIELDS", "PANDA_LOG_FILES", "UNITS", "column_mapping", "read_dataset",
           "read_panda_log", "read_static", "unit_mapping", "write_dataset", "write_log_pieces"]

# the dynid fields a column mapping names; ``tau`` is the effort column (torques, or currents
# with ``effort="current"``), ``current`` a column of motor currents
MAPPED_FIELDS = ("t", "q", "dq", "ddq", "tau", "current")

_DEG = math.pi / 180
# the units each kind of field is read in, as the factor to its SI unit (the first of each)
UNITS: dict[str, dict[str, float]] = {
    "t": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
    "q": {"rad": 1.0, "deg": _DEG},
    "dq": {"rad/s": 1.0, "deg/s": _DEG},
    "ddq": {"rad/s^2": 1.0, "deg/s^2": _DEG},
    "torque": {"N m": 1.0, "mN m": 1e-3},
    "current": {"A": 1.0, "mA": 1e-3},
}


class FieldColumns(NamedTuple):
    """Where one field of a mapped CSV is: ``columns``, a pattern with one ``*`` for the joint
    number or name (``t``: one column's name), or the column names in joint order; ``unit``,
    what its values are in (None: SI)."""

    columns: str | tuple[str, ...]
    unit: str | None = None


def column_mapping(columns: Mapping | str | Path) -> dict[str, FieldColumns]:
    """A CSV column mapping (module docstring), checked: from a mapping of field to pattern
    (or to ``{"column"/"columns": ..., "unit": ...}``), from its text ``"t=time,q=pos_*"``, or
    from a YAML file (a path ending in ``.yaml``/``.yml``, read with ``dynid._reading``; text
    without ``=`` or ending so names a file)."""
    where = "`columns`"
    if isinstance(columns, str) and "=" in columns and \
            not columns.lower().endswith((".yaml", ".yml")):
        spec: Mapping = _pairs(columns, "columns", "FIELD=PATTERN")
    elif isinstance(columns, (str, Path)):
        path = Path(columns)
        if path.suffix.lower() not in (".yaml", ".yml"):
            raise ValueError(f"`columns` must be FIELD=PATTERN pairs separated by commas or a "
                             f".yaml file, got {str(columns)!r:.80}")
        spec = load_yaml(path, what="column mapping")
        where = f"`columns` ({path.name})"
        if not isinstance(spec, Mapping):
            raise ValueError(f"{where} must be a mapping of dynid fields to columns, got "
                             f"{type(spec).__name__}")
    elif isinstance(columns, Mapping):
        spec = columns
    else:
        raise TypeError(f"`columns` must be a mapping, its text or a YAML file, got "
                        f"{type(columns).__name__}")
    _known_fields(spec, where)
    mapping = {str(field): _field_columns(str(field), value, where)
               for field, value in spec.items()}
    if "tau" in mapping and "current" in mapping:
        raise ValueError(f"{where} maps both `tau` and `current`: a log holds torques or "
                         "currents, map one of them")
    missing = [field for field in ("t", "q") if field not in mapping]
    if "tau" not in mapping and "current" not in mapping:
        missing.append("tau (or current)")
    if missing:
        raise ValueError(f"{where} lacks {', '.join(missing)}: it must map t, q and tau or "
                         "current (dq and ddq are optional: without dq, velocities are derived "
                         "from the positions)")
    return mapping


def unit_mapping(units: Mapping[str, str] | str | None) -> dict[str, str]:
    """The units of a log's fields (``UNITS``) from a mapping or its text ``"q=deg,t=ms"``,
    checked and spelled as in ``UNITS``; ``tau`` takes a torque's or a current's unit."""
    if units is None:
        return {}
    if isinstance(units, str):
        spec: Mapping = _pairs(units, "units", "FIELD=UNIT")
    elif isinstance(units, Mapping):
        spec = units
    else:
        raise TypeError(f"`units` must be a mapping or its text, got {type(units).__name__}")
    _known_fields(spec, "`units`")
    if "tau" in spec and "current" in spec:
        raise ValueError("`units` give both `tau` and `current`: a log holds torques or "
                         "currents")
    checked = {}
    for field, unit in spec.items():
        if not isinstance(unit, str):
            raise ValueError(f"`units`: the unit of `{field}` must be text, got {unit!r:.40}")
        kinds = ("torque", "current") if field == "tau" else (field,)
        checked[str(field)] = _unit(kinds, unit, str(field))[0]
    return checked


def _pairs(text: str, name: str, form: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        field, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not field or not value:
            raise ValueError(f"`{name}`: {item.strip()!r:.60} is not {form} (the form is "
                             f"{form},{form},...)")
        if field in pairs:
            raise ValueError(f"`{name}` gives `{field:.40}` twice")
        pairs[field] = value
    if not pairs:
        raise ValueError(f"`{name}` is empty: give {form},{form},...")
    return pairs


def _known_fields(spec: Mapping, where: str) -> None:
    for field in spec:
        if field not in MAPPED_FIELDS:
            close = difflib.get_close_matches(str(field), MAPPED_FIELDS, n=1, cutoff=0.5)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ValueError(f"{where}: unknown field {str(field)!r:.40}; {hint}the fields are "
                             f"{', '.join(MAPPED_FIELDS)}")


def _field_columns(field: str, value, where: str) -> FieldColumns:
    unit = None
    if isinstance(value, Mapping):
        check_keys(value, ("column", "columns", "unit"), f"{where}: {field}")
        given = [key for key in ("column", "columns") if key in value]
        if len(given) != 1:
            raise ValueError(f"{where}: `{field}` needs one of `column` or `columns`, got "
                             f"{' and '.join(given) or 'neither'}")
        unit = value.get("unit")
        if unit is not None and not isinstance(unit, str):
            raise ValueError(f"{where}: the unit of `{field}` must be text, got {unit!r:.40}")
        value = value[given[0]]
    if isinstance(value, list):
        names = tuple(str(name).strip() for name in value if isinstance(name, str))
        if not names or len(names) != len(value) or not all(names):
            raise ValueError(f"{where}: `{field}` must list column names, got {value!r:.80}")
        if len(set(names)) != len(names):
            raise ValueError(f"{where}: `{field}` lists a column twice: {list(names)!r:.80}")
        if field == "t":
            if len(names) != 1:
                raise ValueError(f"{where}: `t` is one column, got {len(names)}")
            return FieldColumns(names[0], unit)
        return FieldColumns(names, unit)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: `{field}` must be a column pattern, got {value!r:.60}")
    pattern = value.strip()
    stars = pattern.count("*")
    if field == "t" and stars:
        raise ValueError(f"{where}: `t` names one column, without `*`; got {pattern!r:.60}")
    if field != "t" and stars != 1:
        raise ValueError(f"{where}: the `{field}` pattern {pattern!r:.60} needs exactly one `*` "
                         "(standing for the joint number or name)")
    return FieldColumns(pattern, unit)


def _unit_key(unit: str) -> str:
    """A unit as compared: without spaces, ``*`` and ``.`` (``N m``, ``Nm``, ``N.m``), ``²``
    as ``^2``, ``µ`` as ``u``."""
    key = re.sub(r"[\s*.·]", "", unit)
    return key.replace("²", "^2").replace("µ", "u").replace("μ", "u")


def _unit(kinds: Sequence[str], unit: str, field: str) -> tuple[str, float]:
    """(name as in ``UNITS``, factor to SI) of ``unit`` for a field of one of ``kinds``."""
    key = _unit_key(unit)
    for kind in kinds:
        for name, factor in UNITS[kind].items():
            if _unit_key(name) == key:
                return name, factor
    expected = ", ".join(name for kind in kinds for name in UNITS[kind])
    raise ValueError(f"`units`: unknown unit {unit!r:.40} for `{field}`; expected one of "
                     f"{expected}")


def _listed(names: Sequence[str], limit: int = 12) -> str:
    """Column names for a one-line message: at most ``limit``, each cut at 40 characters."""
    shown = ", ".join(f"{name:.40}" for name in names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def _natural(text: str) -> list:
    """Sort key: ASCII digit runs compared as numbers (``joint2`` before ``joint10``); the
    split alternates text and digit runs, so keys compare position by position."""
    return [int(part) if k % 2 else part
            for k, part in enumerate(re.split(r"([0-9]+)", text))]


def _joint_columns(header: list[str], field: str, columns: str | tuple[str, ...],
                   joint_names: Sequence[str] | None,
                   path: Path) -> tuple[list[int], list[str] | None]:
    """Indices of one joint field's columns in joint order, and the joint names ``*`` matched
    (None where it matched numbers or the columns are listed)."""
    if isinstance(columns, tuple):
        absent = [name for name in columns if name not in header]
        if absent:
            raise ValueError(f"`columns`: `{field}` lists columns {path.name} lacks: "
                             f"{_listed(absent, 4)} (its columns: {_listed(header)})")
        found = [header.index(name) for name in columns]
        if joint_names is not None and len(found) != len(joint_names):
            raise ValueError(f"`columns`: `{field}` lists {len(found)} columns, `joint_names` "
                             f"names {len(joint_names)} joints")
        return found, None
    before, after = columns.split("*")
    pattern = re.compile(re.escape(before) + "(.+)" + re.escape(after))
    matches = [(match.group(1), k) for k, name in enumerate(header)
               if (match := pattern.fullmatch(name))]
    if not matches:
        raise ValueError(f"`columns`: the `{field}` pattern {columns!r:.60} matches no column of "
                         f"{path.name} (its columns: {_listed(header)})")
    labels = [label for label, _ in matches]
    if all(is_index(label) for label in labels):
        numbers = [int(label) for label in labels]
        if len(set(numbers)) != len(numbers):
            listed = _listed([header[k] for _, k in matches])
            raise ValueError(f"`columns`: the `{field}` pattern {columns!r:.60} matches two "
                             f"columns of one joint number ({listed})")
        if joint_names is not None and len(matches) != len(joint_names):
            raise ValueError(f"`columns`: the `{field}` pattern {columns!r:.60} matches "
                             f"{len(matches)} columns of {path.name}, `joint_names` names "
                             f"{len(joint_names)} joints")
        return [k for _, (_, k) in sorted(zip(numbers, matches, strict=True))], None
    if joint_names is not None:
        by_label = dict(matches)
        absent = [joint for joint in joint_names if joint not in by_label]
        if absent:
            raise ValueError(f"`columns`: the `{field}` pattern {columns!r:.60} has no column "
                             f"for the joints {_listed(absent, 4)} of `joint_names` (it matches "
                             f"{_listed([header[k] for _, k in matches])})")
        return [by_label[joint] for joint in joint_names], list(joint_names)
    ordered = sorted(matches, key=lambda match: _natural(match[0]))
    return [k for _, k in ordered], [label for label, _ in ordered]


def _mapped_csv(path: Path, header: list[str], values: NDArray,
                mapping: dict[str, FieldColumns],
                joint_names: Sequence[str] | None) -> tuple[dict, dict]:
    """(arrays with the effort column as ``tau``, metadata) of a CSV read through a mapping."""
    if mapping["t"].columns not in header:
        raise ValueError(f"`columns`: `t` names the column {mapping['t'].columns!r:.60}, which "
                         f"{path.name} lacks (its columns: {_listed(header)})")
    indices = {"t": [header.index(mapping["t"].columns)]}
    labels: dict[str, list[str]] = {}
    for field, spec in mapping.items():
        if field != "t":
            indices[field], named = _joint_columns(header, field, spec.columns, joint_names,
                                                   path)
            if named is not None:
                labels[field] = named
    owner: dict[int, str] = {}
    for field, found in indices.items():
        for k in found:
            if k in owner:
                raise ValueError(f"`columns`: the column {header[k]!r:.40} is mapped to both "
                                 f"`{owner[k]}` and `{field}`")
            owner[k] = field
    counts = {field: len(found) for field, found in indices.items() if field != "t"}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{field} {count}" for field, count in counts.items())
        raise ValueError(f"`columns`: the fields match different joint counts in {path.name}: "
                         f"{listed} columns")
    numbered = [field for field, spec in mapping.items()
                if field != "t" and isinstance(spec.columns, str) and field not in labels]
    if len({tuple(named) for named in labels.values()}) > 1 or (labels and numbered):
        listed = "; ".join([f"{field}: {_listed(named, 4)}" for field, named in labels.items()]
                           + [f"{field}: numbered" for field in numbered])
        raise ValueError(f"`columns`: the fields name different joints in {path.name}: "
                         f"{listed}; a pattern's `*` must stand for the same joint names, or "
                         "numbers (ASCII digits), in every field")
    arrays = {("tau" if field == "current" else field): values[:, found]
              for field, found in indices.items()}
    arrays["t"] = arrays["t"][:, 0]
    metadata = {"source": str(path), "format": "mapped csv",
                "columns": {field: (spec.columns if isinstance(spec.columns, str)
                                    else list(spec.columns)) for field, spec in mapping.items()}}
    if labels:
        metadata["joint_names"] = next(iter(labels.values()))
    return arrays, metadata


def _columns(header: list[str], prefix: str, path: Path) -> list[int]:
    """Indices of ``prefix1, prefix2, ...`` in order (ValueError if absent or with gaps)."""
    found = {}
    for c, name in enumerate(header):
        if name.startswith(prefix) and is_index(name[len(prefix):]):
            found[int(name[len(prefix):])] = c
    if sorted(found) != list(range(1, len(found) + 1)):
        raise ValueError(
            f"`path`: {path.name} columns {prefix}1..{prefix}n must be numbered from 1 "
            f"without gaps, got {sorted(found)}"
        )
    return [found[k] for k in range(1, len(found) + 1)]


def _one_effort(path: Path, tau: bool, current: bool, kind: str) -> None:
    if tau and current:
        raise ValueError(f"`path`: {path.name} has both tau and current {kind}: a log holds "
                         "torques or currents, not both")


def _own_csv(path: Path, header: list[str], values: NDArray) -> tuple[dict, bool]:
    """(arrays with the effort column as ``tau``, whether it holds currents) of dynid's CSV."""
    if "t" not in header:
        raise ValueError(f"`path`: {path.name} has no `t` column (header: {_listed(header)}); "
                         "map the columns of another CSV with `columns`")
    columns = {prefix: _columns(header, prefix, path)
               for prefix in ("q", "dq", "ddq", "tau", "current")}
    _one_effort(path, bool(columns["tau"]), bool(columns["current"]), "columns")
    effort = "current" if columns["current"] else "tau"
    n = len(columns["q"])
    for prefix in ("dq", effort):
        if prefix == "dq" and not columns["dq"] and n:  # no velocities: derived from q
            continue
        if len(columns[prefix]) != n or n == 0:
            odd = [name for name in header if re.fullmatch(r"(q|dq|ddq|tau|current)\w+", name)
                   and not re.fullmatch(r"(q|dq|ddq|tau|current)[0-9]+", name)]
            hint = (f"; {_listed(odd, 4)} {'is' if len(odd) == 1 else 'are'} not numbered "
                    "with ASCII digits" if odd else "")
            raise ValueError(
                f"`path`: {path.name} must have columns q1..qn, dq1..dqn, tau1..taun (or "
                f"current1..currentn) for the same n; got {n} q, {len(columns['dq'])} dq, "
                f"{len(columns[effort])} {effort}{hint}; rename the columns or map them "
                "with `columns`"
            )
    if columns["ddq"] and len(columns["ddq"]) != n:
        raise ValueError(
            f"`path`: {path.name} has {len(columns['ddq'])} ddq columns for {n} joints"
        )
    expected = 1 + (2 + bool(columns["dq"]) + bool(columns["ddq"])) * n
    if len(header) != expected:
        raise ValueError(
            f"`path`: {path.name} has {len(header)} columns, expected {expected} "
            f"(t, q1..qn[, dq1..dqn], {effort}1..{effort}n[, ddq1..ddqn]); map the columns of "
            "another CSV with `columns`"
        )
    arrays = {"t": values[:, header.index("t")], "q": values[:, columns["q"]],
              "dq": values[:, columns["dq"]] if columns["dq"] else None,
              "tau": values[:, columns[effort]],
              "ddq": values[:, columns["ddq"]] if columns["ddq"] else None}
    return arrays, effort == "current"


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


def _fields(data: Dataset) -> dict:
    return {name: getattr(data, name) for name in ("t", "q", "dq", "tau", "ddq", "M", "g")}


def _effort(effort: str | None, claims: list[str]) -> str:
    """What the effort column holds: currents where anything says so (``claims``), else
    ``effort`` (default torque); ``effort="torque"`` against a claim is an error."""
    if effort == "torque" and claims:
        raise ValueError(f"`effort` is 'torque' but {claims[0]}: that is a current log")
    return "current" if claims or effort == "current" else "torque"


def read_dataset(path: str | Path, *, joint_names: Sequence[str] | None = None,
                 columns: Mapping | str | Path | None = None,
                 units: Mapping[str, str] | str | None = None,
                 effort: str | None = None, mmap: bool = False,
                 rows: slice | None = None) -> Dataset:
    """Read a time series: CSV or NPZ (formats in the module docstring), a ROS 2 bag (an
    ``.mcap`` file, or the folder ``ros2 bag record`` writes; ``dynid.data.read_rosbag``, its
    joints picked by ``joint_names``), or a folder in the Panda log format
    (``read_panda_log``).

    ``columns``: a column mapping for any other CSV (``column_mapping``; its joint columns
    ordered by ``joint_names`` where they carry names). ``units``: the units the values are in
    (``unit_mapping``; default SI), converted to SI. ``effort``: what a bag's effort field or a
    ``tau`` column holds, ``"torque"`` or ``"current"`` (``EFFORTS``); default: as the file
    says (``current`` columns or array, a mapped ``current``, a unit given for ``current``),
    else torque. The units read go to ``metadata["units"]``. ``mmap``: memory-map an NPZ's
    time series instead of reading them (a log of any length; it stays on disk, in SI units,
    and the file must not change while it is used — ``dynid.identification`` checks its
    size). ``rows``: with ``mmap``, the samples of this slice only (a piece of a long log, the
    file mapped as a whole, only the piece checked).
    """
    path = Path(path)
    if rows is not None and not (mmap and isinstance(rows, slice)):
        raise ValueError("`rows` takes a slice of a memory-mapped log (with `mmap`)")
    if mmap and (path.suffix.lower() != ".npz" or columns is not None or units):
        raise ValueError(f"`mmap`: only an NPZ log in SI units can be memory-mapped, got "
                         f"{path.name}" + (" with a column mapping or units" if
                                           path.suffix.lower() == ".npz" else ""))
    if effort is not None and effort not in EFFORTS:
        raise ValueError(f"`effort` must be one of {', '.join(EFFORTS)}, got {effort!r:.60}")
    mapping = column_mapping(columns) if columns is not None else None
    given = unit_mapping(units)
    claims = []
    if mapping is not None:
        for field, spec in mapping.items():
            if spec.unit is None:
                continue
            unit = unit_mapping({field: spec.unit})[field]
            if given.get(field, unit) != unit:
                raise ValueError(f"the unit of `{field}` is given twice: {unit} in `columns`, "
                                 f"{given[field]} in `units`")
            given[field] = unit
        if "current" in mapping:
            claims.append("`columns` maps `current`")
    if "current" in given:
        if given.get("tau", given["current"]) != given["current"]:
            raise ValueError(f"the unit of the effort column is given twice: "
                             f"{given['current']} for `current`, {given['tau']} for `tau`")
        claims.append("`units` give `current` a unit")
        given["tau"] = given.pop("current")  # the effort column
    suffix = path.suffix.lower()
    bag = bag_file(path)
    if mapping is not None and (path.is_dir() or suffix in (".mcap", ".npz")):
        raise ValueError(f"`columns` maps the columns of a CSV log; {path.name} is a "
                         f"{'folder' if path.is_dir() else suffix[1:].upper() + ' file'}")
    if bag is not None:
        data = read_rosbag(bag, joints=joint_names, effort=_effort(effort, claims))
        arrays, metadata = _fields(data), dict(data.metadata)
    elif path.is_dir():
        data = read_panda_log(path)
        arrays, metadata = _fields(data), dict(data.metadata)
    elif suffix == ".npz":
        arrays = read_npz(path, required=(), optional=(*MAPPED_FIELDS, "M", "g", "dead_band"),
                          what="log", mmap=MAPPED_FIELDS if mmap else ())
        band = arrays.pop("dead_band", None)
        if rows is not None:
            arrays = {key: value[rows] if key in MAPPED_FIELDS else value
                      for key, value in arrays.items() if key not in ("M", "g")}
        _one_effort(path, "tau" in arrays, "current" in arrays, "arrays")
        missing = [name for name in ("t", "q") if name not in arrays]
        if "tau" not in arrays and "current" not in arrays:
            missing.append("tau")
        if missing:
            raise ValueError(f"`path`: {path.name} lacks arrays {missing} (has "
                             f"{sorted(arrays)}; a current log has `current` for `tau`)")
        if "current" in arrays:
            claims.append(f"{path.name} holds a `current` array")
            arrays["tau"] = arrays.pop("current")
        metadata = {"source": str(path)}
        if band is not None:
            metadata["dead_band"] = _dead_band(path, band)
        if mmap:  # its size now: a file that changes under a run is caught (check_unchanged)
            metadata["memory_mapped"] = {"path": str(path.resolve()),
                                         "bytes": path.stat().st_size}
    else:
        header, values = read_csv(path, what="log")
        if mapping is not None:
            arrays, metadata = _mapped_csv(path, header, values, mapping, joint_names)
        else:
            arrays, holds_current = _own_csv(path, header, values)
            metadata = {"source": str(path)}
            if holds_current:
                claims.append(f"{path.name} has current columns")
    return _in_si(path, arrays, given, _effort(effort, claims), metadata)


def _dead_band(path: Path, band: NDArray) -> list[float]:
    """A prepared log's ``dead_band`` array, checked: speeds >= 0, one per joint (its count
    is checked against the joints by the fit)."""
    band = np.asarray(band)
    if band.ndim != 1 or band.dtype.kind != "f" or not (np.isfinite(band) & (band >= 0)).all():
        raise ValueError(f"`path`: {path.name}'s `dead_band` must be speeds >= 0 (one float "
                         f"per joint), got shape {band.shape} of {band.dtype}")
    return band.tolist()


def _in_si(path: Path, arrays: dict, units: dict[str, str], effort: str,
           metadata: dict) -> Dataset:
    """The Dataset of ``arrays`` (the effort column as ``tau``) in ``units``, converted to SI;
    the units read go to ``metadata["units"]`` (the effort column as ``current`` in a current
    log)."""
    read = {}
    arrays = dict(arrays)
    for field in ("t", "q", "dq", "ddq", "tau"):
        if arrays.get(field) is None:
            if field in units:
                raise ValueError(f"`units` give `{field}` a unit, but {path.name} has no "
                                 f"{field}")
            continue
        kind = effort if field == "tau" else field
        label = "current" if field == "tau" and effort == "current" else field
        if field == "tau" and effort == "torque" and units.get(field) in UNITS["current"]:
            raise ValueError(f"`units`: {units[field]} is a current's unit, but the log holds "
                             "torques; say it holds currents (`effort` 'current')")
        unit, factor = (_unit((kind,), units[field], label) if field in units
                        else next(iter(UNITS[kind].items())))
        read[label] = unit
        if factor != 1.0:
            arrays[field] = np.asarray(arrays[field], dtype=float) * factor
    metadata = {**metadata, "units": read}
    if arrays.get("dq") is not None:
        return _named(path, Dataset, **arrays, metadata=metadata, effort=effort)
    return _velocities_derived(path, arrays, metadata, effort)


def _velocities_derived(path: Path, arrays: dict, metadata: dict, effort: str) -> Dataset:
    """The Dataset of a log without velocities: checked with zero velocities first (time
    stamps, shapes, finite values), then given central differences of its positions, marked
    ``metadata["velocity"]`` so that ``prepare`` derives them again from the filtered
    positions (``dynid.data.preprocess.derived_velocity``)."""
    if metadata.get("memory_mapped"):
        raise ValueError(f"`path`: {path.name} has no velocities (dq): a memory-mapped log is "
                         "used as it is and must carry them (prepare it to a file first: "
                         "dynid data prepare)")
    q = np.asarray(arrays["q"], dtype=float)
    checked = _named(path, Dataset, **{**arrays, "dq": np.zeros_like(q)},
                     metadata={**metadata, "velocity": DERIVED_VELOCITY}, effort=effort)
    dq = np.gradient(checked.q, checked.t, axis=0) if checked.n_samples > 1 else checked.dq
    return dataclasses.replace(checked, dq=dq)


def write_dataset(path: str | Path, data: Dataset, *, velocities: bool = True) -> Path:
    """Write a dataset as CSV or NPZ (by suffix), atomically; a current log
    (``data.effort == "current"``) writes ``current`` where a torque log writes ``tau``.
    ``velocities=False`` leaves the ``dq`` columns (array) out, as the logs of drives that
    record positions only."""
    path = Path(path)
    effort = "current" if data.effort == "current" else "tau"
    arrays = {"t": data.t, "q": data.q, "dq": data.dq, effort: data.tau}
    if not velocities:
        del arrays["dq"]
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
    fields = ("q", "dq", effort) if velocities else ("q", effort)
    header = ["t"] + [f"{p}{j + 1}" for p in fields for j in range(n)]
    table = [data.t[:, None], data.q, *([data.dq] if velocities else []), data.tau]
    if data.ddq is not None:
        header += [f"ddq{j + 1}" for j in range(n)]
        table.append(data.ddq)
    matrix = np.hstack(table)
    return atomic_write(path, lambda tmp: np.savetxt(tmp, matrix, delimiter=",",
                                                     header=",".join(header), comments="",
                                                     fmt="%.17g"))


def write_log_pieces(path: str | Path, pieces: Iterable[Dataset]) -> Path:
    """Write consecutive pieces of one log as one uncompressed NPZ, atomically, holding one
    piece at a time: a log longer than memory (a twin run of days at 1 kHz) that
    ``read_dataset(path, mmap=True)`` maps back. The pieces must join (time increasing across
    them) and agree in joints, effort and fields; no ``M``, ``g``."""
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise ValueError(f"`path` must end in .npz, got {path.name!r}")

    def write(tmp: Path) -> None:
        with tempfile.TemporaryDirectory(dir=tmp.parent, prefix=".pieces.") as folder:
            raw, shape, effort, last, band = {}, None, None, -np.inf, None
            try:
                for k, piece in enumerate(pieces):
                    if not isinstance(piece, Dataset) or piece.M is not None:
                        raise ValueError(f"`pieces[{k}]` must be a Dataset without M, g")
                    if k == 0 and piece.metadata.get("dead_band") is not None:
                        band = np.asarray(piece.metadata["dead_band"], dtype=float)
                    names = ("t", "q", "dq", "tau") + (("ddq",) if piece.ddq is not None
                                                       else ())
                    if shape is None:
                        shape, effort = (names, piece.n_joints), piece.effort
                        raw = {name: open(Path(folder) / name, "wb") for name in names}
                    if (names, piece.n_joints) != shape or piece.effort != effort:
                        raise ValueError(f"`pieces[{k}]` has other fields, joints or effort "
                                         "than the first piece")
                    if piece.t[0] <= last:
                        raise ValueError(f"`pieces[{k}]` starts at t = {piece.t[0]!r}, not "
                                         f"after the previous piece (t = {last!r})")
                    last = float(piece.t[-1])
                    for name in names:
                        raw[name].write(np.ascontiguousarray(getattr(piece, name)).tobytes())
            finally:
                for handle in raw.values():
                    handle.close()
            if shape is None:
                raise ValueError("`pieces` is empty: a log needs at least one sample")
            names, n = shape
            n_samples = (Path(folder) / "t").stat().st_size // 8
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
                for name in names:
                    member = "current" if name == "tau" and effort == "current" else name
                    header = {"descr": "<f8", "fortran_order": False,
                              "shape": (n_samples,) if name == "t" else (n_samples, n)}
                    with (archive.open(f"{member}.npy", "w", force_zip64=True) as out,
                          open(Path(folder) / name, "rb") as source):
                        npy_format.write_array_header_2_0(out, header)
                        shutil.copyfileobj(source, out, 1 << 24)
                if band is not None:  # the friction fits' dead band, read back by read_dataset
                    with archive.open("dead_band.npy", "w") as out:
                        npy_format.write_array(out, band)

    return atomic_write(path, write)


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
