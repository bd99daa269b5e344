"""Robot descriptions: serial chains from MDH/DH tables, URDF or dynid robot files; built-ins and
robots by name from example-robot-data; the inertial-parameter layout (``inertia``), parameter
bounds (``bounds``) and bounds derived from a description (``derived_bounds``).

``load_urdf`` and ``to_pinocchio`` load pinocchio on first use.
"""

from dynid._lazy import lazy_exports
from dynid.robot._builtin import builtin_robots as builtin_robots
from dynid.robot._builtin import load_robot as load_robot
from dynid.robot._example_robot_data import ExampleRobot as ExampleRobot
from dynid.robot._example_robot_data import example_robots as example_robots
from dynid.robot._joint import Joint as Joint
from dynid.robot._joint import PrismaticDH as PrismaticDH
from dynid.robot._joint import PrismaticMDH as PrismaticMDH
from dynid.robot._joint import RevoluteDH as RevoluteDH
from dynid.robot._joint import RevoluteMDH as RevoluteMDH
from dynid.robot._robot import MAX_GRAVITY as MAX_GRAVITY
from dynid.robot._robot import MAX_JOINTS as MAX_JOINTS
from dynid.robot._robot import MAX_LENGTH as MAX_LENGTH
from dynid.robot._robot import MAX_MASS as MAX_MASS
from dynid.robot._robot import STANDARD_GRAVITY as STANDARD_GRAVITY
from dynid.robot._robot import JointLimits as JointLimits
from dynid.robot._robot import Robot as Robot
from dynid.robot._robot import Source as Source
from dynid.robot._transmission import Transmission as Transmission
from dynid.robot._yaml import load_robot_file as load_robot_file
from dynid.robot._yaml import robot_from_dict as robot_from_dict
from dynid.robot._yaml import robot_to_dict as robot_to_dict
from dynid.robot._yaml import save_robot as save_robot
from dynid.robot.bounds import LinkBounds as LinkBounds
from dynid.robot.bounds import ParameterBounds as ParameterBounds
from dynid.robot.inertia import RoundedInertiaWarning as RoundedInertiaWarning

__all__ = [
    "MAX_GRAVITY",
    "MAX_JOINTS",
    "MAX_LENGTH",
    "MAX_MASS",
    "STANDARD_GRAVITY",
    "ExampleRobot",
    "Joint",
    "JointLimits",
    "LinkBounds",
    "LinkExtent",
    "ParameterBounds",
    "PrismaticDH",
    "PrismaticMDH",
    "RevoluteDH",
    "RevoluteMDH",
    "Robot",
    "RoundedInertiaWarning",
    "Source",
    "Transmission",
    "URDFWarning",
    "builtin_robots",
    "derive_bounds",
    "example_robots",
    "load_robot",
    "load_robot_file",
    "load_urdf",
    "robot_from_dict",
    "robot_to_dict",
    "save_robot",
    "to_pinocchio",
]

_LAZY = {"load_urdf": "dynid.robot._urdf", "to_pinocchio": "dynid.robot._pinocchio",
         "URDFWarning": "dynid.robot._urdf_tree", "derive_bounds": "dynid.robot.derived_bounds",
         "LinkExtent": "dynid.robot.derived_bounds"}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
