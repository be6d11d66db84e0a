"""Start-up cost of the embedded runtime, measured against a bare SparkSession in the same run.

Three measurements, each a fresh process (so each pays a JVM start), repeated ``--repeat`` times:

1. bare: ``SparkSession.builder.master('local[2]').getOrCreate()`` and one tiny query;
2. runtime: the project session (Delta + Derby-backed Hive metastore) and its first catalog query;
3. dbt build: ``dbt build`` of the seed, snapshot, SQL view and Python model on the local target.

Reports each median and the ratios to the bare start.  Usage: ``python benchmarks/bench_startup.py``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results, timed_subprocess

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

BARE = (
    "from pyspark.sql import SparkSession\n"
    "s = SparkSession.builder.master('local[2]').config('spark.ui.enabled', 'false')"
    ".getOrCreate()\n"
    "s.range(10).count()\n"
)
RUNTIME = (
    "from spark_cdc.session.runtime import get_or_create_session\n"
    "s = get_or_create_session()\n"
    "s.sql('show databases').collect()\n"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each measurement")
    args = parser.parse_args()

    figures: dict[str, list[float]] = {"bare_session_s": [], "runtime_first_query_s": []}
    figures["dbt_build_s"] = []
    for attempt in range(args.repeat):
        home = Path(tempfile.mkdtemp(prefix="bench_startup_"))
        env = dict(os.environ, SPARK_CDC_HOME=str(home), DBT_PROFILES_DIR=str(PROJECT / "profiles"))
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        try:
            python = str(BIN / "python")
            figures["bare_session_s"].append(timed_subprocess([python, "-c", BARE], env, home))
            figures["runtime_first_query_s"].append(
                timed_subprocess([python, "-c", RUNTIME], env, home)
            )
            build = [
                "dbt",
                "build",
                "--project-dir",
                str(PROJECT),
                "--target-path",
                str(home / "t"),
            ]
            figures["dbt_build_s"].append(timed_subprocess(build, env, PROJECT))
        finally:
            shutil.rmtree(home, ignore_errors=True)
        print(f"run {attempt + 1}: " + ", ".join(f"{k}={v[-1]:.1f}" for k, v in figures.items()))

    medians = {name: statistics.median(values) for name, values in figures.items()}
    bare = medians["bare_session_s"]
    report = {
        "medians_s": medians,
        "runs": figures,
        "ratio_runtime_to_bare": medians["runtime_first_query_s"] / bare,
        "ratio_dbt_build_to_bare": medians["dbt_build_s"] / bare,
    }
    for name, value in medians.items():
        print(f"{name:>24}: {value:6.1f} s")
    print(f"{'runtime / bare':>24}: {report['ratio_runtime_to_bare']:6.2f}x")
    print(f"{'dbt build / bare':>24}: {report['ratio_dbt_build_to_bare']:6.2f}x")
    save_results("startup", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
