"""A pure-Python kustomize: `build(path)` returns what `kustomize build path` would print.

The room list: yamlread/yamlemit (reading with go-yaml's rules; kustomize's exact writing;
yamlio re-exports both for callers outside), gojson (Go's JSON text), resid/resource
(identity), filesys/loader/remote (the files a build reads, the load restrictor, https and
git), kustfile (the kustomization file), target (one kustomization's pipeline),
generators/hashing, smp and jsonpatch (the two patch kinds), transformers/ (one module per
transformer family), fieldspecs/config (which fields they touch), sort (output order).

The names below load on first use (trainerctl/lazy_exports.py): a light module of this
package, such as the YAML reader, does not load the engine.
"""

from trainerctl.lazy_exports import lazy_exports

_WHERE = {"build": "top", "build_resources": "top", "build_yaml": "top", "KustomizeError": "errors"}
__getattr__ = lazy_exports(__name__, _WHERE)

__all__ = list(_WHERE)
