"""The README's examples run as written: the command-line walkthrough (each `dynid` line) and
every Python block, in a scratch folder. Its set-up holds: it starts with `make demo` and
`make test`, which install the exact versions of constraints.txt, and those pins satisfy
pyproject.toml."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dynid.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONSTRAINTS = ROOT / "constraints.txt"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def _walkthrough() -> list[str]:
    """The shell block that sets ROBOT=: the walkthrough."""
    (block,) = [b for b in _blocks("sh") if b.startswith("ROBOT=")]
    return block.splitlines()


def test_walkthrough_commands_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    variables: dict[str, str] = {}
    ran = []
    for line in _walkthrough():
        code = line.split("#", 1)[0].strip()
        if not code:
            continue
        if re.fullmatch(r"[A-Z_]+=\S+", code):
            name, value = code.split("=", 1)
            variables[name] = value
            continue
        for name, value in variables.items():
            code = code.replace(f"${name}", value)
        words = shlex.split(code)
        assert words[0] == "dynid", line
        assert main([*words[1:], *(["--quiet"] if words[1] in ("excite", "compare") else [])]) \
            == 0, (line, capsys.readouterr().err)
        ran.append(words[1])
    assert {"excite", "simulate", "identify", "retrieve", "validate", "compare", "report",
            "export"} <= set(ran)
    for name in ("cls3.yaml", "retrieved.yaml", "table.md", "report.html", "identified.urdf"):
        assert (tmp_path / name).stat().st_size > 0, name


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_blocks_run(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = _blocks("python")[index]
    exec(compile(source, f"README.md python block {index + 1}", "exec"), {"__name__": "readme"})


def test_readme_robot_table_is_what_dynid_robots_writes(capsys):
    """A robot added to dynid/robot/data (or a description changed) without the README
    following fails here: paste `dynid robots --markdown` between the markers."""
    (table,) = re.findall(r"<!-- dynid robots --markdown[^>]*-->\n(.*?)<!-- /dynid robots "
                          r"--markdown -->", README.read_text(), flags=re.S)
    assert main(["robots", "--markdown"]) == 0
    assert table == capsys.readouterr().out


def test_readme_starts_with_the_two_set_up_commands():
    assert README.read_text().startswith("```sh\nmake demo\nmake test\n```\n")


def _pins() -> dict[str, str]:
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")  # exact pins only
            assert canonicalize_name(name) not in pins, f"{name} pinned twice"
            pins[canonicalize_name(name)] = version
    return pins


def test_constraints_pin_every_dependency_within_pyproject_bounds():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(r) for r in project["dependencies"]]
    requirements += [Requirement(r) for extra in project["optional-dependencies"].values()
                     for r in extra]
    pins = _pins()
    assert {"pip", "numpy", "pyyaml", "pin"} <= set(pins)
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        if name == "dynid":  # an extra of its own (dynid[docs])
            continue
        assert name in pins, f"{requirement} is not pinned in constraints.txt (make lock)"
        assert requirement.specifier.contains(pins[name], prereleases=True), \
            f"constraints.txt pins {name}=={pins[name]}, outside pyproject.toml's {requirement}"


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")
@pytest.mark.parametrize("stamp", [".installed", ".installed-test", ".installed-docs"])
def test_make_installs_from_the_constraints_and_again_when_they_change(tmp_path, stamp):
    """What `make demo`, `make test` and `make docs` would run (make -n, in a copy): nothing
    once installed; a new constraints.txt or pyproject.toml installs again, every pip install
    with the constraints."""
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv").mkdir()
    installed = tmp_path / ".venv" / stamp
    installed.touch()
    later = installed.stat().st_mtime + 10
    os.utime(installed, (later, later))

    def planned(*options: str) -> list[str]:
        done = subprocess.run(["make", "-n", *options, f".venv/{stamp}"], cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        return [line for line in done.stdout.splitlines() if "pip install" in line]

    assert planned() == []  # up to date
    for changed in ("constraints.txt", "pyproject.toml"):
        installs = planned("-W", changed)
        assert len(installs) == 2, installs  # pip itself, then dynid
        for line in installs:
            assert "-c constraints.txt" in line, line
