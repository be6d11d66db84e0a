"""Option helpers shared by the ``spark-cdc`` command groups."""

from __future__ import annotations

import argparse
from typing import Any


def spec_options(parser: argparse.ArgumentParser, defaults: object) -> None:
    """One ``--option`` per field of a generator spec dataclass, defaulting to its value."""
    for name, value in vars(defaults).items():
        option = f"--{name.replace('_', '-')}"
        if isinstance(value, bool):
            parser.add_argument(option, action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(option, type=type(value), default=value)


def spec_from(args: argparse.Namespace, spec_class: type) -> Any:
    """The generator spec of the parsed options."""
    return spec_class(**{name: getattr(args, name) for name in vars(spec_class())})


def text_table(columns: list[str], rows: list[tuple]) -> str:
    """Rows as an aligned text table (long values cut at 60 characters)."""

    def text(value: object) -> str:
        shown = "NULL" if value is None else str(value)
        return shown if len(shown) <= 60 else shown[:57] + "..."

    cells = [[text(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)
