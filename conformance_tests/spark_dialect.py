"""dbt's conformance fixtures in Spark SQL.

dbt-tests-adapter writes its set-up SQL (``project.run_sql``) and some project files in the
dialect of Postgres, and each adapter's repository rewrites what its database does not take.
Here one rewrite covers them all, kept to what differs in syntax, never to what a test checks:
a two-part ``{database}.{schema}`` name (Spark's catalog takes one namespace), ``x::type``
casts, the ``TEXT`` and ``TIMESTAMP WITHOUT TIME ZONE`` types, several statements in one string
(Spark runs one at a time), and ``ALTER TABLE ... ADD COLUMN ... DEFAULT v``, which Delta
refuses on an existing table: the column is added, then set to ``v`` in every row it has, which
is what the statement does on Postgres.
"""

from __future__ import annotations

import re

_TWO_PART_NAME = re.compile(r"\{database\}\.\{schema\}")
_JINJA_TWO_PART_NAME = re.compile(r"\{\{\s*target\.database\s*\}\}\.(\{\{\s*target\.schema\s*\}\})")
_CAST = re.compile(r"([\w.]+)::(\w+)")
_TEXT_TYPE = re.compile(r"\bTEXT\b")
_ZONELESS_TIMESTAMP = re.compile(r"\bTIMESTAMP WITHOUT TIME ZONE\b", re.IGNORECASE)
_ADD_COLUMN_WITH_DEFAULT = re.compile(
    r"alter\s+table\s+(?P<table>\S+)\s+add\s+column\s+(?P<column>\w+)\s+(?P<type>[\w()]+)"
    r"\s+default\s+(?P<default>.+)",
    re.IGNORECASE | re.DOTALL,
)
_STATEMENT_END = re.compile(r";[ \t]*(?:\n|$)")
_COMMENT_LINE = re.compile(r"^\s*--.*$", re.MULTILINE)


def _spark_type(name: str) -> str:
    return "string" if name.lower() == "text" else name


def spark_statements(sql: str) -> list[str]:
    """The Spark SQL statements that do what ``sql`` (dbt's fixture SQL) does, in order."""
    sql = _TWO_PART_NAME.sub("{schema}", sql)
    sql = _CAST.sub(lambda m: f"cast({m.group(1)} as {_spark_type(m.group(2))})", sql)
    sql = _TEXT_TYPE.sub("STRING", sql)
    sql = _ZONELESS_TIMESTAMP.sub("TIMESTAMP", sql)
    statements: list[str] = []
    for part in _STATEMENT_END.split(sql):
        if not _COMMENT_LINE.sub("", part).strip():
            continue
        added = _ADD_COLUMN_WITH_DEFAULT.fullmatch(part.strip().rstrip(";").strip())
        if added:
            table, column = added["table"], added["column"]
            statements.append(f"alter table {table} add column {column} {added['type']}")
            statements.append(f"update {table} set {column} = {added['default'].strip()}")
        else:
            statements.append(part.strip().rstrip(";"))
    return statements


def spark_project_file(text: str) -> str:
    """A project file of dbt's fixtures (model, snapshot, YAML) with one-namespace names."""
    return _JINJA_TWO_PART_NAME.sub(r"\1", text)
