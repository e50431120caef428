"""Benchmarks: the HTTP load generator, command benches, and their output formats."""
