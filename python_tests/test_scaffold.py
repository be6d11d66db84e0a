"""``spark-cdc add``: the demo's per-source files are exactly what it writes, its output lints,
and what it refuses it refuses with one clear line, writing nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from support import BIN, PROJECT_DIR

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.scaffold.names import SIMPLE_TYPES

CAPABILITY_FOLDERS = ("change_events", "hash_cdc", "schema_drift")


def _project(root: Path, name: str = "team_lake") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(
        f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"
    )
    return root


def _spark_cdc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "spark-cdc"), *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def _files(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text()
        for folder in CAPABILITY_FOLDERS
        for path in sorted((root / "models").glob(f"*/{folder}/*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A project holding what scripts/demo_sources.sh writes."""
    project = _project(tmp_path_factory.mktemp("demo") / "demo")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    subprocess.run(
        ["bash", str(PROJECT_DIR / "scripts" / "demo_sources.sh"), "--project-dir", str(project)],
        check=True,
        capture_output=True,
        env=env,
    )
    return project


def test_the_demo_sources_are_what_spark_cdc_add_writes(demo):
    generated, committed = _files(demo), _files(PROJECT_DIR)
    assert sorted(generated) == sorted(committed)
    for path, text in generated.items():
        assert committed[path] == text, f"{path} differs from what spark-cdc add writes"
    # customers 8 (with existing rows), accounts 7, synthetic 7 (with sensitive columns),
    # inventory 6, events 7
    assert len(generated) == 35


def test_the_output_lints_and_parses_as_python(tmp_path):
    project = _project(tmp_path / "team_lake")
    adds = [
        ["change-events", "orders", "--key=region", "--key=order_no", "--column=region:string",
         "--column=order_no:bigint", "--column=total:decimal(12,2)", "--column=placed:timestamp",
         "--debezium", "--allowed-lateness=6 hours"],
        ["change-events", "payments", "--key=payment_id", "--column=payment_id:long",
         "--column=paid:boolean", "--initial-rows", "--evolve-columns", "--ignore-null-updates",
         "--except-column=card_number", "--except-column=Raw Payload"],
        ["change-events", "shipments", "--key=id", "--column=id:long", "--column=state:string",
         "--sequence-by=file_no", "--sequence-by=line_no", "--track-history=state"],
        ["change-events", "stock", "--key=sku", "--column=sku:string", "--column=units:int",
         "--initial-rows", "--stored-as-scd-type=1"],
        ["hash-cdc", "products", "--key=sku:string", "--nonkey=price:double",
         "--nonkey=launched:date", "--sensitive=cost:decimal(10,2)", "--mode=delta",
         "--format=parquet"],
        ["schema-drift", "clicks", "--event-group=cart=cart_*,order_*", "--event-group=rest=*"],
    ]  # fmt: skip
    said = {}
    for words in adds:
        done = _spark_cdc("add", *words, cwd=project)
        assert done.returncode == 0, done.stderr
        assert "next:" in done.stdout
        said[words[0]] = done.stdout
    # each says where its data lands, the hash-CDC dataset as the JSON feed does
    assert (
        "put the extract of a date under $SPARK_CDC_HOME/landing/products/<YYYY-MM-DD>/ "
        "(parquet) (the var hash_cdc_landing_root sets another root)"
    ) in said["hash-cdc"]
    assert "$SPARK_CDC_HOME/landing/schema_drift/clicks unless set" in said["schema-drift"]
    python = sorted(str(p) for p in project.rglob("*.py"))
    sql = sorted(str(p) for p in project.rglob("*.sql"))
    # 3 Python models of each source but the current-only one (2: no history)
    assert len(python) == 17 and len(sql) == 20
    ruff = [str(BIN / "ruff"), "--config", str(PROJECT_DIR / "pyproject.toml")]
    for check in (["check", *python], ["format", "--check", *python]):
        linted = subprocess.run([*ruff, *check], capture_output=True, text=True, check=False)
        assert linted.returncode == 0, linted.stdout + linted.stderr
    sqlfluff = subprocess.run(
        [str(BIN / "sqlfluff"), "lint", "--config", str(PROJECT_DIR / ".sqlfluff"), *sql],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert sqlfluff.returncode == 0, sqlfluff.stdout + sqlfluff.stderr
    orders = yaml.safe_load(
        (project / "models/staging/change_events/_change_events__orders.yml").read_text()
    )
    (staging,) = orders["models"][:1]
    block = staging["config"]["meta"]["change_events"]
    assert block["columns"] == {
        "region": "string",
        "order_no": "bigint",
        "total": "decimal(12,2)",
        "placed": "timestamp",
    }
    assert block["key_columns"] == ["region", "order_no"]
    assert block["allowed_lateness"] == "6 hours"
    assert "ignore_null_updates" not in block  # only written when asked for
    payments = yaml.safe_load(
        (project / "models/staging/change_events/_change_events__payments.yml").read_text()
    )
    settings = payments["models"][0]["config"]["meta"]["change_events"]
    assert settings["ignore_null_updates"] is True
    assert SourceConfig.from_mapping("payments", settings).ignore_null_updates
    assert settings["except_columns"] == ["card_number", "Raw Payload"]
    assert SourceConfig.from_mapping("payments", settings).except_columns == (
        "card_number",
        "Raw Payload",
    )
    assert "except_columns" not in block
    refused = _spark_cdc(
        "add", "change-events", "refunds", "--key=id", "--column=id:long",
        "--column=reason:string", "--except-column=REASON", cwd=project,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "--except-column names a declared --column: REASON" in refused.stderr
    shipments = yaml.safe_load(
        (project / "models/staging/change_events/_change_events__shipments.yml").read_text()
    )
    settings = shipments["models"][0]["config"]["meta"]["change_events"]
    assert settings["sequence_by"] == ["file_no", "line_no"]
    assert SourceConfig.from_mapping("shipments", settings).sequence_by == ("file_no", "line_no")
    staging = (
        project / "models/staging/change_events/stg_change_events__shipments.sql"
    ).read_text()
    assert "    file_no,\n    line_no\nfrom" in staging
    refused = _spark_cdc(
        "add", "change-events", "parcels", "--key=id", "--column=id:long", "--debezium",
        "--sequence-by=file_no", cwd=project,
    )  # fmt: skip
    assert refused.returncode != 0 and "--sequence-by is for feeds of events" in refused.stderr
    stock = yaml.safe_load(
        (project / "models/staging/change_events/_change_events__stock.yml").read_text()
    )
    settings = stock["models"][0]["config"]["meta"]["change_events"]
    assert SourceConfig.from_mapping("stock", settings).stored_as_scd_type == 1
    assert "stored_as_scd_type" not in block  # only written when asked for
    assert "change_events__stock_history" not in {m["name"] for m in stock["models"]}
    assert not list(project.rglob("change_events__stock_history.py"))
    current = (project / "models/marts/change_events/change_events__stock_current.py").read_text()
    assert "change_events.current_only(dbt, session, meta, ledger, initial)" in current
    products = yaml.safe_load(
        (project / "models/staging/hash_cdc/_hash_cdc__products.yml").read_text()
    )
    dataset = products["models"][0]["config"]["meta"]["hash_cdc"]
    assert dataset["key_columns"] == {"sku": "string"}
    assert dataset["nonkey_columns"] == {"price": "double", "launched": "date"}
    assert dataset["sensitive_columns"] == {"cost": "decimal(10,2)"}
    clicks = yaml.safe_load(
        (project / "models/staging/schema_drift/_schema_drift__clicks.yml").read_text()
    )
    feed = clicks["models"][0]["config"]["meta"]["schema_drift"]
    assert feed["event_groups"] == {"cart": ["cart_*", "order_*"], "rest": ["*"]}
    assert list(feed["event_groups"]) == ["cart", "rest"]  # in the order given


# Every type spelling `spark-cdc add` takes (docs/use-in-your-project.md), as given -> as written.
SPARK_TYPES = {
    **{name: name for name in SIMPLE_TYPES.values()},
    "Integer": "int", "LONG": "bigint", "decimal(12,2)": "decimal(12,2)",
    "decimal(38, 0)": "decimal(38,0)", "DECIMAL( 5 ,5 )": "decimal(5,5)",
}  # fmt: skip


def test_every_spark_type_spelling_reads_back_from_the_yaml_as_given(tmp_path):
    project = _project(tmp_path / "types_lake")
    given = {f"c{number}": kind for number, kind in enumerate(SPARK_TYPES)}
    words = ["change-events", "typed", "--key=c0"]
    words += [f"--column={name}:{kind}" for name, kind in given.items()]
    done = _spark_cdc("add", *words, cwd=project)
    assert done.returncode == 0, done.stderr
    typed = yaml.safe_load(
        (project / "models/staging/change_events/_change_events__typed.yml").read_text()
    )
    written = typed["models"][0]["config"]["meta"]["change_events"]["columns"]
    assert written == {name: SPARK_TYPES[kind] for name, kind in given.items()}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


ORDERS = ["change-events", "orders", "--key=id", "--column=id:int"]
REFUSALS = [
    (["change-events", "customers", "--key=id", "--column=id:int"], "exists already"),
    (["change-events", "Orders", *ORDERS[2:]], "name 'Orders' is not usable"),
    (["change-events", "a__b", *ORDERS[2:]], "name 'a__b' is not usable"),
    ([*ORDERS[:3], "--column=id:varchar2"], "unknown type 'varchar2'"),
    ([*ORDERS[:2], "--key=nope", "--column=id:int"], "must be one of the --column"),
    ([*ORDERS, "--column=ID:int"], "given twice"),
    ([*ORDERS, "--column=version_id:string"], "cannot be a column of a change-event source"),
    ([*ORDERS, "--track-history=id"], "--track-history columns must name declared non-key"),
    (
        [*ORDERS, "--track-history=id", "--track-history-except=id"],
        "track_history and track_history_except exclude each other",
    ),
    (["hash-cdc", "synthetic", "--key=k:string"], "exists already"),
    (["hash-cdc", "orders", "--key=k:strin"], "unknown type 'strin'"),
    (["hash-cdc", "orders", "--nonkey=a:int"], "give the dataset's key"),
    (["hash-cdc", "orders", "--key=k:string", "--max-delete-fraction=2"], "max_delete_fraction"),
    (["hash-cdc", "orders", "--key=k:string", "--operation-column=op"], "for delta extracts"),
    (
        [
            "hash-cdc",
            "orders",
            "--key=k:string",
            "--nonkey=op:string",
            "--mode=delta",
            "--operation-column=op",
        ],
        "the same column",
    ),
    (["schema-drift", "events"], "exists already"),
    # Feed events declares its stream's monitoring source, schema_drift__events_stream: the
    # landing source of a feed named events_stream.
    (["schema-drift", "events_stream"], "source schema_drift__events_stream is declared already"),
    (["schema-drift", "9lives"], "name '9lives' is not usable"),
    (["schema-drift", "clicks", "--event-group=a=x_*"], "must take every event type"),
    (["schema-drift", "clicks", "--event-group=a"], "must read NAME=SELECTOR"),
    (["schema-drift", "clicks", "--event-group=A=*"], "lower-case letters"),
]


@pytest.mark.parametrize(("words", "message"), REFUSALS)
def test_refusals_are_one_line_and_write_nothing(demo, tmp_path, words, message):
    project = Path(shutil.copytree(demo, tmp_path / "demo"))
    before = _snapshot(project)
    done = _spark_cdc("add", *words, cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("spark-cdc: error: ") and done.stderr.count("\n") == 1
    assert message in done.stderr, done.stderr
    assert _snapshot(project) == before


def test_a_name_declared_in_any_model_path_is_refused(tmp_path):
    """Every model path counts, YAML entries as much as model files."""
    project = _project(tmp_path / "lake")
    config = project / "dbt_project.yml"
    config.write_text(config.read_text() + "model-paths: [models, shared]\n")
    (project / "shared").mkdir()
    (project / "shared" / "legacy.yml").write_text(
        "version: 2\nmodels:\n  - name: change_events__orders_current\n"
    )
    before = _snapshot(project)
    done = _spark_cdc("add", *ORDERS, cwd=project)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "model change_events__orders_current is declared already in shared/legacy.yml" in (
        done.stderr
    )
    assert _snapshot(project) == before
    (project / "shared" / "legacy.yml").unlink()
    (project / "shared" / "change_events__orders_history.py").write_text("def model(dbt, s): ...\n")
    done = _spark_cdc("add", *ORDERS, cwd=project)
    assert "model change_events__orders_history is declared already in shared/" in done.stderr


def test_a_model_path_that_is_a_jinja_expression_is_refused(tmp_path):
    """Written there, the files would go to a folder named like the expression."""
    project = _project(tmp_path / "lake")
    config = project / "dbt_project.yml"
    config.write_text(config.read_text() + "model-paths: [\"{{ 'models' }}\"]\n")
    done = _spark_cdc("add", "schema-drift", "clicks", cwd=project)
    assert done.returncode == 2 and "is a Jinja expression" in done.stderr, done.stderr
    assert sorted(p.name for p in project.iterdir()) == ["dbt_project.yml"]


def test_outside_a_dbt_project_and_dry_run(tmp_path):
    outside = _spark_cdc("add", "schema-drift", "clicks", cwd=tmp_path)
    assert outside.returncode == 2 and "is not a dbt project (no dbt_project.yml)" in outside.stderr
    assert outside.stderr.count("\n") == 1 and not list(tmp_path.iterdir())
    project = _project(tmp_path / "p")
    dry = _spark_cdc("add", "schema-drift", "clicks", "--dry-run", cwd=project)
    assert (
        dry.returncode == 0
        and "--- models/staging/schema_drift/_schema_drift__clicks.yml" in dry.stdout
    )
    assert [p.name for p in project.iterdir()] == ["dbt_project.yml"]
    elsewhere = _spark_cdc(
        "add", "schema-drift", "clicks", "--project-dir", str(project), cwd=tmp_path
    )
    assert elsewhere.returncode == 0
    assert (project / "models/marts/schema_drift/schema_drift__clicks_registry.py").exists()
