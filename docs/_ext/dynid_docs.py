"""What the dynid documentation builds from the package itself, at build time.

- ``write_api_pages``: one reST page per package of ``API_MODULES`` with the names of its
  ``__all__`` — a summary table, then classes, functions, exceptions and warnings, constants in
  full — so the reference follows what each subpackage exports, not the module files behind
  it. An object exported by several of these packages is documented once, at its first home
  in ``API_MODULES`` order; later pages link to it. The top-level ``dynid`` page lists
  ``dynid.__all__`` by the subpackage that owns each name.
- ``missing-reference``: ``dynid.identify`` (the public face, ``import dynid``) resolves to
  the entry of the subpackage that exports it (``dynid.identification.identify``).
- the ``dynid-cli`` directive: the ``--help`` of every ``dynid`` command, read from the parser
  when the documentation is built (``dynid.cli.main([..., "--help"])``).
- data the repository does not carry: the real Panda log of Gaz et al. (GPL-3.0) is read from
  the project's ``shared/reference`` folder beside the repository (``real_panda_log``); where
  it is absent, ``conf.py`` leaves its example unrun and its page says so
  (``note_missing_data``: what is missing and where to put it).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import os
import pkgutil
import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

#: The packages and modules of the API reference, in workflow order (DESIGN.md's layout).
API_MODULES = (
    "dynid.robot",
    "dynid.robot.inertia",
    "dynid.robot.bounds",
    "dynid.dynamics",
    "dynid.friction",
    "dynid.data",
    "dynid.model",
    "dynid.excitation",
    "dynid.simulate",
    "dynid.evaluation",
    "dynid.identification",
    "dynid.calibration",
    "dynid.metrics",
    "dynid.export",
    "dynid.codegen",
    "dynid.monitor",
    "dynid.benchmark",
)
#: Top-level modules of ``dynid`` that are not API: the command line, the demo, the benchmarks.
NOT_API = ("cli", "bench", "workflow")

_KINDS = (
    ("class", "Classes"),
    ("function", "Functions"),
    ("exception", "Exceptions and warnings"),
    ("data", "Constants"),
)


def _kind(value) -> str:
    if inspect.isclass(value):
        return "exception" if issubclass(value, BaseException) else "class"
    if callable(value):
        return "function"
    return "data"


def _shareable(value) -> bool:
    """Objects that are the same thing wherever they are exported (not ints, strings...)."""
    return inspect.isclass(value) or inspect.isroutine(value)


def _title(text: str, underline: str = "=") -> str:
    return f"{text}\n{underline * len(text)}\n"


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        raise ValueError(f"{module.__name__} has no __all__: the API reference is built from it")
    return [n for n in names if not n.startswith("_")]


def check_coverage(app) -> None:
    """A public top-level package of dynid missing from API_MODULES is a warning (so -W fails)."""
    import dynid

    listed = {name.split(".")[1] for name in API_MODULES}
    for info in pkgutil.iter_modules(dynid.__path__):
        if info.name.startswith("_") or info.name in NOT_API or info.name in listed:
            continue
        logger.warning(f"dynid.{info.name} is not in the API reference: add it to "
                       "API_MODULES in docs/_ext/dynid_docs.py (or to NOT_API)",
                       type="dynid", subtype="api")


def write_api_pages(app, config=None) -> None:
    """One page per package of API_MODULES: a summary table, then every object in full.

    Runs at config-inited, so that the pages exist before Sphinx lists its sources."""
    import dynid

    out = Path(app.srcdir) / "api" / "generated"  # app.srcdir is set before config-inited
    out.mkdir(parents=True, exist_ok=True)
    home: dict[int, str] = {}  # id(object) -> the full name it is documented under
    pages: dict[str, str] = {}
    for module_name in API_MODULES:
        module = importlib.import_module(module_name)
        sections: dict[str, list[str]] = {kind: [] for kind, _ in _KINDS}
        elsewhere: list[str] = []
        for name in _public(module):
            value = getattr(module, name)
            if _shareable(value) and id(value) in home:
                elsewhere.append(f"* ``{name}``: :py:obj:`{home[id(value)]}`")
                continue
            if _shareable(value):
                home[id(value)] = f"{module_name}.{name}"
            sections[_kind(value)].append(name)
        lines = [_title(f"``{module_name}``"), f".. automodule:: {module_name}",
                 "   :no-members:", ""]
        summarised = [n for kind, _ in _KINDS if kind != "data" for n in sections[kind]]
        if summarised:  # constants have no summary line: their own section lists them
            lines += [".. autosummary::", "   :nosignatures:", "",
                      *(f"   {name}" for name in summarised), ""]
        for kind, heading in _KINDS:
            if sections[kind]:
                lines += [_title(heading, "-"),
                          *(f".. auto{kind}:: {name}\n" for name in sections[kind])]
        if elsewhere:
            lines += [_title("Documented elsewhere", "-"),
                      "Exported here too, and documented where it is listed first:", "",
                      *elsewhere, ""]
        pages[module_name] = "\n".join(lines)

    # The top level: dynid.__all__ by owner, linking to the entries above.
    owner = {name: _owner(name) for name in dynid.__all__ if not name.startswith("_")}
    lines = [_title("``dynid``"), ".. automodule:: dynid", "   :no-members:", "",
             "``import dynid`` exposes these names; each is the object of the subpackage named "
             "before it, and is documented there (``dynid.identify`` is "
             ":py:func:`dynid.identification.identify`).", ""]
    for module_name in dict.fromkeys(owner.values()):
        names = [n for n, m in owner.items() if m == module_name]
        lines += [f"* :py:mod:`{module_name}`: " + ", ".join(
            f":py:obj:`{n} <{module_name}.{n}>`" for n in names)]
    pages["dynid"] = "\n".join(lines) + "\n"

    toctree = "\n".join(["```{toctree}", ":maxdepth: 1", "",
                         *(f"generated/{name}" for name in ("dynid", *API_MODULES)), "```", ""])
    files = {f"{name}.rst": text for name, text in pages.items()} | {"toctree.txt": toctree}
    for filename, text in files.items():
        path = out / filename
        if not path.exists() or path.read_text() != text:  # unchanged pages stay unread
            path.write_text(text)
    for stale in out.glob("*.rst"):  # a package no longer in the list: its page goes
        if stale.stem not in pages:
            stale.unlink()


def drop_type_docstrings(app, what, name, obj, options, lines) -> None:
    """A constant without a doc comment would show its type's docstring (a dict's, a
    tuple's): show its value alone."""
    if what == "data" and not inspect.isclass(obj) and not callable(obj) \
            and getattr(obj, "__doc__", None) == getattr(type(obj), "__doc__", None):
        lines.clear()


def _plain_type_aliases() -> None:
    """Sphinx (9.0) prints an ``autodoc_type_aliases`` alias inside a union as
    ``TypeAliasForwardRef('NDArray') | None``: make the alias print as its name."""
    try:
        from sphinx.util.inspect import TypeAliasForwardRef
    except ImportError:  # other Sphinx versions: nothing to mend
        return
    TypeAliasForwardRef.__repr__ = lambda self: str(self.name)


def _owner(name: str) -> str:
    """The package of API_MODULES (the first) whose ``__all__`` exports ``name``."""
    for module_name in API_MODULES:
        module = importlib.import_module(module_name)
        if name in getattr(module, "__all__", ()):
            return module_name
    raise ValueError(f"dynid.{name} is exported by no package of the API reference")


def resolve_top_level(app, env, node, contnode):
    """``dynid.NAME`` -> the entry of the subpackage that exports NAME."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    match = re.fullmatch(r"dynid\.(\w+)", target)
    if not match:
        return None
    import dynid

    name = match.group(1)
    if name not in dynid.__all__ or name.startswith("_"):
        return None
    try:
        full = f"{_owner(name)}.{name}"
    except ValueError:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], full, node,
                               contnode)


def _help(argv: list[str]) -> str:
    from dynid.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        main([*argv, "--help"])
    return buffer.getvalue()


def _subcommands(text: str) -> list[str]:
    """The subcommands in a help text: argparse lists them as ``{a,b,...}`` at the head of a
    line of its "positional arguments" section (an option's choices sit in "options")."""
    match = re.search(r"^positional arguments:\n(?:.*\n)*?  \{([\w,-]+)\}", text, flags=re.M)
    if not match or "\n\n" in text[match.start():match.end()]:
        return []
    return match.group(1).split(",")


class CLIDirective(SphinxDirective):
    """``.. dynid-cli::``: a section per command with its ``--help``, recursively."""

    has_content = False

    def run(self):
        os.environ.setdefault("COLUMNS", "100")
        result: list = []
        self._command([], result.append, depth=0)
        return result

    def _command(self, argv: list[str], add, depth: int) -> None:
        text = _help(argv)
        if not text.strip():
            raise self.error(f"`dynid {' '.join([*argv, '--help'])}` printed nothing")
        name = " ".join(["dynid", *argv])
        section = nodes.section(ids=[nodes.make_id(name)], names=[nodes.fully_normalize_name(name)])
        section += nodes.title(text=name)
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        section += block
        add(section)
        for sub in _subcommands(text):  # commands beside the top level, subcommands inside
            if depth < 2:
                self._command([*argv, sub], add if depth == 0 else section.append, depth + 1)


# -- data the repository does not carry ---------------------------------------------------------

#: The example that reads the real Panda log, and the log's folder under ``shared/reference``.
REAL_LOG_EXAMPLE = "plot_2_real_panda_log"
REAL_LOG = ("panda-gaz2019", "rbt_log_exciting_traj1")
REAL_LOG_SOURCE = ("Gaz et al.'s repository, github.com/marcocognetti/FrankaEmikaPandaDynModel, "
                   "folder ``matlab/data/Exciting_Traj/Trajectory_1/rbt_log`` (its four "
                   "``exciting_traj_*.txt`` files: time, positions, velocity, torques)")


def real_panda_log(start: Path) -> Path | None:
    """The real log's folder in the first ``shared/reference`` at ``start`` or above it (the
    search its example makes from where it runs), or None."""
    for folder in (start, *start.parents):
        if (folder / "shared" / "reference").is_dir():
            log = folder.joinpath("shared", "reference", *REAL_LOG)
            return log if log.is_dir() else None
    return None


def missing_data_note(repository: Path) -> str:
    """The note on the real-log example's page when the log is absent (reST)."""
    where = repository.resolve().parent.joinpath("shared", "reference", *REAL_LOG)
    return (
        ".. note::\n\n"
        "   **This page was built without the real log**, so the code below is shown but was "
        "not run: it has no printed output and no figure. The log is not part of dynid's "
        "repository (it is GPL-3.0 data of Gaz et al.). To run this example, put the folder "
        f"``{'/'.join(REAL_LOG)}`` in a ``shared/reference`` folder beside the repository, "
        f"here ``{where}``, and build again (``make docs``). The log comes from "
        f"{REAL_LOG_SOURCE}.\n"
    )


def note_missing_data(app, docname: str, source: list[str]) -> None:
    """``source-read``: the note goes right under the title of the example's page."""
    if docname != f"{app.config.sphinx_gallery_conf['gallery_dirs']}/{REAL_LOG_EXAMPLE}" or \
            not app.config.dynid_missing_data_note:
        return
    title = re.search(r"^[^\n]+\n=+\n", source[0], flags=re.MULTILINE)
    if title is None:
        raise ValueError(f"{docname}: no title to put the missing-data note under")
    at = title.end()
    source[0] = f"{source[0][:at]}\n{app.config.dynid_missing_data_note}\n{source[0][at:]}"


# -- the import drawing -------------------------------------------------------------------------


def _package(name: str) -> str:
    """The row of a first name under ``dynid``: the root's private modules share one."""
    return "root helpers" if name.startswith("_") else name


def package_imports() -> dict[str, set[str]]:
    """Each dynid package (first name under ``dynid``, or a root module) -> the other packages
    its modules import, function-local imports included, read from the source."""
    import ast

    import dynid

    root = Path(dynid.__file__).resolve().parent
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        package = _package(parts[0]) if len(parts) > 1 or parts[0] != "__init__" else "dynid"
        found = graph.setdefault(package, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_LAZY"):
                names = [value.value for value in ast.walk(node.value)
                         if isinstance(value, ast.Constant) and isinstance(value.value, str)]
            else:
                continue
            for name in names:
                if name.startswith("dynid."):
                    target = _package(name.split(".")[1])
                    if target != package:
                        found.add(target)
    return graph


class ImportsDirective(SphinxDirective):
    """``.. dynid-imports::``: a table of the packages in the order of the README's Layout,
    each with the packages it imports (read from the source when the site is built)."""

    has_content = False

    def run(self):
        graph = package_imports()
        readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
        layout = readme[readme.index("## Layout"):]
        order = [name.removeprefix("dynid.")
                 for name in re.findall(r"^\| `(dynid\.[a-z_]+)` \|", layout, flags=re.M)]
        rest = sorted(set(graph) - set(order) - {"dynid", "root helpers"})
        order = ["root helpers", *order, *rest, "dynid"]
        rank = {name: k for k, name in enumerate(order)}
        table = nodes.table()
        group = nodes.tgroup(cols=2)
        table += group
        for width in (20, 80):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        body = nodes.tbody()
        group += head
        group += body
        for row_cells, section in ((("package", "imports (from the stages before it)"), head),
                                   *(((name, ", ".join(sorted(graph.get(name, ()),
                                                              key=lambda t: rank.get(t, 0)))
                                       or "—"), body) for name in order if name in graph)):
            row = nodes.row()
            for text in row_cells:
                entry = nodes.entry()
                entry += nodes.paragraph(text=text)
                row += entry
            section += row
        return [table]


def setup(app):
    app.add_config_value("dynid_missing_data_note", "", "env")
    app.connect("source-read", note_missing_data)
    app.connect("config-inited", write_api_pages)
    app.connect("autodoc-process-docstring", drop_type_docstrings)
    _plain_type_aliases()
    app.connect("builder-inited", check_coverage)
    app.connect("missing-reference", resolve_top_level)
    app.add_directive("dynid-cli", CLIDirective)
    app.add_directive("dynid-imports", ImportsDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
