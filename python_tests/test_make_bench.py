"""`make bench` as the README names it: every benchmark line of the Makefile's bench target runs
a script that accepts the arguments the line gives it (parsed only: the benchmarks themselves
take minutes to hours and are run by hand)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex

import pytest
from support import PROJECT_DIR


def _bench_lines() -> list[list[str]]:
    text = (PROJECT_DIR / "Makefile").read_text()
    recipe = re.search(r"^bench:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert recipe, "the Makefile has a bench target"
    lines = []
    for line in recipe.group(1).splitlines():
        words = shlex.split(line.strip())
        script = next(i for i, word in enumerate(words) if word.endswith(".py"))
        lines.append(words[script:])
    return lines


class Parsed(Exception):
    """Raised by the patched parse_args once the arguments parsed."""


@pytest.mark.parametrize("line", _bench_lines(), ids=lambda line: line[0].rsplit("/", 1)[-1])
def test_each_bench_line_gives_its_script_arguments_it_accepts(line, monkeypatch):
    path = PROJECT_DIR / line[0]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(parser, args=None, namespace=None):
        parse(parser, line[1:], namespace)  # exits with status 2 on an argument it refuses
        raise Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    with pytest.raises(Parsed):
        module.main()
