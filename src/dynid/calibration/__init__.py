"""Geometric (kinematic) calibration: kinematic parameter models, end-effector measurements,
Levenberg–Marquardt estimation, pose selection and corrected robot files."""

from dynid.calibration.measurements import Measurements as Measurements
