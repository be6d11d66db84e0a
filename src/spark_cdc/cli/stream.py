"""``spark-cdc stream schema-drift FEED``: the feed's Structured Streaming query.

The feed's settings are read from the dbt project as dbt parses it (the silver table prefix and
event groups in its models' ``meta.schema_drift``, the schema its models write to, the landing
folder of its ``raw_events`` source), so the stream and ``dbt build`` always write the same
tables. The monitoring models (quarantine, run summary) are SQL models: dbt refreshes them after
each micro-batch (``--available-now``: once, at the end).

A feed with event groups runs as one ingest query (``--ingest-only``: bronze and the registry)
and one query per group (``--group NAME``: its event types' silver tables), each in a process
of its own if wished, each with its own checkpoint (``<checkpoint>/groups/<group>``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from spark_cdc.cli.dbt_invoke import run_dbt
from spark_cdc.cli.options import add_kafka_options, kafka_source, positive_count
from spark_cdc.core.streaming_queries import kafka_failure
from spark_cdc.dbt_models.settings import SettingsError
from spark_cdc.schema_drift.event_groups import Grouping, parse_grouping
from spark_cdc.schema_drift.stream import FeedTables, StreamRun, start_group_stream, start_stream
from spark_cdc.session.jars import fetch_kafka_jars
from spark_cdc.session.runtime import default_home


@dataclass(frozen=True)
class FeedSettings:
    """What the stream needs of a feed's dbt nodes."""

    tables: FeedTables
    landing_root: str
    monitoring: tuple[str, str]
    grouping: Grouping | None = None


def feed_settings(manifest: Any, feed: str) -> FeedSettings:
    """The feed's tables and landing folder, from dbt's parsed manifest."""
    nodes = {node.name: node for node in manifest.nodes.values()}
    bronze = nodes.get(f"int_schema_drift__{feed}_bronze")
    loads = nodes.get(f"schema_drift__{feed}_silver_loads")
    if bronze is None or loads is None:
        raise SettingsError(f"no schema-drift feed {feed} in this dbt project (spark-cdc add)")
    block = loads.config.meta.get("schema_drift") or {}
    prefix = str(block.get("silver_table_prefix") or "")
    if not prefix.strip():
        raise SettingsError(f"schema_drift feed {feed}: silver_table_prefix is not set")
    sources = [
        source
        for source in manifest.sources.values()
        if source.source_name == f"schema_drift__{feed}" and source.name == "raw_events"
    ]
    if not sources or not sources[0].external or not sources[0].external.location:
        raise SettingsError(f"schema_drift feed {feed}: its raw_events source has no location")
    return FeedSettings(
        FeedTables(loads.schema, feed, prefix),
        str(sources[0].external.location).strip(),
        (f"schema_drift__{feed}_quarantine", f"schema_drift__{feed}_run_summary"),
        parse_grouping(block.get("event_groups")),
    )


def add_stream_parser(commands: argparse._SubParsersAction) -> None:
    """``spark-cdc stream schema-drift ...``."""
    stream = commands.add_parser("stream", help="run a capability as a Structured Streaming query")
    kinds = stream.add_subparsers(dest="stream_kind", required=True)
    parser = kinds.add_parser(
        "schema-drift",
        help="keep a JSON feed's bronze, registry and silver tables current as files land",
        description=(
            "Read the feed's landing folder as a file stream and take in each micro-batch as "
            "dbt build of the feed would (bronze, registry, silver, their log); the monitoring "
            "models are refreshed by dbt after each batch."
        ),
    )
    parser.add_argument("feed", help="the feed's name (spark-cdc add schema-drift FEED)")
    parser.add_argument(
        "--available-now",
        action="store_true",
        help="take in what is landed, then stop (one or more micro-batches)",
    )
    parser.add_argument("--trigger-interval", default="30 seconds", help="(30 seconds)")
    parser.add_argument(
        "--max-files-per-trigger",
        type=positive_count,
        default=None,
        help="files per micro-batch (all): landed files, or with --group bronze's data files",
    )
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help="the query's checkpoint ($SPARK_CDC_HOME/streams/schema_drift/FEED)",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve the stream's progress as Prometheus metrics on 127.0.0.1:PORT/metrics "
        "(needs spark-cdc[metrics])",
    )
    grouped = parser.add_mutually_exclusive_group()
    grouped.add_argument(
        "--ingest-only",
        action="store_true",
        help="bronze and the registry only: silver is left to the feed's event groups",
    )
    grouped.add_argument(
        "--group",
        default=None,
        help="run this event group's query (its event types' silver tables, read from bronze)",
    )
    add_kafka_options(parser, "the landing folder")
    parser.set_defaults(handler=run_schema_drift_stream)
    status = kinds.add_parser(
        "status",
        help="the latest figures of a feed's stream and each of its groups (last batch, rates)",
    )
    status.add_argument("feed", help="the feed's name")
    status.add_argument("--checkpoint", type=Path, default=None, help="as for schema-drift")
    status.set_defaults(handler=run_stream_status)


def _checkpoint(args: argparse.Namespace) -> Path:
    return args.checkpoint or default_home() / "streams" / "schema_drift" / args.feed


def _query_checkpoint(args: argparse.Namespace) -> Path:
    """The checkpoint of the query the options ask for (a group's is in the feed's)."""
    feed = _checkpoint(args)
    return feed if args.group is None else feed / "groups" / args.group


def _start(args: argparse.Namespace, spark: Any, settings: FeedSettings, after_batch: Any):
    """The query the options ask for: the feed's, its ingest, or one group's."""
    checkpoint = _query_checkpoint(args).resolve()
    common = {
        "available_now": args.available_now,
        "trigger_interval": args.trigger_interval,
        "after_batch": after_batch,
        "metrics_port": args.metrics_port,
    }
    if args.group is not None:
        if settings.grouping is None:
            raise SettingsError(
                f"schema_drift feed {args.feed} has no event groups "
                "(meta.schema_drift.event_groups of its silver-loads model)"
            )
        if args.kafka_bootstrap_servers:
            raise SettingsError("--group reads bronze: give Kafka to the --ingest-only query")
        tables = settings.tables.of_group(settings.grouping.group(args.group).name)
        return start_group_stream(
            spark,
            tables,
            settings.grouping,
            checkpoint,
            max_files_per_trigger=args.max_files_per_trigger,
            **common,
        )
    return start_stream(
        spark,
        settings.landing_root,
        settings.tables,
        checkpoint,
        max_files_per_trigger=args.max_files_per_trigger,
        kafka=kafka_source(args),
        ingest_only=args.ingest_only,
        **common,
    )


def run_schema_drift_stream(args: argparse.Namespace) -> int:
    """Run the query until it stops (``--available-now``) or is interrupted."""
    from spark_cdc.targets import session_for

    kafka = kafka_source(args)
    if kafka is not None:
        fetch_kafka_jars()  # before the session starts: it loads them when they are there
    spark = session_for()  # a SQL-only target is refused here, before anything runs
    # the command's own target for its dbt runs too (its profiles folder: DBT_PROFILES_DIR, as
    # --profiles-dir sets it), whatever the profile's default
    target = os.environ.get("SPARK_CDC_TARGET") or None
    parsed = run_dbt(["parse", "--quiet"], target=target)
    settings = feed_settings(parsed.result, args.feed)
    label = args.feed if args.group is None else f"{args.feed} group {args.group}"
    monitoring = ["run", "--quiet", "--select", *settings.monitoring]

    def refresh_monitoring(batch_id: int) -> None:
        run_dbt(monitoring, target=target)
        print(f"{label}: micro-batch {batch_id} taken in", flush=True)

    run: StreamRun = _start(
        args, spark, settings, None if args.available_now else refresh_monitoring
    )
    source = (
        f"Kafka {kafka.topics}"
        if kafka is not None
        else settings.tables.bronze
        if args.group is not None
        else settings.landing_root
    )
    checkpoint = _query_checkpoint(args)
    print(f"{label}: streaming {source} (checkpoint {checkpoint})", flush=True)
    if run.metrics_port is not None:
        print(f"{label}: metrics on http://127.0.0.1:{run.metrics_port}/metrics", flush=True)
    try:
        stopped = _await(run, label)
    finally:
        run.finish()
        run.close_metrics()
    failure = run.failure()
    if failure is not None:
        raise (kafka_failure(failure, kafka) if kafka is not None else None) or failure
    if args.available_now and not stopped:
        run_dbt(monitoring, target=target)
    batches = [p for p in run.query.recentProgress if p["numInputRows"]]
    rows = sum(p["numInputRows"] for p in batches)
    ending = "stopped by Ctrl-C: " if stopped else ""
    print(f"{label}: {ending}{len(batches)} micro-batches, {rows} rows taken in", flush=True)
    return 0


def _await(run: StreamRun, label: str) -> bool:
    """Wait for the query to end; Ctrl-C stops it between two micro-batches (a second Ctrl-C
    while the batch in progress ends: at once). Whether Ctrl-C stopped it."""
    asked: list[int] = []

    def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
        asked.append(signum)
        if len(asked) > 1:
            raise KeyboardInterrupt
        print(
            f"{label}: stopping after the micro-batch in progress (Ctrl-C again: at once)",
            flush=True,
        )

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        while not _ended(run, _POLL_SECONDS):
            if asked:
                run.stop()
    except KeyboardInterrupt:
        run.query.stop()
    finally:
        signal.signal(signal.SIGINT, previous)
    return bool(asked)


# How often the waiting loop looks for a Ctrl-C (seconds).
_POLL_SECONDS = 0.5


def _ended(run: StreamRun, seconds: float) -> bool:
    """Whether the query ended within ``seconds`` (its failure is read by the caller)."""
    try:
        return bool(run.query.awaitTermination(seconds))
    except Exception:
        if run.query.isActive:
            raise
        return True


def _status_line(name: str, status_file: Path) -> str:
    status = json.loads(status_file.read_text())
    figures = ", ".join(f"{key} {value}" for key, value in status.items() if key != "state")
    return f"{name}: {status.get('state', 'unknown')}; {figures}"


def run_stream_status(args: argparse.Namespace) -> int:
    """Print the latest figures of a feed's stream and of each of its event groups' (their
    status files; no Spark session)."""
    checkpoint = _checkpoint(args)
    status_file = checkpoint / "status.json"
    groups = sorted(path.parent for path in checkpoint.glob("groups/*/status.json"))
    if not status_file.exists() and not groups:
        print(f"{args.feed}: no stream has run (no {status_file})")
        return 1
    if status_file.exists():
        print(_status_line(args.feed, status_file))
    for group in groups:
        print(_status_line(f"{args.feed} group {group.name}", group / "status.json"))
    return 0
