"""The project's YAML is laid out so that `dbt docs` shows every node: one snapshot per file
(dbt docs lists only the first snapshot of a file in its project tree, dbt-labs/dbt-docs#586),
named after the snapshot, each with a description."""

from __future__ import annotations

import json
import re

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


def test_the_docs_site_opens_on_an_overview_naming_only_nodes_that_exist(dbt, dbt_project):
    dbt("parse")
    manifest = json.loads((dbt_project / "target" / "manifest.json").read_text())
    overview = manifest["docs"]["doc.spark_cdc.__overview__"]["block_contents"]
    for capability in ("Snapshots", "Change-event", "Hash-based CDC", "Schema drift"):
        assert capability in overview
    names = {node["name"] for node in manifest["nodes"].values()}
    names |= {f"{s['source_name']}.{s['name']}" for s in manifest["sources"].values()}
    # Every node the overview names in backticks exists (a pattern such as `customers_ts_*` or
    # `change_events__<dataset>_history` stands for several and is checked by its stem).
    named = set(
        re.findall(
            r"`((?:stg|int|hash_cdc|change_events|schema_drift|customers|customer_states|raw)[\w.]*)`",
            overview,
        )
    )
    assert named
    for name in named:
        assert name in names, f"the overview names {name}, which is no node of the project"
