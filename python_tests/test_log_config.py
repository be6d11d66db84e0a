"""The project's JVMs log with its own log4j configuration (package data), which exists where
the driver's options say and mutes the metastore's known noise about Delta tables."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from spark_cdc.session.runtime import session_settings

pytestmark = pytest.mark.unit


def test_the_driver_options_name_the_packaged_log_configuration(tmp_path):
    options = session_settings(tmp_path)["spark.driver.extraJavaOptions"]
    (uri,) = re.findall(r'-Dlog4j\.configurationFile="([^"]+)"', options)
    path = Path(unquote(urlparse(uri).path))
    assert path.is_file(), path
    assert path.parent.name == "conf" and path.parent.parent.name == "spark_cdc"
    settings = dict(line.split(" = ", 1) for line in path.read_text().splitlines() if " = " in line)
    assert settings["rootLogger.level"] == "warn"
    muted = {
        settings[key.replace(".level", ".name")]
        for key, level in settings.items()
        if key.startswith("logger.") and key.endswith(".level") and level == "off"
    }
    assert "org.apache.hadoop.hive.metastore.HiveAlterHandler" in muted
