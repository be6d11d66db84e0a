"""Spark type names as a settings block gives them: the shape checked before any Spark runs.

A YAML flow mapping ends a plain scalar at a comma: ``{total: decimal(12,2)}`` reads as the
column ``total`` of type ``decimal(12`` and a column ``2)`` of type null. Such a block is
refused here, naming the setting and the column, rather than by Spark's parser later (or as a
column name the data lacks).
"""

from __future__ import annotations

_OPENERS = {"(": ")", "<": ">"}


def type_text_problem(column: str, kind: object) -> str | None:
    """Why ``kind`` cannot be the Spark type of ``column`` (None when its shape is right)."""
    text = "" if kind is None else str(kind).strip()
    if not text:
        return f"column {column!r} has no type"
    if not (text[0].isalpha() or text[0] == "_"):
        return f"column {column!r} has type {text!r}, which is not a Spark type"
    closing: list[str] = []
    for char in text:
        if char in _OPENERS:
            closing.append(_OPENERS[char])
        elif char in _OPENERS.values() and (not closing or closing.pop() != char):
            closing = ["!"]
            break
    if closing or any(char in column for char in "()<>"):
        return (
            f"column {column!r} has type {text!r}: a type holding a comma must be quoted in a "
            'YAML flow mapping, e.g. {total: "decimal(12,2)"}'
        )
    return None
