"""Constrained estimators: base parameters from a physically consistent full parameter set.

- ``cls``: CLS-1/2/3 by LMI-SDP (the Jaco2 comparison paper, eq. 3-6), with a prior, bounds,
  several logs and drive gains from motor currents; the dispatch of every constrained method.
- ``robust``: physically consistent IRLS, ridge and elastic net (CLS-3 with the estimators'
  row weights or penalty; BIRDy's PC-IDIM-IRLS).
- ``log_cholesky``: the log-Cholesky parametrisation, consistent by construction (Rucker &
  Wensing 2022), by Gauss-Newton.
"""
