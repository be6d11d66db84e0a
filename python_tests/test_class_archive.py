"""The JVM class archive: which options the driver gets, and a real session mapping its classes
from the archive the setup step built."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from support import command_env, run_command

from spark_cdc.engine import class_archive_build
from spark_cdc.session import class_archive
from spark_cdc.session.class_archive import DUMP_SETTING, SETTING, archive_key, driver_java_options


@pytest.fixture
def jars(tmp_path: Path) -> list[Path]:
    jar = tmp_path / "delta-spark.jar"
    jar.write_bytes(b"x" * 10)
    return [jar]


@pytest.fixture
def archive_dir(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "archives"
    folder.mkdir()
    monkeypatch.setenv("SPARK_CDC_CLASS_ARCHIVE_DIR", str(folder))
    monkeypatch.delenv(SETTING, raising=False)
    monkeypatch.delenv(DUMP_SETTING, raising=False)
    return folder


def test_no_archive_no_option(archive_dir, jars):
    assert driver_java_options(jars) == []


def test_an_archive_that_is_there_is_mapped_quietly(archive_dir, jars):
    archive = class_archive.archive_file(jars)
    assert archive is not None and archive.parent == archive_dir
    archive.write_bytes(b"")
    options = driver_java_options(jars)
    assert options[0] == f'-XX:SharedArchiveFile="{archive}"'
    assert "-Xlog:cds=off" in options[1]


def test_turned_off_it_is_not_mapped(archive_dir, jars, monkeypatch):
    class_archive.archive_file(jars).write_bytes(b"")
    monkeypatch.setenv(SETTING, "0")
    assert driver_java_options(jars) == []


def test_while_building_the_jvm_writes_it_at_exit(archive_dir, jars, monkeypatch):
    monkeypatch.setenv(DUMP_SETTING, "/tmp/a b/partial.jsa")
    assert driver_java_options(jars)[0] == '-XX:ArchiveClassesAtExit="/tmp/a b/partial.jsa"'


def test_another_virtualenv_gives_another_archive(jars, tmp_path, monkeypatch):
    import pyspark

    java = class_archive.java_binary()
    here = archive_key(java, jars)
    other = tmp_path / "other-venv" / "pyspark" / "__init__.py"
    monkeypatch.setattr(pyspark, "__file__", str(other))
    assert archive_key(java, jars) != here


def test_another_jar_or_java_gives_another_archive(jars, tmp_path):
    java = class_archive.java_binary()
    assert java is not None
    before = archive_key(java, jars)
    jars[0].write_bytes(b"y" * 11)
    assert archive_key(java, jars) != before
    other_java = tmp_path / "java"
    other_java.write_bytes(b"")
    assert archive_key(other_java, jars) != archive_key(java, jars)


def test_the_same_jar_installed_again_gives_another_archive(jars):
    """A virtualenv made again in the same folder: same names and sizes, new modification
    times. The JVM would refuse the old archive, so the key must change."""
    java = class_archive.java_binary()
    before = archive_key(java, jars)
    stat = jars[0].stat()
    os.utime(jars[0], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert jars[0].stat().st_size == 10
    assert archive_key(java, jars) != before


def test_a_session_loads_most_classes_from_the_archive(tmp_path):
    """A new embedded process (as every plain command starts) with the archive the setup step
    built: the JVM's own class-load log says where each class came from."""
    assert class_archive_build.build_archive() is not None
    log = tmp_path / "classes.log"
    script = (
        "from spark_cdc.session.runtime import get_or_create_session\n"
        "spark = get_or_create_session()\n"
        "spark.range(5).write.format('delta').saveAsTable('default.archived')\n"
    )
    env = command_env(tmp_path / "home", JDK_JAVA_OPTIONS=f"-Xlog:class+load=info:file={log}")
    done = run_command([sys.executable, "-c", script], env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = log.read_text().splitlines()
    archived = [line for line in lines if "source: shared objects file (top)" in line]
    # Spark's, Hive's and Delta's classes: the dynamic archive's layer, not the JDK's own.
    assert len(archived) > 10_000, len(archived)
    assert any("org.apache.spark.sql.delta." in line for line in archived)
    assert any("org.apache.spark.sql.SparkSession " in line for line in archived)


def test_archives_no_jvm_opened_for_a_month_are_removed(tmp_path):
    old, recent, current = (tmp_path / f"spark-{name}.jsa" for name in ("old", "recent", "now"))
    for archive in (old, recent, current):
        archive.write_bytes(b"")
    month_ago = time.time() - 31 * 86_400
    os.utime(old, (month_ago, month_ago))
    os.utime(current, (month_ago, month_ago))  # the one in use is kept whatever its times
    os.utime(recent, (time.time() - 86_400, month_ago))  # opened yesterday
    assert class_archive_build.prune_stale(tmp_path, keep=current) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spark-now.jsa", "spark-recent.jsa"]


def test_a_new_archive_replaces_those_of_the_same_virtualenv_folder(tmp_path):
    current = tmp_path / "spark-aaaa1111-newkey.jsa"
    replaced = tmp_path / "spark-aaaa1111-oldkey.jsa"
    other_venv = tmp_path / "spark-bbbb2222-oldkey.jsa"
    for archive in (current, replaced, other_venv):
        archive.write_bytes(b"")
    assert class_archive_build.prune_replaced(current) == [replaced]
    assert sorted(p.name for p in tmp_path.iterdir()) == [current.name, other_venv.name]


def test_the_archive_is_named_after_its_virtualenv_folder_then_its_key(archive_dir, jars):
    archive = class_archive.archive_file(jars)
    tag, key = archive.stem.split("-")[1:]
    assert tag == class_archive.install_tag() and len(tag) == 8
    assert key == archive_key(class_archive.java_binary(), jars)


@pytest.mark.parametrize("failure", ["timeout", "crash"])
def test_make_setup_goes_on_when_the_archive_cannot_be_built(tmp_path, failure):
    """A speed-up never fails the set-up: the archive's build forced to time out (its JVM is
    stopped with it) or to fail ends `make setup` with rc 0 and one warning line; the next
    setup tries again."""
    import psutil

    folder = tmp_path / "archives"
    extra = {"SPARK_CDC_CLASS_ARCHIVE_DIR": str(folder)}
    if failure == "timeout":
        extra["SPARK_CDC_CLASS_ARCHIVE_TIMEOUT"] = "3"
    else:
        # the child's JVM cannot start: its java options name a file that is not an archive
        extra["JDK_JAVA_OPTIONS"] = (
            "-XX:SharedArchiveFile=/nonexistent/none.jsa -XX:+RequireSharedSpaces"
        )
    env = command_env(tmp_path / "home", **extra)
    done = run_command(["make", "--no-print-directory", "setup"], env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, done.stderr
    assert "class archive" in warnings[0]
    assert not any(folder.glob("*.jsa")) and not any(folder.glob(".*.partial"))
    # nothing of the build is left running
    leftovers = [
        process.pid
        for process in psutil.process_iter(["cmdline"])
        if any(str(folder) in part for part in (process.info["cmdline"] or ()))
    ]
    assert leftovers == []
