"""Recursive (online) estimators: the estimate refreshed sample by sample, for a log read once
or a robot running.

- ``rls``: recursive least squares with exponential forgetting on the base regressor, with a
  bounded-trace guard against covariance wind-up (Lozano Leal & Goodwin 1985; Åström &
  Wittenmark, Adaptive Control, 1995), started exactly (no forgetting: the OLS estimate to
  rounding); ``RecursiveLeastSquares`` on any ``y = Y theta``, ``OnlineRLS`` on a robot,
  ``identify_rls`` the batch face. The recursion is compiled (``_rls_kernel``).
- ``kalman``: EKF, square-root EKF, UKF (Julier & Uhlmann 2004) and square-root UKF (van der
  Merwe & Wan 2001) on the joint state-parameter model ``x = [q, dq, theta]`` (BIRDy's DDIM
  family, Leboutet et al. 2021), ``theta`` the base parameters; the process the compiled
  forward dynamics driven by the measured torque, the measurement the positions and
  velocities (``_kalman_kernel``). ``KalmanFilter`` online, ``identify_kalman`` batch.
- ``payload``: ``OnlinePayload``, the payload on the last link tracked by RLS with forgetting
  on ``tau - tau_arm = Y_payload phi`` (Gilbert et al. 2024, eq. 22).

``METHODS``: the family's estimators under the one contract (``dynid.identification.estimate``).
"""

from __future__ import annotations

from dynid.identification.estimate import Estimate, Method, Problem

__all__ = ["METHODS"]


def _rls(problem: Problem, **options) -> Estimate:
    from dynid.identification.recursive.rls import identify_rls

    return identify_rls(problem.robot, problem.logs, friction=problem.friction, **options)


def _kalman(name: str):
    def run(problem: Problem, **options) -> Estimate:
        from dynid.identification.recursive.kalman import identify_kalman

        if problem.friction is not None:
            options.setdefault("friction", problem.friction)
        return identify_kalman(problem.robot, problem.logs, method=name, start=problem.start,
                               **options)
    return run


_KALMAN_CITATIONS = {
    "ekf": "BIRDy (Leboutet et al. 2021) DDIM-EKF: joint state-parameter EKF",
    "srekf": "Kailath, Sayed & Hassibi 2000 ch. 12 (array square-root EKF), DDIM",
    "ukf": "Julier & Uhlmann 2004; Wan & van der Merwe 2000 (joint UKF), DDIM",
    "srukf": "van der Merwe & Wan 2001 (square-root UKF), DDIM",
}

METHODS: tuple[Method, ...] = (
    Method("rls", "recursive", False, frozenset({"ddq", "effort"}),
           "Ljung & Söderström 1983 (RLS, exponential forgetting); Lozano Leal & Goodwin "
           "1985 (bounded trace)", _rls),
    *(Method(name, "recursive", False, frozenset({"effort"}), citation, _kalman(name))
      for name, citation in _KALMAN_CITATIONS.items()),
)
