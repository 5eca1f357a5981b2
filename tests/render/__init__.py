"""Tests of sources, params, the render pipeline and its outputs, runtimes, GitOps folders, the upgrade check's CRD diff."""
