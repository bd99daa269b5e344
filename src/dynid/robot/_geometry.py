"""Where a URDF link's material lies: the corners of its geometry's bounding boxes.

A link's ``<collision>`` elements are read, else its ``<visual>`` ones: boxes, cylinders
(along z), spheres, capsules, and meshes by their vertices' bounding box (times the mesh's
``scale``). Meshes are read when they are STL (binary or ASCII) or Wavefront OBJ files, as
regular files within ``dynid._reading.MAX_TEXT_BYTES``; other formats (COLLADA ``.dae``, ...)
and files that cannot be found or read are named in the result and the link falls back (its
visual geometry, then the segment between joint origins: ``dynid.robot.derived_bounds``).

Mesh files are found from their ``filename``: ``package://NAME/rest`` in package ``NAME`` (the
folders given by name, a folder ``NAME`` above the URDF, ``ROS_PACKAGE_PATH``, ...:
``dynid.robot._packages``), ``file://`` paths, and paths relative to the URDF's folder. Nothing
is downloaded.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from dynid._reading import FileError, read_bytes
from dynid.robot._packages import PREFIX, resolve_package_url

__all__ = ["LinkGeometry", "link_geometry", "mesh_bounds"]

_ASCII_VERTEX = re.compile(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)")
_OBJ_VERTEX = re.compile(rb"^v\s+(\S+)\s+(\S+)\s+(\S+)", re.MULTILINE)


class _Unreadable(Exception):
    """A geometry element dynid cannot bound (the message says why)."""


@dataclass
class LinkGeometry:
    """The corners ``(k, 3)`` of a link's geometry boxes in the link frame, which elements they
    come from (``basis``: "collision" or "visual", "" when none could be read), and what could
    not be read."""

    corners: NDArray
    basis: str
    problems: list[str] = field(default_factory=list)


def _box_corners(lower: NDArray, upper: NDArray) -> NDArray:
    return np.array([[(lower, upper)[i][0], (lower, upper)[j][1], (lower, upper)[k][2]]
                     for i in (0, 1) for j in (0, 1) for k in (0, 1)])


def _finite_bounds(points: NDArray, what: str) -> tuple[NDArray, NDArray]:
    if points.size == 0:
        raise _Unreadable(f"{what} has no vertices")
    if not np.isfinite(points).all():
        raise _Unreadable(f"{what} has non-finite vertices")
    return points.min(axis=0), points.max(axis=0)


def mesh_bounds(path: str | Path) -> tuple[NDArray, NDArray]:
    """The bounding box (lower, upper) of an STL (binary or ASCII) or OBJ mesh's vertices, in
    the mesh's units; ValueError for a file that is none of these or is malformed."""
    try:
        return _mesh_bounds(Path(path))
    except _Unreadable as error:
        raise ValueError(f"mesh {str(path)!r}: {error}") from None


def _mesh_bounds(path: Path) -> tuple[NDArray, NDArray]:
    suffix = path.suffix.lower()
    if suffix not in (".stl", ".obj"):
        raise _Unreadable(f"{suffix or 'no suffix'} meshes are not read (STL and OBJ are)")
    try:
        data = read_bytes(path, what="mesh")
    except FileError as error:
        raise _Unreadable(str(error)) from None
    what = f"{path.name}"
    if suffix == ".obj":
        rows = _OBJ_VERTEX.findall(data)
        return _finite_bounds(_parse_rows(rows, what), what)
    if len(data) >= 84:
        count = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0])
        if len(data) == 84 + 50 * count:  # binary STL (even when its header says "solid")
            triangles = np.frombuffer(data, dtype=np.dtype([("normal", "<f4", 3),
                                                            ("vertices", "<f4", (3, 3)),
                                                            ("attribute", "<u2")]),
                                      count=count, offset=84)
            return _finite_bounds(triangles["vertices"].reshape(-1, 3).astype(float), what)
    rows = _ASCII_VERTEX.findall(data) if data.lstrip()[:5].lower() == b"solid" else []
    if rows:
        return _finite_bounds(_parse_rows(rows, what), what)
    raise _Unreadable(f"{what} is neither a binary STL (its size does not match its triangle "
                      "count) nor an ASCII one")


def _parse_rows(rows: list[tuple[bytes, ...]], what: str) -> NDArray:
    try:
        return np.array([[float(v) for v in row] for row in rows], dtype=float).reshape(-1, 3)
    except ValueError:
        raise _Unreadable(f"{what} has a vertex that is not three numbers") from None


def _resolve(filename: str, folder: Path, packages: Mapping[str, str | Path] | None) -> Path:
    if filename.startswith(PREFIX):
        try:
            path = resolve_package_url(filename, folder, packages)
        except ValueError as error:
            raise _Unreadable(str(error)) from None
    elif filename.startswith("file://"):
        path = Path(filename[len("file://"):])
    else:
        path = Path(filename)
        if not path.is_absolute():
            path = folder / path
    if not path.is_file():
        raise _Unreadable(f"mesh {filename!r} is not found")
    return path


def _numbers(text: str | None, count: int, what: str) -> NDArray:
    try:
        values = np.array([float(v) for v in (text or "").split()])
    except ValueError:
        raise _Unreadable(f"{what} must be {count} numbers, got {text!r:.40}") from None
    if values.size != count or not np.isfinite(values).all() or (values < 0).any():
        raise _Unreadable(f"{what} must be {count} finite numbers >= 0, got {text!r:.40}")
    return values


def _shape_corners(geometry: ET.Element, folder: Path,
                   packages: Mapping[str, str | Path] | None) -> NDArray:
    """The corners of one ``<geometry>``'s bounding box in its element's frame."""
    shapes = [child for child in geometry if isinstance(child.tag, str)]
    if len(shapes) != 1:
        raise _Unreadable(f"a <geometry> holds {len(shapes)} shapes, not one")
    shape = shapes[0]
    tag = shape.tag
    if tag == "box":
        half = 0.5 * _numbers(shape.get("size"), 3, "box size")
        return _box_corners(-half, half)
    if tag in ("cylinder", "capsule"):
        radius = _numbers(shape.get("radius"), 1, f"{tag} radius")[0]
        half = 0.5 * _numbers(shape.get("length"), 1, f"{tag} length")[0]
        half += radius if tag == "capsule" else 0.0
        return _box_corners(np.array([-radius, -radius, -half]),
                            np.array([radius, radius, half]))
    if tag == "sphere":
        radius = _numbers(shape.get("radius"), 1, "sphere radius")[0]
        return _box_corners(np.full(3, -radius), np.full(3, radius))
    if tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise _Unreadable("a <mesh> has no filename")
        lower, upper = _mesh_bounds(_resolve(filename, folder, packages))
        scale = (_numbers(shape.get("scale"), 3, "mesh scale")
                 if shape.get("scale") is not None else np.ones(3))
        corners = _box_corners(lower, upper) * scale
        return corners
    raise _Unreadable(f"<{tag}> geometry is not read")


def link_geometry(link: ET.Element, folder: Path, origin_matrix,
                  packages: Mapping[str, str | Path] | None = None) -> LinkGeometry:
    """The corners of ``link``'s collision geometry (else its visual geometry) in the link
    frame; ``origin_matrix(element, where)`` reads an ``<origin>``; ``packages``: ROS package
    folders by name, for ``package://`` meshes."""
    problems: list[str] = []
    name = link.get("name", "?")
    for tag in ("collision", "visual"):
        elements = link.findall(tag)
        if not elements:
            continue
        corners, failed = [], False
        for element in elements:
            geometry = element.find("geometry")
            try:
                if geometry is None:
                    raise _Unreadable(f"a <{tag}> has no <geometry>")
                local = _shape_corners(geometry, folder, packages)
                placement = origin_matrix(element.find("origin"), f"link {name!r} {tag}")
            except (_Unreadable, ValueError) as error:
                problems.append(f"{name} {tag}: {error}")
                failed = True
                break
            corners.append(local @ placement[:3, :3].T + placement[:3, 3])
        if not failed:
            return LinkGeometry(np.vstack(corners), tag, problems)
    return LinkGeometry(np.zeros((0, 3)), "", problems)
