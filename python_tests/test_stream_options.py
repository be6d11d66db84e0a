"""The stream command's source options, parsed without Spark: a Kafka source needs both its
brokers and its topics, and its consumer settings read NAME=VALUE."""

from __future__ import annotations

import pytest

from spark_cdc.cli.main import build_parser
from spark_cdc.cli.options import kafka_source
from spark_cdc.dbt_models.settings import SettingsError
from spark_cdc.schema_drift.kafka_source import KafkaSource

pytestmark = pytest.mark.unit


def _source(*options: str) -> KafkaSource | None:
    return kafka_source(build_parser().parse_args(["stream", "schema-drift", "events", *options]))


def test_without_kafka_options_the_landing_folder_is_the_source():
    assert _source() is None


def test_a_kafka_source_with_its_settings():
    source = _source(
        "--kafka-bootstrap-servers",
        "b1:9092,b2:9092",
        "--kafka-topics",
        "orders,clicks",
        "--kafka-setting",
        "security.protocol=SASL_SSL",
        "--kafka-setting",
        "sasl.jaas.config=a=b c=d",
        "--max-offsets-per-trigger",
        "5000",
    )
    assert source == KafkaSource(
        "b1:9092,b2:9092",
        "orders,clicks",
        {"security.protocol": "SASL_SSL", "sasl.jaas.config": "a=b c=d"},
        5000,
    )


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--kafka-topics", "t"], "needs both --kafka-bootstrap-servers and --kafka-topics"),
        (["--kafka-bootstrap-servers", "b:9092"], "needs both"),
        (["--kafka-setting", "a=b"], "need a Kafka source"),
        (["--max-offsets-per-trigger", "10"], "need a Kafka source"),
        (
            ["--kafka-bootstrap-servers", "b:9092", "--kafka-topics", "t", "--kafka-setting", "x"],
            "must read NAME=VALUE, not 'x'",
        ),
    ],
)
def test_a_half_given_kafka_source_is_refused(options, words):
    with pytest.raises(SettingsError, match=words.replace("(", r"\(")):
        _source(*options)
