"""A pure-Python kustomize: `build(path)` returns what `kustomize build path` would print.

The room list: yamlread/yamlemit (reading with go-yaml's rules; kustomize's exact writing;
yamlio re-exports both for callers outside), gojson (Go's JSON text), resid/resource
(identity), filesys/loader/remote (the files a build reads, the load restrictor, https and
git), kustfile (the kustomization file), target (one kustomization's pipeline),
generators/hashing, smp and jsonpatch (the two patch kinds), transformers/ (one module per
transformer family), fieldspecs/config (which fields they touch), sort (output order).
"""

from trainerctl.kustomize.top import build, build_resources, build_yaml
from trainerctl.kustomize.errors import KustomizeError

__all__ = ["build", "build_resources", "build_yaml", "KustomizeError"]
