#!/usr/bin/env bash
# The demo's sources, as `spark-cdc add` writes them: every per-source file under models/ comes
# from these commands (python_tests/test_scaffold.py regenerates them and compares).
set -euo pipefail

spark-cdc add change-events customers --key=id --column=id:int --column=name:string \
  --column=amount:int --initial-rows --evolve-columns "$@"
spark-cdc add change-events accounts --key=region --key=account_no --column=region:string \
  --column=account_no:bigint --column=owner:string --column='balance:decimal(12,2)' --debezium "$@"
spark-cdc add hash-cdc synthetic --key=key_1:string --key=key_2:string --key=key_3:string \
  --key=key_4:string --key=key_5:string --nonkey=attr_1:bigint --nonkey=attr_2:bigint \
  --nonkey=attr_3:bigint --nonkey=attr_4:bigint --nonkey=attr_5:bigint --nonkey=attr_6:bigint \
  --nonkey=attr_7:bigint --nonkey=attr_8:bigint --nonkey=attr_9:bigint \
  --sensitive=attr_10:bigint "$@"
spark-cdc add hash-cdc inventory --key=key_1:string --key=key_2:string --nonkey=attr_1:bigint \
  --nonkey=attr_2:bigint --nonkey=attr_3:bigint --mode=delta --format=parquet "$@"
spark-cdc add schema-drift events --event-group='first_ten=type_00*' --event-group='rest=*' "$@"
