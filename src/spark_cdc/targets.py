"""The profile target every tool of the project writes through, and a Spark session on it.

The dbt profile (``$DBT_PROFILES_DIR/profiles.yml``, profile ``spark_cdc``) names the engine:
``SPARK_CDC_TARGET`` (or the profile's default target) selects one of its outputs. dbt uses it
through the ``sparkcdc`` adapter; the landing and generator commands and the main job use it
through :func:`session_for`, so that their tables reach the same metastore as dbt's:

- ``method: session`` — a Spark session in this process: the embedded runtime when ``host`` is a
  ``local[...]`` master, a cluster's driver for ``spark://``, ``yarn`` or ``k8s://`` masters;
- ``method: connect`` — a Spark Connect client of ``host`` (``sc://host:port/;token=...``); for
  the local engine (``sc://localhost:<port>`` without a token) the home's engine is started when
  it is not running and its token is read from the home;
- ``thrift``, ``http``, ``odbc`` — SQL only: Python code (Python models, landing, generators
  that write tables) cannot run there, and says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

PROFILE = "spark_cdc"
SESSION_METHODS = ("session", "connect")


class TargetError(RuntimeError):
    """The profile target cannot do what was asked."""


@dataclass(frozen=True)
class Target:
    """The parts of a dbt output the project's tools need."""

    name: str
    method: str
    host: str
    token: str | None = None
    port: int | None = None
    server_side_parameters: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_output(cls, name: str, output: Mapping[str, Any]) -> Target:
        return cls(
            name=name,
            method=str(output.get("method", "")),
            host=str(output.get("host", "")),
            token=str(output["token"]) if output.get("token") else None,
            port=int(output["port"]) if output.get("port") else None,
            server_side_parameters={
                str(k): str(v) for k, v in (output.get("server_side_parameters") or {}).items()
            },
        )


def _render(value: Any) -> Any:
    """Render dbt's ``env_var()`` in a profile value (the only Jinja profiles use here)."""
    if isinstance(value, str) and "{{" in value:
        import jinja2

        def env_var(name: str, default: str | None = None) -> str:
            if name in os.environ:
                return os.environ[name]
            if default is None:
                raise TargetError(f"profiles.yml needs the environment variable {name}")
            return default

        return jinja2.Environment().from_string(value).render(env_var=env_var)
    if isinstance(value, dict):
        return {k: _render(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v) for v in value]
    return value


def profiles_dir() -> Path:
    """``$DBT_PROFILES_DIR``, else the project's ``profiles/`` folder, else ``~/.dbt``."""
    if os.environ.get("DBT_PROFILES_DIR"):
        return Path(os.environ["DBT_PROFILES_DIR"])
    from spark_cdc.dbt_invoke import DbtCommandError, project_root

    try:
        bundled = project_root() / "profiles"
    except DbtCommandError:
        bundled = None
    if bundled is not None and (bundled / "profiles.yml").exists():
        return bundled
    return Path.home() / ".dbt"


def current_target(name: str | None = None) -> Target:
    """The selected target: ``name``, else ``$SPARK_CDC_TARGET``, else the profile's default."""
    path = profiles_dir() / "profiles.yml"
    try:
        profile = yaml.safe_load(path.read_text())[PROFILE]
    except (OSError, KeyError, TypeError) as error:
        raise TargetError(f"no '{PROFILE}' profile in {path}: {error}") from None
    chosen = name or os.environ.get("SPARK_CDC_TARGET") or _render(profile.get("target"))
    outputs = profile.get("outputs", {})
    if chosen not in outputs:
        raise TargetError(f"{path}: profile '{PROFILE}' has no target '{chosen}'")
    return Target.from_output(chosen, _render(outputs[chosen]))


def is_local_engine(target: Target) -> bool:
    """Whether a connect target points at this machine's engine (started on demand)."""
    parsed = urlparse(target.host.split(";", 1)[0].rstrip("/"))
    return (
        parsed.hostname in ("localhost", "127.0.0.1")
        and not target.token
        and (";token=" not in target.host)
    )


def connect_url(target: Target, home: Path | None = None) -> str:
    """The Spark Connect URL of a connect target, with its token (the local engine's own, read
    from the home, when the profile gives none), starting the local engine when needed."""
    url = target.host if target.host.startswith("sc://") else f"sc://{target.host}"
    if is_local_engine(target):
        from spark_cdc import engine
        from spark_cdc.runtime import default_home

        home = (home or default_home()).resolve()
        port = urlparse(url.split(";", 1)[0]).port or engine.KINDS["connect"][1]
        state = engine.start(home, "connect", port=port)
        return engine.Engine(home, "connect").url(state["port"])
    if target.token and ";token=" not in url:
        url = url.rstrip("/") + f"/;token={target.token}"
    return url


def session_for(target: Target | None = None, home: Path | None = None) -> Any:
    """A Spark session on the target: in this process (session) or a Connect client."""
    target = target or current_target()
    if target.method == "session":
        from spark_cdc.runtime import get_or_create_session

        master = target.host if target.host and target.host != "localhost" else None
        return get_or_create_session(home=home, master=master, extra=target.server_side_parameters)
    if target.method == "connect":
        from pyspark.sql import SparkSession

        session = SparkSession.builder.remote(connect_url(target, home)).getOrCreate()
        for key, value in target.server_side_parameters.items():
            session.conf.set(key, value)
        return session
    raise TargetError(
        f"target '{target.name}' (method {target.method}) runs SQL only: this command needs a "
        f"Spark session. Use a target with method {' or '.join(SESSION_METHODS)} "
        "(SPARK_CDC_TARGET=local, engine or cluster)."
    )
