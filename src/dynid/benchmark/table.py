"""The benchmark's table: per method and noise profile, over the draws (the runs of
``dynid.benchmark.runner``):

- ``bias``: ``||mean_draws(beta^ - beta)|| / ||beta||`` (the systematic part of the error);
- ``spread``: ``sqrt(mean_draws ||(beta^ - beta) - mean||^2) / ||beta||`` (the draws' scatter);
- ``median_parameter_error``, ``mean_parameter_error``: of ``||beta^ - beta|| / ||beta||``;
- ``median_torque_error``: ``||tau^ - tau|| / ||tau||`` on the noise-free validation log, and
  ``median_torque_rms`` [N m];
- ``median_seconds``, ``total_seconds``: the methods' own wall time;
- ``convergence_rate``: the fraction of runs whose method met its own stopping rule with a
  finite estimate; ``failed``: runs that raised, ``failure``: the first one's status;
- ``skipped``: the reason a method did not run (what the problem lacks).

Errors over converged and unconverged runs alike (a method's failures to converge count in its
errors, as in BIRDy); a run that raised has no estimate and counts in ``convergence_rate`` only.
Written as JSON (``write_table``, with the runs) and CSV (one row per method and profile).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid._files import atomic_write_all, to_builtin

__all__ = ["COLUMNS", "summarise", "write_table"]

COLUMNS = ("method", "family", "profile", "runs", "bias", "spread", "median_parameter_error",
           "mean_parameter_error", "median_torque_error", "median_torque_rms",
           "median_seconds", "total_seconds", "convergence_rate", "failed", "failure",
           "skipped")


def _row(method: str, profile: str, records: list[dict], draws: int) -> dict:
    row = dict.fromkeys(COLUMNS)
    row.update(method=method, profile=profile, family=records[0].get("family"))
    if "skipped" in records[0]:
        row.update(runs=0, skipped=records[0]["skipped"])
        return row
    # a draw-all record stands for every draw: it counts once in the statistics (its error is
    # the same for all) and `runs` says how many draws it serves
    shared = records[0].get("key") == "draw-all"
    weight = draws if shared else 1  # the runs each record stands for
    row["runs"] = weight * len(records)

    def finite(record: dict) -> bool:  # a figure stored as null (JSON) was not finite
        return all(record.get(key) is not None and np.isfinite(record[key])
                   for key in ("parameter_error", "torque_error"))

    fitted = [r for r in records if r.get("ok") and finite(r)]
    row["failed"] = weight * (len(records) - len(fitted))
    row["failure"] = next((r["status"] if not r.get("ok") else "figures not finite"
                           for r in records if r not in fitted), None)
    row["convergence_rate"] = sum(bool(r.get("converged")) for r in records) / len(records)
    row["total_seconds"] = float(sum(r.get("seconds") or 0.0 for r in records))
    if not fitted:
        return row
    errors = [np.asarray(r["signed_error"], dtype=float) for r in fitted]
    if len({e.size for e in errors}) == 1:
        stack = np.vstack(errors)
        mean = stack.mean(axis=0)
        row["bias"] = float(np.linalg.norm(mean))
        row["spread"] = float(np.sqrt(np.mean(np.sum((stack - mean) ** 2, axis=1))))
    parameter = np.array([r["parameter_error"] for r in fitted], dtype=float)
    row["median_parameter_error"] = float(np.median(parameter))
    row["mean_parameter_error"] = float(np.mean(parameter))
    row["median_torque_error"] = float(np.median([r["torque_error"] for r in fitted]))
    # a torque RMS stored as null (not finite) is NaN here
    row["median_torque_rms"] = float(np.median(np.array([r["torque_rms"] for r in fitted],
                                                        dtype=float)))
    row["median_seconds"] = float(np.median([r["seconds"] for r in fitted]))
    return row


def summarise(records: Sequence[dict], *, draws: int) -> list[dict]:
    """One row per (method, profile), in the order the records first name them."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        groups.setdefault((record["method"], record["profile"]), []).append(record)
    return [_row(method, profile, group, draws) for (method, profile), group in groups.items()]


def _csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return out.getvalue()


def write_table(rows: list[dict], records: Sequence[dict], folder: Path, *,
                settings: dict) -> list[Path]:
    """``benchmark.json`` (settings, rows, runs) and ``benchmark.csv`` (rows) in ``folder``,
    written together."""
    payload = to_builtin({"settings": settings, "columns": list(COLUMNS), "rows": rows,
                          "runs": list(records)}, nonfinite_as_none=True)
    text = json.dumps(payload, indent=1)
    table = _csv(rows)
    return atomic_write_all([(folder / "benchmark.json", lambda tmp: tmp.write_text(text)),
                             (folder / "benchmark.csv", lambda tmp: tmp.write_text(table))])
