"""The suite's own JVM options (conftest.py): the test process's JVM keeps C2 with a raised
threshold whatever path launched it; the processes the tests start compile with C1 only."""

from __future__ import annotations

import os


def test_the_test_process_jvm_keeps_c2_and_started_processes_get_c1(spark):
    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    arguments = list(runtime.getInputArguments())
    assert "-XX:CompileThresholdScaling=3" in arguments
    assert "-XX:TieredStopAtLevel=1" not in arguments
    inherited = os.environ["SPARK_SUBMIT_OPTS"].split()
    assert "-XX:TieredStopAtLevel=1" in inherited
    assert "-XX:CompileThresholdScaling=3" not in inherited
