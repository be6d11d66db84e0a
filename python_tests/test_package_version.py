"""One version: the package's, which the wheel, the adapter and the dbt package all carry."""

from __future__ import annotations

from importlib.metadata import version

import yaml
from support import PROJECT_DIR

import spark_cdc
from dbt.adapters.sparkcdc.__version__ import version as adapter_version


def test_the_wheel_the_adapter_and_the_dbt_package_carry_the_package_version():
    project = yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())
    assert version("spark-cdc") == spark_cdc.__version__
    assert adapter_version == spark_cdc.__version__
    assert str(project["version"]) == spark_cdc.__version__
    assert (
        "version ="
        not in (PROJECT_DIR / "pyproject.toml").read_text().split("[project]")[1].split("[")[0]
    )
