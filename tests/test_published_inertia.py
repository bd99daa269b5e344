"""Published inertia tables load: a miss of physical consistency at the level of rounding (the
Kinova Gen3's links 1 and 5: -0.4 % and -1 %) loads with one warning naming the links; a gross
miss stays an error naming the key that accepts the values as published (issue 22)."""

from __future__ import annotations

import warnings

import pytest
import yaml
from conftest import assert_close, with_physical_margin

from dynid.cli import main
from dynid.export import export_robot
from dynid.robot import RoundedInertiaWarning, load_robot, load_urdf, robot_to_dict
from dynid.robot.inertia import (
    PHYSICAL_RTOL,
    ROUNDING_RTOL,
    nearest_physical,
    physical_margin,
)


def _gen3_like(margins: dict[int, float]) -> dict:
    """The Panda's robot file with the links of ``margins`` (0-based) made non-physical."""
    robot = load_robot("panda")
    parameters = robot.parameters.copy()
    for k, margin in margins.items():
        parameters[k] = with_physical_margin(parameters[k], margin)
    spec = robot_to_dict(robot.with_parameters(parameters))
    spec["inertia"].pop("physical", None)  # as a vendor publishes it: no claim either way
    return spec


def _write(tmp_path, spec: dict, name: str = "gen3.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_rounding_level_violations_load_with_one_warning(tmp_path):
    path = _write(tmp_path, _gen3_like({0: -0.004, 4: -0.01}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = load_robot(path)
    rounded = [w for w in caught if issubclass(w.category, RoundedInertiaWarning)]
    assert len(rounded) == 1
    text = str(rounded[0].message)
    assert "gen3.yaml" in text and "`inertia.links[0]` (-0.4 %)" in text
    assert "`inertia.links[4]` (-1 %)" in text and "inertia.links[1]" not in text
    assert "simulate" in text and "prior" in text and "inertia.physical: false" in text
    assert_close(physical_margin(robot.parameters)[[0, 4]], [-0.004, -0.01], rtol=1e-6)
    # the user can filter the category
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=RoundedInertiaWarning)
        load_robot(path)


def test_physical_false_loads_the_same_values_silently(tmp_path):
    spec = _gen3_like({0: -0.004, 4: -0.01})
    spec["inertia"]["physical"] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = load_robot(_write(tmp_path, spec))
    assert physical_margin(robot.parameters).min() < 0


def test_physical_nearest_keeps_the_file_as_published_and_loads_bodies(tmp_path):
    """`inertia.physical: nearest`: the file holds the published values, the robot the nearest
    bodies (gross misses too), silently; from a URDF the same; any other word is an error."""
    spec = _gen3_like({0: -0.004, 2: -2.5 * ROUNDING_RTOL})
    published = load_robot(_write(tmp_path, {**spec, "inertia": {**spec["inertia"],
                                                                 "physical": False}}))
    spec["inertia"]["physical"] = "nearest"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = load_robot(_write(tmp_path, spec))
    assert (physical_margin(robot.parameters) >= -PHYSICAL_RTOL).all()
    assert_close(robot.parameters, nearest_physical(published.parameters), rtol=0, atol=0)
    export_robot(published, tmp_path / "gen3.urdf")
    _write(tmp_path, {"urdf": "gen3.urdf", "inertia": {"physical": "nearest"}}, "urdf.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_urdf = load_robot(tmp_path / "urdf.yaml", tip="tool")
    assert_close(from_urdf.parameters, robot.parameters, rtol=1e-12, atol=1e-15)
    spec["inertia"]["physical"] = "closest"
    with pytest.raises(ValueError, match=r"`inertia.physical` must be true, false or nearest, "
                                         r"got 'closest'"):
        load_robot(_write(tmp_path, spec))


def test_a_gross_violation_is_an_error_naming_the_key(tmp_path):
    margin = -2.5 * ROUNDING_RTOL
    path = _write(tmp_path, _gen3_like({0: -0.004, 2: margin}))
    with pytest.raises(ValueError) as error:
        load_robot(path)
    text = str(error.value)
    assert text.startswith("gen3.yaml: `inertia.links[2]` is not a physical body")
    assert text.count("gen3.yaml") == 1 and "-5 %" in text
    assert "`inertia.physical: false`" in text
    spec = yaml.safe_load(path.read_text())
    spec["inertia"]["physical"] = False
    assert physical_margin(load_robot(_write(tmp_path, spec)).parameters)[2] < -0.04


def test_a_urdf_on_the_command_line(tmp_path, capsys):
    robot = load_robot("panda")
    rounded = robot.parameters.copy()
    rounded[0] = with_physical_margin(rounded[0], -0.004)
    rounded[4] = with_physical_margin(rounded[4], -0.01)
    urdf = export_robot(robot.with_parameters(rounded), tmp_path / "gen3.urdf")
    with pytest.warns(RoundedInertiaWarning, match="the link of joint joint1` .*joint5"):
        load_urdf(urdf)
    assert main(["robot", "show", str(urdf)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dynid: warning: gen3.urdf: ")
    assert err[0].endswith("[RoundedInertiaWarning]")
    # gross: the error says how to load it as published, and that route works
    gross = rounded.copy()
    gross[2] = with_physical_margin(gross[2], -0.1)
    export_robot(robot.with_parameters(gross), tmp_path / "bad.urdf")
    assert main(["robot", "show", str(tmp_path / "bad.urdf")]) == 2
    err = capsys.readouterr().err
    assert "the link of joint joint3` is not a physical body" in err
    assert "`urdf: bad.urdf`" in err and "`inertia: {physical: false}`" in err
    _write(tmp_path, {"urdf": "bad.urdf", "inertia": {"physical": False}}, "bad.yaml")
    assert main(["robot", "show", str(tmp_path / "bad.yaml"), "--tip", "tool"]) == 0
