"""Every kustomize test case, in one format: a tree of files (and symlinks) plus what the real
`kubectl kustomize` does with it and what trainerctl must do. One module per class of case.

Each module has CASES: name -> Case. `expect` says what the real `kubectl kustomize` does and
what trainerctl must do: "same" (both build, identical bytes), "refuse" (both refuse; trainerctl
with one line containing `needle`), or "ours-refuse" (kubectl builds, trainerctl refuses by name
because it cannot match: never a silent difference). test_kustomize_fixtures runs every case;
other test modules add assertions over some (golden values, the CLI's exit code).

File texts and link targets may name what exists only when a case is written: `@ROOT@` (the
directory it is written to), `@PORT@` (a closed loopback port) and `@REPO@` (a local git
repository with one commit, tagged v1, holding base/kustomization.yaml).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field


@dataclass
class Case:
    files: dict[str, str]
    expect: str = "same"
    needle: str = ""
    target: str = "."
    links: dict[str, str] = field(default_factory=dict)  # symlink path -> where it points
    # False where kubectl cannot judge: an alias bomb exhausts its memory.
    kubectl: bool = True

    def write(self, root) -> None:
        import os

        root.mkdir(parents=True, exist_ok=True)
        places = _Places(root)
        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(places.fill(textwrap.dedent(text).lstrip("\n")))
        for rel, dest in self.links.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(places.fill(dest), path)


class _Places:
    """The values of @ROOT@, @PORT@ and @REPO@ for one written case, made when first used."""

    def __init__(self, root) -> None:
        self.root = root

    def fill(self, text: str) -> str:
        if "@ROOT@" in text:
            text = text.replace("@ROOT@", str(self.root))
        if "@PORT@" in text:
            text = text.replace("@PORT@", str(_closed_port()))
        if "@REPO@" in text:
            text = text.replace("@REPO@", str(_git_repo(self.root.parent / f"{self.root.name}-repo")))
        return text


def _closed_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _git_repo(path):
    import git

    if (path / ".git").is_dir():
        return path
    repo = git.Repo.init(path)
    (path / "base").mkdir(parents=True)
    (path / "base" / "kustomization.yaml").write_text("resources: []\n")
    repo.git.add("-A")
    with repo.git.custom_environment(GIT_AUTHOR_NAME="x", GIT_AUTHOR_EMAIL="x@example.invalid",
                                     GIT_COMMITTER_NAME="x", GIT_COMMITTER_EMAIL="x@example.invalid"):
        repo.git.commit("-qm", "base")
    repo.git.tag("v1")
    repo.close()
    return path


def write_tree(root, files: dict, links: dict | None = None):
    """Write a tree in the cases' format (for tests that build it their own way); returns root."""
    Case(files, links=links or {}).write(root)
    return root


def same(files: dict, target: str = ".", links: dict | None = None) -> Case:
    return Case(files, "same", target=target, links=links or {})


def refuse(files: dict, needle: str, target: str = ".", links: dict | None = None) -> Case:
    return Case(files, "refuse", needle, target, links or {})


def bounded(files: dict, needle: str) -> Case:
    """trainerctl refuses by a bound; kubectl is not asked (it would run out of memory)."""
    return Case(files, "refuse", needle, kubectl=False)


def ours_refuse(files: dict, needle: str, target: str = ".", links: dict | None = None) -> Case:
    return Case(files, "ours-refuse", needle, target, links or {})


DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: sa
      containers:
      - name: main
        image: example.com/app:1.0
        env:
        - name: FROM_CM
          valueFrom: {configMapKeyRef: {name: cfg, key: k}}
        volumeMounts:
        - {name: conf, mountPath: /etc/conf}
      volumes:
      - name: conf
        configMap: {name: cfg}
      - name: cert
        secret: {secretName: creds}
"""
CM = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {k: v}
"""
SVC = """
apiVersion: v1
kind: Service
metadata: {name: svc}
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""
SA = """
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa}
"""


def modules():
    from tests.support.kustomize_cases import (behaviour, builds, embedded, errors, filesys, json6902,
                                       nulls, openapi, plugins, refuses, scalars, silent, strict,
                                       yamlsyntax)

    return {"silent": silent, "builds": builds, "plugins": plugins, "refuses": refuses,
            "strict": strict, "openapi": openapi, "embedded": embedded, "nulls": nulls,
            "json6902": json6902, "behaviour": behaviour, "errors": errors, "filesys": filesys,
            "yamlsyntax": yamlsyntax, "scalars": scalars}


def all_cases() -> dict[str, Case]:
    out = {}
    for prefix, module in modules().items():
        for name, case in module.CASES.items():
            out[f"{prefix}/{name}"] = case
    return out
