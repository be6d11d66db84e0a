"""Landing generated batches: each landed batch gets the next _batch_id (ingestion order), each
file once, whatever the retries and overlaps."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from servers import kafka_broker, kafka_broker_with_sasl
from support import BIN, command_env, run_command

from spark_cdc.change_events.kafka_landing import land_micro_batch
from spark_cdc.change_events.landing import (
    Landing,
    LandingConflictError,
    _land,
    ensure_schema,
    land_batch_files,
    land_debezium_files,
    landed_name,
    read_batch_file,
)
from spark_cdc.cli.main import main
from spark_cdc.core.kafka_records import record_identity
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc.generators.debezium import DebeziumSpec, write_debezium_stream


def test_land_change_events_appends_batches_in_ingestion_order(spark, tmp_path, capsys):
    manifest = write_stream(StreamSpec(initial_rows=5, events=60, batches=4), tmp_path, False)
    table, initial = "landing_test.feed", "landing_test.initial_rows"
    spark.sql(f"drop table if exists {table}")
    assert (
        main(
            [
                "land-change-events",
                str(tmp_path),
                "--table",
                table,
                "--batches",
                ":1",
                "--initial-table",
                initial,
            ]
        )
        == 0
    )
    assert main(["land-change-events", str(tmp_path), "--table", table, "--batches", "1:"]) == 0
    counts = {r[0]: r[1] for r in spark.table(table).groupBy("_batch_id").count().collect()}
    assert sorted(counts) == [0, 1, 2, 3] and sum(counts.values()) == manifest["events"]
    assert spark.table(initial).count() == 5
    said = capsys.readouterr()
    assert "as _batch_id 1-3" in said.out
    # What each long step does, on stderr (the results stay alone on stdout).
    steps = [line for line in said.err.splitlines() if line.startswith("spark-cdc: ")]
    assert steps == [
        "spark-cdc: starting Spark (target local) ...",
        f"spark-cdc: landing the existing rows into {initial} ...",
        f"spark-cdc: landing 1 batch files into {table} ...",
        "spark-cdc: starting Spark (target local) ...",
        f"spark-cdc: landing 3 batch files into {table} ...",
    ], said.err


def _lines(path) -> int:
    """The non-blank lines of a batch file: the rows it lands."""
    return len([line for line in path.read_text().splitlines() if line.strip()])


def _batch_counts(spark, table: str) -> dict[int, int]:
    return {r[0]: r[1] for r in spark.table(table).groupBy("_batch_id").count().collect()}


def test_landing_the_same_files_again_skips_them_and_says_so(spark, tmp_path, capsys):
    write_stream(StreamSpec(initial_rows=0, events=40, batches=3), tmp_path, False)
    table = "landing_test.relanded"
    spark.sql(f"drop table if exists {table}")
    assert main(["land-change-events", str(tmp_path), "--table", table, "--batches", ":2"]) == 0
    before = _batch_counts(spark, table)
    capsys.readouterr()
    assert main(["land-change-events", str(tmp_path), "--table", table]) == 0
    out = capsys.readouterr().out
    assert "skipped 2 files landed before: batch-00000.jsonl (_batch_id 0)" in out
    assert "landed 1 batches as _batch_id 2-2" in out
    after = _batch_counts(spark, table)
    assert {batch: after[batch] for batch in before} == before and sorted(after) == [0, 1, 2]
    assert main(["land-change-events", str(tmp_path), "--table", table]) == 0
    assert "nothing new to land" in capsys.readouterr().out
    assert _batch_counts(spark, table) == after


def test_a_landing_after_a_delete_or_restore_takes_batch_ids_never_used(spark, tmp_path, capsys):
    """Batch ids a DELETE or RESTORE took back are not given again: Delta keeps the landing's
    number (its txnVersion), and a ledger may have read that batch id already."""
    write_stream(StreamSpec(initial_rows=0, events=40, batches=3), tmp_path, False)
    table = "landing_test.taken_back"
    spark.sql(f"drop table if exists {table}")
    land = ["land-change-events", str(tmp_path), "--table", table]
    assert main([*land, "--batches", ":2"]) == 0
    two_batches = _version(spark, table)
    assert main(land) == 0
    lines = [_lines(path) for path in sorted((tmp_path / "batches").glob("batch-*.jsonl"))]
    first, second, third = lines
    assert _batch_counts(spark, table) == {0: first, 1: second, 2: third}
    spark.sql(f"delete from {table} where _batch_id = 2")
    capsys.readouterr()
    assert main(land) == 0, capsys.readouterr().err
    assert "landed 1 batches as _batch_id 3-3" in capsys.readouterr().out
    assert sorted(_batch_counts(spark, table).items()) == [(0, first), (1, second), (3, third)]
    spark.sql(f"restore table {table} to version as of {two_batches}")
    assert main(land) == 0, capsys.readouterr().err
    assert "landed 1 batches as _batch_id 4-4" in capsys.readouterr().out
    assert sorted(_batch_counts(spark, table)) == [0, 1, 4]


def test_a_batch_id_stays_used_after_the_log_forgets_its_landing(spark, tmp_path, capsys):
    """Delta's log clean-up removes old commits (and the batch ids their userMetadata holds) once
    a checkpoint follows them: a batch whose rows were deleted keeps its id, which the table's
    property records, so the next landing does not give it again."""
    write_stream(StreamSpec(initial_rows=0, events=30, batches=2), tmp_path, False)
    table = "landing_test.log_cleaned"
    spark.sql(f"drop table if exists {table}")
    land = ["land-change-events", str(tmp_path), "--table", table]
    assert main([*land, "--batches", ":1"]) == 0
    assert main(land) == 0
    spark.sql(f"alter table {table} set tblproperties ('delta.checkpointInterval' = '1')")
    spark.sql(f"delete from {table} where _batch_id = 1")  # this commit writes a checkpoint
    checkpoint = _version(spark, table)
    # What the clean-up leaves: the commits from the checkpoint's on.
    location = spark.sql(f"describe detail {table}").first()["location"]
    log = Path(location.removeprefix("file:")) / "_delta_log"
    assert (log / f"{checkpoint:020d}.checkpoint.parquet").is_file()
    for commit in log.glob("*.json"):
        if int(commit.stem) < checkpoint:
            commit.unlink()
    assert all(
        "spark_cdc_last_batch" not in str(row)
        for row in spark.sql(f"describe history {table}").collect()
    )
    (tmp_path / "batches" / "batch-00001.jsonl").rename(tmp_path / "batches" / "batch-00009.jsonl")
    capsys.readouterr()
    assert main(land) == 0, capsys.readouterr().err
    assert "landed 1 batches as _batch_id 2-2" in capsys.readouterr().out


def _version(spark, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


@pytest.mark.parametrize("landed_before", [1, 0], ids=["table_exists", "new_table"])
def test_two_overlapping_landings_never_land_a_file_twice_or_share_a_batch_id(
    spark, tmp_path, landed_before
):
    # Landing A reads its file slowly; landing B of the same table starts and commits meanwhile.
    # Both took the same next batch id; Delta lets one commit and refuses the other.
    write_stream(StreamSpec(initial_rows=0, events=40, batches=3), tmp_path, False)
    files = sorted((tmp_path / "batches").glob("batch-*.jsonl"))
    table = "landing_test.overlapped"
    spark.sql(f"drop table if exists {table}")
    if landed_before:
        land_batch_files(spark, table, files[:landed_before])

    def slow_read(path):
        # The JVM waits 4 s on the file's first row (reflect returns null for a void method).
        wait = F.expr("reflect('java.lang.Thread', 'sleep', cast(4000 as bigint))")
        first_row = F.monotonically_increasing_id() == 0
        seq = F.coalesce(F.when(first_row, wait).cast("bigint"), F.col("event_seq"))
        return read_batch_file(spark, path).withColumn("event_seq", seq)

    outcome: dict[str, object] = {}

    def land(name: str, files_of_it: list, read) -> None:
        try:
            outcome[name] = _land(spark, table, files_of_it, read)
        except LandingConflictError as error:
            outcome[name] = error

    rest = files[landed_before:]
    slow = threading.Thread(target=land, args=("slow", rest, slow_read))
    slow.start()
    time.sleep(1.0)
    land("fast", rest[:1], lambda path: read_batch_file(spark, path))
    slow.join()
    # Both read the table before either wrote (the usual case): whichever commits first lands
    # its files from batch 1 on, the other lands nothing and says so. On a slow machine the slow
    # one may read after the fast one's commit: then it skips that file and goes on after it.
    assert all(isinstance(v, (Landing, LandingConflictError)) for v in outcome.values()), outcome
    for value in outcome.values():
        if isinstance(value, LandingConflictError):
            assert "landed nothing" in str(value)
    landed = spark.table(table)
    lines = {
        landed_name(f): len([ln for ln in f.read_text().splitlines() if ln.strip()]) for f in files
    }
    rows = {r[0]: r[1] for r in landed.groupBy("_source_file").count().collect()}
    assert all(rows[name] == lines[name] for name in rows), rows  # no file landed twice
    files_per_batch = landed.groupBy("_batch_id").agg(F.countDistinct("_source_file").alias("n"))
    assert files_per_batch.where("n > 1").count() == 0  # no batch id given to two files
    # Run again: what is left lands as the next batches, every file once.
    land_batch_files(spark, table, rest)
    rows = {r[0]: r[1] for r in spark.table(table).groupBy("_source_file").count().collect()}
    assert rows == lines
    assert spark.table(table).select("_batch_id").distinct().count() == len(files)


def test_a_batch_selection_past_the_last_file_is_refused_before_spark_starts(tmp_path):
    write_stream(StreamSpec(initial_rows=0, events=10, batches=2), tmp_path, False)
    env = command_env(tmp_path / "home", SPARK_CDC_TARGET="local")
    for selection, words in (("3:4", "selects none of the 2 batch files"), ("2", "must read like")):
        started = time.monotonic()
        done = run_command(
            [str(BIN / "spark-cdc"), "land-change-events", str(tmp_path), "--table", "x.y",
             "--batches", selection],
            env,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 2 and words in done.stderr, done.stderr[-800:]
        assert time.monotonic() - started < 30
        assert not (tmp_path / "home" / "metastore_db").exists()  # no session was made
    done = run_command(
        [str(BIN / "spark-cdc"), "land-change-events", str(tmp_path / "batches"), "--table", "x.y"],
        env,
        timeout=120,
    )
    assert done.returncode == 2 and f"give the folder that holds batches/: {tmp_path}" in (
        done.stderr
    )


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> str:
    """A Kafka broker on loopback (KRaft, one node, topics of one partition)."""
    with kafka_broker(tmp_path_factory.mktemp("kafka")) as address:
        yield address


def _produce(spark, broker: str, topic: str, path) -> int:
    """The lines of a batch file, as bytes, as records of ``topic`` in order; how many."""
    values = [line for line in path.read_bytes().split(b"\n") if line]
    frame = spark.createDataFrame([(bytearray(value),) for value in values], "value binary")
    frame.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", broker).option(
        "topic", topic
    ).save()
    return len(values)


def _content(spark, table: str) -> Counter:
    """A landing table's rows, where each came from and when aside."""
    frame = spark.table(table).drop("_source_file", "_ingested_at")
    return Counter(tuple(str(value) for value in row) for row in frame.collect())


@pytest.mark.parametrize("debezium", [False, True], ids=["change_events", "debezium"])
def test_a_kafka_topic_lands_as_its_batch_files_would(spark, broker, tmp_path, capsys, debezium):
    """Each batch file's lines produced to a topic, then landed from Kafka (restarting from the
    checkpoint), once more with nothing new: the rows, batch ids and landing errors of landing
    the files themselves, each record once, named by its place in the topic."""
    if debezium:
        write_debezium_stream(DebeziumSpec(events=80, batches=3), tmp_path)
    else:
        write_stream(
            StreamSpec(initial_rows=0, events=80, batches=3, malformed_rate=0.05), tmp_path, False
        )
    files = sorted((tmp_path / "batches").glob("batch-*.jsonl"))
    kind = "debezium" if debezium else "events"
    by_files, by_kafka = f"landing_test.{kind}_files", f"landing_test.{kind}_kafka"
    topic = f"{kind}_feed"
    for table in (by_files, by_kafka):
        spark.sql(f"drop table if exists {table}")
    (land_debezium_files if debezium else land_batch_files)(spark, by_files, files)
    command = ["land-change-events", "--table", by_kafka, "--kafka-bootstrap-servers", broker]
    command += ["--kafka-topics", topic, "--checkpoint", str(tmp_path / "checkpoint")]
    command += ["--debezium"] if debezium else []
    produced = 0
    for path in files:
        produced += _produce(spark, broker, topic, path)
        assert main(command) == 0
    capsys.readouterr()
    assert main(command) == 0
    assert "nothing new to land" in capsys.readouterr().out

    assert _content(spark, by_kafka) == _content(spark, by_files)
    assert sorted(_batch_counts(spark, by_kafka)) == list(range(len(files)))
    identities = sorted(row[0] for row in spark.table(by_kafka).select("_source_file").collect())
    assert identities == [f"kafka://{topic}/0/{offset:019d}" for offset in range(produced)]


def test_a_kafka_landing_authenticates_with_credentials_from_a_file_and_the_environment(
    spark, tmp_path, tmp_path_factory, capsys, monkeypatch
):
    """A broker whose listener authenticates (SASL PLAIN): the landing's credentials come
    from a settings file whose password is ${env:...}; the records land, and the password is
    in no output, no landed row and no plan Spark shows. Without the variable the landing is
    refused at once, naming it."""
    password = "pw-" + tmp_path.name[-12:]
    users = {"lander": password}
    write_stream(StreamSpec(initial_rows=0, events=30, batches=1), tmp_path, False)
    (path,) = sorted((tmp_path / "batches").glob("batch-*.jsonl"))
    table, topic = "landing_test.kafka_authenticated", "authenticated_feed"
    spark.sql(f"drop table if exists {table}")
    settings = tmp_path / "consumer.properties"
    settings.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
        '    username="lander" password="${env:LANDING_KAFKA_PASSWORD}";\n',
        encoding="utf-8",
    )
    with kafka_broker_with_sasl(tmp_path_factory.mktemp("kafka_sasl"), users) as (open_, sasl):
        produced = _produce(spark, open_, topic, path)
        command = ["land-change-events", "--table", table, "--kafka-bootstrap-servers", sasl]
        command += ["--kafka-topics", topic, "--checkpoint", str(tmp_path / "checkpoint")]
        command += ["--kafka-settings-file", str(settings)]
        monkeypatch.delenv("LANDING_KAFKA_PASSWORD", raising=False)
        capsys.readouterr()
        assert main(command) == 2
        refused = capsys.readouterr()
        assert "${env:LANDING_KAFKA_PASSWORD} names an environment variable" in refused.err
        assert not spark.catalog.tableExists(table)

        monkeypatch.setenv("LANDING_KAFKA_PASSWORD", password)
        assert main(command) == 0
        landed = capsys.readouterr()
        reader = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", sasl)
            .option("subscribe", topic)
            .option("kafka.sasl.jaas.config", f'x password="{password}";')
            .load()
        )
        plan = reader._jdf.queryExecution().toString()
    assert spark.table(table).count() == produced
    assert sorted(_batch_counts(spark, table)) == [0]
    rows = "\n".join(str(tuple(row)) for row in spark.table(table).collect())
    assert "kafka.sasl.jaas.config" in plan and "*********(redacted)" in plan
    for text in (landed.out, landed.err, refused.out, refused.err, rows, plan):
        assert password not in text


def _topic_records(spark, broker: str, topic: str):
    """Every record of ``topic`` as a landing's micro-batch holds it (value text, identity)."""
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", broker)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    return frame.select(
        F.col("value").cast("string").alias("value"), record_identity().alias("_source_file")
    )


def test_two_overlapping_kafka_landings_never_land_a_record_twice(spark, broker, tmp_path):
    # Two landings of one table from two checkpoints: the slow one holds every record of the
    # topic, the fast one the first batch file's records and commits while the slow one reads.
    write_stream(StreamSpec(initial_rows=0, events=40, batches=2), tmp_path, False)
    files = sorted((tmp_path / "batches").glob("batch-*.jsonl"))
    topic, table = "overlapped_feed", "landing_test.kafka_overlapped"
    spark.sql(f"drop table if exists {table}")
    first_file = _produce(spark, broker, topic, files[0])
    produced = first_file + _produce(spark, broker, topic, files[1])
    records = _topic_records(spark, broker, topic)
    assert records.count() == produced

    # The JVM waits 4 s on the first row of the slow landing (reflect returns null for void).
    wait = F.expr("reflect('java.lang.Thread', 'sleep', cast(4000 as bigint))")
    first_row = F.monotonically_increasing_id() == 0
    slow_records = records.withColumn(
        "value", F.coalesce(F.when(first_row, wait).cast("string"), F.col("value"))
    )
    fast_records = records.where(F.col("_source_file") < f"kafka://{topic}/0/{first_file:019d}")
    outcome: dict[str, object] = {}

    def land(name: str, micro_batch) -> None:
        try:
            outcome[name] = land_micro_batch(spark, table, micro_batch, False)
        except LandingConflictError as error:
            outcome[name] = error

    ensure_schema(spark, table)
    slow = threading.Thread(target=land, args=("slow", slow_records))
    slow.start()
    time.sleep(1.0)
    land("fast", fast_records)
    slow.join()
    assert all(isinstance(v, (int, LandingConflictError)) for v in outcome.values()), outcome

    def identities() -> Counter:
        return Counter(r[0] for r in spark.table(table).select("_source_file").collect())

    assert max(identities().values()) == 1  # no record landed twice
    files_per_batch = spark.table(table).groupBy("_batch_id").count()
    assert files_per_batch.count() == len([v for v in outcome.values() if isinstance(v, int)])
    # The replay of the refused landing's micro-batch (its checkpoint did not commit it) lands
    # what is left, every record once.
    land_micro_batch(spark, table, records, False)
    expected = [f"kafka://{topic}/0/{offset:019d}" for offset in range(produced)]
    assert sorted(identities().elements()) == expected


def test_a_kafka_landing_that_reaches_no_broker_says_so_in_one_line(tmp_path):
    """No broker at the address (a closed port on loopback): the command ends with exit code 2
    and one line naming the brokers, the topics and Kafka's reason, with no traceback and no
    JVM stack (the Kafka client's retries are not logged either)."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{unused.getsockname()[1]}"  # closed again below: nothing listens
    env = command_env(tmp_path / "home", SPARK_CDC_TARGET="local")
    done = run_command(
        [str(BIN / "spark-cdc"), "land-change-events", "--table", "kx.landed", "--debezium",
         "--kafka-bootstrap-servers", address, "--kafka-topics", "orders",
         "--kafka-setting", "default.api.timeout.ms=2000",
         "--kafka-setting", "request.timeout.ms=2000",
         "--checkpoint", str(tmp_path / "checkpoint")],
        env,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("spark-cdc: error:")]
    assert len(said) == 1 and f"Kafka at {address} did not serve topics orders" in said[0]
    assert "TimeoutException" in said[0], said
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr, done.stderr[-2000:]
    assert len(done.stderr.splitlines()) <= 3, done.stderr  # the JVM's own notice at most
