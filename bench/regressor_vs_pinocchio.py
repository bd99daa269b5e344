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

from dynid.bench import format_bench, run_bench


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--robot", default="panda")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    result = run_bench(robot=args.robot, sizes=args.sizes, repeat=args.repeat,
                       progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(format_bench(result))
    folder = Path(__file__).resolve().parent / "results"
    folder.mkdir(exist_ok=True)
    path = folder / f"{datetime.date.today().isoformat()}-{args.robot}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
