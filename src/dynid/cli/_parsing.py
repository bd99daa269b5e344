"""How the command line parses: bounded numbers (``Range``) and the parser that shows their
ranges, renamed options, JSON and progress output, and library errors spelt in the command's
options (``options_named``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping

# a written or simulated time series: at most this many samples from the command line (10^7:
# 2.8 h at 1 kHz, ~2 GB for 7 joints)
MAX_CLI_SAMPLES = 10_000_000


class Range:
    """An argparse ``type``: a finite number of ``kind`` (int or float) in a range, so that
    every numeric option is checked before any work, with its range shown in ``--help``.

    ``low``/``high``: inclusive bounds (None: unbounded); ``above``: an exclusive lower bound.
    """

    def __init__(self, kind: type, low: float | None = None, high: float | None = None, *,
                 above: float | None = None) -> None:
        self.kind, self.low, self.high, self.above = kind, low, high, above
        self.__name__ = kind.__name__  # argparse names the type in its messages

    def __call__(self, text: str):
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if self.kind is int else 'a number'}, got {text!r}"
            ) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if (self.low is not None and value < self.low) or \
                (self.high is not None and value > self.high) or \
                (self.above is not None and value <= self.above):
            raise argparse.ArgumentTypeError(f"expected {self}, got {text}")
        return value

    def __str__(self) -> str:
        """Interval notation: ``[1, 50]``, ``(0, 3600]``, ``[0, inf)``."""
        left = f"({_show(self.above)}" if self.above is not None else \
            f"[{_show(self.low)}" if self.low is not None else "(-inf"
        right = f"{_show(self.high)}]" if self.high is not None else "inf)"
        return f"{left}, {right}"


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e16 else f"{value:g}"


SEED = Range(int, 0, 2**32 - 1)


class RangeHelp(argparse.HelpFormatter):
    """``--help`` shows each numeric option's range."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if isinstance(action.type, Range) and text is not None:
            text = f"{text} [{action.type}]"
        return text


class Parser(argparse.ArgumentParser):
    """dynid's parsers: numeric ranges in the help."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", RangeHelp)
        super().__init__(*args, **kwargs)


def check_samples(duration: float, rate: float, what: str) -> None:
    """A time series the command writes stays within ``MAX_CLI_SAMPLES``."""
    if duration * rate > MAX_CLI_SAMPLES:
        raise ValueError(f"{what}: {duration:g} s at {rate:g} Hz is {duration * rate:.3g} "
                         f"samples, more than {MAX_CLI_SAMPLES:,}; lower the rate or the "
                         "duration")


def print_json(payload: dict) -> None:
    from dynid._files import to_builtin

    print(json.dumps(to_builtin(payload, nonfinite_as_none=True), indent=2))


def stderr_progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress lines go to stderr, so that stdout stays clean for --json."""
    return (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None


# a library keyword in backquotes, with an index (`logs[1]`)
_KEYWORD = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?`")


@contextlib.contextmanager
def options_named(spelling: Mapping[str, str | None]) -> Iterator[None]:
    """A ValueError or TypeError of library code inside names the command's options, not the
    keywords the command gave them by: each `keyword` of ``spelling`` in its message becomes
    its option (`substeps` -> `--control-rate`), `keyword[k]` the option's value k + 1
    (`--reference` #2), and two keywords that are one option here read once (`rate` /
    `substeps` -> `--control-rate`). A keyword spelt None has no option here: the advice to
    give it goes (", or give `substeps`")."""
    try:
        yield
    except (ValueError, TypeError) as error:
        text = spelt(str(error), spelling)
        if text == str(error):
            raise
        raise (ValueError if isinstance(error, ValueError) else TypeError)(text) from None


def spelt(text: str, spelling: Mapping[str, str | None]) -> str:
    """``text`` with the keywords of ``spelling`` spelt as options (see ``options_named``)."""
    for name in (name for name, value in spelling.items() if value is None):
        keyword = rf"(?:give |raise )?`{re.escape(name)}`"
        text = re.sub(rf"{keyword}(?:, or |, | or | / )", "", text)
        text = re.sub(rf"(?:,? or | / |, ){keyword}", "", text)
    spelling = {name: value for name, value in spelling.items() if value is not None}

    def option(match: re.Match) -> str:
        name, index = match.group(1), match.group(2)
        if name not in spelling:
            return match.group(0)
        return f"`{spelling[name]}`" + ("" if index is None else f" #{int(index) + 1}")

    text = _KEYWORD.sub(option, text)
    return re.sub(r"(`[^`]+`)(?:(?: / | or |, | and )\1)+(?![\w#])", r"\1", text)


class _Renamed(argparse.Action):
    """An option's old spelling: refused, naming the new one (one spelling across commands)."""

    def __init__(self, option_strings, dest, *, new: str, **kwargs) -> None:
        self.new = new
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = " ".join(values) if isinstance(values, list) else (values or "")
        parser.error(f"`{option_string}` is spelt `{self.new}` now, as in every dynid "
                     f"command: {self.new} {given}".rstrip())


def renamed_option(parser: argparse.ArgumentParser, old: str, new: str, *,
                   nargs: str | None = None) -> None:
    """Refuse ``old``, an earlier spelling of ``new``, with the new spelling."""
    parser.add_argument(old, action=_Renamed, new=new, nargs=nargs,
                        dest=f"renamed_{old.lstrip('-').replace('-', '_')}")
