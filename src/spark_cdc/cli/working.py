"""A command's Spark session, its start said (a first start may take minutes in silence)."""

from __future__ import annotations

from spark_cdc.core.progress_lines import step


def started_session() -> object:
    """The command's Spark session (spark_cdc.targets.session_for), its start said."""
    from spark_cdc.targets import current_target, session_for

    with step(f"starting Spark (target {current_target().name})"):
        return session_for()
