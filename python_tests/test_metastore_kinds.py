"""Which metastore settings hold a home for one process (embedded Derby) and which are shared by
several (a metastore service, a database server, a Derby network server)."""

from __future__ import annotations

import pytest

from spark_cdc.session.runtime import session_settings, uses_embedded_metastore

URL = "spark.hadoop.javax.jdo.option.ConnectionURL"


def test_the_default_settings_keep_an_embedded_metastore(tmp_path):
    settings = session_settings(tmp_path)
    assert settings[URL] == f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true"
    assert uses_embedded_metastore(settings)


@pytest.mark.parametrize(
    ("settings", "embedded"),
    [
        ({URL: "jdbc:derby:;databaseName=/h/metastore_db;create=true"}, True),
        ({URL: "jdbc:derby:/h/metastore_db"}, True),
        ({URL: "jdbc:derby://127.0.0.1:1527/metastore;create=true"}, False),
        ({URL: "jdbc:postgresql://db:5432/metastore"}, False),
        (
            {
                URL: "jdbc:derby:;databaseName=m",
                "spark.hadoop.hive.metastore.uris": "thrift://m:9083",
            },
            False,
        ),
    ],
)
def test_only_an_embedded_derby_database_holds_the_home(settings, embedded):
    assert uses_embedded_metastore(settings) is embedded
