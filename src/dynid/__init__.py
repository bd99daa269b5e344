"""dynid: dynamic identification of robot manipulators.

``import dynid`` gives the workflow's nouns and verbs, stage by stage (each loads its module on
first use, so the import is fast and cvxpy, sympy, matplotlib, numba and pinocchio load only when
a step needs them)::

    robot    = dynid.load_robot("panda")                      # dynid.robot
    result   = dynid.optimize_excitation(robot, ...)           # dynid.excitation
    data     = dynid.prepare(dynid.read_dataset("log.csv"))    # dynid.data
    model    = dynid.identify(robot, data)                     # dynid.identification
    dynid.save_model(model, "model.yaml")                      # dynid.model
    fixed    = dynid.calibrate(dynid.KinematicModel(robot), measurements).robot  # calibration
    report   = dynid.validate_model(model, validation_data)    # dynid.evaluation
    dynid.export_robot(dynid.identified_robot(model), "arm.urdf")  # dynid.export

The subpackages hold the rest: ``robot``, ``dynamics``, ``friction``, ``data``, ``model``,
``excitation``, ``simulate``, ``evaluation``, ``identification``, ``calibration``, ``export``,
``codegen``, ``monitor``; ``workflow`` runs them end to end (the demo) and ``bench`` measures them.
"""

from dynid._lazy import lazy_exports
from dynid._version import __version__

_LAZY = {
    **dict.fromkeys((
        "Robot", "RevoluteMDH", "PrismaticMDH", "RevoluteDH", "PrismaticDH", "JointLimits",
        "LinkBounds", "ParameterBounds", "load_robot", "load_urdf", "save_robot", "builtin_robots",
        "to_pinocchio",
    ), "dynid.robot"),
    **dict.fromkeys((
        "rnea", "regressor", "mass_matrix", "gravity_torque", "coriolis_torque",
        "forward_dynamics", "forward_kinematics", "tool_pose",
    ), "dynid.dynamics"),
    **dict.fromkeys((
        "NoFriction", "ViscousCoulomb", "Arctan", "Sigmoid", "Stribeck", "LuGre", "fit_friction",
    ), "dynid.friction"),
    **dict.fromkeys((
        "Dataset", "StaticData", "read_dataset", "write_dataset", "read_static", "read_panda_log",
        "read_rosbag",
        "prepare", "inspect", "split",
    ), "dynid.data"),
    **dict.fromkeys((
        "FourierTrajectory", "random_fourier", "optimize_excitation", "save_trajectory",
        "load_trajectory", "random_poses",
    ), "dynid.excitation"),
    **dict.fromkeys((
        "SensorModel", "simulate_open_loop", "simulate_closed_loop",
    ), "dynid.simulate"),
    **dict.fromkeys((
        "BaseParameters", "robot_base_parameters", "symbolic_regrouping", "check_consistency",
        "LinearModel", "save_model", "load_model",
    ), "dynid.model"),
    **dict.fromkeys((
        "OLS", "WLS", "IV", "identify", "identify_iv", "identify_static", "identify_constrained",
        "identify_nls", "compare_friction", "retrieve_sdp", "retrieve_penalty", "identify_payload",
        "bootstrap", "compare_methods", "write_table",
    ), "dynid.identification"),
    **dict.fromkeys((
        "KinematicModel", "Measurements", "calibrate", "select_poses", "read_measurements",
    ), "dynid.calibration"),
    **dict.fromkeys((
        "validate_model", "build_report", "write_report", "plot_torques",
    ), "dynid.evaluation"),
    **dict.fromkeys((
        "rmse", "mae", "relative_error_percent",
    ), "dynid.metrics"),
    **dict.fromkeys((
        "export_robot", "identified_robot",
    ), "dynid.export"),
    **dict.fromkeys((
        "detect_collisions",
    ), "dynid.monitor"),
}
__all__ = ["__version__", *_LAZY]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
