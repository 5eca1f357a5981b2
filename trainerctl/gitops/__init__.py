"""Hand trainerctl's staged install to a GitOps engine (Flux or Argo CD) as a folder in git.

`render --output-dir DIR --gitops flux|argocd` writes the render as one folder per install stage
(layout.py) plus the engine's own objects that apply those folders in trainerctl's stage order and
wait where trainerctl waits (flux.py, argocd.py). `-f DIR` reads such a folder back (folder.py).
"""

from __future__ import annotations

from trainerctl.gitops.layout import ENGINES

__all__ = ["ENGINES"]
