"""Schema drift streaming: sustained events/s and landing-to-silver latency of the stream.

Generated JSON events (``--event-types`` types whose schemas drift: a new variation every
``--minutes * 60 / --drift-steps`` seconds in ``--new-variation-rate`` of the events, new event
types after the first step, type conflicts and malformed lines in the last) land in the feed's
folder at ``--rate`` events per second, one file every ``--file-every`` seconds, for
``--minutes``, while one Structured Streaming query (:func:`spark_cdc.schema_drift.stream.
start_stream`, the code ``spark-cdc stream schema-drift`` runs) takes them into bronze, the
registry and silver, a micro-batch every ``--trigger-interval``.

The files are generated before the clock starts; landing one is a rename into the landing folder
with its modification time set to that instant. Measured by this script, not by the stream's own
monitoring: each file's landing time (its clock) and the end of the micro-batch that took the
file in (the query's ``foreachBatch`` returned: bronze, registry, silver and their logs
committed), matched through bronze's load of each file. Latency of an event = end of its batch
minus landing of its file; p50/p95/max over every event, and p95 per minute of landing (flat when
the stream keeps up with the arrivals, growing when it falls behind). Throughput: events / (end
of the last batch - first landing), and the capacity, events / the batches' summed durations.

With ``--warm-up-minutes`` the same arrivals begin that long before the measured minutes (the
base shapes of the event types, no drift): the stream creates its tables and its JVM compiles
its plans there, and only the files landed after the warm-up are measured (the micro-batches
that took in at least one of them for the capacity). ``--no-type-conflicts`` leaves out the
last step's type conflicts (text ``score``: a widening that rebuilds most tables at once).

With ``--groups N`` the feed's silver runs in N event groups (hash buckets), as ``spark-cdc
stream schema-drift --ingest-only`` and ``--group`` run it, all in this process: the ingest query
takes the files into bronze and the registry, each group's query its types' silver. An event is
then in silver when its group's log first holds its type through its load (read after each of
the group's micro-batches), and the capacity is the busiest query's (events / that query's
summed micro-batch durations). ``--type-skew S`` draws event types with Zipf-like frequencies
(type k with weight 1 / (k + 1)^S), as real feeds have them. With ``--group-processes`` each
group's query runs in a process of its own (its own Spark driver and JVM,
``_schema_drift_group_process.py``), the processes sharing one metastore (a Derby network server
on loopback, ``_shared_metastore.py``): the groups of ``spark-cdc stream schema-drift --group``
on clusters of their own. Run it under ``taskset -c 0`` and ``taskset -c 0,1`` to see how the
capacity follows the cores given.

Checked: bronze holds every generated line once, and every event of an accepted variation is in
its silver table.

Usage: ``python benchmarks/bench_schema_drift_stream.py --rate 8000 --minutes 5``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from _common import jvm_peak_rss_mib, save_results
from _shared_metastore import derby_network_server, derby_version
from pyspark.sql import functions as F

from spark_cdc.generators.json_events import JsonEventSpec, generate_batches
from spark_cdc.schema_drift.event_groups import Grouping, parse_grouping
from spark_cdc.schema_drift.stream import FeedTables, start_group_stream, start_stream
from spark_cdc.session.runtime import get_or_create_session

DATABASE = "bench_schema_drift_stream"
TABLES = FeedTables(DATABASE, "bench", "silver__")


def _stage_files(
    spec: JsonEventSpec, per_file: int, staged: Path, first: int = 0
) -> list[tuple[Path, int]]:
    """The generated lines in arrival order, ``per_file`` a file (numbered from ``first``):
    (path, lines) of each."""
    batches, _ = generate_batches(spec, show_progress=True)
    lines = [line for batch in batches for line in batch]
    staged.mkdir(parents=True, exist_ok=True)
    files = []
    for number, start in enumerate(range(0, len(lines), per_file), start=first):
        chunk = lines[start : start + per_file]
        path = staged / f"part-{number:05d}.jsonl"
        path.write_text("\n".join(chunk) + "\n", encoding="utf-8")
        files.append((path, len(chunk)))
    return files


def _land(files: list[tuple[Path, int]], landing: Path, every: float, landed: dict) -> None:
    """Move each staged file into its own folder of the landing folder on schedule."""
    started = time.time()
    for number, (path, _) in enumerate(files):
        delay = started + number * every - time.time()
        if delay > 0:
            time.sleep(delay)
        folder = landing / f"batch_{number:05d}"
        folder.mkdir(parents=True)
        now = time.time()
        os.utime(path, (now, now))
        os.rename(path, folder / "part-00000.jsonl")
        landed[folder.name] = now


def _grouping(groups: int) -> Grouping | None:
    """``groups`` hash buckets as the feed's event groups (None: one query)."""
    if groups < 1:
        return None
    return parse_grouping({f"bucket_{i}": [f"hash:{i}/{groups}"] for i in range(groups)})


def _mark(spark, tables: FeedTables, marks: list) -> Callable[[int], None]:
    """After each of a group's micro-batches: when it ended and how far its log holds each type
    (its silver commits are in when the batch function returns)."""

    def after(_batch: int) -> None:
        ended = time.time()
        rows = spark.table(tables.silver_loads).groupBy("event_type").agg(F.max("to_load_seq"))
        marks.append((ended, {row[0]: row[1] for row in rows.collect()}))

    return after


def _group_ends(spark, bronze, grouping: Grouping, marks: dict, folders: set[str]) -> list:
    """(file folder, events, when silver held them) for the silver-bound events of ``folders``:
    the end of the first micro-batch of the type's group after which its log holds the load."""
    accepted = spark.table(TABLES.registry).where("status = 'accepted'")
    rows = (
        bronze.where("parse_error is null")
        .join(accepted.select("event_type", "variation_hash"), ["event_type", "variation_hash"])
        .where(F.col("batch_id").isin(sorted(folders)))
        .groupBy("event_type", "batch_id", "load_seq")
        .agg(F.count(F.lit(1)).alias("events"))
        .collect()
    )
    reached = []
    for row in rows:
        group = marks[grouping.group_of(row.event_type)]
        end = next(t for t, through in group if through.get(row.event_type, 0) >= row.load_seq)
        reached.append((row.batch_id, row.events, end))
    return reached


def _progress(spark, table: str) -> list:
    """A query's progress reports of micro-batches that took in rows, in batch order."""
    rows = spark.table(table).where("input_rows > 0").collect()
    return sorted(rows, key=lambda row: row.batch_id)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=8000, help="events landed per second")
    parser.add_argument("--minutes", type=float, default=5.0, help="how long events land")
    parser.add_argument("--file-every", type=float, default=1.0, help="seconds between files")
    parser.add_argument("--event-types", type=int, default=50)
    parser.add_argument("--drift-steps", type=int, default=10, help="new variations over the run")
    parser.add_argument("--new-variation-rate", type=float, default=0.05)
    parser.add_argument("--trigger-interval", default="10 seconds")
    parser.add_argument(
        "--warm-up-minutes", type=float, default=0.0, help="arrivals before the measured ones"
    )
    parser.add_argument(
        "--no-type-conflicts",
        dest="type_conflicts",
        action="store_false",
        help="no type conflicts in the last drift step",
    )
    parser.add_argument(
        "--type-skew", type=float, default=0.0, help="Zipf exponent of type frequencies (0: even)"
    )
    parser.add_argument(
        "--groups",
        type=int,
        default=0,
        help="silver in this many event groups (hash buckets), one query each (0: one query)",
    )
    parser.add_argument(
        "--group-processes",
        action="store_true",
        help="each group's query in a process of its own (a shared metastore on loopback)",
    )
    args = parser.parse_args()
    if args.group_processes and args.groups < 1:
        parser.error("--group-processes needs --groups N")
    work = Path(tempfile.mkdtemp(prefix="bench_schema_drift_stream_"))
    try:
        if not args.group_processes:
            return _run(args, work, None)
        jars = Path.home() / ".cache" / "spark_cdc" / "jars" / f"derby-{derby_version()}"
        with derby_network_server(work / "derby", jars) as extra:
            return _run(args, work, extra)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _start_group_process(
    args: argparse.Namespace, work: Path, home: Path, group: str, extra: dict[str, str]
) -> subprocess.Popen:
    """The group's query in a process of its own (_schema_drift_group_process.py)."""
    command = [
        sys.executable,
        str(Path(__file__).resolve().parent / "_schema_drift_group_process.py"),
        *("--work", str(work), "--home", str(home), "--database", DATABASE),
        *("--groups", str(args.groups), "--group", group),
        *("--trigger-interval", args.trigger_interval, "--extra", json.dumps(extra)),
    ]
    log = (work / f"group_{group}.log").open("w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def _create_metastore_tables(spark) -> None:
    """Have the shared metastore create its own tables (it does so on first use) before other
    processes use it: processes that create them at the same instant deadlock in Derby."""
    spark.sql("create database if not exists bench_metastore_warm_up")
    spark.sql("create table bench_metastore_warm_up.probe (id int) using delta")
    spark.sql("alter table bench_metastore_warm_up.probe set tblproperties ('probe' = '1')")
    spark.sql("alter table bench_metastore_warm_up.probe add columns (note string)")
    spark.sql("drop database bench_metastore_warm_up cascade")


def _wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not there after {timeout_s:.0f} s")
        time.sleep(1)


def _process_marks(work: Path, group: str) -> list[tuple[float, dict[str, int]]]:
    """The marks a group's process wrote after each of its micro-batches."""
    lines = (work / "marks" / f"{group}.jsonl").read_text().splitlines()
    return [(mark["ended"], mark["through"]) for mark in map(json.loads, lines)]


def _run(args: argparse.Namespace, work: Path, extra: dict[str, str] | None) -> int:
    """The benchmark in ``work``; ``extra``: the shared metastore's settings (groups in
    processes of their own), else None."""

    seconds = int(args.minutes * 60)
    per_file = int(args.rate * args.file_every)
    files_count = int(seconds / args.file_every)
    spec = JsonEventSpec(
        events=per_file * files_count,
        event_types=args.event_types,
        new_event_types=2,
        batches=args.drift_steps,
        new_variation_rate=args.new_variation_rate,
        malformed_rate=0.001,
        type_conflicts=args.type_conflicts,
        seed=11,
        type_skew=args.type_skew,
    )
    warm_files_count = int(args.warm_up_minutes * 60 / args.file_every)
    # The base shapes of the same event types (same seed), before the drift.
    warm_spec = JsonEventSpec(
        events=per_file * warm_files_count,
        event_types=args.event_types,
        new_event_types=0,
        batches=1,
        malformed_rate=0.001,
        type_conflicts=False,
        seed=11,
        type_skew=args.type_skew,
    )
    home = work / "home"
    spark = get_or_create_session(home=home, extra=extra) if extra else get_or_create_session()
    if extra:
        _create_metastore_tables(spark)
    processes: dict[str, subprocess.Popen] = {}
    try:
        warm_files = _stage_files(warm_spec, per_file, work / "staged") if warm_files_count else []
        files = warm_files + _stage_files(spec, per_file, work / "staged", len(warm_files))
        measured_folders = {f"batch_{number:05d}" for number in range(len(warm_files), len(files))}
        total = sum(lines for _, lines in files)
        spark.sql(f"drop database if exists {DATABASE} cascade")
        spark.sql(f"create database {DATABASE}")
        landing = work / "landing"
        landing.mkdir()

        ends: list[float] = []
        grouping = _grouping(args.groups)
        run = start_stream(
            spark,
            str(landing),
            TABLES,
            work / "checkpoint",
            trigger_interval=args.trigger_interval,
            after_batch=lambda _batch: ends.append(time.time()),
            ingest_only=grouping is not None,
        )
        landed: dict[str, float] = {}
        lander = threading.Thread(
            target=_land, args=(files, landing, args.file_every, landed), daemon=True
        )
        print(
            f"landing {total:,} events over {len(files) * args.file_every:.0f} s "
            f"({args.rate:,}/s; the first {len(warm_files)} files are the warm-up)",
            flush=True,
        )
        lander.start()
        marks: dict[str, list[tuple[float, dict[str, int]]]] = {}
        group_runs = []
        if grouping is not None and extra is not None:  # each in a process of its own
            # One after the other, once bronze exists: the metastore creates its own tables on
            # first use, and processes that do so at the same instant deadlock in Derby.
            _wait_for(lambda: spark.catalog.tableExists(TABLES.registry), "the ingest's tables")
            for group in grouping.groups:
                processes[group.name] = _start_group_process(args, work, home, group.name, extra)
                started = work / "marks" / f"{group.name}.started"
                _wait_for(
                    lambda: started.exists() or processes[group.name].poll() is not None,  # noqa: B023
                    f"group {group.name}'s query",
                )
        elif grouping is not None:  # each group waits for bronze (the first landed file)
            for group in grouping.groups:
                marks[group.name] = []
                group_runs.append(
                    start_group_stream(
                        spark,
                        TABLES.of_group(group.name),
                        grouping,
                        work / "groups" / group.name,
                        trigger_interval=args.trigger_interval,
                        after_batch=_mark(spark, TABLES.of_group(group.name), marks[group.name]),
                    )
                )
        while lander.is_alive():
            lander.join(30)
            print(f"  {len(landed)} files landed, {len(ends)} micro-batches done", flush=True)
        run.query.processAllAvailable()
        for group_run in group_runs:
            group_run.query.processAllAvailable()
        for each in (run, *group_runs):
            each.query.stop()
            each.finish()
            if each.query.exception() is not None:
                raise each.query.exception()
        peak = jvm_peak_rss_mib(spark)
        group_peaks = {}
        if processes:  # bronze is complete: each process takes in the rest, then stops
            (work / "stop").touch()
            for group, process in processes.items():
                if process.wait(3600) != 0:
                    log = (work / f"group_{group}.log").read_text().splitlines()
                    told = [line for line in log if not line.lstrip().startswith("at ")]
                    print("\n".join(told[-40:]), file=sys.stderr)
                    raise RuntimeError(f"group {group}'s process failed (its log's end above)")
                marks[group] = _process_marks(work, group)
                done = json.loads((work / "marks" / f"{group}.done").read_text())
                group_peaks[group] = done["peak_jvm_mib"]

        bronze = spark.table(TABLES.bronze)
        per_file_load = (
            bronze.groupBy("batch_id", "load_seq").agg(F.count(F.lit(1)).alias("events")).collect()
        )
        loads = sorted({row.load_seq for row in per_file_load})
        if loads != list(range(1, len(ends) + 1)):
            raise RuntimeError(f"{len(ends)} batches ended but bronze holds loads {loads[:5]}...")
        if sum(row.events for row in per_file_load) != total:
            raise RuntimeError("bronze does not hold every generated line once")
        if Counter(row.batch_id for row in per_file_load) != Counter(list(landed)):
            raise RuntimeError("a landed file is missing from bronze or split across loads")
        # Only the files landed after the warm-up are measured.
        measured = [row for row in per_file_load if row.batch_id in measured_folders]
        measured_total = sum(row.events for row in measured)
        measured_landed = [landed[name] for name in measured_folders]
        if grouping is None:  # an event is in silver when its load's micro-batch ended
            reached = [(row.batch_id, row.events, ends[row.load_seq - 1]) for row in measured]
        else:  # ... when its group's log first held its type through its load
            reached = _group_ends(spark, bronze, grouping, marks, measured_folders)
        weights = [events for _, events, _ in reached]
        latencies = np.repeat([end - landed[folder] for folder, _, end in reached], weights)
        minute_of = np.repeat(
            [int((landed[folder] - min(measured_landed)) // 60) for folder, _, _ in reached],
            weights,
        )
        p95_by_minute = [
            float(np.percentile(latencies[minute_of == minute], 95))
            for minute in range(int(minute_of.max()) + 1)
        ]

        accepted = spark.table(TABLES.registry).where("status = 'accepted'")
        expected_silver = (
            bronze.where("parse_error is null")
            .join(accepted.select("event_type", "variation_hash"), ["event_type", "variation_hash"])
            .count()
        )
        silver_tables = [
            t.name for t in spark.catalog.listTables(DATABASE) if t.name.startswith("silver__")
        ]
        silver_rows = sum(spark.table(f"{DATABASE}.{name}").count() for name in silver_tables)
        if silver_rows != expected_silver:
            raise RuntimeError(f"silver holds {silver_rows} rows, {expected_silver} expected")

        first, last_landing, last_end = min(measured_landed), max(landed.values()), ends[-1]
        # The micro-batches with data, in order, are bronze's loads 1, 2, ...: those that took
        # in a measured file count for the capacity, with every event they took in.
        progress = _progress(spark, TABLES.stream_progress)
        if len(progress) != len(ends):
            raise RuntimeError(f"{len(progress)} progress reports for {len(ends)} micro-batches")
        measured_loads = {row.load_seq for row in measured}
        events_per_load = Counter()
        for row in per_file_load:
            events_per_load[row.load_seq] += row.events
        durations = [
            row.batch_duration_ms / 1000
            for load, row in enumerate(progress, start=1)
            if load in measured_loads
        ]
        capacity_events = sum(events_per_load[load] for load in measured_loads)
        # With groups every query must keep up: the capacity is that of the busiest one (its
        # micro-batches' summed durations after the first measured landing).
        busy = {"ingest" if grouping else "stream": sum(durations)}
        for group in marks:
            busy[group] = sum(
                row.batch_duration_ms / 1000
                for (end, _), row in zip(
                    marks[group],
                    _progress(spark, TABLES.of_group(group).stream_progress),
                    strict=True,
                )
                if end >= first
            )
        last_end = max([last_end, *(end for group in marks.values() for end, _ in group[-1:])])
        result = {
            "rate_landed_per_s": args.rate,
            "minutes": args.minutes,
            "event_types": args.event_types,
            "drift_steps": args.drift_steps,
            "trigger_interval": args.trigger_interval,
            "warm_up_minutes": args.warm_up_minutes,
            "type_conflicts": args.type_conflicts,
            "events": measured_total,
            "warm_up_events": total - measured_total,
            "micro_batches": len(measured_loads),
            "silver_tables": len(silver_tables),
            "events_per_s": measured_total / (last_end - first),
            "capacity_events_per_s": capacity_events / max(busy.values()),
            "type_skew": args.type_skew,
            "groups": args.groups,
            "group_processes": args.group_processes,
            "cpus": len(os.sched_getaffinity(0)),
            "busy_s_per_query": busy,
            "drain_after_last_landing_s": last_end - last_landing,
            "latency_s": {
                "p50": float(np.percentile(latencies, 50)),
                "p95": float(np.percentile(latencies, 95)),
                "max": float(latencies.max()),
                "p95_by_landing_minute": p95_by_minute,
            },
            "batch_duration_s": {
                "median": float(np.median(durations)),
                "max": float(max(durations)),
            },
            "peak_jvm_mib": peak,
            "peak_jvm_mib_per_group_process": group_peaks,
        }
        latency, batch = result["latency_s"], result["batch_duration_s"]
        print(
            f"{measured_total:,} events measured in {len(measured_loads)} micro-batches: "
            f"{result['events_per_s']:,.0f} "
            f"events/s end to end (capacity {result['capacity_events_per_s']:,.0f}/s); "
            f"latency p50 {latency['p50']:.1f} s, p95 {latency['p95']:.1f} s, max "
            f"{latency['max']:.1f} s; batch duration median {batch['median']:.1f} s, max "
            f"{batch['max']:.1f} s; {len(silver_tables)} silver tables; peak JVM {peak:,.0f} "
            "MiB; p95 by landing minute " + ", ".join(f"{value:.0f}" for value in p95_by_minute)
        )
        name = f"schema_drift_stream_{args.rate}_{args.minutes:g}min_{args.drift_steps}steps"
        if args.warm_up_minutes:
            name += f"_warm{args.warm_up_minutes:g}min"
        if not args.type_conflicts:
            name += "_no_conflicts"
        if args.event_types != 50:
            name += f"_{args.event_types}types"
        if args.type_skew:
            name += f"_zipf{args.type_skew:g}"
        if args.groups:
            name += f"_{args.groups}groups"
        if args.group_processes:
            name += f"_processes_{result['cpus']}cpus"
        save_results(name, result)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
        spark.sql(f"drop database if exists {DATABASE} cascade")
    return 0


if __name__ == "__main__":
    sys.exit(main())
