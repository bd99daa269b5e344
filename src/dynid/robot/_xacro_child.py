"""The xacro run of ``dynid.robot._xacro``: a script, run in a child process of its own.

It reads one request (JSON on stdin), expands the xacro with the ``xacro`` package and writes
one reply (JSON on stdout): ``{"urdf", "files", "arguments", "warnings"}`` or ``{"error"}``.
Here, and only here, xacro's module-level hooks are replaced: ``$(find NAME)`` resolves through
``dynid.robot._packages`` (loaded by its path: this process imports nothing of dynid), and
every file xacro reads (the description, its includes, ``xacro.load_yaml``) is read as hostile
first: a regular file within the size limit, no DOCTYPE, no include of a file that is including
it, at most ``max_depth`` includes deep and ``max_files`` files in all. The process's address
space is limited (``resource.RLIMIT_AS``, where the platform has it) and the parent kills it
past its time limit: a ``${9**9**9}`` or a macro that calls itself ends there, not in dynid.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import stat
import sys
import xml.dom.minidom
import xml.parsers.expat
from pathlib import Path

_ARG_USE = re.compile(r"\$\(arg\s+([^\s)]+)\s*\)|xacro\.arg\(\s*['\"]([^'\"]+)['\"]")


class Refused(Exception):
    """A file or an expansion dynid refuses; the message says why."""


def _load_packages():
    spec = importlib.util.spec_from_file_location("_dynid_packages",
                                                  Path(__file__).with_name("_packages.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _limit_memory(nbytes: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform: the parent's time limit still holds
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = min([nbytes, *(x for x in (soft, hard) if x != resource.RLIM_INFINITY)])
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


class _Reader:
    """What the hooks share: the request's limits and every file read, in order."""

    def __init__(self, request: dict, xacro_module) -> None:
        self.xacro = xacro_module
        self.max_bytes = request["max_bytes"]
        self.max_depth = request["max_depth"]
        self.max_files = request["max_files"]
        self.files: list[str] = []
        self.digest = hashlib.sha256()
        self.arguments: set[str] = set()

    def read(self, filename: str, what: str) -> bytes:
        path = os.path.abspath(filename)
        if len(self.files) >= self.max_files:
            raise Refused(f"reading {what} {path!r} makes more than {self.max_files} files (an "
                          "include or load_yaml in a loop?)")
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise Refused(f"{what} {path!r} is not a regular file")
        with open(path, "rb") as handle:
            data = handle.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise Refused(f"{what} {path!r} is larger than {self.max_bytes} bytes (the limit of "
                          "a description file)")
        self.files.append(path)
        self.digest.update(hashlib.sha256(data).digest())
        return data

    def parse(self, inp, filename=None):
        """xacro.parse, reading files as hostile (see the module)."""
        if inp is not None:
            return self.original_parse(inp, filename)
        path = os.path.abspath(filename)
        if not os.path.exists(path):  # xacro's own error: an optional include may skip it
            return self.original_parse(None, filename)
        stack = [os.path.realpath(f) for f in (self.xacro.filestack or [])[:-1] if f]
        if os.path.realpath(path) in stack:
            chain = " -> ".join(os.path.basename(f) for f in [*stack, path])
            raise Refused(f"{os.path.basename(path)} includes itself ({chain})")
        if len(self.xacro.filestack or []) > self.max_depth:
            raise Refused(f"includes nest more than {self.max_depth} deep")
        data = self.read(path, "xacro file")
        document = xml.dom.minidom.parseString(data)
        if document.doctype is not None:
            raise Refused(f"{path!r} holds a DOCTYPE declaration, which dynid refuses (no DTDs "
                          "or entities in a description)")
        for element in document.getElementsByTagName("xacro:arg"):
            self.arguments.add(element.getAttribute("name"))
        for match in _ARG_USE.finditer(data.decode("utf-8", errors="replace")):
            self.arguments.add(match.group(1) or match.group(2))
        return document

    def load_yaml(self, filename):
        """xacro.load_yaml, reading the file as hostile first."""
        path = self.xacro.abs_filename_spec(filename)
        if os.path.exists(path):
            self.read(path, "YAML file")
        return self.original_load_yaml(filename)


def _hook(xacro_module, packages_module, request: dict) -> _Reader:
    """Replace xacro's file reading and ``$(find)`` in this process (see the module)."""
    from xacro import substitution_args

    reader = _Reader(request, xacro_module)
    reader.original_parse = xacro_module.parse
    reader.original_load_yaml = xacro_module.load_yaml
    near, packages = Path(request["file"]).parent, request["packages"]

    def find(name: str) -> str:
        return str(packages_module.find_package(name, near, packages))

    substitution_args._eval_find = find
    substitution_args._eval_dict["find"] = find
    xacro_module.parse = reader.parse
    symbols = xacro_module._global_symbols
    dict.__setitem__(symbols["xacro"], "load_yaml", reader.load_yaml)
    if "load_yaml" in symbols:  # the deprecated spelling, still exposed
        symbols["load_yaml"] = reader.load_yaml
    return reader


def _cause(error: BaseException, kinds: tuple) -> BaseException | None:
    """The first of ``kinds`` among ``error`` and what it wraps (xacro keeps the exception it
    wraps in ``.exc``)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, kinds):
            return error
        seen.add(id(error))
        error = getattr(error, "exc", None) or error.__cause__ or error.__context__
    return None


def _location(xacro_module) -> str:
    """Where xacro was: its file stack (innermost first) and macro stack, as it prints them."""
    files = [os.path.basename(f) for f in reversed(xacro_module.filestack or []) if f]
    macros = []
    for macro in reversed(xacro_module.macrostack or []):
        if getattr(macro, "body", None) is None:
            continue
        defined = macro.history[-1][-1] if macro.history and macro.history[-1] else None
        macros.append(macro.body.getAttribute("name")
                      + (f" ({os.path.basename(defined)})" if defined else ""))
    parts = []
    if files:
        parts.append("in " + files[0] + "".join(f", included from {f}" for f in files[1:]))
    if macros:
        parts.append("in macro " + ", called from ".join(macros))
    return "; ".join(parts)


def expand(request: dict) -> dict:
    sys.path[:0] = [p for p in request["sys_path"] if p not in sys.path]
    _limit_memory(request["max_memory"])
    import xacro

    packages_module = _load_packages()
    reader = _hook(xacro, packages_module, request)
    captured = io.StringIO()
    sys.stderr = captured  # xacro prints its warnings there
    try:
        xacro.init_stacks(request["file"])
        document = xacro.parse(None, request["file"])
        xacro.process_doc(document, mappings=dict(request["args"]))
        text = document.toxml()
    except xml.parsers.expat.ExpatError as error:  # names the line and column
        files = xacro.filestack or [request["file"]]
        name = os.path.basename(files[-1] or request["file"])
        return {"error": f"{name}:{error.lineno}:{error.offset + 1}: not well-formed XML "
                         f"({xml.parsers.expat.ErrorString(error.code)})", "where": ""}
    except Exception as error:  # xacro's XacroException, and whatever a hostile file causes
        known = _cause(error, (packages_module.PackageNotFound, Refused, RecursionError,
                               MemoryError, OSError))
        if isinstance(known, Refused):
            return {"error": str(known), "where": ""}
        if isinstance(known, RecursionError):
            message = "the expansion recurses without end (a macro that calls itself?)"
        elif isinstance(known, MemoryError):
            message = f"the expansion needs more than {request['max_memory']} bytes"
        elif isinstance(known, OSError) and known.filename:
            message = f"{known.strerror or 'cannot read'}: {known.filename}"
        else:
            message = " ".join(str(known or error).split()) or type(error).__name__
        return {"error": message, "where": _location(xacro)}
    finally:
        sys.stderr = sys.__stderr__
    if len(text.encode("utf-8")) > request["max_bytes"]:
        return {"error": f"the expanded URDF is larger than {request['max_bytes']} bytes",
                "where": ""}
    warnings = [line.strip() for line in captured.getvalue().splitlines() if line.strip()]
    return {"urdf": text, "files": reader.files, "digest": reader.digest.hexdigest(),
            "arguments": sorted(reader.arguments), "warnings": warnings}


def main() -> None:
    request = json.loads(sys.stdin.read())
    try:
        reply = expand(request)
    except MemoryError:
        reply = {"error": f"the expansion needs more than {request['max_memory']} bytes",
                 "where": ""}
    except ImportError as error:
        reply = {"error": f"cannot import xacro ({error}): pip install xacro", "where": ""}
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
