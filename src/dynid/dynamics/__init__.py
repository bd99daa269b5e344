"""Batched rigid-body dynamics of a serial chain: kinematics, RNEA, regressor, M, c, g, ABA-free
forward dynamics. Every function takes ``(robot, q, ...)`` with joint arrays ``(*, n)``.

Threads: a batch below ``_launch.PARALLEL_MIN_SAMPLES`` (4096) samples runs on the calling
thread; a larger one on ``min(numba.get_num_threads(), usable CPUs)`` threads (the process's
CPU affinity, so ``taskset`` and container CPU sets are respected; one in a process-pool
worker, ``dynid._parallel``). See ``dynid.dynamics._launch`` for the measurements behind it."""

from dynid.dynamics.forward import forward_dynamics as forward_dynamics
from dynid.dynamics.kinematics import forward_kinematics as forward_kinematics
from dynid.dynamics.kinematics import tool_pose as tool_pose
from dynid.dynamics.mass_matrix import mass_matrix as mass_matrix
from dynid.dynamics.regressor import friction_regressor as friction_regressor
from dynid.dynamics.regressor import parameter_names as parameter_names
from dynid.dynamics.regressor import regressor as regressor
from dynid.dynamics.regressor import regressor_vjp as regressor_vjp
from dynid.dynamics.regressor import rotor_names as rotor_names
from dynid.dynamics.regressor import rotor_regressor as rotor_regressor
from dynid.dynamics.rnea import coriolis_torque as coriolis_torque
from dynid.dynamics.rnea import friction_torque as friction_torque
from dynid.dynamics.rnea import gravity_torque as gravity_torque
from dynid.dynamics.rnea import rnea as rnea
from dynid.dynamics.rnea import rotor_torque as rotor_torque
from dynid.dynamics.static_regressor import static_regressor as static_regressor

__all__ = [
    "coriolis_torque",
    "forward_dynamics",
    "forward_kinematics",
    "friction_regressor",
    "friction_torque",
    "gravity_torque",
    "mass_matrix",
    "parameter_names",
    "regressor",
    "regressor_vjp",
    "rnea",
    "rotor_names",
    "rotor_regressor",
    "rotor_torque",
    "static_regressor",
    "tool_pose",
]
