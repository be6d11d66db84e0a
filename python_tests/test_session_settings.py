"""One setting of ANSI mode everywhere: the process's session, a dbt node's session and a
`spark-cdc` command cast the same way (dbt-spark sets spark.sql.ansi.enabled=false on every
target; the runtime does too), whichever entry point created the session and in any order."""

from __future__ import annotations

from support import BIN, command_env, run_command

CAST = "select cast('x' as int) as bad_int, cast('1.5' as int) as rounded"


def test_the_process_session_casts_like_dbt(spark, dbt):
    assert spark.conf.get("spark.sql.ansi.enabled") == "false"
    expected = tuple(spark.sql(CAST).first())
    assert expected == (None, 1)
    shown = dbt("show", "--inline", CAST)
    (node,) = shown.result.results
    assert tuple(node.agate_table.rows[0]) == expected
    assert spark.conf.get("spark.sql.ansi.enabled") == "false"


def test_a_spark_cdc_command_casts_the_same_way(tmp_path):
    env = command_env(tmp_path, SPARK_CDC_TARGET="local")
    done = run_command([str(BIN / "spark-cdc"), "sql", CAST], env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1].split("|")[0].strip() == "NULL"
    assert done.stdout.splitlines()[-1].split("|")[1].strip() == "1"


def test_a_command_leaves_no_hive_session_folder_in_the_temp_folder(tmp_path):
    """Hive's per-session resources folder (by default a new one in the JVM's temp folder per
    session, never removed) is one folder under the home."""
    jvm_temp = tmp_path / "jvm_temp"
    jvm_temp.mkdir()
    home = tmp_path / "home"
    env = command_env(
        home, SPARK_CDC_TARGET="local", JDK_JAVA_OPTIONS=f"-Djava.io.tmpdir={jvm_temp}"
    )
    done = run_command([str(BIN / "spark-cdc"), "sql", "show databases"], env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "default" in done.stdout
    assert not list(jvm_temp.glob("*_resources"))
    assert (home / "hive_resources").is_dir()


def test_the_projects_sessions_keep_deltas_retention_check(spark, tmp_path):
    # A VACUUM under Delta's retention would delete the files RESTORE needs: Delta refuses it
    # unless a session turns its check off, which the project's sessions do not.
    from pyspark.errors import PySparkException

    spark.sql(f"create table delta.`{tmp_path / 'kept'}` using delta as select 1 as id")
    try:
        spark.sql(f"vacuum delta.`{tmp_path / 'kept'}` retain 0 hours")
    except PySparkException as error:
        assert "retentionDurationCheck" in str(error)
    else:
        raise AssertionError("VACUUM RETAIN 0 HOURS was not refused")
