"""One fit from motor-current logs by any method that identifies drive gains: the dispatch that
the bootstrap (``dynid.identification.bootstrap``) and the method comparison
(``dynid.identification.compare``) share.

Every method takes the current logs and the same scale-fixing knowledge (a payload log with
its known payload, or known gains) and returns a model in torque units with ``drive_gains``:
``ols`` is Gautier & Briot's global least squares (``identify_drive_gains``); ``cls1``,
``cls2``, ``cls3`` and ``log-cholesky`` run ``identify_constrained`` and ``nls``
``identify_nls`` with ``payload_data``, ``payload`` and ``gains``.

``payload_torque`` rebuilds the known payload's torque on the payload log from a fitted model
(its known mass and CoM, and the part the fit identified): what the bootstrap adds to the
model's prediction there to resample the payload log's residuals too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset
from dynid.dynamics import regressor
from dynid.identification.drive_gains import (
    KnownPayload,
    _payload_columns,
    identify_drive_gains,
    scale_knowledge,
)
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.inertia import FIRST_MOMENT, INERTIA, N_LINK_PARAMETERS, PARAMETER_NAMES

# the methods that identify drive gains from current logs, and the function each runs
CURRENT_METHODS = ("ols", "cls1", "cls2", "cls3", "log-cholesky", "nls")


def fit_currents(method: str, robot: Robot, logs: Dataset | Sequence[Dataset], *,
                 payload_data: Dataset | None = None, payload: KnownPayload | None = None,
                 gains: Mapping[int | str, float] | None = None, **options):
    """``method``'s fit of ``robot`` to the current logs ``logs`` with the payload log
    ``payload_data`` (its ``payload``) and/or the known ``gains``: what the method's function
    returns (``ols``: a LinearModel; the others a result with ``.model``), its model carrying
    ``drive_gains``. ``options`` go to the function as they are."""
    if method not in CURRENT_METHODS:
        raise ValueError(f"`method` must be one of {CURRENT_METHODS} with motor-current logs "
                         f"(methods that identify drive gains), got {method!r:.60}")
    scale = {"payload_data": payload_data, "payload": payload, "gains": gains}
    if method == "ols":
        result = identify_drive_gains(robot, logs, **scale, **options)
    elif method == "nls":
        from dynid.identification.nonlinear.nls import identify_nls

        result = identify_nls(robot, logs, **scale, **options)
    else:
        from dynid.identification.constrained.cls import identify_constrained

        result = identify_constrained(robot, logs, method=method, **scale, **options)
    model = result if isinstance(result, LinearModel) else getattr(result, "model", None)
    if not isinstance(model, LinearModel) or model.drive_gains is None:
        raise ValueError(f"`method` {method!r}: the fit of the current logs returned no drive "
                         "gains")
    return result


def current_scale(robot: Robot, logs: Sequence[Dataset], methods: Sequence, payload_data,
                  payload, gains, *, data: str = "data", method: str = "method"
                  ) -> dict | None:
    """What fixes the drive gains' scale of motor-current ``logs``, as the keyword arguments
    of every fit of ``methods`` (each a name of ``CURRENT_METHODS`` or a function); None for
    torque logs, which take none of them. ``data``, ``method``: the arguments' names in the
    errors."""
    given = [key for key, value in (("payload_data", payload_data), ("payload", payload),
                                    ("gains", gains)) if value is not None]
    efforts = {log.effort for log in logs}
    if len(efforts) > 1:
        raise ValueError(f"`{data}` mixes joint-torque and motor-current logs: give one kind")
    if efforts == {"torque"}:
        if given:
            raise ValueError(f"`{'`, `'.join(given)}`: these fix the drive gains of "
                             f"motor-current logs, and `{data}` holds joint torques")
        return None
    without = [str(m) for m in methods if isinstance(m, str) and m not in CURRENT_METHODS]
    if without:
        raise ValueError(f"`{method}`: {', '.join(without)} identif"
                         f"{'ies' if len(without) == 1 else 'y'} no drive gains, so cannot read "
                         f"motor-current logs: choose among {CURRENT_METHODS}")
    if payload_data is not None:
        if not isinstance(payload_data, Dataset) or payload_data.effort != "current":
            raise ValueError("`payload_data` must be a motor-current Dataset (the payload log)")
        if payload_data.ddq is None:
            raise ValueError("`payload_data` has no accelerations (ddq): differentiate the "
                             "velocities first")
    scale_knowledge(robot, payload_data, payload, gains)  # the fits' own check, up front
    return {"payload_data": payload_data, "payload": payload, "gains": gains}


def payload_torque(model: LinearModel, robot: Robot, data: Dataset, payload: KnownPayload,
                   measured: NDArray) -> NDArray:
    """``(N, n)``: the payload's joint torques on the payload log ``data`` by ``model``'s fit:
    the known mass (and CoM) of ``payload`` and the part the fit identified (its report's
    ``payload.identified``, entries ``payload_<parameter>``). A fit that does not report that
    part gets it here by least squares on the payload log's torque residual ``measured -
    model.predict`` (``measured``: the log's currents times the model's gains, less the log's
    own torque offsets where the fit gave it some)."""
    n = robot.n_joints
    last = N_LINK_PARAMETERS * (n - 1)
    columns = regressor(robot, data.q, data.dq, data.ddq)[..., last:]  # (N, n, 10)
    link = _payload_columns(robot, payload)[0]  # the known part, in the last link's frame
    entry = model.report.get("payload")
    identified = entry.get("identified") if isinstance(entry, dict) else None
    if identified:
        for name, value in identified.items():
            link[PARAMETER_NAMES.index(name.removeprefix("payload_"))] += float(value)
        return columns @ link
    every = np.arange(N_LINK_PARAMETERS)
    unknown = list(every[INERTIA]) + ([] if payload.com is not None
                                      else list(every[FIRST_MOMENT]))
    residual = measured - model.predict(data.q, data.dq, data.ddq, data.t) - columns @ link
    design = columns[..., unknown].reshape(-1, len(unknown))
    link[unknown] = np.linalg.lstsq(design, residual.ravel(), rcond=None)[0]
    return columns @ link
