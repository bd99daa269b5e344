"""The README's examples run as written: the command-line walkthrough (each `dynid` line) and
every Python block, in a scratch folder."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dynid.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


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
