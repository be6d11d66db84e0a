"""Schema drift as a Structured Streaming query gives the tables dbt gives: the same landed
files taken in by three dbt builds (one batch each), then by the stream (one file per micro-batch,
available-now), compare equal row for row, times and process ids aside."""

from __future__ import annotations

import functools
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from servers import kafka_broker
from stream_support import drift_while_running, scrape_metrics
from support import BIN, command_env, copy_project, module_schema, run_command

from spark_cdc.cli.main import main as spark_cdc
from spark_cdc.generators.json_events import JsonEventSpec, write_batches
from spark_cdc.schema_drift.kafka_source import KafkaSource
from spark_cdc.schema_drift.stream import (
    FeedTables,
    folder_name,
    server_python_problem,
    start_stream,
)

SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)
TABLES = FeedTables(SCHEMA, "events", "schema_drift_silver__events__")
MONITORING = ("schema_drift__events_quarantine", "schema_drift__events_run_summary")
# Columns that hold when or by which run a row was written: they differ between any two runs.
RUN_COLUMNS = {
    "load_id",
    "ingested_at",
    "registered_at",
    "first_seen_at",
    "last_seen_at",
    "loaded_at",
    "process_id",
    "_ingested_at",
}


def _feed_tables(spark) -> list[str]:
    names = [
        TABLES.bronze,
        TABLES.registry,
        TABLES.silver_loads,
        *(f"{SCHEMA}.{name}" for name in MONITORING),
    ]
    silver = [
        f"{SCHEMA}.{t.name}"
        for t in spark.catalog.listTables(SCHEMA)
        if t.name.startswith(TABLES.silver_prefix)
    ]
    return names + sorted(silver)


def _stream_tables(spark) -> None:
    for name in (TABLES.stream_batches, TABLES.stream_progress):
        spark.sql(f"drop table if exists {name}")


# Columns that say where a line came from: a landed file, or a Kafka record.
SOURCE_COLUMNS = {"source_file", "batch_id", "file_modified_at", "_source_file", "_batch_id"}
PROTOTYPE = {"prototype", "prototype_source_file"}


def _rows(frame, ignored: set[str] = RUN_COLUMNS) -> Counter:
    """A table as a multiset of rows without the ``ignored`` columns."""
    kept = [
        # Runs from different landing folders: a file is named by its folder and name.
        F.regexp_extract(c, r"([^/]+/[^/]+)$", 1).alias(c) if c.endswith("source_file") else c
        for c in frame.columns
        if c not in ignored
    ]
    return Counter(
        tuple(json.dumps(v, default=str, sort_keys=True) for v in row)
        for row in frame.select(*kept).collect()
    )


def _state(spark, ignored: set[str] = RUN_COLUMNS) -> dict[str, Counter]:
    """Every table of the feed, as a multiset of rows without the ``ignored`` columns."""
    return {
        name: _rows(spark.table(name), ignored)
        for name in _feed_tables(spark)
        if spark.catalog.tableExists(name)
    }


def _drop_all(spark) -> None:
    spark.sql(f"create schema if not exists {SCHEMA}")
    _stream_tables(spark)
    for name in _feed_tables(spark):
        spark.sql(f"drop table if exists {name}")


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> list[Path]:
    spec = JsonEventSpec(events=600, event_types=4, batches=3, new_variation_rate=0.1, seed=7)
    folders = write_batches(tmp_path_factory.mktemp("generated"), spec)
    # Landed in order: the stream takes files oldest first.
    for number, folder in enumerate(folders):
        for path in folder.glob("*.jsonl"):
            landed = time.time() - 600 + number
            os.utime(path, (landed, landed))
    return folders


def _land_all(batches: list[Path], root: Path) -> Path:
    for folder in batches:
        shutil.copytree(folder, root / folder.name, copy_function=shutil.copy2)
    return root


@pytest.fixture(scope="module")
def streamed(spark, dbt, batches, tmp_path_factory) -> dict:
    """One uninterrupted stream over the three batches (one file per micro-batch,
    available-now): the feed's tables it leaves, its monitoring rows, its status as printed,
    then the tables with the monitoring models refreshed by dbt."""
    root = _land_all(batches, tmp_path_factory.mktemp("streamed") / "landing")
    checkpoint = root.parent / "checkpoint"
    _drop_all(spark)
    assert _stream(spark, root, checkpoint) is None
    tables = _state(spark)
    by_prototype = _state(spark, RUN_COLUMNS | SOURCE_COLUMNS | PROTOTYPE)
    progress = spark.table(TABLES.stream_progress).collect()
    taken = spark.table(TABLES.stream_batches).collect()
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(root)}})
    dbt("run", "--select", *MONITORING, "--vars", variables)
    return {
        "root": root,
        "checkpoint": checkpoint,
        "tables": tables,
        "by_prototype": by_prototype,
        "with_monitoring": _state(spark),
        "progress": progress,
        "taken": taken,
    }


def test_the_stream_builds_what_dbt_builds(spark, dbt, batches, streamed, tmp_path, capsys):
    root = tmp_path / "landing"
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(root)}})
    _drop_all(spark)
    for number, folder in enumerate(batches, start=1):
        shutil.copytree(folder, root / folder.name, copy_function=shutil.copy2)
        # The data tests run once, on the tables the last build leaves (they hold every row).
        command = "build" if number == len(batches) else "run"
        dbt(command, "--select", "stg_schema_drift__events+", "--vars", variables)
    by_dbt = _state(spark)
    assert len(by_dbt) > len(MONITORING) + 3  # silver tables were written

    by_stream = streamed["with_monitoring"]
    assert by_stream.keys() == by_dbt.keys()
    for name in by_dbt:
        assert by_stream[name] == by_dbt[name], name

    # Monitoring: every landed line counted once, in the batch of its file, by event type.
    lines = sum(1 for folder in batches for path in folder.glob("*.jsonl") for _ in path.open())
    progress = streamed["progress"]
    assert sorted(r.batch_id for r in progress) == list(range(len(batches)))
    assert sum(r.input_rows for r in progress) == lines
    taken = streamed["taken"]
    assert sum(r.events for r in taken) == lines
    assert {r.batch_id for r in taken} == set(range(len(batches)))
    assert all(0 <= r.latency_p50_s <= r.latency_p95_s <= r.latency_max_s for r in taken)

    # The status file, as `spark-cdc stream status` prints it: the query stopped after its last
    # batch.
    capsys.readouterr()
    checkpoint = str(streamed["checkpoint"])
    assert spark_cdc(["stream", "status", "events", "--checkpoint", checkpoint]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("events: stopped;") and f"last_batch {len(batches) - 1}" in printed


def test_dbt_and_the_stream_take_turns_on_the_same_tables(spark, dbt, batches, streamed, tmp_path):
    """dbt takes batch 1 in, the stream (started on a landing folder that holds batches 1
    and 2) takes only batch 2, dbt build takes batch 3: the tables of the stream alone."""
    root = tmp_path / "landing"
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(root)}})
    _drop_all(spark)
    land = functools.partial(shutil.copytree, copy_function=shutil.copy2)
    land(batches[0], root / batches[0].name)
    dbt("run", "--select", "stg_schema_drift__events+", "--vars", variables)
    after_dbt = spark.table(TABLES.bronze).count()
    land(batches[1], root / batches[1].name)
    assert _stream(spark, root, tmp_path / "checkpoint") is None
    # Every micro-batch ran (one per file), those of batch 1's files took nothing in.
    taken = spark.table(TABLES.stream_batches).groupBy().sum("events").first()[0]
    lines = sum(1 for path in batches[1].glob("*.jsonl") for _ in path.open())
    assert taken == lines == spark.table(TABLES.bronze).count() - after_dbt
    land(batches[2], root / batches[2].name)
    dbt("build", "--select", "stg_schema_drift__events+", "--vars", variables)
    assert _state(spark) == streamed["with_monitoring"]


class Crash(RuntimeError):
    """A micro-batch killed at a chosen point."""


def _crash_once(monkeypatch, name: str, batch_seen: int) -> None:
    """Make the stream module's ``name`` step fail once, on the ``batch_seen``-th call, after
    the real step ran (what it wrote is committed, what follows it in the batch is not)."""
    import spark_cdc.schema_drift.stream as stream

    real = getattr(stream, name)
    calls = {"n": 0}

    def step(*args, **kwargs):
        result = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == batch_seen:
            if name == "refresh_silver":
                result.collect()  # the silver tables are written when the step returns
            raise Crash(f"killed after {name} of micro-batch {batch_seen}")
        return result

    monkeypatch.setattr(stream, name, step)


def _stream(spark, root: Path, checkpoint: Path) -> Exception | None:
    run = start_stream(
        spark, str(root), TABLES, checkpoint, available_now=True, max_files_per_trigger=1
    )
    try:
        run.query.awaitTermination()
    except Exception as error:  # the query's failure, raised to its caller
        return error
    finally:
        run.finish()
    return None


@pytest.mark.parametrize("step", ["registry_increment", "refresh_silver"])
def test_a_batch_killed_mid_way_then_restarted_gives_the_same_tables(
    spark, streamed, tmp_path, monkeypatch, step
):
    """Killed after bronze took the batch in (before the registry), or after the silver tables
    were written (before their log): the restart from the checkpoint replays the batch and the
    tables equal those of a run that was never killed."""
    root = streamed["root"]  # the same files as the uninterrupted run, at the same paths
    _drop_all(spark)
    with monkeypatch.context() as patched:
        _crash_once(patched, step, batch_seen=2)
        failed = _stream(spark, root, tmp_path / "killed")
    assert failed is not None and "killed after" in str(failed)
    assert _stream(spark, root, tmp_path / "killed") is None
    assert _state(spark) == streamed["tables"]


def test_the_stream_process_killed_mid_batch_then_run_again_gives_the_same_tables(
    spark, streamed, batches, tmp_path
):
    """A real kill: `spark-cdc stream schema-drift` (its own process and JVM, on a home of its
    own) gets SIGKILL once its second micro-batch's bronze append is committed, before the
    stream commits that batch; the same command run again replays it from the checkpoint and
    leaves the tables of the run that was never killed (read here from its warehouse)."""
    home = tmp_path / "home"
    _land_all(batches, home / "landing" / "schema_drift" / "events")
    project = copy_project(tmp_path / "spark_cdc")
    # The module's schema, so that its tables have the names of the uninterrupted run's.
    env = command_env(home, SPARK_CDC_TARGET="local", SPARK_CDC_SCHEMA=SCHEMA)
    command = [
        str(BIN / "spark-cdc"), "stream", "schema-drift", "events",
        "--available-now", "--max-files-per-trigger", "1",
    ]  # fmt: skip
    warehouse = home / "warehouse" / f"{SCHEMA}.db"
    bronze_log = warehouse / TABLES.bronze.split(".")[1] / "_delta_log"
    checkpoint = home / "streams" / "schema_drift" / "events"
    with (tmp_path / "killed.log").open("w") as output:
        process = subprocess.Popen(
            command, cwd=project, env=env, stdout=output, stderr=output, start_new_session=True
        )
        deadline = time.monotonic() + 600
        # Bronze's version 0 is its empty create, 1 the first micro-batch's append.
        while not (bronze_log / f"{2:020d}.json").exists():
            assert process.poll() is None, (tmp_path / "killed.log").read_text()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    # Killed inside micro-batch 1: planned (offsets/1), never committed (no commits/1).
    assert (checkpoint / "offsets" / "1").exists()
    assert not (checkpoint / "commits" / "1").exists()

    again = run_command(command, env, cwd=project, timeout=900)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    expected = streamed["with_monitoring"]
    found = {
        name: _rows(spark.read.format("delta").load(str(warehouse / name.split(".")[1])))
        for name in expected
    }
    assert found.keys() == expected.keys()
    for name in expected:
        assert found[name] == expected[name], name
    silver = {
        path.name for path in warehouse.iterdir() if path.name.startswith(TABLES.silver_prefix)
    }
    assert silver == {
        name.split(".")[1]
        for name in expected
        if name.split(".")[1].startswith(TABLES.silver_prefix)
    }


def test_ctrl_c_stops_the_stream_between_micro_batches_with_one_line(
    spark, streamed, batches, tmp_path
):
    """Ctrl-C (SIGINT to the command's process group, as a terminal sends it) while the
    stream works: it says it stops, ends the micro-batch in progress and exits 0 without a
    traceback; run again, it takes in the rest and leaves the uninterrupted run's tables."""
    home = tmp_path / "home"
    _land_all(batches, home / "landing" / "schema_drift" / "events")
    project = copy_project(tmp_path / "spark_cdc")
    env = command_env(home, SPARK_CDC_TARGET="local", SPARK_CDC_SCHEMA=SCHEMA)
    command = [str(BIN / "spark-cdc"), "stream", "schema-drift", "events"]
    bronze_log = home / "warehouse" / f"{SCHEMA}.db" / TABLES.bronze.split(".")[1] / "_delta_log"
    process = subprocess.Popen(
        [*command, "--max-files-per-trigger", "1"], cwd=project, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    # Bronze's version 0 is its empty create, 1 the first micro-batch's append: the second
    # micro-batch is under way.
    while not (bronze_log / f"{1:020d}.json").exists():
        assert process.poll() is None, process.communicate()[0][-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    output = process.communicate(timeout=300)[0]
    after = output[output.index("events: streaming") :]
    assert process.returncode == 0, output[-3000:]
    assert "Traceback" not in output and "py4j" not in output.lower(), output[-5000:]
    # What it printed after it started: the stop, the micro-batch that ended, its summary
    # (besides Spark's one-line log messages, e.g. a batch slower than its trigger interval).
    lines = after.splitlines()[1:]
    assert [line for line in lines if line.startswith("events: ")] == [
        "events: stopping after the micro-batch in progress (Ctrl-C again: at once)",
        "events: micro-batch 0 taken in",
        "events: stopped by Ctrl-C: 1 micro-batches, 200 rows taken in",
    ], after
    others = [line for line in lines if not line.startswith("events: ")]
    assert all(re.match(r"\d\d/\d\d/\d\d [\d:]+ (WARN|INFO) ", line) for line in others), after

    # One file a micro-batch, as the uninterrupted run: the loads are the same whether Ctrl-C
    # came after the next micro-batch was planned (Spark runs it again with its planned files)
    # or before (it is planned again, with the same bound); without the bound a batch planned
    # after the restart would take both files left in one load.
    again = run_command(
        [*command, "--available-now", "--max-files-per-trigger", "1"],
        env,
        cwd=project,
        timeout=900,
    )
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    warehouse = bronze_log.parent.parent
    expected = streamed["with_monitoring"]
    found = {
        name: _rows(spark.read.format("delta").load(str(warehouse / name.split(".")[1])))
        for name in expected
    }
    for name in expected:
        assert found[name] == expected[name], name


def test_the_stream_command_refuses_a_sql_only_target(capsys, monkeypatch):
    """On a Thrift target no Python runs: said in one line before anything starts."""
    # The target by environment (put back after the test), not --target, which the command line
    # sets in this process's environment for the rest of it.
    monkeypatch.setenv("SPARK_CDC_TARGET", "thrift")
    assert spark_cdc(["stream", "schema-drift", "events"]) == 2
    assert "runs SQL only: this command needs a Spark session" in capsys.readouterr().err


def test_drift_arriving_while_the_stream_runs_is_taken_in_without_a_restart(spark, tmp_path):
    """The talk's example and the other kinds of drift, taken in by one running query
    (stream_support.drift_while_running: the same check runs on the engines)."""
    _drop_all(spark)
    drift_while_running(spark, tmp_path, TABLES)


@pytest.mark.parametrize(
    ("client", "server", "refused"),
    [
        ("3.11.7", "3.11.2", False),  # patch releases may differ
        ("3.11.7", "3.12.1", True),  # another minor version
        ("3.11.7", "3.10.14", True),
        ("3.11.7", "3.11.7 without spark_cdc", True),  # the package is not on the server
    ],
)
def test_a_connect_server_whose_python_cannot_run_the_batches_is_refused(client, server, refused):
    """On Spark Connect the micro-batches run in the server's Python: the check's verdict
    (what the engine suite's check found on the warm engine is the accepted case)."""
    problem = server_python_problem(client, server)
    assert (problem is not None) == refused
    if refused:
        assert f"run Python {server}" in problem and f"runs Python {client}" in problem
        assert "PYSPARK_PYTHON" in problem


def test_a_lines_batch_id_is_the_name_of_its_files_folder(spark):
    """The rule the stream and the feed's staging view share, against plain Python: the path
    segment before the last ``/``, whatever the segments hold."""
    rng = random.Random(5)
    alphabet = "abz09_-. %é漢=,"
    paths = ["file:/landing/batch_00001/part-00000.jsonl", "s3a://bucket/a/b/c/d.jsonl", "/x/y"]
    for _ in range(200):
        depth = rng.randint(2, 6)
        segments = ["".join(rng.choices(alphabet, k=rng.randint(1, 12))) for _ in range(depth)]
        paths.append(rng.choice(["file:", "hdfs://nn:8020", ""]) + "/" + "/".join(segments))
    rows = spark.createDataFrame([(path,) for path in paths], "path string")
    got = rows.select("path", folder_name(F.col("path")).alias("folder")).collect()
    assert {row.path: row.folder for row in got} == {path: path.split("/")[-2] for path in paths}


def test_the_metrics_endpoint_serves_what_the_progress_table_holds(spark, batches, tmp_path):
    tables = FeedTables(SCHEMA, "metered", "schema_drift_silver__metered__")
    spark.sql(f"create schema if not exists {SCHEMA}")
    for table in spark.catalog.listTables(SCHEMA):
        if "metered" in table.name:
            spark.sql(f"drop table {SCHEMA}.{table.name}")
    root = _land_all(batches, tmp_path / "landing")
    landed_lines = sum(len(p.read_bytes().splitlines()) for p in root.glob("*/*.jsonl"))
    during: list[dict[str, float]] = []
    port = {"value": None}
    run = start_stream(
        spark,
        str(root),
        tables,
        tmp_path / "checkpoint",
        available_now=True,
        max_files_per_trigger=1,
        after_batch=lambda _: during.append(scrape_metrics(port["value"], "metered")),
        metrics_port=0,
    )
    port["value"] = run.metrics_port
    try:
        run.query.awaitTermination()
        run.finish()
        after = scrape_metrics(run.metrics_port, "metered")
    finally:
        run.close_metrics()
    rows = spark.table(tables.stream_progress).orderBy("batch_id").collect()
    assert len(rows) >= 3 and len(during) == len(rows)
    # Served while the stream ran, growing batch by batch.
    seen = [d.get("spark_cdc_stream_input_rows_total", 0) for d in during]
    assert seen == sorted(seen) and seen[-1] <= after["spark_cdc_stream_input_rows_total"]
    # After it: the counters sum the table's rows, which hold every landed line; the gauges are
    # its latest row.
    assert after["spark_cdc_stream_batches_total"] == len(rows)
    assert after["spark_cdc_stream_input_rows_total"] == sum(r.input_rows for r in rows)
    assert sum(r.input_rows for r in rows) == landed_lines
    last = rows[-1]
    assert after["spark_cdc_stream_last_batch_id"] == last.batch_id
    assert after["spark_cdc_stream_input_rows_per_second"] == pytest.approx(
        last.input_rows_per_second
    )
    assert after["spark_cdc_stream_processed_rows_per_second"] == pytest.approx(
        last.processed_rows_per_second
    )
    assert after["spark_cdc_stream_batch_duration_seconds"] == pytest.approx(
        last.batch_duration_ms / 1000
    )
    with pytest.raises(OSError):  # closed with the stream
        scrape_metrics(run.metrics_port, "metered")


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> str:
    """A Kafka broker on loopback (KRaft, one node, topics of one partition)."""
    with kafka_broker(tmp_path_factory.mktemp("kafka")) as address:
        yield address


def _produce(spark, broker: str, topic: str, values: list[bytes]) -> None:
    """``values`` as records of ``topic``, in order (Spark's own Kafka sink)."""
    rows = [(bytearray(value),) for value in values]
    frame = spark.createDataFrame(rows, "value binary")
    frame.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", broker).option(
        "topic", topic
    ).save()


def _stream_kafka(spark, source: KafkaSource, checkpoint: Path) -> Exception | None:
    run = start_stream(spark, "", TABLES, checkpoint, available_now=True, kafka=source)
    try:
        run.query.awaitTermination()
    except Exception as error:
        return error
    finally:
        run.finish()
    return None


def test_a_kafka_topic_gives_the_tables_the_landing_folder_gives(
    spark, batches, streamed, broker, tmp_path
):
    """The landed batches' lines, as bytes, produced to a topic one batch at a time, each taken
    in by the stream from Kafka (restarted from its checkpoint): the feed's tables equal the
    landing folder's stream's, where each line came from aside; every record once."""
    topic = "drifting_events"
    source = KafkaSource(broker, topic)
    checkpoint = tmp_path / "checkpoint"
    _drop_all(spark)
    produced = 0
    for folder in batches:
        values = [
            line
            for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_bytes().split(b"\n")
            if line
        ]
        _produce(spark, broker, topic, values)
        produced += len(values)
        assert _stream_kafka(spark, source, checkpoint) is None
    assert _stream_kafka(spark, source, checkpoint) is None  # nothing new: nothing twice

    # A variation's prototype is one of its events: the first line of the first file, or the
    # first record; the rest of the registry, bronze and every silver table are equal.
    assert _state(spark, RUN_COLUMNS | SOURCE_COLUMNS | PROTOTYPE) == streamed["by_prototype"]
    taken = spark.table(TABLES.bronze).select("source_file", "batch_id").collect()
    offsets = sorted(row.source_file.removeprefix(f"kafka://{topic}/0/") for row in taken)
    assert offsets == [f"{offset:019d}" for offset in range(produced)]
    assert {row.batch_id for row in taken} == {f"{topic}-0-000000"}


def test_a_kafka_batch_killed_after_bronze_then_restarted_loses_and_repeats_nothing(
    spark, batches, broker, tmp_path, monkeypatch
):
    """Every landed line produced at once to two topics, each taken in 250 offsets a micro-batch:
    on one the second micro-batch is killed after its bronze append committed, before the
    registry and the checkpoint's commit. The restart replays those offsets from the checkpoint:
    the tables equal those of the other topic's uninterrupted stream (where each record came
    from aside), and every offset is in bronze exactly once."""
    values = [
        line
        for folder in batches
        for path in sorted(folder.glob("*.jsonl"))
        for line in path.read_bytes().split(b"\n")
        if line
    ]
    for topic in ("whole_events", "killed_events"):
        _produce(spark, broker, topic, values)
    _drop_all(spark)
    whole = KafkaSource(broker, "whole_events", max_offsets_per_trigger=250)
    assert _stream_kafka(spark, whole, tmp_path / "whole") is None
    expected = _state(spark, RUN_COLUMNS | SOURCE_COLUMNS)

    _drop_all(spark)
    source = KafkaSource(broker, "killed_events", max_offsets_per_trigger=250)
    checkpoint = tmp_path / "killed"
    with monkeypatch.context() as patched:
        _crash_once(patched, "registry_increment", batch_seen=2)
        failed = _stream_kafka(spark, source, checkpoint)
    assert failed is not None and "killed after" in str(failed)
    taken_before = spark.table(TABLES.bronze).count()
    assert 250 < taken_before < len(values)  # the killed batch's records are in bronze
    assert (checkpoint / "offsets" / "1").exists()
    assert not (checkpoint / "commits" / "1").exists()
    assert _stream_kafka(spark, source, checkpoint) is None

    assert _state(spark, RUN_COLUMNS | SOURCE_COLUMNS) == expected
    taken = spark.table(TABLES.bronze).select("source_file").collect()
    offsets = sorted(row.source_file.removeprefix("kafka://killed_events/0/") for row in taken)
    assert offsets == [f"{offset:019d}" for offset in range(len(values))]


def test_a_build_committing_bronze_s_next_load_first_loses_no_kafka_record(
    spark, dbt, batches, broker, tmp_path, monkeypatch
):
    """The stream reads bronze's next load number; before its append, a dbt build of the feed
    (landed files) commits that number. Delta skips the stream's append without an error: the
    micro-batch takes its records in again as the next load, so every Kafka offset and every
    landed line reaches bronze once."""
    import spark_cdc.schema_drift.stream as stream

    root = tmp_path / "landing"
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(root)}})
    _drop_all(spark)
    shutil.copytree(batches[0], root / batches[0].name, copy_function=shutil.copy2)
    dbt("run", "--select", "stg_schema_drift__events", "int_schema_drift__events_bronze",
        "--vars", variables)  # fmt: skip
    shutil.copytree(batches[1], root / batches[1].name, copy_function=shutil.copy2)
    values = [
        line
        for path in sorted(batches[2].glob("*.jsonl"))
        for line in path.read_bytes().split(b"\n")
        if line
    ]
    topic = "raced_events"
    _produce(spark, broker, topic, values)
    real = stream.next_load
    builds = []

    def raced(session, table: str) -> int:
        number = real(session, table)
        if not builds:  # the build commits the number the stream has just read
            builds.append(dbt("run", "--select", "int_schema_drift__events_bronze", "--vars",
                              variables))  # fmt: skip
        return number

    monkeypatch.setattr(stream, "next_load", raced)
    assert _stream_kafka(spark, KafkaSource(broker, topic), tmp_path / "checkpoint") is None
    assert builds
    taken = spark.table(TABLES.bronze).select("source_file").collect()
    offsets = sorted(
        row.source_file.removeprefix(f"kafka://{topic}/0/")
        for row in taken
        if row.source_file.startswith("kafka://")
    )
    assert offsets == [f"{offset:019d}" for offset in range(len(values))]
    files = [path for folder in batches[:2] for path in folder.glob("*.jsonl")]
    assert len(taken) - len(offsets) == sum(1 for path in files for _ in path.open())
