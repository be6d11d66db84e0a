"""``spark-cdc stream schema-drift FEED``: the feed's Structured Streaming query.

The feed's settings are read from the dbt project as dbt parses it (the silver table prefix in
its models' ``meta.schema_drift``, the schema its models write to, the landing folder of its
``raw_events`` source), so the stream and ``dbt build`` always write the same tables. The
monitoring models (quarantine, run summary) are SQL models: dbt refreshes them after each
micro-batch (``--available-now``: once, at the end).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_cdc.cli.dbt_invoke import run_dbt
from spark_cdc.cli.options import add_kafka_options, kafka_source
from spark_cdc.dbt_models.settings import SettingsError
from spark_cdc.schema_drift.stream import FeedTables, start_stream
from spark_cdc.session.jars import fetch_kafka_jars
from spark_cdc.session.runtime import default_home


@dataclass(frozen=True)
class FeedSettings:
    """What the stream needs of a feed's dbt nodes."""

    tables: FeedTables
    landing_root: str
    monitoring: tuple[str, str]


def feed_settings(manifest: Any, feed: str) -> FeedSettings:
    """The feed's tables and landing folder, from dbt's parsed manifest."""
    nodes = {node.name: node for node in manifest.nodes.values()}
    bronze = nodes.get(f"int_schema_drift__{feed}_bronze")
    loads = nodes.get(f"schema_drift__{feed}_silver_loads")
    if bronze is None or loads is None:
        raise SettingsError(f"no schema-drift feed {feed} in this dbt project (spark-cdc add)")
    prefix = str((loads.config.meta.get("schema_drift") or {}).get("silver_table_prefix") or "")
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
        "--max-files-per-trigger", type=int, default=None, help="files per micro-batch (all)"
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
    add_kafka_options(parser, "the landing folder")
    parser.set_defaults(handler=run_schema_drift_stream)
    status = kinds.add_parser(
        "status", help="the latest figures of a feed's stream (last batch, rows, rates)"
    )
    status.add_argument("feed", help="the feed's name")
    status.add_argument("--checkpoint", type=Path, default=None, help="as for schema-drift")
    status.set_defaults(handler=run_stream_status)


def run_schema_drift_stream(args: argparse.Namespace) -> int:
    """Run the query until it stops (``--available-now``) or is interrupted."""
    from spark_cdc.targets import session_for

    kafka = kafka_source(args)
    if kafka is not None:
        fetch_kafka_jars()  # before the session starts: it loads them when they are there
    spark = session_for()  # a SQL-only target is refused here, before anything runs
    parsed = run_dbt(["parse", "--quiet"])
    settings = feed_settings(parsed.result, args.feed)
    checkpoint = args.checkpoint or default_home() / "streams" / "schema_drift" / args.feed
    monitoring = ["run", "--quiet", "--select", *settings.monitoring]

    def refresh_monitoring(batch_id: int) -> None:
        run_dbt(monitoring)
        print(f"{args.feed}: micro-batch {batch_id} taken in", flush=True)

    run = start_stream(
        spark,
        settings.landing_root,
        settings.tables,
        checkpoint.resolve(),
        available_now=args.available_now,
        trigger_interval=args.trigger_interval,
        max_files_per_trigger=args.max_files_per_trigger,
        after_batch=None if args.available_now else refresh_monitoring,
        metrics_port=args.metrics_port,
        kafka=kafka,
    )
    source = f"Kafka {kafka.topics}" if kafka is not None else settings.landing_root
    print(f"{args.feed}: streaming {source} (checkpoint {checkpoint})", flush=True)
    if run.metrics_port is not None:
        print(f"{args.feed}: metrics on http://127.0.0.1:{run.metrics_port}/metrics", flush=True)
    try:
        run.query.awaitTermination()
    except KeyboardInterrupt:
        run.query.stop()
    finally:
        run.finish()
        run.close_metrics()
    if run.query.exception() is not None:
        raise run.query.exception()
    if args.available_now:
        run_dbt(monitoring)
    batches = [p for p in run.query.recentProgress if p["numInputRows"]]
    rows = sum(p["numInputRows"] for p in batches)
    print(f"{args.feed}: {len(batches)} micro-batches, {rows} lines taken in", flush=True)
    return 0


def run_stream_status(args: argparse.Namespace) -> int:
    """Print the latest figures of a feed's stream (its status file; no Spark session)."""
    checkpoint = args.checkpoint or default_home() / "streams" / "schema_drift" / args.feed
    status_file = checkpoint / "status.json"
    if not status_file.exists():
        print(f"{args.feed}: no stream has run (no {status_file})")
        return 1
    status = json.loads(status_file.read_text())
    figures = ", ".join(f"{key} {value}" for key, value in status.items() if key != "state")
    print(f"{args.feed}: {status.get('state', 'unknown')}; {figures}")
    return 0
