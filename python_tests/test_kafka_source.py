"""Spark's Kafka connector (loaded by every session of the project) against a real Kafka broker
on loopback: what a batch writes to a topic, a stream reads back, once, with its offsets."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F
from servers import kafka_broker

from spark_cdc.session.jars import kafka_jars

EVENTS = [{"event_type": f"type_{i % 3}", "id": i, "score": i * 1.5} for i in range(50)]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with kafka_broker(tmp_path_factory.mktemp("kafka")) as address:
        yield address


def _produce(spark, broker: str, topic: str, events: list[dict]) -> None:
    rows = [(str(event["id"]), json.dumps(event)) for event in events]
    (
        spark.createDataFrame(rows, "key string, value string")
        .write.format("kafka")
        .option("kafka.bootstrap.servers", broker)
        .option("topic", topic)
        .save()
    )


def test_the_session_loads_the_kafka_connector():
    names = {jar.name for jar in kafka_jars()}
    assert any(name.startswith("spark-sql-kafka-0-10_2.13-") for name in names)
    assert any(name.startswith("kafka-clients-") for name in names)


def test_a_stream_reads_each_record_once_across_restarts(spark, broker, tmp_path):
    topic = "drifting_events"
    checkpoint = str(tmp_path / "checkpoint")
    table = "kafka_test.events"
    spark.sql("create schema if not exists kafka_test")
    spark.sql(f"drop table if exists {table}")

    def drain() -> None:
        stream = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", broker)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .select(
                F.col("value").cast("string").alias("payload"),
                "topic",
                "partition",
                "offset",
            )
        )
        query = (
            stream.writeStream.format("delta")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .toTable(table)
        )
        query.awaitTermination(180)
        assert query.exception() is None

    _produce(spark, broker, topic, EVENTS[:30])
    drain()
    _produce(spark, broker, topic, EVENTS[30:])
    drain()
    drain()  # nothing new: nothing read twice
    rows = spark.table(table).collect()
    assert sorted(json.loads(row.payload)["id"] for row in rows) == [e["id"] for e in EVENTS]
    # every record once by its identity in the topic
    assert len({(row.partition, row.offset) for row in rows}) == len(EVENTS)
    assert {json.loads(row.payload)["score"] for row in rows} == {e["score"] for e in EVENTS}
