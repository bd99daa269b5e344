"""dynid's benchmarks, one run on this machine (``make bench``):

- dynamics: the batched regressor and RNEA against pinocchio called in a Python loop
  (Panda, N = 1e3, 1e4, 1e5; targets: regressor >= 5x, RNEA >= 3x at 1e5);
- identification: OLS of the Panda from 1e5 twin samples (regressor, friction columns, base
  reduction, solve; target <= 2 s) and reverse engineering from 1010 poses of M, g (<= 1 s);
- consistency: CLS-3 of the Panda from 1e5 twin samples (<= 5 s), SDP retrieval (<= 2 s) and
  penalty retrieval with Q = 8, kappa = 10 (<= 60 s on 2 cores);
- pipeline: excitation design for the Panda (10 harmonics, 20 s at 100 Hz; target <= 60 s)
  and preprocessing of 1e6 log samples (<= 5 s);
- compare: the Jaco2 Table 5 comparison of the Panda, 5 twin logs of 20 s at 1 kHz x the 8
  default methods (<= 2 min on 2 cores), and the whole demo (<= 3 min).

Runs ``dynid.bench.MAKE_BENCH`` (the registry's suites, one after the other), prints their
summaries and writes ``bench/results/<date>-<robot>.json`` (one entry per suite).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from dynid._files import atomic_write, to_builtin
from dynid.bench import MAKE_BENCH, SUITES, run_suite, summary
from dynid.bench.dynamics import DEFAULT_REPEAT, DEFAULT_SIZES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--robot", default="panda")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args()

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = {}
    for name in MAKE_BENCH:
        options = {"sizes": args.sizes, "repeat": args.repeat} if name == "dynamics" else {}
        robot = args.robot if SUITES[name].robot else None
        result[name] = run_suite(name, robot=robot, progress=say, **options)
        print(summary(name, result[name]))
    folder = Path(__file__).resolve().parent / "results"
    folder.mkdir(exist_ok=True)
    path = folder / f"{datetime.date.today().isoformat()}-{args.robot}.json"
    text = json.dumps(to_builtin(result), indent=2) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text))
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
