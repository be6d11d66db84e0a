{{ snapshot_legacy_view(ref('customers_check_all')) }}
