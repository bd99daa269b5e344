"""Robots by name from ``example-robot-data`` (Gepetto, BSD-3-Clause), an optional extra:
``pip install 'dynid[robots]'``.

The PyPI package ``example-robot-data`` (>= 4.4) holds the robots' URDFs and meshes only, no
Python module: its files lie under ``cmeel.prefix/share/example-robot-data/robots`` of the
installed distribution, found through ``importlib.metadata``. Nothing is downloaded at run
time. ``CATALOG`` lists the serial arms dynid loads from it, each with the tip link that picks
the arm's chain (a gripper's joints are locked and carried by the last link). A name that is
also a built-in robot (``panda``) is reached as ``example-robot-data:panda``; every name works
with that prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["CATALOG", "EXTRA", "PREFIX", "ExampleRobot", "example_robot", "example_robots",
           "load_example_robot", "robots_folder"]

DISTRIBUTION = "example-robot-data"
EXTRA = "robots"  # dynid's optional extra that installs it
INSTALL = f"pip install 'dynid[{EXTRA}]'"
PREFIX = f"{DISTRIBUTION}:"
_ROBOTS = ("cmeel.prefix", "share", "example-robot-data", "robots")


@dataclass(frozen=True)
class ExampleRobot:
    """One arm of example-robot-data: its name, its URDF (under the package's ``robots``
    folder), the tip link of the arm (None: the URDF is one chain) and its joint count."""

    name: str
    urdf: str
    tip: str | None
    n_joints: int
    description: str


CATALOG = (
    ExampleRobot("ur3", "ur_description/urdf/ur3_robot.urdf", None, 6, "Universal Robots UR3"),
    ExampleRobot("ur5", "ur_description/urdf/ur5_robot.urdf", None, 6, "Universal Robots UR5"),
    ExampleRobot("ur10", "ur_description/urdf/ur10_robot.urdf", None, 6,
                 "Universal Robots UR10"),
    ExampleRobot("panda", "panda_description/urdf/panda.urdf", "panda_link8", 7,
                 "Franka Emika Panda to the flange (the hand and its fingers carried by link 7)"),
    ExampleRobot("kinova", "kinova_description/robots/kinova.urdf", None, 6,
                 "Kinova Jaco2 j2s6s200 (6 joints, no fingers)"),
    ExampleRobot("xarm7", "xarm_description/urdf/xarm7.urdf", None, 7, "UFACTORY xArm 7"),
    ExampleRobot("z1", "z1_description/urdf/z1.urdf", "gripperStator", 6,
                 "Unitree Z1 (its gripper carried by link 6)"),
    ExampleRobot("so100", "so_arm_description/urdf/so100.urdf", "gripper", 5,
                 "SO-ARM100 (its jaw carried by the wrist)"),
    ExampleRobot("so101", "so_arm_description/urdf/so101.urdf", "gripper_link", 5,
                 "SO-101 (its jaw carried by the wrist)"),
    ExampleRobot("talos-left-arm", "talos_data/robots/talos_left_arm.urdf",
                 "gripper_left_base_link", 6,
                 "PAL TALOS left arm (its gripper carried by the last link)"),
)


@cache
def robots_folder() -> Path | None:
    """The installed package's ``robots`` folder, or None when it is not installed."""
    from importlib import metadata

    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    folder = Path(str(distribution.locate_file(Path(*_ROBOTS))))
    return folder if folder.is_dir() else None


def example_robot(name: str) -> ExampleRobot | None:
    """The catalog entry called ``name`` (with or without the ``example-robot-data:`` prefix)."""
    key = name[len(PREFIX):] if name.startswith(PREFIX) else name
    return next((entry for entry in CATALOG if entry.name == key), None)


def example_robots(builtins: list[str]) -> list[tuple[str, ExampleRobot]]:
    """The arms that are installed, each with the name that reaches it (prefixed where a
    built-in robot has the same name); empty when the package is not installed."""
    folder = robots_folder()
    if folder is None:
        return []
    return [(PREFIX + entry.name if entry.name in builtins else entry.name, entry)
            for entry in CATALOG if (folder / entry.urdf).is_file()]


def load_example_robot(entry: ExampleRobot, *, name: str, tip: str | None = None):
    """The arm ``entry`` as a Robot named ``name`` (``tip`` overrides the catalog's)."""
    folder = robots_folder()
    if folder is None:
        raise ValueError(f"`name_or_path`: {name!r} is a robot of example-robot-data, which is "
                         f"not installed: {INSTALL}")
    return _load(entry, name, tip, str(folder))


@cache
def _load(entry: ExampleRobot, name: str, tip: str | None, folder: str):
    import dataclasses
    from importlib import metadata

    from dynid.robot._urdf import load_urdf  # pinocchio loads with the first URDF

    path = Path(folder) / entry.urdf
    if not path.is_file():
        raise ValueError(f"`name_or_path`: example-robot-data "
                         f"{metadata.version(DISTRIBUTION)} has no {entry.urdf} (dynid knows "
                         f"{name!r} from example-robot-data >= 4.4)")
    robot = load_urdf(path, name=name, tip=tip if tip is not None else entry.tip)
    citation = (f"example-robot-data {metadata.version(DISTRIBUTION)} (Gepetto, BSD-3-Clause): "
                f"robots/{entry.urdf}")
    return dataclasses.replace(robot, description=entry.description,
                               source=dataclasses.replace(robot.source, citation=citation))
