"""``spark-cdc land-change-events``: batch files of change events (or Debezium messages), or the
records of Kafka topics, landed in a source's feed table, as an ingestion would."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from spark_cdc.cli.options import add_kafka_options, kafka_source
from spark_cdc.cli.working import started_session
from spark_cdc.core.kafka_records import KafkaSource
from spark_cdc.core.progress_lines import step
from spark_cdc.generators.extracts import GeneratorError


def add_land_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "land-change-events",
        help="land batch files of change events in a source's feed table (as an ingestion would)",
        description=(
            "Append the batch files STREAM/batches/batch-*.jsonl to the feed table, each as the "
            "next _batch_id: change events (generate-change-events format), or with --debezium "
            "Debezium messages (generate-debezium-events). With --initial-table, replace the "
            "existing-rows table with STREAM/initial_state.jsonl. With a Kafka source instead of "
            "STREAM, land what its topics hold beyond the last landing's offsets, a batch per "
            "micro-batch. Writes through the profile's target (SPARK_CDC_TARGET), as dbt does."
        ),
    )
    parser.add_argument("stream", type=Path, nargs="?", help="a folder with batches/batch-*.jsonl")
    parser.add_argument("--table", required=True, help="e.g. landing.orders_change_events")
    parser.add_argument("--debezium", action="store_true", help="the files hold Debezium messages")
    parser.add_argument("--initial-table", default=None, help="e.g. landing.orders_initial_rows")
    parser.add_argument(
        "--column",
        action="append",
        default=[],
        help="name:type of the existing rows (repeat; default: a generate-change-events stream's)",
    )
    parser.add_argument("--key", action="append", default=[], help="key of the existing rows")
    parser.add_argument(
        "--batches", default=None, help="a Python-style slice of the batch files, e.g. 0:3"
    )
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help="a Kafka landing's checkpoint ($SPARK_CDC_HOME/streams/landing/TABLE)",
    )
    add_kafka_options(parser, "STREAM")
    parser.set_defaults(handler=_run_land)


def _initial_schema(args: argparse.Namespace) -> Any:
    from spark_cdc.change_events.model import TargetSchema
    from spark_cdc.generators.change_events import SCHEMA
    from spark_cdc.scaffold.names import columns

    if not args.column:
        return SCHEMA
    return TargetSchema(columns(args.column, "--column"), tuple(args.key))


def _selected_batch_files(stream: Path, selection: str | None) -> list[Path]:
    """The batch files of ``stream`` that ``--batches`` selects (checked before Spark starts)."""
    files = sorted((stream / "batches").glob("batch-*.jsonl"))
    if not files:
        hint = ""
        if stream.name == "batches" and list(stream.glob("batch-*.jsonl")):
            hint = f" (give the folder that holds batches/: {stream.parent})"
        raise GeneratorError(f"no batches/batch-*.jsonl under {stream}{hint}")
    if not selection:
        return files
    start, colon, stop = selection.partition(":")
    try:
        bounds = [int(text) if text.strip() else None for text in (start, stop)]
    except ValueError:
        bounds = None
    if not colon or bounds is None:
        raise GeneratorError(f"--batches must read like 0:3, 2: or :4, not {selection!r}")
    chosen = files[slice(*bounds)]
    if not chosen:
        raise GeneratorError(
            f"--batches {selection} selects none of the {len(files)} batch files of {stream} "
            f"(0 to {len(files) - 1})"
        )
    return chosen


def _run_land(args: argparse.Namespace) -> int:
    from spark_cdc.change_events.landing import (
        land_batch_files,
        land_debezium_files,
        land_initial_rows,
    )

    kafka = kafka_source(args)
    if kafka is not None:
        return _land_from_kafka(args, kafka)
    if args.stream is None:
        raise GeneratorError("give STREAM (a folder with batches/) or a Kafka source")
    stream = args.stream.resolve()  # Spark resolves relative paths from its own directory
    files = _selected_batch_files(stream, args.batches)
    schema = _initial_schema(args)
    spark = started_session()
    if args.initial_table:
        with step(f"landing the existing rows into {args.initial_table}"):
            rows = land_initial_rows(
                spark, args.initial_table, stream / "initial_state.jsonl", schema
            )
        print(f"{args.initial_table}: {rows} existing rows")
    land = land_debezium_files if args.debezium else land_batch_files
    with step(f"landing {len(files)} batch files into {args.table}"):
        landing = land(spark, args.table, files)
    if landing.skipped:
        taken = ", ".join(
            f"{Path(name).name} (_batch_id {batch})" for name, batch in landing.skipped.items()
        )
        print(f"{args.table}: skipped {len(landing.skipped)} files landed before: {taken}")
    return _said(spark, args, landing.batch_ids)


def _land_from_kafka(args: argparse.Namespace, kafka: KafkaSource) -> int:
    from spark_cdc.change_events.kafka_landing import land_kafka
    from spark_cdc.schema_drift.stream import check_server_python, is_connect
    from spark_cdc.session.jars import fetch_kafka_jars
    from spark_cdc.session.runtime import default_home

    if args.stream is not None or args.initial_table or args.batches:
        raise GeneratorError("a Kafka source lands records, not STREAM's files: leave STREAM out")
    fetch_kafka_jars()  # before the session starts: it loads them when they are there
    spark = started_session()
    if is_connect(spark):
        check_server_python(spark)  # each micro-batch lands in the server's Python
    name = args.table.replace("`", "").lower()
    checkpoint = args.checkpoint or default_home() / "streams" / "landing" / name
    landing = land_kafka(spark, args.table, kafka, checkpoint.resolve(), args.debezium)
    return _said(spark, args, landing.batch_ids)


def _said(spark: Any, args: argparse.Namespace, landed: list[int]) -> int:
    """Say what a landing landed (batch ids, unreadable lines kept)."""
    if not landed:
        print(f"{args.table}: nothing new to land")
        return 0
    note = ""
    if not args.debezium:
        errors = (
            spark.table(args.table)
            .where(f"_batch_id >= {landed[0]} and _landing_error is not null")
            .count()
        )
        note = f" ({errors} unreadable lines kept with their reason)" if errors else ""
    print(f"{args.table}: landed {len(landed)} batches as _batch_id {landed[0]}-{landed[-1]}{note}")
    return 0
