"""Retrieval: a feasible full parameter set behind identified base coefficients.

- ``retrieve``: penalty-based global optimisation (Gaz et al. 2019 §V, Algorithm 1) and the
  SDP alternative, with the bounds check.
"""
