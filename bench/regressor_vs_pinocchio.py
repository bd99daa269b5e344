"""Time dynid's batched regressor and RNEA against pinocchio in a Python loop (Panda).

Prints the table and writes the JSON of ``dynid bench --json`` to
``bench/results/<date>-<robot>.json``. Run with ``make bench``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from dynid._files import atomic_write
from dynid.bench import DEFAULT_REPEAT, DEFAULT_SIZES, format_bench, run_bench


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--robot", default="panda")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args()
    result = run_bench(robot=args.robot, sizes=args.sizes, repeat=args.repeat,
                       progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(format_bench(result))
    folder = Path(__file__).resolve().parent / "results"
    folder.mkdir(exist_ok=True)
    path = folder / f"{datetime.date.today().isoformat()}-{args.robot}.json"
    text = json.dumps(result, indent=2) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text))
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
