"""Render the project's macros as SQL without dbt or Spark (dbt-spark's tests/unit pattern).

A macro file is loaded by jinja2 with the globals a dbt context gives it: ``var``, ``config``,
``model``, ``modules``, ``exceptions``, ``return`` and the project's own namespace
(``spark_cdc.<macro>``). dbt's ``return()`` ends a macro with a value; here it raises
:class:`MacroReturn`, which every call through :class:`Macros` turns back into the value.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jinja2 import Environment, FileSystemLoader
from support import PROJECT_DIR

MACROS = PROJECT_DIR / "macros"


class MacroReturn(Exception):
    """dbt's return(): carries the macro's value."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


class CompilationError(Exception):
    """exceptions.raise_compiler_error()."""


def _return(value: Any) -> None:
    raise MacroReturn(value)


def _raise_compiler_error(message: str) -> None:
    raise CompilationError(message)


class Config(dict):
    """A node's config: ``config.get(name, default)``."""


class Macros:
    """The macros of some project files (under ``root``: the project's macros unless told),
    called as ``macros.name(...)``; a call returns what the macro returned (or its rendered
    text, stripped, when it returned nothing). ``extra`` adds to or replaces context values
    (``target``, ``model``, ...)."""

    def __init__(
        self,
        *files: str,
        variables: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        model_name: str = "a_snapshot",
        invocation_id: str = "00000000-0000-0000-0000-000000000000",
        root: Path = MACROS,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self._env = Environment(loader=FileSystemLoader(str(root)), extensions=["jinja2.ext.do"])
        values = dict(variables or {})
        context = {
            "var": lambda name, default=None: values.get(name, default),
            "config": Config(config or {}),
            "model": SimpleNamespace(name=model_name),
            "modules": SimpleNamespace(re=re, datetime=datetime),
            "exceptions": SimpleNamespace(raise_compiler_error=_raise_compiler_error),
            "return": _return,
            "invocation_id": invocation_id,
            "spark_cdc": self,
            **(extra or {}),
        }
        self._modules = [
            self._env.get_template(str(Path(name)), globals=context).module for name in files
        ]

    def __getattr__(self, name: str) -> Any:
        for module in self._modules:
            macro = getattr(module, name, None)
            if macro is not None:
                return _returning(macro)
        raise AttributeError(name)


def _returning(macro: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            rendered = macro(*args, **kwargs)
        except MacroReturn as returned:
            return returned.value
        return str(rendered).strip()

    return call
