"""What Spark itself read and shuffled, from its event log: figures that machine load does not
change (jobs, records and bytes read, shuffle bytes written), per application and per time
window (a dbt node's run, from dbt's run_results.json).

A JVM that pyspark launches reads ``$SPARK_CONF_DIR/spark-defaults.conf``:
:func:`event_log_conf` writes one that makes every application log its events (uncompressed)
into a folder, and :func:`read_applications` sums each application's tasks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Reads:
    """What one application (or one window of it) asked of Spark."""

    jobs: int = 0
    records_read: int = 0
    bytes_read: int = 0
    shuffle_bytes_written: int = 0

    def add(self, other: Reads) -> None:
        """Add ``other``'s figures to these."""
        self.jobs += other.jobs
        self.records_read += other.records_read
        self.bytes_read += other.bytes_read
        self.shuffle_bytes_written += other.shuffle_bytes_written

    def as_dict(self) -> dict[str, int]:
        """The figures as plain JSON."""
        return asdict(self)


@dataclass
class Application:
    """One Spark application's events: its tasks (finish time, reads) and job start times."""

    app_id: str
    tasks: list[tuple[int, Reads]] = field(default_factory=list)
    job_starts: list[int] = field(default_factory=list)

    def total(self, start_ms: int | None = None, end_ms: int | None = None) -> Reads:
        """The figures of the tasks that finished (jobs that started) in [start_ms, end_ms]."""

        def inside(moment: int) -> bool:
            return (start_ms is None or moment >= start_ms) and (end_ms is None or moment <= end_ms)

        total = Reads(jobs=sum(1 for moment in self.job_starts if inside(moment)))
        for finished, reads in self.tasks:
            if inside(finished):
                total.add(reads)
        return total


def event_log_conf(conf_dir: Path, log_dir: Path) -> Path:
    """A SPARK_CONF_DIR whose spark-defaults.conf logs every application's events to
    ``log_dir`` (uncompressed, so that no decompressor is needed to read them)."""
    conf_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "spark-defaults.conf").write_text(
        "spark.eventLog.enabled true\n"
        f"spark.eventLog.dir {log_dir.resolve().as_uri()}\n"
        "spark.eventLog.compress false\n"
    )
    return conf_dir


def _lines(path: Path) -> Iterator[str]:
    if path.suffix == ".zstd":
        import io

        import zstandard

        with path.open("rb") as handle:
            reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
            yield from io.TextIOWrapper(reader, encoding="utf-8")
        return
    with path.open(encoding="utf-8") as handle:
        yield from handle


def _task_reads(event: dict) -> Reads:
    metrics = event.get("Task Metrics") or {}
    read = metrics.get("Input Metrics") or {}
    shuffle = metrics.get("Shuffle Write Metrics") or {}
    return Reads(
        records_read=int(read.get("Records Read", 0)),
        bytes_read=int(read.get("Bytes Read", 0)),
        shuffle_bytes_written=int(shuffle.get("Shuffle Bytes Written", 0)),
    )


def _log_files(log_dir: Path, in_progress: bool = False) -> dict[str, list[Path]]:
    """Each application's event files: a rolled log is a folder ``eventlog_v2_<app>`` of
    ``events_<n>_<app>`` parts, a plain log one file (a running application's too when
    ``in_progress``: Spark flushes it at each stage's and job's end)."""
    found: dict[str, list[Path]] = {}
    for path in sorted(log_dir.iterdir()):
        if path.is_dir() and path.name.startswith("eventlog_v2_"):
            parts = sorted(
                (p for p in path.iterdir() if p.name.startswith("events_")),
                key=lambda p: int(p.name.split("_")[1]),
            )
            found[path.name.removeprefix("eventlog_v2_")] = parts
        elif path.is_file() and (in_progress or not path.name.endswith(".inprogress")):
            found[path.name.split(".")[0]] = [path]
    return found


def read_applications(log_dir: Path, in_progress: bool = False) -> dict[str, Application]:
    """Every application logged in ``log_dir`` (running ones too when ``in_progress``), by app
    id."""
    applications = {}
    for app_id, parts in _log_files(log_dir, in_progress).items():
        application = Application(app_id)
        for part in parts:
            for line in _lines(part):
                event = json.loads(line)
                kind = event.get("Event")
                if kind == "SparkListenerTaskEnd":
                    finished = int((event.get("Task Info") or {}).get("Finish Time", 0))
                    application.tasks.append((finished, _task_reads(event)))
                elif kind == "SparkListenerJobStart":
                    application.job_starts.append(int(event.get("Submission Time", 0)))
        applications[app_id] = application
    return applications


def new_applications(log_dir: Path, before: set[str]) -> list[Application]:
    """The applications logged since ``before`` (a set of app ids) was taken."""
    return [app for app_id, app in read_applications(log_dir).items() if app_id not in before]


@dataclass
class Statement:
    """One SQL execution of an application (a query, a write, a MERGE) and what its jobs read."""

    execution_id: int
    description: str
    operator: str
    reads: Reads = field(default_factory=Reads)


def _operator(plan: dict | None) -> str:
    """The top operator of a SQL execution's plan that says what it does (past the wrappers)."""
    wrappers = {"AdaptiveSparkPlan", "CommandResult", "WholeStageCodegen", "ResultQueryStage"}
    while plan and plan.get("nodeName", "").split(" (")[0] in wrappers and plan.get("children"):
        plan = plan["children"][0]
    return (plan or {}).get("nodeName", "")


def reads_per_statement(parts: list[Path]) -> list[Statement]:
    """Each top-level SQL execution of one application's event files, in start order, with the
    reads of every job run for it (nested executions count for their root)."""
    statements: dict[int, Statement] = {}
    stage_owner: dict[int, int] = {}
    for part in parts:
        for line in _lines(part):
            event = json.loads(line)
            kind = event.get("Event", "")
            if kind.endswith("SQLExecutionStart"):
                execution = int(event["executionId"])
                root = int(event.get("rootExecutionId", execution))
                if root == execution:
                    statements[execution] = Statement(
                        execution,
                        str(event.get("description", "")).replace("\n", " ")[:120],
                        _operator(event.get("sparkPlanInfo")),
                    )
            elif kind == "SparkListenerJobStart":
                properties = event.get("Properties") or {}
                owner = properties.get("spark.sql.execution.root.id") or properties.get(
                    "spark.sql.execution.id"
                )
                if owner is None:
                    continue
                if int(owner) in statements:
                    statements[int(owner)].reads.jobs += 1
                for stage in event.get("Stage IDs", []):
                    stage_owner[int(stage)] = int(owner)
            elif kind == "SparkListenerTaskEnd":
                owner = stage_owner.get(int(event.get("Stage ID", -1)))
                if owner in statements:
                    statements[owner].reads.add(_task_reads(event))
    return [statements[key] for key in sorted(statements)]


def application_parts(log_dir: Path) -> dict[str, list[Path]]:
    """Each application's event files in ``log_dir``, by app id, in the order they started."""
    return dict(sorted(_log_files(log_dir).items(), key=lambda item: item[0]))
