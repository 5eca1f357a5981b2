"""YAML in and out with kustomize's semantics, for callers outside the engine: the reader
(yamlread: go-yaml's rules) and the emitter (yamlemit: exactly what `kustomize build` prints)."""

from trainerctl.kustomize.yamlemit import dump, dump_all
from trainerctl.kustomize.yamlread import load, load_all

__all__ = ["dump", "dump_all", "load", "load_all"]
