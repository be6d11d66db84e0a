"""Hash-based CDC of full or delta extracts: stage (cast + hash), compare, current + history."""
