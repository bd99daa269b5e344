"""CSV tables and whitespace-separated text tables: strict ASCII numbers, finite, read in
blocks."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from dynid._reading.limits import MAX_TABLE_BYTES, FileError, check_allocation, regular_file

_CSV_BLOCK_LINES = 20_000
_MAX_LINE = 2**20  # characters of one CSV row

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
