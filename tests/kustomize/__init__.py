"""Tests of the pure-Python kustomize engine, judged byte for byte against kubectl kustomize."""
