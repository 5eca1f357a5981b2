"""Trainer policy on top of the engine: stage order, the Go operator hand-over, runtimes in use,
conditions, dependencies and preflight."""
