"""The stream command's source options, parsed without Spark: a Kafka source needs both its
brokers and its topics, and its consumer settings read NAME=VALUE."""

from __future__ import annotations

import re

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


KAFKA = ["--kafka-bootstrap-servers", "b:9092", "--kafka-topics", "t"]
JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required"


def test_consumer_settings_from_a_file_with_placeholders(tmp_path, monkeypatch):
    """A Kafka client properties file (comments, a continued line, `:` as separator), its
    `${env:...}` and `${file:PATH:KEY}` replaced; --kafka-setting overrides a file's setting."""
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("kafka.password = s3cr=t\n", encoding="utf-8")
    settings = tmp_path / "consumer.properties"
    settings.write_text(
        "# the consumer's credentials\n"
        "! another comment\n"
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism: PLAIN\n"
        f"sasl.jaas.config={JAAS} \\\n"
        '    username="${env:KAFKA_USER}" password="${file:' + str(secrets) + ':kafka.password}";\n'
        "client.id=from-file\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("KAFKA_USER", "alice")
    source = _source(
        *KAFKA, "--kafka-settings-file", str(settings), "--kafka-setting", "client.id=cli"
    )
    assert source.consumer_settings == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{JAAS} username="alice" password="s3cr=t";',
        "client.id": "cli",
    }
    assert "s3cr=t" not in repr(source)


def test_placeholders_are_left_to_kafka_when_the_settings_declare_its_config_providers(tmp_path):
    settings = tmp_path / "consumer.properties"
    settings.write_text(
        "config.providers=env\n"
        "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
        'sasl.jaas.config=x password="${env:ONLY_ON_THE_EXECUTORS}";\n',
        encoding="utf-8",
    )
    source = _source(*KAFKA, "--kafka-settings-file", str(settings))
    assert (
        source.consumer_settings["sasl.jaas.config"] == 'x password="${env:ONLY_ON_THE_EXECUTORS}";'
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a=${env:SPARK_CDC_TEST_UNSET}\n", "a: ${env:SPARK_CDC_TEST_UNSET} names an environment"),
        ("a=${file:/nonexistent/x.properties:k}\n", "cannot read the Kafka settings file"),
        ("a=${file:nokey}\n", "reads ${file:PATH:KEY}"),
        ("just-a-word\n", "line 1: a setting reads NAME=VALUE"),
        ("a=b \\\n", "ends with a continuation"),
    ],
)
def test_a_settings_file_that_cannot_be_read_is_refused_naming_no_value(tmp_path, text, words):
    settings = tmp_path / "consumer.properties"
    settings.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError, match=re.escape(words)):
        _source(*KAFKA, "--kafka-settings-file", str(settings))


@pytest.mark.parametrize("command", [["stream", "schema-drift", "events"], ["land-change-events"]])
@pytest.mark.parametrize("value", ["0", "-5", "many"])
def test_a_kafka_micro_batch_bound_below_one_record_is_refused(command, value, capsys):
    options = ["--kafka-bootstrap-servers", "b:9092", "--kafka-topics", "t"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(
            [*command, *options, "--max-offsets-per-trigger", value, "--table", "x.y"]
            if command == ["land-change-events"]
            else [*command, *options, "--max-offsets-per-trigger", value]
        )
    assert f"needs a whole number of 1 or more, not '{value}'" in capsys.readouterr().err
