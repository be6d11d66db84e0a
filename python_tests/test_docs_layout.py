"""The project's YAML is laid out so that `dbt docs` shows every node: one snapshot per file
(dbt docs lists only the first snapshot of a file in its project tree, dbt-labs/dbt-docs#586),
named after the snapshot, each with a description."""

from __future__ import annotations

import yaml
from support import PROJECT_DIR

SNAPSHOTS = PROJECT_DIR / "snapshots"


def test_each_snapshot_has_a_yaml_file_of_its_own_named_after_it():
    files = sorted(SNAPSHOTS.glob("*.yml"))
    assert files
    for path in files:
        defined = yaml.safe_load(path.read_text()).get("snapshots") or []
        assert [entry["name"] for entry in defined] == [path.stem], path.name
        assert defined[0].get("description"), path.name


def test_no_snapshot_is_defined_in_sql_beside_the_yaml_ones():
    # A legacy `{% snapshot %}` block would add a snapshot that the files above do not name.
    assert not list(SNAPSHOTS.rglob("*.sql"))
