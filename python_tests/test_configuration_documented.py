"""Every environment variable, dbt var and project config the code reads is in
docs/configuration.md (found by reading the code, not from a list kept beside it)."""

from __future__ import annotations

import re

from support import PROJECT_DIR

PAGE = PROJECT_DIR / "docs" / "configuration.md"
SOURCES = ("src", "macros", "models", "snapshots", "profiles", "scripts", "tests")
# dbt's own configs that the project's macros read too: dbt and dbt-spark document them.
DBT_CONFIGS = {
    "check_cols",
    "dbt_valid_to_current",
    "file_format",
    "grants",
    "incremental_predicates",
    "incremental_strategy",
    "merge_exclude_columns",
    "merge_update_columns",
    "meta",
    "on_schema_change",
    "partition_by",
    "predicates",
    "snapshot_table_column_names",
    "strategy",
    "submission_method",
    "unique_key",
    "where",
}


def _code() -> str:
    texts = []
    for folder in SOURCES:
        for path in (PROJECT_DIR / folder).rglob("*"):
            if path.suffix in {".py", ".sql", ".yml", ".sh", ".j2"} and path.is_file():
                texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


def _documented() -> set[str]:
    return set(re.findall(r"^\| `([\w.]+)` \|", PAGE.read_text(), re.MULTILINE))


def test_every_environment_variable_read_is_documented():
    read = set(re.findall(r"\bSPARK_CDC_[A-Z_]*[A-Z]\b", _code()))
    assert len(read) >= 20
    assert read - _documented() == set()


def test_every_dbt_var_read_is_documented():
    read = set(re.findall(r"\bvar\(\s*'(\w+)'", _code()))
    assert {"default_high_dttm", "spark_cdc_full_audit"} <= read
    assert read - _documented() == set()


def test_every_project_config_read_is_documented():
    read = set(re.findall(r"\bconfig\.get\(\s*'(\w+)'", _code())) - DBT_CONFIGS
    assert {"snapshot_check_unique_keys", "merge_replace_from"} <= read
    assert read - _documented() == set()
