"""Nonlinear estimators: physical parameters jointly with nonlinear friction.

- ``nls``: sigmoid, Stribeck and LuGre friction with the link parameters, by bounded
  Levenberg-Marquardt with exact Jacobians (Gilbert et al. 2024 eq. 16-22).
"""
