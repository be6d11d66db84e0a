"""Helpers shared by the benchmark scripts: timing, peak memory, machine facts, result files."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def machine_facts() -> dict[str, Any]:
    """CPU count, memory and versions of the machine the figures come from."""
    import pyspark

    mem_kib = 0
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "java": subprocess.run(
            ["java", "-version"], capture_output=True, text=True, check=False
        ).stderr.splitlines()[0],
    }


def timed_subprocess(command: Sequence[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of a command; raises with its output when it fails."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def timed_subprocess_peak(
    command: Sequence[str], env: dict[str, str], cwd: Path, every: float = 0.1
) -> tuple[float, float]:
    """Wall seconds of a command and the peak resident memory of its process tree (the
    command and every process it started, summed, sampled every ``every`` s), MiB; raises with
    its output when it fails."""
    import psutil

    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    root, peak = psutil.Process(process.pid), 0
    outputs: list[str] = []
    reader = threading.Thread(target=lambda: outputs.extend(process.communicate()))
    reader.start()
    while reader.is_alive():
        total = 0
        with contextlib.suppress(psutil.Error):
            for member in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += member.memory_info().rss
        peak = max(peak, total)
        reader.join(every)
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        stdout, stderr = [*outputs, "", ""][:2]
        raise RuntimeError(f"{command} failed:\n{stdout[-3000:]}\n{stderr[-3000:]}")
    return elapsed, peak / 1024 / 1024


def process_peak_rss_mib(pid: int) -> float:
    """Peak resident memory (VmHWM) of a running process, MiB (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mib() -> float:
    """Peak resident memory of this process (the Python driver side), MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def jvm_peak_rss_mib(spark: Any) -> float:
    """Peak resident memory of the Spark driver JVM (VmHWM of its process), MiB."""
    return process_peak_rss_mib(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def _commit() -> str | None:
    """The project's checked-out commit (short), None outside a git checkout."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=RESULTS_DIR.parent,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def save_results(name: str, payload: dict[str, Any]) -> Path:
    """Write the figures of one benchmark run as JSON under benchmarks/results/."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    facts = {"machine": machine_facts(), "commit": _commit()}
    path.write_text(json.dumps({**facts, **payload}, indent=2))
    print(f"results written to {path}", file=sys.stderr)
    return path


def reset_peak(pid: int) -> None:
    """Reset the peak resident memory (VmHWM) of a process."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_mib(pid: int) -> float:
    """Peak resident memory (VmHWM) of a process since its last reset, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(action: Callable[[], object], pid: int) -> tuple[float, float]:
    """Wall seconds of ``action`` and the peak resident memory (MiB) of ``pid`` during it."""
    reset_peak(pid)
    started = time.perf_counter()
    action()
    return time.perf_counter() - started, peak_mib(pid)
