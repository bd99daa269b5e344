"""Geometric (kinematic) calibration: kinematic parameter models, end-effector measurements,
Levenberg–Marquardt estimation, pose selection and corrected robot files."""

from dynid.calibration.fit import Calibration as Calibration
from dynid.calibration.fit import calibrate as calibrate
from dynid.calibration.fit import plot_calibration as plot_calibration
from dynid.calibration.io import MeasurementGapWarning as MeasurementGapWarning
from dynid.calibration.io import read_joint_positions as read_joint_positions
from dynid.calibration.io import read_measurement_bag as read_measurement_bag
from dynid.calibration.io import read_measurements as read_measurements
from dynid.calibration.io import write_joint_positions as write_joint_positions
from dynid.calibration.io import write_measurements as write_measurements
from dynid.calibration.measurements import Measurements as Measurements
from dynid.calibration.model import Identifiability as Identifiability
from dynid.calibration.model import KinematicModel as KinematicModel
from dynid.calibration.poses import PoseSelection as PoseSelection
from dynid.calibration.poses import select_poses as select_poses
from dynid.calibration.twin import measure as measure
from dynid.calibration.twin import perturbed as perturbed

__all__ = ["Calibration", "Identifiability", "KinematicModel", "MeasurementGapWarning",
           "Measurements", "PoseSelection", "calibrate", "measure", "perturbed",
           "plot_calibration", "read_joint_positions", "read_measurement_bag",
           "read_measurements", "select_poses", "write_joint_positions",
           "write_measurements"]
