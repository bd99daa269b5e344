"""cvxpy pieces shared by the semidefinite routes (constrained identification, feasible
retrieval, payload): one link's pseudo-inertia as an affine expression, and a Clarabel solve
whose failures are named errors, never a silent result."""

from __future__ import annotations

import numpy as np

from dynid.robot.inertia import FIRST_MOMENT, INERTIA, MASS, N_LINK_PARAMETERS

_INDEX = np.arange(N_LINK_PARAMETERS)


def link_pseudo_inertia(pi, offset: int = 0):
    """For the link whose 10-vector is ``pi[offset:offset + 10]`` (a cvxpy expression):
    ``(m, h, inertia entries (xx, xy, xz, yy, yz, zz), J)`` with ``J`` the symmetric 4x4
    pseudo-inertia ``[[tr(I)/2 E - I, h], [h^T, m]]``, affine in ``pi``."""
    import cvxpy as cp

    m = pi[offset + _INDEX[MASS]]
    h = pi[offset + _INDEX[FIRST_MOMENT]]
    xx, xy, xz, yy, yz, zz = (pi[offset + i] for i in _INDEX[INERTIA])
    half = 0.5 * (xx + yy + zz)
    j = cp.bmat([[half - xx, -xy, -xz, h[0]], [-xy, half - yy, -yz, h[1]],
                 [-xz, -yz, half - zz, h[2]], [h[0], h[1], h[2], m]])
    return m, h, (xx, xy, xz, yy, yz, zz), 0.5 * (j + j.T)


# Clarabel's tolerances for the second try of a problem it could not finish at its defaults
RELAXED_TOLERANCE = 1e-7


def solve(problem, what: str, *, infeasible: str | None = None, hint: str = "") -> str:
    """Solve ``problem`` with Clarabel and return its status ("optimal" or
    "optimal_inaccurate"). A solver error, an infeasible problem (``infeasible``: the message
    for it) or any other status is a ValueError that starts with ``what``; ``hint`` is added
    to the no-solution message."""
    import cvxpy as cp

    relaxed = False
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        # Clarabel stops with "insufficient progress" a few digits short of its 1e-8
        # tolerances on some badly scaled fits (a tiny relative residual magnified): once more
        # at RELAXED_TOLERANCE, reported as optimal_inaccurate
        try:
            problem.solve(solver=cp.CLARABEL, tol_gap_abs=RELAXED_TOLERANCE,
                          tol_gap_rel=RELAXED_TOLERANCE, tol_feas=RELAXED_TOLERANCE)
        except cp.error.SolverError as error:
            raise ValueError(f"{what}: the solver failed: {error}") from None
        relaxed = True
    status = str(problem.status)
    if relaxed and status == "optimal":
        status = "optimal_inaccurate"
    if infeasible is not None and status in ("infeasible", "infeasible_inaccurate"):
        raise ValueError(infeasible)
    if problem.value is None or status not in ("optimal", "optimal_inaccurate"):
        raise ValueError(f"{what}: no solution (solver status {status}){hint}")
    return status
