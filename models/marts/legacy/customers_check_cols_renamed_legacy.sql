{{ snapshot_legacy_view(ref('customers_check_cols_renamed'), valid_to='valid_to') }}
