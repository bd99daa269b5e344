"""Excitation: trajectory families (``trajectory``), the optimisation of a Fourier excitation
for the conditioning of the base regressor (``optimize``; Gilbert et al. 2024 eq. 15, Szabó 2021
§5), and the limits it keeps to, derived where a description has none (``limits``).
"""

from dynid.excitation.limits import CompletedLimits as CompletedLimits
from dynid.excitation.limits import derived_acceleration_limits as derived_acceleration_limits
from dynid.excitation.limits import excitation_limits as excitation_limits
from dynid.excitation.optimize import CRITERIA as CRITERIA
from dynid.excitation.optimize import ExcitationResult as ExcitationResult
from dynid.excitation.optimize import criterion_value as criterion_value
from dynid.excitation.optimize import limit_gain as limit_gain
from dynid.excitation.optimize import optimize_excitation as optimize_excitation
from dynid.excitation.optimize import random_fourier as random_fourier
from dynid.excitation.trajectory import FourierTrajectory as FourierTrajectory
from dynid.excitation.trajectory import RampedVelocityFourier as RampedVelocityFourier
from dynid.excitation.trajectory import SampledTrajectory as SampledTrajectory
from dynid.excitation.trajectory import SinusoidalVelocity as SinusoidalVelocity
from dynid.excitation.trajectory import gaz2019_table1 as gaz2019_table1
from dynid.excitation.trajectory import load_poses as load_poses
from dynid.excitation.trajectory import load_trajectory as load_trajectory
from dynid.excitation.trajectory import random_poses as random_poses
from dynid.excitation.trajectory import rest_at_ends as rest_at_ends
from dynid.excitation.trajectory import save_trajectory as save_trajectory
from dynid.excitation.trajectory import trajectory_from_dict as trajectory_from_dict

__all__ = [
    "CRITERIA",
    "CompletedLimits",
    "ExcitationResult",
    "FourierTrajectory",
    "RampedVelocityFourier",
    "SampledTrajectory",
    "SinusoidalVelocity",
    "criterion_value",
    "derived_acceleration_limits",
    "excitation_limits",
    "gaz2019_table1",
    "limit_gain",
    "load_poses",
    "load_trajectory",
    "optimize_excitation",
    "random_fourier",
    "random_poses",
    "rest_at_ends",
    "save_trajectory",
    "trajectory_from_dict",
]
