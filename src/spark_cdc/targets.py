"""The profile target every tool of the project writes through, and a Spark session on it.

The dbt profile names the engine, read by dbt's own profile loader with dbt's lookup rules: the
profile of the dbt project in the current folder (``spark_cdc`` outside one), from
``$DBT_PROFILES_DIR`` (``spark-cdc --profiles-dir``), else ``./profiles.yml``, else ``~/.dbt``;
``SPARK_CDC_TARGET`` (``spark-cdc --target``) or the profile's default target selects one of its
outputs (``spark-cdc target`` shows which). dbt uses it
through the ``sparkcdc`` adapter; the landing and generator commands and the main job use it
through :func:`session_for`, so that their tables reach the same metastore as dbt's:

- ``method: session`` — a Spark session in this process: the embedded runtime when ``host`` is a
  ``local[...]`` master, a cluster's driver for ``spark://``, ``yarn`` or ``k8s://`` masters;
- ``method: connect`` — a Spark Connect client of ``host``: ``home-engine`` is this home's warm
  engine (started when it is not running; its port and token read from the home), anything else
  a Spark Connect URL used as given (``sc://host:port/;token=...``, a local server included);
- ``thrift``, ``http``, ``odbc`` — SQL only: Python code (Python models, landing, generators
  that write tables) cannot run there, and says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from spark_cdc.core.dbt_project_files import ProjectNotFoundError, profiles_dir, project_root
from spark_cdc.core.pyspark_logs import silence_query_context_logs

PROFILE = "spark_cdc"
SESSION_METHODS = ("session", "connect")
# The host that names this home's own warm engine (connect and thrift targets): explicit, so that
# any sc:// or host:port, localhost included, is a server of the user's.
HOME_ENGINE = "home-engine"


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


def profile_name() -> str:
    """The ``profile`` of the dbt project of the current folder (or a parent), else
    ``spark_cdc``: the same profile dbt uses for that project."""
    try:
        project = yaml.safe_load((project_root() / "dbt_project.yml").read_text()) or {}
    except (ProjectNotFoundError, OSError, yaml.YAMLError):
        return PROFILE
    return str(project.get("profile") or PROFILE)


def _credentials(data: dict[str, Any], profile: str, target: str) -> Any:
    """The target's credentials, built by its adapter plugin's own credentials class (as dbt
    builds them: aliases translated, the fields validated)."""
    from dbt.adapters.factory import load_plugin
    from dbt.exceptions import DbtProfileError
    from dbt_common.dataclass_schema import ValidationError
    from dbt_common.exceptions import DbtRuntimeError

    typename = data.pop("type", None)
    if typename is None:
        raise DbtProfileError(
            f'required field "type" not found in profile {profile} and target {target}'
        )
    try:
        credentials_class = load_plugin(typename)
        fields = credentials_class.translate_aliases(data)
        credentials_class.validate(fields)
        return credentials_class.from_dict(fields)
    except (DbtRuntimeError, ValidationError) as error:
        detail = str(error) if isinstance(error, DbtRuntimeError) else error.message
        raise DbtProfileError(
            f'Credentials in profile "{profile}", target "{target}" invalid: {detail}'
        ) from error


def current_target(name: str | None = None) -> Target:
    """The selected target of the project's profile, read and rendered by dbt's own profile
    loader: ``name``, else ``$SPARK_CDC_TARGET``, else the profile's default."""
    from dbt.config.profile import Profile, read_profile
    from dbt.config.renderer import ProfileRenderer
    from dbt.exceptions import DbtProfileError, DbtProjectError
    from dbt_common.context import set_invocation_context

    set_invocation_context(os.environ)  # what env_var() reads, as dbt's own commands set it
    folder, profile = profiles_dir(), profile_name()
    chosen = name or os.environ.get("SPARK_CDC_TARGET") or None
    try:
        raw = read_profile(str(folder))
        if profile not in raw:
            raise DbtProjectError(f"Could not find profile named '{profile}'")
        target, data = Profile.render_profile(raw[profile], profile, chosen, ProfileRenderer({}))
        data.pop("threads", None)
        credentials = _credentials(data, profile, target)
    except (DbtProfileError, DbtProjectError) as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        first = " ".join(lines[:3])
        raise TargetError(f"profile '{profile}' in {folder / 'profiles.yml'}: {first}") from None
    return Target(
        name=target,
        method=str(getattr(credentials, "method", "") or ""),
        host=str(getattr(credentials, "host", "") or ""),
        token=getattr(credentials, "token", None) or None,
        port=getattr(credentials, "port", None),
        server_side_parameters={
            str(k): str(v)
            for k, v in (getattr(credentials, "server_side_parameters", None) or {}).items()
        },
    )


def is_home_engine(target: Target) -> bool:
    """Whether the target names this home's own engine (``host: home-engine``)."""
    return target.host.strip() == HOME_ENGINE


def home_engine_state(kind: str, home: Path | None = None) -> dict:
    """The state of this home's engine of ``kind``, started (and said so) when not running."""
    from spark_cdc.engine import server as engine
    from spark_cdc.session.runtime import default_home

    return engine.start((home or default_home()).resolve(), kind, announce=True)


def connect_url(target: Target, home: Path | None = None) -> str:
    """The Spark Connect URL of a connect target, with its token: for ``home-engine`` the home's
    engine (started when needed) with the home's token; else ``host`` as given, plus the
    profile's token."""
    if is_home_engine(target):
        from spark_cdc.engine import server as engine
        from spark_cdc.session.runtime import default_home

        home = (home or default_home()).resolve()
        return engine.Engine(home, "connect").url(home_engine_state("connect", home)["port"])
    url = target.host if target.host.startswith("sc://") else f"sc://{target.host}"
    if target.token and ";token=" not in url:
        url = url.rstrip("/") + f"/;token={target.token}"
    return url


def session_for(target: Target | None = None, home: Path | None = None) -> Any:
    """A Spark session on the target: in this process (session) or a Connect client."""
    target = target or current_target()
    if target.method == "session":
        from spark_cdc.session.runtime import get_or_create_session

        master = target.host if target.host and target.host != "localhost" else None
        return get_or_create_session(home=home, master=master, extra=target.server_side_parameters)
    if target.method == "connect":
        from pyspark.sql import SparkSession

        silence_query_context_logs()
        session = SparkSession.builder.remote(connect_url(target, home)).getOrCreate()
        for key, value in target.server_side_parameters.items():
            session.conf.set(key, value)
        return session
    raise TargetError(
        f"target '{target.name}' (method {target.method}) runs SQL only: this command needs a "
        f"Spark session. Use a target with method {' or '.join(SESSION_METHODS)} "
        "(SPARK_CDC_TARGET=local, engine or cluster)."
    )
