{{ snapshot_legacy_view(ref('customers_ts_ignore')) }}
