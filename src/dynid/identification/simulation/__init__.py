"""Simulation-based estimators: the closed loop that recorded the logs is simulated again with
the estimate as the plant, under the controller that ran (``dynid.simulate.Controller``) on the
reference it tracked, on the compiled closed-loop twin (``dynid.simulate``).

- ``didim``: DIDIM (Gautier, Janot & Vandanjon, "A new closed-loop output error method for
  parameter identification of robot dynamics", IEEE TCST 21(2), 2013): the measured torques fitted
  on the regressor at the simulated states, iterated; PC-DIDIM with a CLS-3 or log-Cholesky
  inner fit (BIRDy, Leboutet et al. 2021), physically consistent.
- ``output_error``: CLOE and CLIE, closed-loop output and input error (Landau & Karimi 1997;
  BIRDy's CLOE): Levenberg-Marquardt on the position (CLOE) or torque (CLIE) error of the
  simulated loop, with sensitivities of the linearised closed loop.
- ``_loops``: the logs with their references and controllers, checked; an estimate's closed
  loop simulated on each.

Each module lists its ``METHODS`` (``dynid.identification.estimate.Method``, family
"simulation").
"""
