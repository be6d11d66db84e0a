"""A settings block's column types, checked before Spark runs: an unquoted type holding a comma
in a YAML flow mapping stops the run naming the setting and the column."""

from __future__ import annotations

import pytest
import yaml

from spark_cdc.change_events.model import ChangeEventConfigError, TargetSchema
from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig

SPLIT_BY_YAML = [
    "{id: int, total: decimal(12,2)}",
    "{id: bigint, price: decimal(10, 2)}",
    "{id: int, tags: map<string,int>}",
]
READ_WHOLE = [
    '{id: int, total: "decimal(12,2)"}',
    '{id: int, tags: "map<string,int>", at: "struct<a:int,b:array<string>>"}',
    "{id: int, price: decimal(10)}",
]


@pytest.mark.parametrize("block", SPLIT_BY_YAML)
def test_a_type_split_at_its_comma_is_refused_naming_the_setting(block):
    columns = yaml.safe_load(block)
    with pytest.raises(ChangeEventConfigError, match=r"'columns': column '\w+' has type"):
        TargetSchema.from_mapping({"columns": columns, "key_columns": ["id"]})
    with pytest.raises(ConfigError, match=r"d: 'nonkey_columns': .* must be quoted"):
        DatasetConfig.from_mapping("d", {"key_columns": {"id": "int"}, "nonkey_columns": columns})


@pytest.mark.parametrize("block", READ_WHOLE)
def test_types_read_whole_are_kept(block):
    columns = yaml.safe_load(block)
    schema = TargetSchema.from_mapping({"columns": columns, "key_columns": ["id"]})
    assert schema.columns == {name: kind.lower() for name, kind in columns.items()}
    config = DatasetConfig.from_mapping(
        "d", {"key_columns": {"k": "int"}, "nonkey_columns": columns}
    )
    assert config.nonkeys == columns
