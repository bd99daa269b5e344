"""The house: the import graph of dynid has no cycle and runs one way, from the workflow's later
stages down to its earlier ones; ``import dynid`` loads no heavy library until a step needs it.

The graph is read from the source (every ``import`` statement, function-local ones included, and
the ``_LAZY`` tables of the packages that export names on first use), not from a running
interpreter, so a dependency hidden in a function body counts as much as one at the top.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dynid

SOURCE = Path(dynid.__file__).resolve().parent

# Lowest first. A module may import from its own layer and the layers before it, never after.
# friction sits below robot: a robot description carries its friction model. model (the
# identified model, its base parameters and consistency) sits below every estimator: excitation
# optimises the conditioning of the base parameters, evaluation reads models, and neither
# imports an estimator. identification's comparison of methods validates each fit.
LAYERS = [
    ("dynid._validation", "dynid._files", "dynid._reading", "dynid._lazy", "dynid._progress",
     "dynid._parallel", "dynid._version", "dynid._jit", "dynid.metrics"),
    ("dynid.friction",),
    ("dynid.robot",),
    ("dynid.data",),
    ("dynid.dynamics",),
    ("dynid.model",),
    ("dynid.simulate",),
    ("dynid.excitation",),
    ("dynid.evaluation",),
    ("dynid.identification",),
    ("dynid.calibration",),
    ("dynid.export", "dynid.codegen", "dynid.monitor"),
    ("dynid.workflow",),
    ("dynid.bench", "dynid.benchmark"),
    ("dynid",),  # the top-level API (__init__)
    ("dynid.cli",),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in SOURCE.rglob("*.py")}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module file that ``name`` (a module, or a module's attribute) lives in."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and getattr(node.targets[0], "id", None) == "_LAZY"):
            # a dict literal, or a comprehension over one (the top-level API's stages)
            names = [value.value for value in ast.walk(node.value)
                     if isinstance(value, ast.Constant) and isinstance(value.value, str)
                     and value.value.startswith("dynid")]
        else:
            continue
        for name in names:
            if name == "dynid" or name.startswith("dynid."):
                target = _resolve(name, modules)
                if target and target != module:
                    found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> int:
    best, index = -1, None
    for k, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, index = len(prefix), k
    assert index is not None, f"{module} is in no layer: add it to LAYERS"
    return index


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_graph_is_read_from_the_source():
    """The reader sees top-level, function-local, relative and lazy imports."""
    graph = _graph()
    assert "dynid.robot.bounds" in graph["dynid.robot._robot"]
    assert "dynid.dynamics.mass_matrix" in graph["dynid.evaluation.validate"]  # in a function
    assert "dynid.robot._urdf" in graph["dynid.robot"]  # lazy
    assert "dynid.identification" in graph["dynid"]  # the top-level API's stages
    assert len(graph) > 60


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_imports_run_from_later_stages_to_earlier_ones():
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)})"
        for module, targets in sorted(_graph().items()) for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_every_module_is_in_a_layer():
    for module in _modules():
        _layer(module)


def _loaded_after(code: str) -> list[str]:
    heavy = ("numba", "cvxpy", "sympy", "matplotlib", "pinocchio", "scipy", "dynid.bench",
             "dynid.workflow.demo", "dynid.cli")
    script = (f"import sys\n{code}\n"
              f"print(','.join(m for m in {heavy!r} if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    return [m for m in result.stdout.strip().split(",") if m]


def test_import_dynid_loads_nothing_heavy():
    assert _loaded_after("import dynid") == []


def test_workflow_names_load_no_solver_plotting_or_symbolic_library():
    """Reaching the workflow's verbs loads their modules, not cvxpy, sympy or matplotlib: those
    load when a constrained fit, a symbolic regrouping or a figure is made."""
    names = ", ".join(f"dynid.{name}" for name in (
        "load_robot", "read_dataset", "prepare", "optimize_excitation", "simulate_closed_loop",
        "identify", "identify_constrained", "identify_nls", "retrieve_sdp", "symbolic_regrouping",
        "validate_model", "compare_methods", "write_report", "export_robot", "save_model"))
    loaded = _loaded_after(f"import dynid\n{names}")
    assert not {"cvxpy", "sympy", "matplotlib", "dynid.bench", "dynid.workflow.demo"} & set(loaded)


def test_the_top_level_api_resolves_every_name():
    for name in dynid.__all__:
        assert getattr(dynid, name) is not None, name
    assert set(dynid.__all__) <= set(dir(dynid))
    with pytest.raises(AttributeError, match="no attribute 'not_a_step'"):
        dynid.not_a_step  # noqa: B018


@pytest.mark.parametrize("package", ["robot", "dynamics", "friction", "data", "excitation",
                                     "simulate", "identification", "evaluation", "export"])
def test_subpackages_export_what_they_list(package):
    module = __import__(f"dynid.{package}", fromlist=["__all__"])
    assert module.__all__, package
    for name in module.__all__:
        assert getattr(module, name) is not None, f"dynid.{package}.{name}"


def test_the_stages_after_identification_read_models_and_run_no_estimator():
    """evaluation, export, codegen and monitor read identified models (``dynid.model``); none
    imports an estimator (``dynid.identification``)."""
    graph = _graph()
    readers = ("dynid.evaluation", "dynid.export", "dynid.codegen", "dynid.monitor")
    leaks = [f"{module} imports {target}" for module, targets in sorted(graph.items())
             if module.startswith(readers) for target in sorted(targets)
             if target.startswith("dynid.identification")]
    assert not leaks, "\n".join(leaks)
    assert "dynid.model.linear_model" in graph["dynid.evaluation.validate"]


def test_the_measuring_instruments_live_in_one_package():
    """Nothing loose in the package root but the public face and leaf helpers: the benchmark
    suites are ``dynid.bench``'s modules, each listed in its registry, and the library never
    imports them."""
    from dynid.bench import SUITES

    root = sorted(path.stem for path in SOURCE.glob("*.py"))
    assert [name for name in root if not name.startswith("_") and name != "metrics"] == [], root
    suite_modules = {suite.module for suite in SUITES.values() if suite.module}
    for module in suite_modules:
        assert (SOURCE / "bench" / f"{module}.py").is_file(), module
    users = [module for module, targets in _graph().items()
             if any(t.startswith("dynid.bench") for t in targets)
             and not module.startswith(("dynid.bench", "dynid.cli"))]
    assert users == []


def test_the_readme_layout_lists_every_package_in_layer_order():
    """The README's Layout table is the drawing of LAYERS: every sub-package once, lowest
    first."""
    readme = (SOURCE.parents[1] / "README.md").read_text()
    layout = readme[readme.index("## Layout"):]
    listed = re.findall(r"^\| `(dynid\.[a-z_]+)` \|", layout, flags=re.M)
    packages = {f"dynid.{path.parent.name}" for path in SOURCE.glob("*/__init__.py")
                if not path.parent.name.startswith("_")}  # private helpers: the root's
    assert set(listed) == packages | {"dynid.metrics"}
    assert len(listed) == len(set(listed))
    layers = [_layer(name) for name in listed]
    assert layers == sorted(layers), listed
