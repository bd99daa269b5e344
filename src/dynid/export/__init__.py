"""Export of an identified robot: URDF and MuJoCo MJCF (``writers``)."""

from dynid.export.writers import EXPORT_FORMATS as EXPORT_FORMATS
from dynid.export.writers import check_names as check_names
from dynid.export.writers import export_robot as export_robot
from dynid.export.writers import identified_robot as identified_robot
from dynid.export.writers import to_mjcf as to_mjcf
from dynid.export.writers import to_urdf as to_urdf
from dynid.export.writers import with_identified_gains as with_identified_gains

__all__ = [
    "EXPORT_FORMATS",
    "check_names",
    "export_robot",
    "identified_robot",
    "to_mjcf",
    "to_urdf",
    "with_identified_gains",
]
