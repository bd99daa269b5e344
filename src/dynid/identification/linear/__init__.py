"""Linear estimators: base parameters from the inverse dynamic identification model (IDIM),
``tau = Y_b(q, dq, ddq) theta``, in closed form.

- ``estimators``: OLS, WLS (Szabó 2021 eq. 18-19) and IV on a regressor, with covariance and
  relative std (Gaz et al. 2019 §VI), the scikit-learn contract.
- ``idim``: the same from time series (one log or several, each with its own offsets), with
  linear friction and rotor inertias; IDIM-IV on the reference trajectory.
- ``reverse_engineering``: a controller's M(q), g(q) to coefficients (Gaz §IV-A).
"""
