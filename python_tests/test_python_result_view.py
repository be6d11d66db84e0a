"""The sparkcdc incremental materialization keeps an in-process Python model's result as a
temporary view of its session (src/dbt/include/sparkcdc/macros/python_result_view.sql): when
that applies (rendered without Spark) and what the script leaves (run on a real session)."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest
from macro_render import Macros
from support import PROJECT_DIR

ADAPTER_MACROS = PROJECT_DIR / "src" / "dbt" / "include" / "sparkcdc" / "macros"

# Python models whose code dbt compiles for the script (name -> what `model` returns).
RESULTS = {
    "result_view_spark": "spark.createDataFrame([(1, 'a'), (2, 'b')], 'id int, name string')",
    "result_view_pandas": "pandas.DataFrame({'id': [1, 2], 'name': ['a', 'b']})",
    "result_view_rows": "[(1, 'a')]",
}


@pytest.fixture(scope="module")
def compiled(dbt, dbt_project) -> dict[str, str]:
    """dbt's own compiled code of each model in RESULTS (the model, then dbt-core's `dbtObj`
    and helpers), from `dbt compile` of model files added for the time of the compile."""
    folder = dbt_project / "models" / "result_view_check"
    folder.mkdir()
    try:
        for name, returned in RESULTS.items():
            (folder / f"{name}.py").write_text(
                "import pandas\n\n\ndef model(dbt, spark):\n"
                "    dbt.config(materialized='table')\n"
                f"    return {returned}\n"
            )
        dbt("compile", "--select", "result_view_check")
        out = dbt_project / "target" / "compiled" / "spark_cdc" / "models" / "result_view_check"
        return {name: (out / f"{name}.py").read_text() for name in RESULTS}
    finally:
        shutil.rmtree(folder)


def _macros(language: str, method: str, config: dict | None = None) -> Macros:
    return Macros(
        "python_result_view.sql",
        root=ADAPTER_MACROS,
        config=config or {},
        extra={"model": {"language": language}, "target": SimpleNamespace(method=method)},
    )


@pytest.mark.parametrize(
    ("language", "method", "config", "as_view"),
    [
        ("python", "session", {}, True),  # the embedded runtime, a cluster's driver
        ("python", "connect", {}, True),  # the warm engine, a Spark Connect server
        ("python", "session", {"submission_method": "session"}, True),
        # Databricks runs the model on a cluster of its own: dbt-spark's table, as upstream
        ("python", "http", {}, False),
        ("python", "session", {"submission_method": "all_purpose_cluster"}, False),
        ("python", "thrift", {}, False),
        ("sql", "session", {}, False),  # SQL models keep dbt-spark's own temporary view
    ],
)
def test_the_result_is_a_view_only_when_the_model_runs_on_this_session(
    language, method, config, as_view
):
    assert _macros(language, method, config).sparkcdc_python_result_as_view() is as_view


@pytest.mark.parametrize("name", ["result_view_spark", "result_view_pandas"])
def test_the_script_leaves_the_result_as_a_view_of_its_own_session_only(spark, compiled, name):
    script = _macros("python", "session").sparkcdc_py_write_temp_view(
        compiled[name], SimpleNamespace(identifier="orders__dbt_tmp")
    )
    session = spark.newSession()
    exec(compile(script, "<model>", "exec"), {"spark": session})

    rows = session.table("orders__dbt_tmp").orderBy("id").collect()
    assert [(r.id, r.name) for r in rows] == [(1, "a"), (2, "b")]
    (view,) = [t for t in session.catalog.listTables() if t.name == "orders__dbt_tmp"]
    assert view.isTemporary
    # Another session (another dbt connection) does not see it, and the metastore has no table.
    assert not spark.catalog.tableExists("orders__dbt_tmp")
    assert not any(t.name == "orders__dbt_tmp" for t in spark.catalog.listTables("default"))


def test_a_result_that_is_no_dataframe_is_refused_by_name(spark, compiled):
    script = _macros("python", "session").sparkcdc_py_write_temp_view(
        compiled["result_view_rows"], SimpleNamespace(identifier="rows__dbt_tmp")
    )
    session = spark.newSession()
    with pytest.raises(TypeError, match="not list"):
        exec(compile(script, "<model>", "exec"), {"spark": session})
    assert not session.catalog.tableExists("rows__dbt_tmp")
