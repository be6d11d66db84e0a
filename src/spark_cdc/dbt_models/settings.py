"""The per-source settings block of a model's ``meta`` (written by ``spark-cdc add``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SettingsError(ValueError):
    """A model's meta lacks its source's settings block, or the block is not usable."""


def block(meta: Mapping[str, Any] | None, capability: str, name_key: str) -> Mapping[str, Any]:
    """``meta[capability]``, which must name its source under ``name_key``."""
    settings = (meta or {}).get(capability)
    if not isinstance(settings, Mapping) or not settings.get(name_key):
        raise SettingsError(
            f"the model's meta has no '{capability}' block with a '{name_key}' (the source's "
            f"settings, written by `spark-cdc add {capability.replace('_', '-')}` into the "
            "source's YAML file)"
        )
    return settings
