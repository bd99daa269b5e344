"""Linear estimators: base parameters from the inverse dynamic identification model (IDIM),
``tau = Y_b(q, dq, ddq) theta``, in closed form.

- ``estimators``: OLS, WLS (Szabó 2021 eq. 18-19) and IV on a regressor, with covariance and
  relative std (Gaz et al. 2019 §VI), the scikit-learn contract.
- ``idim``: the same from time series (one log or several, each with its own offsets), with
  linear friction and rotor inertias; IDIM-IV on the reference trajectory.
- ``robust``: IRLS (Huber, Tukey bisquare; logs re-folded weighted each pass), TLS and the
  errors-in-variables maximum likelihood with a known noise covariance;
- ``regularised``: ridge and elastic net, from the triangular factor of [W tau];
- ``reverse_engineering``: a controller's M(q), g(q) to coefficients (Gaz §IV-A).
"""
