"""Tests of the client, the resource manager and the operations, unit by unit (a loopback API server at most)."""
