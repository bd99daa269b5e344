"""`dynid calibrate`: identifiable parameters, pose selection, the twin's measurements and the
fit that writes the corrected robot — the chain a user runs, and what it refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_calibration import URDF

from dynid.calibration import read_joint_positions, read_measurements
from dynid.cli import main
from dynid.dynamics import tool_pose
from dynid.robot import load_robot

MARKER = ["--marker", "0.06", "0.03", "0.07"]


def _json(capsys, argv) -> dict:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """Poses, the twin's measurements (fit and held-out) and its truth, for the Panda."""
    folder = tmp_path_factory.mktemp("calibrate")
    paths = {name: folder / name for name in ("poses.csv", "fit.csv", "truth.json",
                                               "check.csv", "held.npz")}
    for argv in (["poses", "panda", *MARKER, "-n", "50", "-o", paths["poses.csv"]],
                 ["measure", "panda", *MARKER, paths["poses.csv"], "-o", paths["fit.csv"],
                  "--truth", paths["truth.json"]],
                 ["poses", "panda", *MARKER, "-n", "30", "--criterion", "A", "--seed", "7",
                  "-o", paths["check.csv"]],
                 ["measure", "panda", *MARKER, paths["check.csv"], "-o", paths["held.npz"]]):
        assert main(["calibrate", *map(str, argv), "--json"]) == 0
    return folder, paths


def test_identifiable_names_the_regroupings(capsys):
    found = _json(capsys, ["calibrate", "identifiable", "panda", *MARKER])
    assert found["rank"] == len(found["independent"]) < len(found["parameters"])
    assert "base rz" in found["independent"] and "joint 1 offset" not in found["independent"]
    assert "joint 1 offset" in found["regrouped"]["base rz"]
    assert found["coefficients"]["base rz"]["joint 1 offset"] == pytest.approx(1.0, abs=1e-12)
    flange = _json(capsys, ["calibrate", "identifiable", "panda"])  # the point on joint 7's axis
    assert "joint 7 offset" in flange["unidentifiable"]


def test_poses_measure_fit_writes_a_corrected_robot_that_loads(chain, capsys):
    folder, paths = chain
    q = read_joint_positions(paths["poses.csv"], 7)
    assert q.shape == (50, 7)
    assert len(read_measurements(paths["fit.csv"])) == 50
    robot_file, urdf, figure = folder / "corrected.yaml", folder / "corrected.urdf", \
        folder / "fit.png"
    out = _json(capsys, ["calibrate", "fit", "panda", *MARKER, str(paths["fit.csv"]),
                         "--validate", str(paths["held.npz"]), "-o", str(robot_file),
                         "--urdf", str(urdf), "--plot", str(figure)])
    assert out["converged"] and 0.7 < out["chi2_dof"] < 1.4
    # the held-out error: from millimetres to the noise floor (0.1 mm per coordinate)
    held = out["heldout"]
    assert held["rms_position_before"] > 1e-3
    assert held["rms_position_after"] < 1.25 * np.sqrt(3) * 1e-4
    truth = json.loads(paths["truth.json"].read_text())["truth"]
    estimated = {row["name"]: row for row in out["parameters"] if row["estimated"]}
    for name in ("joint 2 offset", "joint 3 offset", "joint 4 a"):
        assert abs(estimated[name]["value"] - truth[name]["value"]) < 4 * estimated[name]["std"]
    corrected, exported = load_robot(str(robot_file)), load_robot(str(urdf), tip="tool")
    assert corrected.convention == "mdh" and figure.stat().st_size > 0
    # the corrected robot keeps its own tool (the marker is the instrument's), and the two
    # files are one robot
    nominal = load_robot("panda")
    np.testing.assert_allclose(corrected.tool[:3, :3], nominal.tool[:3, :3], atol=1e-2)
    # without the marker's 6-7 cm: what is left is the tool's calibration, millimetres
    assert np.abs(corrected.tool[:3, 3] - nominal.tool[:3, 3]).max() < 5e-3
    np.testing.assert_allclose(tool_pose(corrected, q), tool_pose(exported, q), atol=1e-9)
    assert np.abs(tool_pose(corrected, q) - tool_pose(nominal, q)).max() > 1e-4
    np.testing.assert_array_equal(corrected.parameters, nominal.parameters)


def test_heldout_fraction_and_text_output(chain, capsys):
    _, paths = chain
    assert main(["calibrate", "fit", "panda", *MARKER, str(paths["fit.csv"]),
                 "--heldout", "0.2"]) == 0
    text = capsys.readouterr().out
    assert "held out:" in text and "joint 2 offset" in text and "mrad" in text


def test_a_correction_that_leaves_the_table_needs_a_urdf(tmp_path, capsys):
    """A URDF robot has no table: its corrected robot file points at the corrected URDF."""
    source = tmp_path / "tiny.urdf"
    source.write_text(URDF)
    poses, measured = tmp_path / "poses.csv", tmp_path / "measured.csv"
    assert main(["calibrate", "poses", str(source), "-n", "40", "-o", str(poses)]) == 0
    assert main(["calibrate", "measure", str(source), str(poses), "-o", str(measured)]) == 0
    capsys.readouterr()
    assert main(["calibrate", "fit", str(source), str(measured), "-o",
                 str(tmp_path / "fixed.yaml")]) == 2
    assert "give `--urdf CORRECTED.urdf`" in capsys.readouterr().err
    assert not (tmp_path / "fixed.yaml").exists()
    assert main(["calibrate", "fit", str(source), str(measured), "-o",
                 str(tmp_path / "fixed.yaml"), "--urdf", str(tmp_path / "fixed.urdf")]) == 0
    fixed = load_robot(str(tmp_path / "fixed.yaml"))
    q = read_joint_positions(poses, fixed.n_joints)
    np.testing.assert_allclose(tool_pose(fixed, q),
                               tool_pose(load_robot(str(tmp_path / "fixed.urdf"), tip="tool"), q),
                               atol=1e-9)


def test_bad_requests_are_refused_before_any_work(chain, tmp_path, capsys):
    _, paths = chain
    fit = str(paths["fit.csv"])
    cases = [
        (["fit", "panda", fit, "-o", str(tmp_path / "x.txt")], "`-o` must end in"),
        (["fit", "panda", fit, "--urdf", str(tmp_path / "x.urdf")], "`--urdf` writes the URDF"),
        (["fit", "panda", fit, "--heldout", "0.2", "--validate", fit], "give one"),
        (["fit", "panda", fit, "-o", fit.replace(".csv", ".yaml"), "--urdf", fit],
         "`--urdf` must end in .urdf"),
        (["fit", "arm3", fit], "joint readings of 7 joints, the robot has 3"),
        (["poses", "panda", "-n", "2", "-o", str(tmp_path / "p.csv")], "choose at least"),
        (["poses", "panda", "-n", "3000", "-o", str(tmp_path / "p.csv")], "raise --random"),
        (["measure", "panda", str(paths["truth.json"]), "-o", str(tmp_path / "m.csv")],
         "suffix"),
        (["fit", "panda", str(tmp_path / "absent.csv")], "absent.csv"),
    ]
    for argv, message in cases:
        assert main(["calibrate", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    assert not list(tmp_path.iterdir())


def test_unit_mistakes_write_nothing(chain, tmp_path, capsys):
    """Positions in mm without `_mm`, joints in degrees without `_deg`: refused, named, and
    no corrected robot written."""
    _, paths = chain
    lines = paths["fit.csv"].read_text().splitlines()
    header = lines[0].split(",")
    xyz = [header.index(c) for c in ("x", "y", "z")]
    joints = [k for k, c in enumerate(header) if c.startswith("q")]
    for scaled, factor, message in ((xyz, 1e3, "x_mm"), (xyz, 1e2, "the fit is implausible"),
                                    (joints, 180 / np.pi, "degrees")):
        rows = []
        for line in lines[1:]:
            cells = line.split(",")
            for k in scaled:
                cells[k] = repr(float(cells[k]) * factor)
            rows.append(",".join(cells))
        bad = tmp_path / "bad.csv"
        bad.write_text("\n".join([lines[0], *rows]) + "\n")
        out = tmp_path / "fixed.yaml"
        assert main(["calibrate", "fit", "panda", *MARKER, str(bad), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and "`" in err and "Traceback" not in err, err
        assert not out.exists()


def test_urdf_robot_without_urdf_output_is_refused_before_the_fit(tmp_path, capsys):
    source = tmp_path / "tiny.urdf"
    source.write_text(URDF)
    missing = tmp_path / "absent.csv"  # never read: the refusal comes first
    assert main(["calibrate", "fit", str(source), str(missing), "-o",
                 str(tmp_path / "fixed.yaml")]) == 2
    err = capsys.readouterr().err
    assert "--urdf CORRECTED.urdf" in err and "absent.csv" not in err


def test_existing_outputs_are_replaced_together(tmp_path, capsys):
    """A URDF robot's corrected robot file and URDF are written together; files already
    there are replaced, never deleted, and the robot file points at the final URDF."""
    source = tmp_path / "tiny.urdf"
    source.write_text(URDF)
    poses, measured = tmp_path / "poses.csv", tmp_path / "measured.csv"
    assert main(["calibrate", "poses", str(source), "-n", "40", "-o", str(poses)]) == 0
    assert main(["calibrate", "measure", str(source), str(poses), "-o", str(measured)]) == 0
    out, urdf = tmp_path / "fixed.yaml", tmp_path / "fixed.urdf"
    out.write_text("old")
    urdf.write_text("old")
    assert main(["calibrate", "fit", str(source), str(measured), "-o", str(out), "--urdf",
                 str(urdf)]) == 0
    capsys.readouterr()
    assert "urdf: fixed.urdf" in out.read_text()
    assert urdf.read_text().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fixed.urdf", "fixed.yaml", "measured.csv", "poses.csv", "tiny.urdf"]
    fixed = load_robot(str(out))
    q = read_joint_positions(poses, fixed.n_joints)
    np.testing.assert_allclose(tool_pose(fixed, q), tool_pose(
        load_robot(str(urdf), tip="tool"), q), atol=1e-9)


def test_poses_for_pose_measurements_take_the_instruments_noise(tmp_path, capsys):
    out = tmp_path / "p.csv"
    found = _json(capsys, ["calibrate", "poses", "panda", "-n", "12", "--kind", "pose",
                           "--random", "300", "--sigma-position", "1e-4", "--sigma-rotation",
                           "1e-5", "-o", str(out)])
    plain = _json(capsys, ["calibrate", "poses", "panda", "-n", "12", "--kind", "pose",
                           "--random", "300", "-o", str(tmp_path / "q.csv")])
    assert found["value"] != plain["value"] and out.exists()
    assert main(["calibrate", "poses", "panda", "-n", "12", "--kind", "pose",
                 "--sigma-rotation", "1e-5", "-o", str(tmp_path / "r.csv")]) == 2
    assert "give both or neither" in capsys.readouterr().err


def test_plane_fit_holds_and_reports_the_scale(chain, tmp_path, capsys):
    _, paths = chain
    plane, out = tmp_path / "plane.csv", tmp_path / "fixed.yaml"
    assert main(["calibrate", "measure", "panda", *MARKER, str(paths["poses.csv"]), "--kind",
                 "plane", "-o", str(plane)]) == 0
    capsys.readouterr()
    found = _json(capsys, ["calibrate", "fit", "panda", *MARKER, str(plane), "-o", str(out)])
    assert found["identifiability"]["scale_held"] == "joint 5 d"
    assert 0.5 < found["chi2_dof"] < 2.0
    fixed = load_robot(str(out))
    assert fixed.table[4].d == 0.384  # held at nominal: the other lengths scale to it
    assert abs(fixed.table[2].d - 0.316) < 3e-3  # not shrunk with the planes
    assert main(["calibrate", "fit", "panda", *MARKER, str(plane)]) == 0
    assert "`joint 5 d` held at nominal" in capsys.readouterr().out
