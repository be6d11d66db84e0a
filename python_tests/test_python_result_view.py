"""The sparkcdc incremental materialization keeps an in-process Python model's result as a
temporary view of its session (src/dbt/include/sparkcdc/macros/python_result_view.sql): when
that applies (rendered without Spark) and what the script leaves (run on a real session)."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pandas
import pytest
from macro_render import Macros
from support import PROJECT_DIR

ADAPTER_MACROS = PROJECT_DIR / "src" / "dbt" / "include" / "sparkcdc" / "macros"

# What dbt-spark compiles around a model's code: the model, then a `dbtObj` (reduced here to
# what the script calls).
COMPILED = """
{model}

class dbtObj:
    def __init__(self, load_df_function):
        self.load_df_function = load_df_function
"""


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


@pytest.mark.parametrize(
    "returned",
    [
        "spark.createDataFrame([(1, 'a'), (2, 'b')], 'id int, name string')",
        "pandas.DataFrame({'id': [1, 2], 'name': ['a', 'b']})",
    ],
    ids=["spark", "pandas"],
)
def test_the_script_leaves_the_result_as_a_view_of_its_own_session_only(spark, returned):
    model = textwrap.dedent(
        f"""
        import pandas

        def model(dbt, spark):
            return {returned}
        """
    )
    script = _macros("python", "session").sparkcdc_py_write_temp_view(
        COMPILED.format(model=model), SimpleNamespace(identifier="orders__dbt_tmp")
    )
    session = spark.newSession()
    exec(compile(script, "<model>", "exec"), {"spark": session, "pandas": pandas})

    rows = session.table("orders__dbt_tmp").orderBy("id").collect()
    assert [(r.id, r.name) for r in rows] == [(1, "a"), (2, "b")]
    (view,) = [t for t in session.catalog.listTables() if t.name == "orders__dbt_tmp"]
    assert view.isTemporary
    # Another session (another dbt connection) does not see it, and the metastore has no table.
    assert not spark.catalog.tableExists("orders__dbt_tmp")
    assert not any(t.name == "orders__dbt_tmp" for t in spark.catalog.listTables("default"))


def test_a_result_that_is_no_dataframe_is_refused_by_name(spark):
    model = "def model(dbt, spark):\n    return [(1, 'a')]\n"
    script = _macros("python", "session").sparkcdc_py_write_temp_view(
        COMPILED.format(model=model), SimpleNamespace(identifier="rows__dbt_tmp")
    )
    session = spark.newSession()
    with pytest.raises(TypeError, match="not list"):
        exec(compile(script, "<model>", "exec"), {"spark": session})
    assert not session.catalog.tableExists("rows__dbt_tmp")
