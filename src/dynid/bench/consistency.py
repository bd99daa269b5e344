"""The consistency suite (``dynid bench --suite consistency``): CLS-3 from 10^5 twin samples,
the joint physical + sigmoid NLS, SDP retrieval and Gaz's penalty retrieval."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from dynid.bench._timing import twin_log
from dynid.robot import load_robot


def run(*, robot: str = "panda", n_samples: int = 100_000, restarts: int = 8,
        stages: int = 10, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of (a) CLS-3 from ``n_samples`` twin samples (regressor, compression, SDP),
    (b) the joint physical + sigmoid-friction NLS on them (decimated to its default 10^4), (c)
    SDP retrieval and (d) penalty retrieval (Q = ``restarts``, kappa = ``stages``) from the
    robot's own static base coefficients."""
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.nonlinear.nls import identify_nls
    from dynid.identification.retrieval.retrieve import retrieve_penalty, retrieve_sdp
    from dynid.model.base_parameters import robot_base_parameters

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    data = twin_log(model_robot, n_samples, seed)
    identify_constrained(model_robot, data.select(slice(0, 5_000)))  # compile and warm up
    start = time.perf_counter()
    cls3 = identify_constrained(model_robot, data, method="cls3")
    cls3_seconds = time.perf_counter() - start
    say(f"CLS-3, {data.n_samples} samples: {cls3_seconds:.2f} s ({cls3.status}, consistent "
        f"{cls3.consistency.consistent})")
    start = time.perf_counter()
    nls = identify_nls(model_robot, data, friction="sigmoid")
    nls_seconds = time.perf_counter() - start
    say(f"NLS with sigmoid friction, {data.n_samples} samples ({nls.n_samples_fitted} "
        f"fitted): {nls_seconds:.1f} s ({nls.status})")
    base = robot_base_parameters(model_robot, kind="static", drop_joint1_gravity=True)
    coefficients = base.base(model_robot.parameters.ravel())
    sdp = retrieve_sdp(model_robot, base, coefficients)
    say(f"SDP retrieval: {sdp.seconds:.2f} s, relative error {sdp.relative_error_percent:.2g} %")
    penalty = retrieve_penalty(model_robot, base, coefficients, restarts=restarts,
                               stages=stages, seed=seed, progress=say)
    say(f"penalty retrieval (Q = {restarts}, kappa = {stages}): {penalty.seconds:.1f} s, "
        f"relative error {penalty.relative_error_percent:.2g} %")
    return {
        "robot": model_robot.name,
        "cls3_n_samples": data.n_samples,
        "cls3_seconds": cls3_seconds,
        "cls3_consistent": cls3.consistency.consistent,
        "nls_seconds": nls_seconds,
        "nls_samples_fitted": nls.n_samples_fitted,
        "sdp_retrieval_seconds": sdp.seconds,
        "sdp_retrieval_relative_error_percent": sdp.relative_error_percent,
        "penalty_retrieval_restarts": restarts,
        "penalty_retrieval_stages": stages,
        "penalty_retrieval_seconds": penalty.seconds,
        "penalty_retrieval_relative_error_percent": penalty.relative_error_percent,
        "penalty_retrieval_consistent": penalty.consistent,
        "cpus": os.cpu_count(),
    }


def summary(result: dict) -> str:
    return (
        f"CLS-3 of {result['robot']}, {result['cls3_n_samples']} samples: "
        f"{result['cls3_seconds']:.2f} s\n"
        f"NLS (physical + sigmoid friction), {result['nls_samples_fitted']} samples fitted: "
        f"{result['nls_seconds']:.1f} s\n"
        f"SDP retrieval: {result['sdp_retrieval_seconds']:.2f} s "
        f"({result['sdp_retrieval_relative_error_percent']:.2g} %)\n"
        f"penalty retrieval, Q = {result['penalty_retrieval_restarts']}, kappa = "
        f"{result['penalty_retrieval_stages']}, {result['cpus']} CPUs: "
        f"{result['penalty_retrieval_seconds']:.1f} s "
        f"({result['penalty_retrieval_relative_error_percent']:.2g} %)"
    )
