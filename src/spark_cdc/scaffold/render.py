"""Templates of the generated files: Jinja with ``[[ ]]`` / ``[% %]`` delimiters, so that the
dbt Jinja they hold (``{{ ref(...) }}``) passes through as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    block_start_string="[%",
    block_end_string="%]",
    variable_start_string="[[",
    variable_end_string="]]",
    comment_start_string="[#",
    comment_end_string="#]",
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)

# A YAML double-quoted scalar (JSON's string syntax is YAML's).
_ENV.filters["quoted"] = lambda text: json.dumps(str(text), ensure_ascii=False)


def render(template: str, **values: Any) -> str:
    """The text of ``template`` (a path under templates/) with ``values``."""
    return _ENV.get_template(template).render(**values)
