"""sqlfluff's view of the ``spark_cdc`` macro namespace (``library_path`` in .sqlfluff).

Model files call the package's macros by namespace (``spark_cdc.hash_cdc_history(...)``), which
sqlfluff's Jinja templater cannot resolve by itself. This module renders the real macros of
``macros/`` with plain Jinja as dbt renders them at parse time (``execute`` false, ``config.get``
empty), so the SQL they produce is linted through the models that call them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2

MACROS = Path(__file__).resolve().parents[2] / "macros"


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise _Return(value)


def _wrap(macro: Any):
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return macro(*args, **kwargs)
        except _Return as returned:
            return returned.value

    return call


_ENV = jinja2.Environment(extensions=["jinja2.ext.do"])
_ENV.globals.update(
    {
        "execute": False,
        "config": SimpleNamespace(get=lambda name, default=None: ""),
        "var": lambda name, default=None: default,
        "return": _return,
        "this": "this_model",
        "is_incremental": lambda: False,
    }
)
# Macros call each other by namespace too: the namespace is a global before any file loads.
_namespace = SimpleNamespace()
_ENV.globals["spark_cdc"] = _namespace
for _path in sorted(MACROS.rglob("*.sql")):
    _module = _ENV.from_string(_path.read_text()).module
    for _name in dir(_module):
        _macro = getattr(_module, _name)
        if isinstance(_macro, jinja2.runtime.Macro):
            setattr(_namespace, _name, _wrap(_macro))
            globals()[_name] = getattr(_namespace, _name)
