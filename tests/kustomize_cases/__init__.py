"""Behaviour fixtures for `trainerctl kustomize`, one module per class of the kustomize issue.

Each module has CASES: name -> Case. `expect` says what the real `kubectl kustomize` does and
what trainerctl must do: "same" (both build, identical bytes), "refuse" (both refuse; trainerctl
with one line containing `needle`), or "ours-refuse" (kubectl builds, trainerctl refuses by name
because it cannot match: never a silent difference).
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

        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(textwrap.dedent(text).lstrip("\n"))
        for rel, dest in self.links.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(dest, path)


def same(files: dict, target: str = ".") -> Case:
    return Case(files, "same", target=target)


def refuse(files: dict, needle: str, target: str = ".", links: dict | None = None) -> Case:
    return Case(files, "refuse", needle, target, links or {})


def bounded(files: dict, needle: str) -> Case:
    """trainerctl refuses by a bound; kubectl is not asked (it would run out of memory)."""
    return Case(files, "refuse", needle, kubectl=False)


def ours_refuse(files: dict, needle: str) -> Case:
    return Case(files, "ours-refuse", needle)


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
    from tests.kustomize_cases import (builds, embedded, json6902, nulls, openapi, plugins,
                                       refuses, silent, strict)

    return {"silent": silent, "builds": builds, "plugins": plugins, "refuses": refuses,
            "strict": strict, "openapi": openapi, "embedded": embedded, "nulls": nulls,
            "json6902": json6902}


def all_cases() -> dict[str, Case]:
    out = {}
    for prefix, module in modules().items():
        for name, case in module.CASES.items():
            out[f"{prefix}/{name}"] = case
    return out
