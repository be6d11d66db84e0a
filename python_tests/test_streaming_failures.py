"""A streaming query's failure caused by Kafka's client is one line naming the brokers, the
topics and Kafka's reason (texts as Spark 4.2's Kafka source raised them here); any other
failure passes through as it came."""

from __future__ import annotations

import pytest

from spark_cdc.core.kafka_records import KafkaSource
from spark_cdc.core.streaming_queries import kafka_failure

pytestmark = pytest.mark.unit

SOURCE = KafkaSource("10.0.0.7:9092", "orders,customers")
NO_BROKER = (
    "[STREAM_FAILED] Query [id = 67da, runId = f32a] terminated with exception: "
    "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: "
    "Timed out waiting for a node assignment. Call: listNodes\n=== Streaming Query ==="
)
BAD_SETTING = (
    "Failed to create new KafkaAdminClient\norg.apache.kafka.common.KafkaException: Failed to "
    "create new KafkaAdminClient\n\tat org.apache.kafka.clients.admin.KafkaAdminClient"
)
LOGIN = (
    "terminated with exception: org.apache.kafka.common.errors.SaslAuthenticationException: "
    "Authentication failed during authentication due to invalid credentials with SASL mechanism "
    "PLAIN"
)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (NO_BROKER, "TimeoutException: Timed out waiting for a node assignment. Call: listNodes"),
        (BAD_SETTING, "KafkaException: Failed to create new KafkaAdminClient"),
        (LOGIN, "SaslAuthenticationException: Authentication failed during authentication"),
    ],
)
def test_a_kafka_clients_failure_is_one_line_with_its_reason(text, reason):
    error = kafka_failure(RuntimeError(text), SOURCE)
    assert error is not None
    said = str(error)
    assert "\n" not in said
    assert said.startswith("Kafka at 10.0.0.7:9092 did not serve topics orders,customers (")
    assert reason in said


@pytest.mark.parametrize(
    "text", ["[DELTA_PROTOCOL_CHANGED] concurrent update", "division by zero in a kafka row"]
)
def test_any_other_failure_passes_through(text):
    assert kafka_failure(RuntimeError(text), SOURCE) is None
    assert kafka_failure(None, SOURCE) is None
