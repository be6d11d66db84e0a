"""dbt runs in-process (dbtRunner) on the shared session: seed, snapshot, Python model, docs;
then the docs site itself, served by `dbt docs serve` and read in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import free_port, wait_for_port
from support import BIN, command_env, module_schema

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

# The seed and the tables built from it hold the five customers of seeds/raw_customers.csv.
RAW_CUSTOMERS = 5


@pytest.fixture(scope="module")
def docs_target(spark, dbt, dbt_project: Path) -> Path:
    """The project's target/ after a seed, a view, a snapshot, a Python model and
    `dbt docs generate`."""
    dbt("seed", "--select", "raw_customers")
    dbt("run", "--select", "stg_customers")
    dbt("snapshot", "--select", "customers_snapshot")
    dbt("run", "--select", "customers_by_segment")
    # A rerun replaces the Python model's table: its metastore entry then lists its columns, and
    # dbt-spark reads its catalog entry from that listing instead of `describe extended`.
    dbt("run", "--select", "customers_by_segment")
    dbt("docs", "generate")
    return dbt_project / "target"


def test_seed_snapshot_python_model_and_docs(spark, docs_target: Path):
    snapshot = spark.table(f"{MODULE_SCHEMA}.customers_snapshot")
    assert snapshot.count() == RAW_CUSTOMERS
    assert snapshot.where("dbt_valid_to is null").count() == RAW_CUSTOMERS
    by_segment = {
        r.segment: r.customer_count
        for r in spark.table(f"{MODULE_SCHEMA}.customers_by_segment").collect()
    }
    assert by_segment == {"retail": 3, "corporate": 2}
    provider = [
        r.data_type
        for r in spark.sql(f"describe extended {MODULE_SCHEMA}.customers_snapshot").collect()
        if r.col_name == "Provider"
    ]
    assert provider == ["delta"]

    catalog = json.loads((docs_target / "catalog.json").read_text())
    assert "snapshot.spark_cdc.customers_snapshot" in catalog["nodes"]
    manifest = json.loads((docs_target / "manifest.json").read_text())
    # customers_snapshot reads the staged customers (no dead-end staging model).
    assert manifest["nodes"]["snapshot.spark_cdc.customers_snapshot"]["depends_on"]["nodes"] == [
        "model.spark_cdc.stg_customers"
    ]
    assert "model.spark_cdc.customers_by_segment" in catalog["nodes"]

    # Every column of every node the catalog lists is described (docs site): the manifest's
    # description of the node's column, by name whatever its case.
    undescribed = [
        f"{unique_id}.{column}"
        for unique_id, node in catalog["nodes"].items()
        for column in node["columns"]
        if not {
            name.lower(): entry.get("description", "").strip()
            for name, entry in manifest["nodes"][unique_id]["columns"].items()
        }.get(column.lower())
    ]
    assert undescribed == []


def test_the_catalog_shows_the_row_counts_of_delta_tables(spark, docs_target: Path):
    catalog = json.loads((docs_target / "catalog.json").read_text())["nodes"]

    def rows(unique_id: str) -> int | None:
        stats = catalog[unique_id]["stats"]
        return stats["rows"]["value"] if "rows" in stats else None

    # Counted by Spark here, independently of the catalog's listing.
    segments = spark.table(f"{MODULE_SCHEMA}.customers_by_segment").count()
    assert rows("seed.spark_cdc.raw_customers") == RAW_CUSTOMERS
    assert rows("snapshot.spark_cdc.customers_snapshot") == RAW_CUSTOMERS
    assert rows("model.spark_cdc.customers_by_segment") == segments == 2
    # Sizes are those of the tables' current files (Delta's own figure), for a table the catalog
    # reads through `describe extended` (the snapshot) and one it reads from the listing (the
    # Python model's, replaced once: the metastore there counts old files too).
    for unique_id in (
        "snapshot.spark_cdc.customers_snapshot",
        "model.spark_cdc.customers_by_segment",
    ):
        name = unique_id.rsplit(".", 1)[1]
        size = spark.sql(f"describe detail {MODULE_SCHEMA}.{name}").first().sizeInBytes
        assert catalog[unique_id]["stats"]["bytes"]["value"] == size > 0
    # A view has no statistics line: no row count is made up for it.
    assert rows("model.spark_cdc.stg_customers") is None


@pytest.fixture(scope="module")
def docs_site(dbt_project: Path, docs_target: Path) -> Iterator[str]:
    """`dbt docs serve` of the generated site, on a free loopback port."""
    port = free_port()
    server = subprocess.Popen(
        [
            str(BIN / "dbt"),
            "docs",
            "serve",
            "--no-browser",
            "--project-dir",
            str(dbt_project),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=dbt_project,
        env=command_env(profiles=dbt_project / "profiles", SPARK_CDC_TARGET="local"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, timeout=60)
        yield f"http://127.0.0.1:{port}/index.html"
    finally:
        server.terminate()
        server.wait(timeout=30)


def chromium_path() -> str:
    """Debian's Chromium (or SPARK_CDC_CHROMIUM). Without one the browser tier is reported as
    not run, unless SPARK_CDC_REQUIRE_BROWSER=1 (CI) makes that a failure."""
    found = os.environ.get("SPARK_CDC_CHROMIUM") or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    missing = "no Chromium: the browser tier did not run (apt-get install chromium as root)"
    if not found and os.environ.get("SPARK_CDC_REQUIRE_BROWSER") != "1":
        pytest.skip(missing)
    assert found, missing
    return found


# Chromium as root, on a machine without a display or outside network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_the_docs_site_in_a_browser(docs_site: str, docs_target: Path, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    manifest = json.loads((docs_target / "manifest.json").read_text())
    snapshots = sorted(
        n["name"] for n in manifest["nodes"].values() if n["resource_type"] == "snapshot"
    )
    assert len(snapshots) == 7
    overview = manifest["docs"]["doc.spark_cdc.__overview__"]["block_contents"]
    overview_heading = re.search(r"^## (.+)$", overview, re.MULTILINE).group(1)
    shots = Path(os.environ.get("SPARK_CDC_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})

        # The front page is the project's overview, not dbt's default "Welcome!".
        page.goto(docs_site)
        page.wait_for_load_state("networkidle")
        assert page.url.endswith("#!/overview")
        main = page.locator("div.app-body[ui-view]").inner_text()
        assert overview_heading in main
        assert "Welcome!" not in main
        page.screenshot(path=shots / "docs-overview.png")

        # Every snapshot has its own entry in the Project tree (one YAML file per snapshot).
        for folder in ("spark_cdc", "snapshots"):
            page.locator("span.filename:visible", has_text=re.compile(rf"^\s*{folder}\s*$")).click()
        tree = {
            re.sub(r"\s+", "", text)
            for text in page.locator("span.filename:visible").all_inner_texts()
        }
        assert set(snapshots) <= tree, set(snapshots) - tree

        # A snapshot's page lists its columns with their descriptions.
        page.goto(f"{docs_site}#!/snapshot/snapshot.spark_cdc.customers_ts_invalidate")
        page.wait_for_load_state("networkidle")
        page.locator("text=dbt_insert_process_id").first.wait_for()
        page.screenshot(path=shots / "docs-snapshot.png")
        columns = manifest["nodes"]["snapshot.spark_cdc.customers_ts_invalidate"]["columns"]
        shown = page.locator("table").first.inner_text()
        assert columns["dbt_close_process_id"]["description"].split(".")[0] in shown

        # A model's columns with their descriptions, in the page's column table.
        page.goto(f"{docs_site}#!/model/model.spark_cdc.customers_by_segment")
        page.wait_for_load_state("networkidle")
        page.locator("text=customer_count").first.wait_for()
        shown = page.locator("table").first.inner_text()
        model_columns = manifest["nodes"]["model.spark_cdc.customers_by_segment"]["columns"]
        for name, column in model_columns.items():
            assert name in shown and column["description"] in shown

        # The lineage graph (cytoscape, drawn on a canvas: its nodes are read from the graph).
        page.goto(docs_site)
        page.wait_for_load_state("networkidle")
        page.locator("[ng-click='onLauncherClick()']").first.click()
        page.wait_for_function("() => document.querySelector('#cy')?._cyreg?.cy?.nodes().length")
        page.wait_for_timeout(1500)
        page.screenshot(path=shots / "docs-lineage.png")
        graph = set(
            page.evaluate("() => document.querySelector('#cy')._cyreg.cy.nodes().map(n => n.id())")
        )
        browser.close()

    expected = {
        unique_id
        for unique_id, node in {**manifest["nodes"], **manifest["sources"]}.items()
        if node["package_name"] == "spark_cdc"
        and node["resource_type"] in {"model", "snapshot", "seed", "source"}
    }
    assert expected <= graph, sorted(expected - graph)
    assert len(manifest["exposures"]) >= 5 and set(manifest["exposures"]) <= graph
    assert {"stg_customers", "customers_snapshot"} <= {i.rsplit(".", 1)[1] for i in graph}
    # No dead end: every model, snapshot and seed of the project feeds another node or an
    # exposure (a data test alone does not count).
    dead_ends = [
        unique_id
        for unique_id in expected
        if not unique_id.startswith("source.")
        and not [c for c in manifest["child_map"][unique_id] if not c.startswith("test.")]
    ]
    assert dead_ends == []
