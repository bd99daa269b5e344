"""Robot models: serial chains from MDH/DH tables, URDF or dynid robot files; built-ins."""

from dynid.robot._builtin import builtin_robots as builtin_robots
from dynid.robot._builtin import load_robot as load_robot
from dynid.robot._joint import Joint as Joint
from dynid.robot._joint import PrismaticDH as PrismaticDH
from dynid.robot._joint import PrismaticMDH as PrismaticMDH
from dynid.robot._joint import RevoluteDH as RevoluteDH
from dynid.robot._joint import RevoluteMDH as RevoluteMDH
from dynid.robot._pinocchio import to_pinocchio as to_pinocchio
from dynid.robot._robot import JointLimits as JointLimits
from dynid.robot._robot import Robot as Robot
from dynid.robot._robot import Source as Source
from dynid.robot._urdf import load_urdf as load_urdf
from dynid.robot._yaml import load_robot_file as load_robot_file
from dynid.robot._yaml import robot_from_dict as robot_from_dict
from dynid.robot._yaml import robot_to_dict as robot_to_dict
from dynid.robot._yaml import save_robot as save_robot

__all__ = [
    "Joint",
    "JointLimits",
    "PrismaticDH",
    "PrismaticMDH",
    "RevoluteDH",
    "RevoluteMDH",
    "Robot",
    "Source",
    "builtin_robots",
    "load_robot",
    "load_robot_file",
    "load_urdf",
    "robot_from_dict",
    "robot_to_dict",
    "save_robot",
    "to_pinocchio",
]
