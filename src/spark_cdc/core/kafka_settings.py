"""Kafka consumer settings kept off the command line: a properties file and placeholders.

A Kafka client reads its settings from a properties file (``NAME=VALUE`` a line, ``#`` or ``!``
comments, a trailing ``\\`` continuing a line: what Kafka's own tools take as
``--command-config``), and a value may name a secret instead of holding it, with Kafka's
config-provider syntax: ``${env:NAME}`` (an environment variable) and ``${file:PATH:KEY}`` (a key
of another properties file, such as one only the service account can read).

The placeholders are replaced here, in the process that starts the query, unless the settings
declare Kafka's own ``config.providers``: then they are left for the Kafka consumer to resolve
where it runs (on the executors), as Kafka's clients do. A placeholder that names nothing is an
error that names the setting and the placeholder, never a value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path


class KafkaSettingsError(ValueError):
    """A settings file or a placeholder that cannot be read (the message names no value)."""


PLACEHOLDER = re.compile(r"\$\{(env|file):([^}]*)\}")


def read_properties(path: Path) -> dict[str, str]:
    """The settings of a properties file (keys and values stripped of surrounding spaces)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise KafkaSettingsError(
            f"cannot read the Kafka settings file {path}: {error.strerror}"
        ) from None
    settings: dict[str, str] = {}
    pending = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = pending + (raw.lstrip() if pending else raw.strip())
        if not pending and (not line or line.startswith(("#", "!"))):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        pending = ""
        match = re.match(r"\s*([^=:\s]+)\s*[=:]\s*(.*)$", line)
        if not match:
            raise KafkaSettingsError(f"{path}, line {number}: a setting reads NAME=VALUE")
        settings[match.group(1)] = match.group(2).strip()
    if pending:
        raise KafkaSettingsError(f"{path}: its last line ends with a continuation '\\'")
    return settings


def _value_of(kind: str, reference: str, setting: str, environ: Mapping[str, str]) -> str:
    if kind == "env":
        if reference not in environ:
            raise KafkaSettingsError(
                f"Kafka setting {setting}: ${{env:{reference}}} names an environment variable "
                "that is not set"
            )
        return environ[reference]
    path, colon, key = reference.rpartition(":")
    if not colon or not path:
        raise KafkaSettingsError(f"Kafka setting {setting}: ${{file:...}} reads ${{file:PATH:KEY}}")
    values = read_properties(Path(path))
    if key not in values:
        raise KafkaSettingsError(f"Kafka setting {setting}: {path} has no key {key}")
    return values[key]


def resolve_placeholders(
    settings: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``settings`` with each ``${env:NAME}`` and ``${file:PATH:KEY}`` replaced by what it
    names, unless they declare ``config.providers`` (then Kafka resolves them itself)."""
    if "config.providers" in settings:
        return dict(settings)
    env = os.environ if environ is None else environ
    return {
        name: PLACEHOLDER.sub(lambda m, n=name: _value_of(m.group(1), m.group(2), n, env), value)
        for name, value in settings.items()
    }
