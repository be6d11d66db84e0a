"""Synthetic CDC data generators for demos, tests and benchmarks."""
