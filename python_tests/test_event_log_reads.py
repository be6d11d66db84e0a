"""benchmarks/_event_log.reads_per_statement: a hand-written event log (the events Spark writes,
cut to the fields read) gives each top-level SQL execution the reads of its jobs' tasks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import PROJECT_DIR

pytestmark = pytest.mark.unit
sys.path.insert(0, str(PROJECT_DIR / "benchmarks"))

from _event_log import reads_per_statement  # noqa: E402

SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"


def _task(stage: int, records: int, shuffle: int = 0) -> dict:
    return {
        "Event": "SparkListenerTaskEnd",
        "Stage ID": stage,
        "Task Metrics": {
            "Input Metrics": {"Records Read": records, "Bytes Read": records * 10},
            "Shuffle Write Metrics": {"Shuffle Bytes Written": shuffle},
        },
    }


def _job(stages: list[int], execution: int | None, root: int | None = None) -> dict:
    properties = {} if execution is None else {"spark.sql.execution.id": str(execution)}
    if root is not None:
        properties["spark.sql.execution.root.id"] = str(root)
    return {"Event": "SparkListenerJobStart", "Stage IDs": stages, "Properties": properties}


def test_each_statement_gets_its_jobs_and_nested_executions_reads(tmp_path: Path):
    merge_plan = {"nodeName": "AdaptiveSparkPlan", "children": [{"nodeName": "Execute Merge"}]}
    events = [
        {"Event": SQL_START, "executionId": 0, "description": "count", "sparkPlanInfo": {}},
        _job([0, 1], 0),
        _task(0, 100),
        _task(1, 50, shuffle=7),
        {"Event": SQL_START, "executionId": 1, "description": "merge", "sparkPlanInfo": merge_plan},
        # A nested execution (Delta's MERGE runs its own queries): its reads are the MERGE's.
        {"Event": SQL_START, "executionId": 2, "rootExecutionId": 1, "description": "inner"},
        _job([2], 2, root=1),
        _task(2, 1000),
        _job([3], 1),
        _task(3, 30),
        _job([4], None),  # no SQL execution: nobody's
        _task(4, 99999),
    ]
    log = tmp_path / "events_1_app"
    log.write_text("\n".join(json.dumps(event) for event in events) + "\n")

    first, merge = reads_per_statement([log])
    assert (first.execution_id, first.description, first.operator) == (0, "count", "")
    assert (first.reads.records_read, first.reads.bytes_read) == (150, 1500)
    assert (first.reads.shuffle_bytes_written, first.reads.jobs) == (7, 1)
    assert (merge.execution_id, merge.operator) == (1, "Execute Merge")
    assert (merge.reads.records_read, merge.reads.jobs) == (1030, 2)
