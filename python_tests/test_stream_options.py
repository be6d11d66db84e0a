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


def test_a_query_is_the_feed_s_its_ingest_or_one_group_s():
    parse = build_parser().parse_args
    args = parse(["stream", "schema-drift", "events", "--group", "orders"])
    assert (args.group, args.ingest_only) == ("orders", False)
    assert parse(["stream", "schema-drift", "events", "--ingest-only"]).ingest_only
    with pytest.raises(SystemExit):
        parse(["stream", "schema-drift", "events", "--ingest-only", "--group", "orders"])


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_a_micro_batch_bound_below_one_file_is_refused(value, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(
            [
                "stream",
                "schema-drift",
                "events",
                "--group",
                "orders",
                "--max-files-per-trigger",
                value,
            ]
        )
    assert f"needs a whole number of 1 or more, not '{value}'" in capsys.readouterr().err
    parsed = build_parser().parse_args(
        ["stream", "schema-drift", "events", "--max-files-per-trigger", "3"]
    )
    assert parsed.max_files_per_trigger == 3


def test_status_shows_the_feed_s_query_and_every_group(tmp_path, capsys):
    import json

    from spark_cdc.cli.stream import run_stream_status

    for folder, batch in [(tmp_path, 4), (tmp_path / "groups" / "orders", 7)]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "status.json").write_text(json.dumps({"state": "running", "batch_id": batch}))
    args = build_parser().parse_args(["stream", "status", "events", "--checkpoint", str(tmp_path)])
    assert run_stream_status(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        "events: running; batch_id 4",
        "events group orders: running; batch_id 7",
    ]
