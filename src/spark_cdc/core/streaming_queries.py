"""Starting a streaming query and reading why it failed, the same for every command that runs
one (the landing from Kafka, the schema-drift stream).

- On Spark Connect, the server starts a Python worker for a query's ``foreachBatch`` and waits a
  fixed 10 s for it to connect back, which a loaded machine can exceed while Python imports
  pyspark: the start is tried again (three times in all), then refused in one line.
- A query that failed because Kafka did not answer (no broker at the address, a refused login,
  a topic it may not read) is reported in one line naming the brokers, the topics and Kafka's
  own reason; any other failure is raised as it came.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from spark_cdc.core.kafka_records import KafkaSource

# What a Connect server says when the Python process of a query's foreachBatch did not connect
# back in time: Spark waits a fixed 10 s for it (PythonWorkerFactory's simple workers).
WORKER_TIMEOUT = "Python worker failed to connect back"
START_ATTEMPTS = 3
# A Kafka client's own error, as the JVM's failure text names it.
_KAFKA_ERROR = re.compile(
    r"org\.apache\.kafka\.common\.(?:\w+\.)?(\w+(?:Exception|Error)): ([^\n]*)"
)


class StreamStartError(RuntimeError):
    """The engine could not start the query's Python worker."""


class KafkaUnavailableError(RuntimeError):
    """A query could not read its Kafka topics (the brokers, the login or the topics)."""


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect client (foreachBatch then runs on the server)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def start_query(writer: Any, remote: bool) -> Any:
    """``writer.start()``; on Spark Connect, started again (at most START_ATTEMPTS times in all)
    when the server's Python worker for the micro-batches did not connect back in Spark's 10 s."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return writer.start()
        except Exception as error:
            if not remote or WORKER_TIMEOUT not in str(error):
                raise
            if attempt == START_ATTEMPTS:
                raise StreamStartError(
                    f"the engine's Python worker for the stream's micro-batches did not connect "
                    f"back within Spark's 10 s, {START_ATTEMPTS} times: the engine's machine is "
                    "too loaded to start it; try again when it is less busy"
                ) from None
            print(
                "spark-cdc: the engine's Python worker for the stream's micro-batches did not "
                f"connect back within Spark's 10 s (a loaded machine): starting the query again "
                f"(attempt {attempt + 1} of {START_ATTEMPTS})",
                file=sys.stderr,
            )
    raise AssertionError("unreachable")


def kafka_failure(error: BaseException | None, source: KafkaSource) -> KafkaUnavailableError | None:
    """The one-line error for a query's ``error`` when Kafka's client caused it, else None."""
    if error is None:
        return None
    found = _KAFKA_ERROR.search(str(error))
    if found is None:
        return None
    kind, reason = found.group(1), found.group(2).strip()
    return KafkaUnavailableError(
        f"Kafka at {source.bootstrap_servers} did not serve topics {source.topics} "
        f"({kind}: {reason}); check the brokers' address, the --kafka-setting login and the "
        "topics, then run the command again: what was taken in before stays taken in"
    )
