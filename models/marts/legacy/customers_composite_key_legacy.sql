{{ snapshot_legacy_view(ref('customers_composite_key')) }}
