{{ snapshot_legacy_view(ref('customers_snapshot')) }}
