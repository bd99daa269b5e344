"""Reading the files dynid is given, every one of them treated as hostile.

Every reader of dynid goes through here: text and YAML (robot, model, bounds and trajectory
files), CSV tables, NPZ archives. What each guards against, before anything is allocated:

- **size**: a file larger than its limit, or than half the memory available, is refused from
  its ``stat`` (``MAX_TEXT_BYTES`` for YAML and text, ``MAX_TABLE_BYTES`` for CSV and NPZ); an
  NPZ array whose header declares more bytes than its archive member holds is refused from the
  header; anything that is not a regular file (a folder, a device node such as ``/dev/zero``, a
  FIFO) is refused before it is opened;
- **YAML**: the document is walked as a stream of parser events first (flat, no recursion):
  nesting deeper than ``YAML_MAX_DEPTH``, more than ``YAML_MAX_ALIASES`` aliases, more than
  ``YAML_MAX_NODES`` nodes with the aliases expanded (the "billion laughs" document: a few
  hundred bytes, 10^9 nodes) and repeated keys in one mapping are errors; only then is the
  document built, by safe constructors (no Python tags), its plain scalars typed by the YAML
  1.2 core schema (``YAML12_SCALARS``: ``010`` is 10, ``1:30``, ``yes`` and ``1_000`` are
  strings, ``0x10`` is 16). Errors read ``file:line:column: what``; ``dump_yaml`` writes
  what YAML 1.1 and 1.2 readers read alike;
- **CSV**: numbers parse strictly (ASCII digits, sign, point, exponent: ``1_0``, ``0x10``,
  ``nan``, ``inf`` and digits of other scripts, ``１`` or ``٣``, which Python's float() would
  take, are errors naming ``file:line:column``), finite, read in blocks (memory stays a small
  multiple of the result); text tables (poses, the Panda log) alike, split at ASCII
  separators and line ends only;
- **NPZ**: corrupt archives, CRC errors, truncated members, pickled or object arrays,
  non-numeric arrays and headers that declare more than the file holds are each named. The
  inflated size of every array is known before anything is inflated (its ``.npy`` header's
  shape x dtype, which must equal the zip entry's declared ``file_size``; zipfile stops
  inflating a member at that size, and a member that inflates to more fails its CRC). The
  arrays read must fit ``limit`` and a third of the available memory (``NPZ_MEMORY_SHARE``);
  compressed ones must not inflate to more than ``MAX_INFLATION_RATIO`` times the archive's
  size on disk once beyond ``INFLATION_FLOOR`` (the compression bomb: 40 million rows of
  zeros in 3 MB). A real log refused by either is read uncompressed and memory-mapped
  (``np.savez``, ``read_dataset(..., mmap=True)``, the CLI's ``--mmap``).

Every error is a ``FileError`` (a ValueError) with one line that names the file.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

MAX_TEXT_BYTES = 64 * 2**20  # YAML, URDF and pose files: a 7-joint model file is ~40 kB
MAX_TABLE_BYTES = 4 * 2**30  # CSV and NPZ logs: 4 GiB (a 7-joint log at 1 kHz for ~7 h)
# NPZ arrays read into memory, inflated: at most a third of the available memory (a reader
# holds them twice, the archive's arrays and the Dataset's own copy, and works beside them)
NPZ_MEMORY_SHARE = 3
# compressed NPZ members: their inflated bytes at most this many times the archive's size on
# disk (deflate reaches ~1000x on zeros: a bomb; logged floats deflate 1.1x to 3x, a log of
# constants ~10x) once they inflate beyond ``INFLATION_FLOOR`` (smaller ones are harmless)
MAX_INFLATION_RATIO = 50
INFLATION_FLOOR = 64 * 2**20
YAML_MAX_DEPTH = 64
YAML_MAX_ALIASES = 64  # robot and model files need none; hand-written files may use a few
YAML_MAX_NODES = 2_000_000  # with aliases expanded; a 7-joint model file has ~6,000
_CSV_BLOCK_LINES = 20_000
_MAX_LINE = 2**20  # characters of one CSV row


class FileError(ValueError):
    """A file that cannot be read as what it should be; the message names the file."""


def available_memory() -> int:
    """Bytes of memory available to allocate (``MemAvailable``; physical memory elsewhere)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**40


def check_allocation(nbytes: int, what: str, limit: int, *, share: int = 2) -> None:
    """Refuse to allocate ``nbytes`` above ``limit`` or ``1/share`` of the available memory."""
    if nbytes > limit:
        raise FileError(f"{what} needs {_size(nbytes)}, above the limit of {_size(limit)}")
    available = available_memory()
    if nbytes > available // share:
        part = {2: "half", 3: "a third", 4: "a quarter"}.get(share, f"1/{share}")
        raise FileError(f"{what} needs {_size(nbytes)}, more than {part} of the memory "
                        f"available ({_size(available)})")


def _size(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")


def regular_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a Path after checking it is an existing regular file (symlinks to one are
    followed); its size is ``path.stat().st_size``."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileError(f"{what} {str(path)!r} does not exist") from None
    except OSError as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise FileError(f"{what} {str(path)!r} is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise FileError(f"{what} {str(path)!r} is not a regular file (a device, FIFO or socket)")
    return path


def read_bytes(path: str | Path, *, what: str = "file", limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes."""
    path = regular_file(path, what)
    check_allocation(path.stat().st_size, f"{what} {str(path)!r}", limit)
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)  # a file that grows while read is still bounded
    except OSError as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    if len(data) > limit:
        raise FileError(f"{what} {str(path)!r} is larger than {_size(limit)}")
    return data


def read_text(path: str | Path, *, what: str = "file", limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes."""
    data = read_bytes(path, what=what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileError(f"{what} {str(path)!r} is not UTF-8 text (byte {error.start}: "
                        f"{data[error.start:error.start + 1]!r})") from None


def read_json(path: str | Path, *, what: str = "JSON file", limit: int = MAX_TEXT_BYTES) -> Any:
    """The value of a JSON file of at most ``limit`` bytes of UTF-8 (a FileError naming the
    file and where its JSON breaks otherwise)."""
    text = read_text(path, what=what, limit=limit)
    if not text.strip():
        raise FileError(f"{what} {str(path)!r} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FileError(f"{what} {str(path)!r} is not JSON: {error.msg} (line "
                        f"{error.lineno}, column {error.colno})") from None
    except RecursionError:  # [[[[...: deeper than the parser's recursion
        raise FileError(f"{what} {str(path)!r} nests its JSON too deeply") from None


# -- YAML ---------------------------------------------------------------------------------------

def load_yaml(path: str | Path, *, what: str = "YAML file") -> Any:
    """The document of a YAML file (see ``parse_yaml``)."""
    return parse_yaml(read_text(path, what=what), source=Path(path).name)


def parse_yaml(text: str, *, source: str = "<yaml>") -> Any:
    """A YAML document, after its structure passed the checks of the module docstring.

    Plain scalars are typed by the YAML 1.2 core schema (``YAML12_SCALARS``), not PyYAML's
    YAML 1.1 defaults. libyaml's C parser when PyYAML has it (5x faster on the built-in robot
    files, which every command reads), else the pure-Python one; safe constructors either way.
    """
    import yaml

    loader = _yaml12_loader()
    try:
        _check_structure(yaml.parse(text, Loader=loader), source)
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        what = " ".join(str(part) for part in (error.problem, error.context) if part)
        raise FileError(f"{where}: {_one_line(what or type(error).__name__)}") from None
    except yaml.YAMLError as error:
        raise FileError(f"{source}: {_one_line(str(error))}") from None
    except RecursionError:  # the depth check above makes this unreachable; kept as a guard
        raise FileError(f"{source}: nested too deeply") from None


# The YAML 1.2 core schema (yaml.org/spec/1.2.2, 10.3.2), for plain (unquoted) scalars:
#   null   ~, null, Null, NULL, the empty scalar
#   bool   true, True, TRUE, false, False, FALSE
#   int    decimal [-+]?[0-9]+ (``010`` is ten), octal 0o[0-7]+, hexadecimal 0x[0-9a-fA-F]+
#   float  [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?.inf, .nan (and capitals)
#   str    everything else
# PyYAML resolves YAML 1.1 instead, where ``010`` is 8, ``1:30`` is 90, ``1_000`` is 1000,
# ``yes``/``no``/``on``/``off`` are booleans and ``2001-12-14`` is a date: in dynid those are
# the numbers above or strings (a string where a number is expected is refused by the reader
# of that field). Hexadecimal and ``0o`` octal are kept: YAML 1.2 defines them and nobody
# writes ``0x10`` meaning anything but 16. Explicit tags are limited to the core ones
# (``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!seq``, ``!!map``) and read
# by the same rules; ``!!binary``, ``!!timestamp``, ``!!set``, ``!!omap``, ``!!python/...``
# are errors. Merge keys (``<<: *base``) stay. Keys repeated in one mapping are errors, also
# where they are spelt differently (``10`` and ``010``).
YAML12_SCALARS = {
    "tag:yaml.org,2002:null": r"~|null|Null|NULL|",
    "tag:yaml.org,2002:bool": r"true|True|TRUE|false|False|FALSE",
    "tag:yaml.org,2002:int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "tag:yaml.org,2002:float": (r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
                                r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"),
}
_YAML_FIRST = {"tag:yaml.org,2002:null": "~nN", "tag:yaml.org,2002:bool": "tTfF",
               "tag:yaml.org,2002:int": "-+0123456789",
               "tag:yaml.org,2002:float": "-+.0123456789"}
_YAML_TAGS = ("null", "bool", "int", "float", "str", "seq", "map")


@functools.cache
def _yaml12_loader():
    """A safe loader class (libyaml's when present) typing plain scalars by YAML 1.2 core."""
    import yaml
    from yaml.constructor import ConstructorError

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                seen: dict = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        first = seen.setdefault(key, key_node.start_mark)
                    except TypeError:  # unhashable: the base class names it
                        continue
                    if first is not key_node.start_mark:
                        raise ConstructorError(
                            None, None, f"key {key!r} appears twice in one mapping (first at "
                            f"line {first.line + 1})", key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

    def scalar(loader, node) -> str:
        return loader.construct_scalar(node)

    def refuse(loader, node, tag: str, value: str):
        raise ConstructorError(None, None, f"{value!r:.40} is not a YAML 1.2 {tag}; write "
                               "it as one (decimal digits, true or false) or drop the tag",
                               node.start_mark)

    def construct_int(loader, node) -> int:
        value = scalar(loader, node)
        if re.fullmatch(r"[-+]?[0-9]+", value, re.ASCII):
            return int(value, 10)
        if re.fullmatch(r"0o[0-7]+|0x[0-9a-fA-F]+", value, re.ASCII):
            return int(value[2:], 8 if value[1] == "o" else 16)
        return refuse(loader, node, "integer", value)

    def construct_float(loader, node) -> float:
        value = scalar(loader, node)
        if re.fullmatch(YAML12_SCALARS["tag:yaml.org,2002:float"], value, re.ASCII) or \
                re.fullmatch(r"[-+]?[0-9]+", value, re.ASCII):
            special = value.lower().lstrip("+")
            if special in (".inf", "-.inf", ".nan"):
                return {".inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}[
                    special]
            return float(value)
        return refuse(loader, node, "float", value)

    def construct_bool(loader, node) -> bool:
        value = scalar(loader, node)
        if re.fullmatch(YAML12_SCALARS["tag:yaml.org,2002:bool"], value):
            return value.lower() == "true"
        return refuse(loader, node, "boolean (true or false)", value)

    Loader.yaml_implicit_resolvers = {}
    for tag, pattern in YAML12_SCALARS.items():
        first = list(_YAML_FIRST[tag]) + ([""] if tag.endswith("null") else [])
        Loader.add_implicit_resolver(tag, re.compile(rf"^(?:{pattern})$", re.ASCII), first)
    Loader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])
    kept = {f"tag:yaml.org,2002:{name}" for name in _YAML_TAGS} | {None}
    Loader.yaml_constructors = {tag: make for tag, make in base.yaml_constructors.items()
                                if tag in kept}
    Loader.yaml_multi_constructors = {}
    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    Loader.add_constructor("tag:yaml.org,2002:float", construct_float)
    Loader.add_constructor("tag:yaml.org,2002:bool", construct_bool)
    return Loader


def dump_yaml(data: Any, **options: Any) -> str:
    """``yaml.safe_dump(data, **options)``, quoting every string that YAML 1.1 or YAML 1.2
    would read as something else (``yes``, ``010``, ``1e5``, ``0o7``): what dynid writes reads
    back the same in dynid (``parse_yaml``) and in any YAML 1.1 tool."""
    import yaml

    return yaml.dump(data, Dumper=_dumper(), **options)


@functools.cache
def _dumper():
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    for tag, pattern in YAML12_SCALARS.items():  # added to the YAML 1.1 resolvers
        first = list(_YAML_FIRST[tag]) + ([""] if tag.endswith("null") else [])
        Dumper.add_implicit_resolver(tag, re.compile(rf"^(?:{pattern})$", re.ASCII), first)
    return Dumper


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _check_structure(events: Iterable, source: str) -> None:
    """Depth, alias and expanded-size budgets and unique keys, over the parser's events."""
    import yaml

    nodes = aliases = 0
    sizes: dict[str, int] = {}  # anchor -> nodes of its subtree, aliases expanded
    stack: list[list] = []  # [is_mapping, anchor, nodes at start, keys seen, expecting a key]

    def finished(scalar: str | None, line: int) -> None:
        """A node ended inside the innermost collection: mappings alternate key, value."""
        if not stack or not stack[-1][0]:
            return
        top = stack[-1]
        if top[4] and scalar is not None:
            if scalar in top[3]:
                raise FileError(f"{source}:{line}: key {scalar!r} appears twice in one mapping")
            top[3].add(scalar)
        top[4] = not top[4]

    for event in events:
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            nodes += 1
            stack.append([isinstance(event, yaml.MappingStartEvent), event.anchor, nodes,
                          set(), True])
            if len(stack) > YAML_MAX_DEPTH:
                raise FileError(f"{source}:{line}: nested deeper than {YAML_MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            _, anchor, start, _, _ = stack.pop()
            if anchor is not None:
                sizes[anchor] = nodes - start + 1
            finished(None, line)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
            finished(event.value, line)
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > YAML_MAX_ALIASES:
                raise FileError(f"{source}:{line}: more than {YAML_MAX_ALIASES} aliases "
                                "(dynid files need none)")
            nodes += sizes.get(event.anchor, 1)
            finished(None, line)
        if nodes > YAML_MAX_NODES:
            raise FileError(f"{source}:{line}: more than {YAML_MAX_NODES} nodes with its "
                            "aliases expanded")


def check_keys(mapping: Mapping, allowed: Iterable[str], where: str) -> None:
    """Unknown keys are errors, with the closest allowed key as a suggestion."""
    allowed = tuple(allowed)
    for key in mapping:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else \
                f"; expected one of {', '.join(allowed)}"
            raise ValueError(f"`{where}` has an unknown key {key!r}{hint}")


# -- CSV ----------------------------------------------------------------------------------------

# characters a numeric CSV row may hold; anything else (letters, `_`, quotes, NUL) is found by
# one regular-expression scan of a block before numpy converts it
# (ASCII only: Python's float() also takes full-width and other Unicode digits, ``\u0661``, and
# Unicode spaces; numpy and the CSV's other readers do not, so they are refused by position)
_NOT_NUMERIC = re.compile(r"[^0-9eE+\-.,\s]", re.ASCII)
_NUMBER = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*", re.ASCII)
_NUMBER_FORM = "plain ASCII decimals such as -1.25e-3"


def read_csv(path: str | Path, *, what: str = "CSV file",
             limit: int = MAX_TABLE_BYTES) -> tuple[list[str], NDArray]:
    """Header and numeric rows ``(N, columns)`` of a CSV file: a header row of names, then one
    row of finite numbers per line (blank lines skipped)."""
    import csv

    path = regular_file(path, what)
    check_allocation(path.stat().st_size, f"{what} {str(path)!r}", limit)
    name = path.name
    blocks: list[NDArray] = []
    header: list[str] | None = None
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            lines = _lines(handle, name)
            line_number = 0
            for number, line in lines:
                if line.strip():
                    header = [cell.strip() for cell in next(csv.reader([line]))]
                    line_number = number
                    break
            if header is None:
                raise FileError(f"{name} is empty: it needs a header row and data rows")
            if len(set(header)) != len(header):
                repeated = sorted({c for c in header if header.count(c) > 1})
                raise FileError(f"{name} line {line_number}: repeated column names {repeated}")
            block: list[str] = []
            first = line_number + 1
            for line_number, line in lines:
                if not block:
                    first = line_number
                block.append(line)
                if len(block) == _CSV_BLOCK_LINES:
                    blocks.append(_csv_block(block, first, header, name))
                    block = []
            if block:
                blocks.append(_csv_block(block, first, header, name))
    except UnicodeDecodeError as error:
        raise FileError(f"{name} is not UTF-8 text (byte {error.start} of a block)") from None
    except OSError as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    values = np.concatenate(blocks) if blocks else np.empty((0, len(header)))
    if values.shape[0] == 0:
        raise FileError(f"{name} has a header but no data rows")
    return header, values


def _lines(handle, name: str):
    """(number, line) of a text file, each line at most ``_MAX_LINE`` characters (a file of
    one endless line is not read whole)."""
    number = 0
    while True:
        line = handle.readline(_MAX_LINE + 1)
        if not line:
            return
        number += 1
        if len(line) > _MAX_LINE:
            raise FileError(f"{name} line {number} is longer than {_MAX_LINE} characters: not "
                            "a table of numbers")
        yield number, line


def _csv_block(lines: list[str], first: int, header: list[str], name: str) -> NDArray:
    """Rows ``first, first + 1, ...`` as floats; blank lines dropped."""
    text = "".join(lines)
    rows = [line.split(",") for line in lines if line.strip()]
    if not rows:  # blank lines only
        return np.empty((0, len(header)))
    if not _NOT_NUMERIC.search(text):
        try:
            values = np.array(rows, dtype=float)
            if values.ndim == 2 and values.shape[1] == len(header) and \
                    np.isfinite(values).all():
                return values
        except ValueError:
            pass
    # something is wrong, or numpy's parser differs from the rules above: each row checked and
    # converted on its own (the block converts exactly, or the first bad cell is named)
    values = np.empty((len(rows), len(header)))
    number, row = first - 1, 0
    for line in lines:
        number += 1
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != len(header):
            raise FileError(f"{name}:{number}: the row has {len(cells)} columns, the header "
                            f"{len(header)}; every row needs one number per column")
        for k, (column, cell) in enumerate(zip(header, cells, strict=True)):
            where = f"{name}:{number}:{k + 1} (column {column!r:.40})"
            if not _NUMBER.fullmatch(cell):
                raise FileError(f"{where}: {cell.strip()!r:.40} is not a number; write "
                                f"{_NUMBER_FORM}")
            value = float(cell)
            if not math.isfinite(value):
                raise FileError(f"{where}: {cell.strip()!r:.40} overflows a float (beyond "
                                "1.8e308)")
            values[row, k] = value
        row += 1
    return values


_SEPARATORS = re.compile(r"[ \t\f\v,]+")  # between the values of a line (ASCII only)


def _numeric_lines(text: str) -> list[str]:
    """Lines split at ``\n``, ``\r\n`` and ``\r`` only (``str.splitlines`` also splits at
    ``\x1c``, ``\x85``, ``\u2028``..., which then stay in a value and are refused)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _values(line: str) -> list[str]:
    return [cell for cell in _SEPARATORS.split(line) if cell]


def parse_numbers(text: str, source: str) -> NDArray:
    """Whitespace- or comma-separated finite numbers, one row per non-blank line, ``(rows,
    columns)`` (a ragged table is an error naming its line). Values are ASCII decimals,
    separated by ASCII spaces, tabs or commas."""
    lines = _numeric_lines(text)
    if not _NOT_NUMERIC.search(text):  # the fast path: one bulk conversion
        try:
            table = np.array([cells for line in lines if (cells := _values(line))],
                             dtype=float)
            if table.ndim == 2 and table.size and np.isfinite(table).all():
                return table
        except ValueError:
            pass
    rows = []
    for number, line in enumerate(lines, start=1):
        cells = _values(line)
        if not cells:
            continue
        for k, cell in enumerate(cells):
            if not _NUMBER.fullmatch(cell) or not math.isfinite(float(cell)):
                raise FileError(f"{source} line {number}: {cell!r:.40} is not a finite number "
                                f"(value {k + 1} of the line); write {_NUMBER_FORM}")
        if rows and len(cells) != len(rows[0]):
            raise FileError(f"{source} line {number} has {len(cells)} values, the first row "
                            f"{len(rows[0])}; every line needs as many")
        rows.append([float(cell) for cell in cells])
    if not rows:
        raise FileError(f"{source} holds no numbers")
    return np.array(rows)


# -- NPZ ----------------------------------------------------------------------------------------

# what zipfile raises on a corrupt archive (a CRC mismatch, a bad header, an unknown version
# or compression, a truncated member, a password-protected one)
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError,
               ValueError, NotImplementedError, RuntimeError, struct.error)


def read_npz(path: str | Path, *, required: tuple[str, ...], optional: tuple[str, ...] = (),
             what: str = "NPZ file", limit: int = MAX_TABLE_BYTES,
             mmap: tuple[str, ...] = (),
             max_ratio: float = MAX_INFLATION_RATIO) -> dict[str, NDArray]:
    """The arrays ``required`` (all present) and ``optional`` (when present) of an NPZ archive,
    read defensively (see the module docstring); other arrays are not read. The arrays named
    in ``mmap`` are memory-mapped (read-only ``np.memmap``, stored uncompressed as ``np.savez``
    writes them; their bytes are not read, so the CRC is not checked) and count against no
    memory limit. ``limit``: the bytes the arrays read may inflate to; ``max_ratio``: how many
    times its size on disk the compressed arrays may inflate to (beyond
    ``INFLATION_FLOOR``)."""
    path = regular_file(path, what)
    name = path.name
    if not mmap:
        check_allocation(path.stat().st_size, f"{what} {str(path)!r}", limit)
    try:
        archive = zipfile.ZipFile(path)
    except (FileNotFoundError, PermissionError) as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    except _ZIP_ERRORS as error:  # NotImplementedError: an unknown zip version, say
        raise FileError(f"{name} is not a readable NPZ (zip) archive: "
                        f"{_one_line(str(error))}") from None
    with archive:
        members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
        missing = [key for key in required if key not in members]
        if missing:
            raise FileError(f"{name} lacks arrays {missing} (has {sorted(members)})")
        wanted = [key for key in (*required, *optional) if key in members]
        total = inflated = 0
        headers = {}
        for key in wanted:  # every header first: the total size is known before any array
            headers[key] = _npy_header(archive, members[key], name, key)
            total += headers[key][3] if key not in mmap else 0
            if members[key].compress_type != zipfile.ZIP_STORED:
                inflated += headers[key][3]
        check_inflation(inflated, path, f"{name}: its compressed arrays would inflate",
                        "save it uncompressed (np.savez) and read it memory-mapped (--mmap)",
                        max_ratio=max_ratio)
        try:
            check_allocation(total, f"the arrays of {name} (inflated)", limit,
                             share=NPZ_MEMORY_SHARE)
        except FileError as error:
            raise FileError(f"{error}; a log this long is read memory-mapped (--mmap, from "
                            "an uncompressed NPZ)") from None
        return {key: _npy_mapped(path, members[key], headers[key], key) if key in mmap
                else _npy_array(archive, members[key], headers[key], name, key)
                for key in wanted}


def check_inflation(inflated: int, path: Path, what: str, remedy: str, *,
                    max_ratio: float | None = None) -> None:
    """FileError unless ``inflated`` bytes (what a file's compressed parts declare) stay within
    ``max_ratio`` times the file's size on disk, or ``INFLATION_FLOOR``: a compression bomb is
    refused before anything is inflated. ``what`` starts the message (``"x.npz: its arrays
    would inflate"``), ``remedy`` says what to do with a real file that compresses so well;
    ``max_ratio`` defaults to ``MAX_INFLATION_RATIO``."""
    max_ratio = MAX_INFLATION_RATIO if max_ratio is None else max_ratio
    on_disk = max(path.stat().st_size, 1)
    if inflated > max(INFLATION_FLOOR, max_ratio * on_disk):
        raise FileError(
            f"{what} to {_size(inflated)} from {_size(on_disk)} on disk "
            f"({inflated / on_disk:.0f}x), beyond the limit of {max_ratio:g}x above "
            f"{_size(INFLATION_FLOOR)}: a compression bomb, or a log of constants; if it is "
            f"a real log, {remedy}")


def _npy_mapped(path: Path, info: zipfile.ZipInfo, header: tuple, key: str) -> np.memmap:
    """One stored (uncompressed) ``.npy`` member, memory-mapped read-only in place."""
    shape, fortran, dtype, nbytes, offset = header
    if info.compress_type != zipfile.ZIP_STORED:
        raise FileError(f"{path.name}: array {key!r} is compressed and cannot be memory-mapped; "
                        "write the archive uncompressed (np.savez, or dynid's write_dataset)")
    with open(path, "rb") as handle:  # the local header: its name and extra field lengths
        handle.seek(info.header_offset)
        local = handle.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise FileError(f"{path.name}: array {key!r} has a corrupt zip header")
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + name_length + extra_length + offset
    if start + nbytes > path.stat().st_size:
        raise FileError(f"{path.name}: array {key!r} is truncated")
    if nbytes == 0:  # nothing to map (the reader of the array says what is missing)
        return np.zeros(shape, dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=shape, offset=start,
                     order="F" if fortran else "C")




def _npy_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
                key: str) -> tuple[tuple[int, ...], bool, np.dtype, int, int]:
    """(shape, fortran order, dtype, data bytes, header bytes) of one ``.npy`` member."""
    from numpy.lib import format as npy

    where = f"{name}: array {key!r}"
    try:
        with archive.open(info) as handle:
            version = npy.read_magic(handle)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(handle)
            else:
                raise FileError(f"{where} has .npy format version {version}, expected 1.0 or 2.0")
            offset = handle.tell()
    except FileError:
        raise
    except _ZIP_ERRORS as error:
        raise FileError(f"{where} is corrupt: {_one_line(str(error))}") from None
    if dtype.hasobject:
        raise FileError(f"{where} holds Python objects (pickled); dynid reads numbers only")
    if dtype.kind not in "biuf" or dtype.fields is not None:
        raise FileError(f"{where} must hold real numbers, got dtype {dtype}")
    if any(not isinstance(s, int) or s < 0 for s in shape):
        raise FileError(f"{where} has an invalid shape {shape}")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    held = info.file_size - offset
    if nbytes != held:
        raise FileError(f"{where}: its header declares {shape} {dtype} ({_size(nbytes)}), the "
                        f"archive member holds {_size(max(held, 0))}")
    return shape, fortran, dtype, nbytes, offset


def _npy_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, header: tuple, name: str,
               key: str) -> NDArray:
    shape, fortran, dtype, nbytes, offset = header
    try:
        with archive.open(info) as handle:
            handle.read(offset)
            data = bytearray(nbytes)
            view = memoryview(data)
            done = 0
            while done < nbytes:
                chunk = handle.read(min(nbytes - done, 2**24))
                if not chunk:
                    break
                view[done:done + len(chunk)] = chunk
                done += len(chunk)
            if done != nbytes or handle.read(1):  # reading to the end checks the CRC
                raise FileError(f"{name}: array {key!r} is truncated")
    except FileError:
        raise
    except _ZIP_ERRORS as error:
        raise FileError(f"{name}: array {key!r} is corrupt: {_one_line(str(error))}") from None
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran else "C")
