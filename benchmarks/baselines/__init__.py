"""Baselines the benchmarks compare the project with."""
