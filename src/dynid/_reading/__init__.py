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

Every error is a ``FileError`` (a ValueError) with one line that names the file. The modules:
``limits`` (regular files, sizes, memory; bytes, text, JSON), ``yaml_text``, ``tables`` (CSV
and text tables), ``npz``.
"""

from dynid._reading.limits import MAX_TABLE_BYTES as MAX_TABLE_BYTES
from dynid._reading.limits import MAX_TEXT_BYTES as MAX_TEXT_BYTES
from dynid._reading.limits import FileError as FileError
from dynid._reading.limits import available_memory as available_memory
from dynid._reading.limits import check_allocation as check_allocation
from dynid._reading.limits import read_bytes as read_bytes
from dynid._reading.limits import read_json as read_json
from dynid._reading.limits import read_text as read_text
from dynid._reading.limits import regular_file as regular_file
from dynid._reading.npz import INFLATION_FLOOR as INFLATION_FLOOR
from dynid._reading.npz import MAX_INFLATION_RATIO as MAX_INFLATION_RATIO
from dynid._reading.npz import NPZ_MEMORY_SHARE as NPZ_MEMORY_SHARE
from dynid._reading.npz import check_inflation as check_inflation
from dynid._reading.npz import read_npz as read_npz
from dynid._reading.tables import parse_numbers as parse_numbers
from dynid._reading.tables import read_csv as read_csv
from dynid._reading.yaml_text import YAML12_SCALARS as YAML12_SCALARS
from dynid._reading.yaml_text import YAML_MAX_ALIASES as YAML_MAX_ALIASES
from dynid._reading.yaml_text import YAML_MAX_DEPTH as YAML_MAX_DEPTH
from dynid._reading.yaml_text import YAML_MAX_NODES as YAML_MAX_NODES
from dynid._reading.yaml_text import check_keys as check_keys
from dynid._reading.yaml_text import dump_yaml as dump_yaml
from dynid._reading.yaml_text import load_yaml as load_yaml
from dynid._reading.yaml_text import parse_yaml as parse_yaml

__all__ = [
    "INFLATION_FLOOR",
    "MAX_INFLATION_RATIO",
    "MAX_TABLE_BYTES",
    "MAX_TEXT_BYTES",
    "NPZ_MEMORY_SHARE",
    "YAML12_SCALARS",
    "YAML_MAX_ALIASES",
    "YAML_MAX_DEPTH",
    "YAML_MAX_NODES",
    "FileError",
    "available_memory",
    "check_allocation",
    "check_inflation",
    "check_keys",
    "dump_yaml",
    "load_yaml",
    "parse_numbers",
    "parse_yaml",
    "read_bytes",
    "read_csv",
    "read_json",
    "read_npz",
    "read_text",
    "regular_file",
]
