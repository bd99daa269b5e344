"""YAML read as a stream of parser events first (depth, aliases, nodes, repeated keys), then
built by safe constructors with the YAML 1.2 core schema; YAML written that 1.1 and 1.2 readers
read alike."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dynid._reading.limits import FileError, one_line, read_text

YAML_MAX_DEPTH = 64
YAML_MAX_ALIASES = 64  # robot and model files need none; hand-written files may use a few
YAML_MAX_NODES = 2_000_000  # with aliases expanded; a 7-joint model file has ~6,000


def load_yaml(path: str | Path, *, what: str = "YAML file") -> Any:
    """The document of a YAML file (see ``parse_yaml``)."""
    return parse_yaml(read_text(path, what=what), source=Path(path).name)


def parse_yaml(text: str, *, source: str = "<yaml>") -> Any:
    """A YAML document, after its structure passed the checks of the module docstring.

    Plain scalars are typed by the YAML 1.2 core schema (``YAML12_SCALARS``), not PyYAML's
    YAML 1.1 defaults. libyaml's C parser when PyYAML has it (5x faster on the built-in robot
    files, which every command reads), else the pure-Python one; safe constructors either way.
    """
    import yaml

    loader = _yaml12_loader()
    try:
        _check_structure(yaml.parse(text, Loader=loader), source)
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        what = " ".join(str(part) for part in (error.problem, error.context) if part)
        raise FileError(f"{where}: {one_line(what or type(error).__name__)}") from None
    except yaml.YAMLError as error:
        raise FileError(f"{source}: {one_line(str(error))}") from None
    except RecursionError:  # the depth check above makes this unreachable; kept as a guard
        raise FileError(f"{source}: nested too deeply") from None


# The YAML 1.2 core schema (yaml.org/spec/1.2.2, 10.3.2), for plain (unquoted) scalars:
#   null   ~, null, Null, NULL, the empty scalar
#   bool   true, True, TRUE, false, False, FALSE
#   int    decimal [-+]?[0-9]+ (``010`` is ten), octal 0o[0-7]+, hexadecimal 0x[0-9a-fA-F]+
#   float  [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?.inf, .nan (and capitals)
#   str    everything else
# PyYAML resolves YAML 1.1 instead, where ``010`` is 8, ``1:30`` is 90, ``1_000`` is 1000,
# ``yes``/``no``/``on``/``off`` are booleans and ``2001-12-14`` is a date: in dynid those are
# the numbers above or strings (a string where a number is expected is refused by the reader
# of that field). Hexadecimal and ``0o`` octal are kept: YAML 1.2 defines them and nobody
# writes ``0x10`` meaning anything but 16. Explicit tags are limited to the core ones
# (``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!seq``, ``!!map``) and read
# by the same rules; ``!!binary``, ``!!timestamp``, ``!!set``, ``!!omap``, ``!!python/...``
# are errors. Merge keys (``<<: *base``) stay. Keys repeated in one mapping are errors, also
# where they are spelt differently (``10`` and ``010``).
YAML12_SCALARS = {
    "tag:yaml.org,2002:null": r"~|null|Null|NULL|",
    "tag:yaml.org,2002:bool": r"true|True|TRUE|false|False|FALSE",
    "tag:yaml.org,2002:int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "tag:yaml.org,2002:float": (r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
                                r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"),
}
_YAML_FIRST = {"tag:yaml.org,2002:null": "~nN", "tag:yaml.org,2002:bool": "tTfF",
               "tag:yaml.org,2002:int": "-+0123456789",
               "tag:yaml.org,2002:float": "-+.0123456789"}
_YAML_TAGS = ("null", "bool", "int", "float", "str", "seq", "map")


@functools.cache
def _yaml12_loader():
    """A safe loader class (libyaml's when present) typing plain scalars by YAML 1.2 core."""
    import yaml
    from yaml.constructor import ConstructorError

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                seen: dict = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        first = seen.setdefault(key, key_node.start_mark)
                    except TypeError:  # unhashable: the base class names it
                        continue
                    if first is not key_node.start_mark:
                        raise ConstructorError(
                            None, None, f"key {key!r} appears twice in one mapping (first at "
                            f"line {first.line + 1})", key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

    def scalar(loader, node) -> str:
        return loader.construct_scalar(node)

    def refuse(loader, node, tag: str, value: str):
        raise ConstructorError(None, None, f"{value!r:.40} is not a YAML 1.2 {tag}; write "
                               "it as one (decimal digits, true or false) or drop the tag",
                               node.start_mark)

    def construct_int(loader, node) -> int:
        value = scalar(loader, node)
        if re.fullmatch(r"[-+]?[0-9]+", value, re.ASCII):
            return int(value, 10)
        if re.fullmatch(r"0o[0-7]+|0x[0-9a-fA-F]+", value, re.ASCII):
            return int(value[2:], 8 if value[1] == "o" else 16)
        return refuse(loader, node, "integer", value)

    def construct_float(loader, node) -> float:
        value = scalar(loader, node)
        if re.fullmatch(YAML12_SCALARS["tag:yaml.org,2002:float"], value, re.ASCII) or \
                re.fullmatch(r"[-+]?[0-9]+", value, re.ASCII):
            special = value.lower().lstrip("+")
            if special in (".inf", "-.inf", ".nan"):
                return {".inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}[
                    special]
            return float(value)
        return refuse(loader, node, "float", value)

    def construct_bool(loader, node) -> bool:
        value = scalar(loader, node)
        if re.fullmatch(YAML12_SCALARS["tag:yaml.org,2002:bool"], value):
            return value.lower() == "true"
        return refuse(loader, node, "boolean (true or false)", value)

    Loader.yaml_implicit_resolvers = {}
    for tag, pattern in YAML12_SCALARS.items():
        first = list(_YAML_FIRST[tag]) + ([""] if tag.endswith("null") else [])
        Loader.add_implicit_resolver(tag, re.compile(rf"^(?:{pattern})$", re.ASCII), first)
    Loader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])
    kept = {f"tag:yaml.org,2002:{name}" for name in _YAML_TAGS} | {None}
    Loader.yaml_constructors = {tag: make for tag, make in base.yaml_constructors.items()
                                if tag in kept}
    Loader.yaml_multi_constructors = {}
    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    Loader.add_constructor("tag:yaml.org,2002:float", construct_float)
    Loader.add_constructor("tag:yaml.org,2002:bool", construct_bool)
    return Loader


def dump_yaml(data: Any, **options: Any) -> str:
    """``yaml.safe_dump(data, **options)``, quoting every string that YAML 1.1 or YAML 1.2
    would read as something else (``yes``, ``010``, ``1e5``, ``0o7``): what dynid writes reads
    back the same in dynid (``parse_yaml``) and in any YAML 1.1 tool."""
    import yaml

    return yaml.dump(data, Dumper=_dumper(), **options)


@functools.cache
def _dumper():
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    for tag, pattern in YAML12_SCALARS.items():  # added to the YAML 1.1 resolvers
        first = list(_YAML_FIRST[tag]) + ([""] if tag.endswith("null") else [])
        Dumper.add_implicit_resolver(tag, re.compile(rf"^(?:{pattern})$", re.ASCII), first)
    return Dumper


def _check_structure(events: Iterable, source: str) -> None:
    """Depth, alias and expanded-size budgets and unique keys, over the parser's events."""
    import yaml

    nodes = aliases = 0
    sizes: dict[str, int] = {}  # anchor -> nodes of its subtree, aliases expanded
    stack: list[list] = []  # [is_mapping, anchor, nodes at start, keys seen, expecting a key]

    def finished(scalar: str | None, line: int) -> None:
        """A node ended inside the innermost collection: mappings alternate key, value."""
        if not stack or not stack[-1][0]:
            return
        top = stack[-1]
        if top[4] and scalar is not None:
            if scalar in top[3]:
                raise FileError(f"{source}:{line}: key {scalar!r} appears twice in one mapping")
            top[3].add(scalar)
        top[4] = not top[4]

    for event in events:
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            nodes += 1
            stack.append([isinstance(event, yaml.MappingStartEvent), event.anchor, nodes,
                          set(), True])

            if len(stack) > YAML_MAX_DEPTH:
                raise FileError(f"{source}:{line}: nested deeper than {YAML_MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            _, anchor, start, _, _ = stack.pop()
            if anchor is not None:
                sizes[anchor] = nodes - start + 1
            finished(None, line)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
            finished(event.value, line)
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > YAML_MAX_ALIASES:
                raise FileError(f"{source}:{line}: more than {YAML_MAX_ALIASES} aliases "
                                "(dynid files need none)")
            nodes += sizes.get(event.anchor, 1)
            finished(None, line)
        if nodes > YAML_MAX_NODES:
            raise FileError(f"{source}:{line}: more than {YAML_MAX_NODES} nodes with its "
                            "aliases expanded")


def check_keys(mapping: Mapping, allowed: Iterable[str], where: str) -> None:
    """Unknown keys are errors, with the closest allowed key as a suggestion."""
    allowed = tuple(allowed)
    for key in mapping:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else \
                f"; expected one of {', '.join(allowed)}"
            raise ValueError(f"`{where}` has an unknown key {key!r}{hint}")
