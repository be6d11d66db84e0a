"""What each SQL statement of a logged Spark application read: where a run's reads go.

Usage: ``python benchmarks/reads_per_statement.py LOG_DIR [N] [--min-records R]``: the N-th
application (1 = the first started; default: the last) of an event-log folder, such as a
benchmark case's ``event_logs`` (benchmarks/bench_increments.py), one line per statement that
read at least R records (default 1000): records, bytes, shuffle bytes written, jobs, its top
operator and its description (the call site, or dbt's statement).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _event_log import application_parts, reads_per_statement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("application", type=int, nargs="?", default=0)
    parser.add_argument("--min-records", type=int, default=1000)
    args = parser.parse_args(argv)
    applications = list(application_parts(args.log_dir).items())
    if not applications:
        print(f"no application logged in {args.log_dir}", file=sys.stderr)
        return 1
    app_id, parts = applications[args.application - 1 if args.application else -1]
    statements = reads_per_statement(parts)
    print(f"{app_id}: {len(statements)} statements")
    print(f"{'records':>10} {'MB read':>8} {'MB shuf':>8} {'jobs':>5}  operator / description")
    total = 0
    for statement in statements:
        reads = statement.reads
        total += reads.records_read
        if reads.records_read < args.min_records:
            continue
        print(
            f"{reads.records_read:>10,} {reads.bytes_read / 1e6:>8.1f} "
            f"{reads.shuffle_bytes_written / 1e6:>8.1f} {reads.jobs:>5}  "
            f"{statement.operator} / {statement.description}"
        )
    print(f"{total:>10,} records read in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
