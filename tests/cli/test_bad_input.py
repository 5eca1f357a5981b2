"""Every bad input ends in one clear line, its documented exit code, no traceback, nothing written.

One table of hostile command lines across render, fetch, kustomize, config, lock, params and the
cluster commands. Each case runs the CLI in-process (tests/cli/test_cli.py runs the real entry point
in subprocesses) in a scratch directory holding the fixture files below, with its own cache
dir, temp dir and HOME, and a KUBECONFIG whose server is unreachable: a case that wrongly got as
far as the cluster would exit 3, not the 2 it expects. After each case nothing in the scratch
directory, cache, temp dir or HOME has changed.
"""

from __future__ import annotations

import base64
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from trainerctl.cli import main

BAD, FAILED, UNREACHABLE = 2, 1, 3
SERVER_DOWN = "https://127.0.0.1:1"
ONE_OBJECT = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
TINY_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kubeflow-trainer-controller-manager
spec:
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: manager
        image: quay.io/opendatahub/trainer:odh-3.5-ea1
"""
TINY_KUSTOMIZATION = "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: rhoai-config\n  envs:\n  - params.env\n"
TINY_PARAMS = "odh-kubeflow-trainer-controller-image=quay.io/opendatahub/trainer:odh-3.5-ea1\n"
LOCK = """source:
  url: https://github.com/opendatahub-io/trainer.git
  ref: odh-3.5.0
  commit: d063877c480bbd9a35512691ded96c97d8937b44
  digest: sha256:0000000000000000000000000000000000000000000000000000000000000000
"""


def _tiny_source(root: Path, *, kustomization=TINY_KUSTOMIZATION, params=TINY_PARAMS, deploy=TINY_DEPLOYMENT) -> str:
    overlay = root / "manifests" / "rhoai"
    overlay.mkdir(parents=True)
    for name, text in (("kustomization.yaml", kustomization), ("params.env", params), ("deploy.yaml", deploy)):
        (overlay / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(root)


def _kubeconfig(server=SERVER_DOWN, cluster: dict | None = None, user: dict | None = None,
                context: str = "c") -> str:
    import json

    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "k", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user if user is not None else {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    })


B64 = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n").decode()

# Files every case finds in its working directory (relative paths) or under `sources/`.
FILES: dict[str, str | bytes] = {
    "binary.bin": b"\x89PNG\r\n\x1a\n\x00\xff\xfe\x00binary",
    "empty.yaml": "",
    "comments.yaml": "# nothing here\n---\n",
    "one.yaml": ONE_OBJECT,
    "list.yaml": "apiVersion: v1\nkind: List\nitems: []\n",
    "no-kind.yaml": "apiVersion: v1\nmetadata: {name: x}\n",
    "no-api.yaml": "kind: ConfigMap\nmetadata: {name: x}\n",
    "no-name.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
    "kind-int.yaml": "apiVersion: v1\nkind: 3\nmetadata: {name: x}\n",
    "scalar.yaml": "just a string\n",
    "seq.yaml": "- a\n- b\n",
    "bad.yaml": "apiVersion: v1\nkind: [\n",
    "tab.yaml": "apiVersion: v1\n\tkind: ConfigMap\n",
    "second-bad.yaml": ONE_OBJECT + "---\nkind: Secret\n",
    "file.txt": "a file, not a directory\n",
    "foreign/notes.md": "someone else's directory\n",
    "adir/.keep": "",
    # a GitOps folder whose first stage lists a file that is not there
    "broken-folder/kustomization.yaml": "# Written by `trainerctl render --output-dir`; files listed here are replaced "
                                        "on the next run.\nmetadata:\n  annotations:\n    trainerctl.io/gitops: flux\n"
                                        "resources: []\n",
    "broken-folder/stages/00-crds/kustomization.yaml": "resources:\n- gone.yaml\n",
    # marked indexes a hand edit broke: each field is read by the type render writes
    **{f"{name}-folder/kustomization.yaml": "# Written by `trainerctl render --output-dir`; files listed here are "
                                            "replaced on the next run.\n" + body
       for name, body in (("list-index", "- a\n- b\n"), ("list-meta", "metadata: [a]\nresources: []\n"),
                          ("list-annotations", "metadata:\n  annotations: [1, 2]\nresources: []\n"),
                          ("mapping-value", "metadata:\n  annotations: {trainerctl.io/gitops: {a: b}}\nresources: []\n"))},
    # trainerctl.yaml variants (--config)
    "cfg/binary.yaml": b"namespace: \xff\xfe\n",
    "cfg/bad.yaml": "namespace: [\n",
    "cfg/list.yaml": "- a\n",
    "cfg/unknown.yaml": "namepsace: x\n",
    "cfg/ns-int.yaml": "namespace: 3\n",
    "cfg/ns-upper.yaml": "namespace: OpenDataHub\n",
    "cfg/ns-empty.yaml": "namespace: ''\n",
    "cfg/source-str.yaml": "source: https://x\n",
    "cfg/source-both.yaml": "source: {url: 'https://github.com/kubeflow/trainer.git', path: ./t}\n",
    "cfg/source-unknown.yaml": "source: {uri: x}\n",
    "cfg/source-int.yaml": "source: {ref: 3}\n",
    "cfg/images-list.yaml": "images: [a]\n",
    "cfg/images-int.yaml": "images: {RELATED_IMAGE_ODH_TRAINER_IMAGE: 3}\n",
    "cfg/components-bad.yaml": "components: [everything]\n",
    "cfg/components-str.yaml": "components: manifests\n",
    "cfg/platform-bad.yaml": "platform: windows\n",
    "cfg/registry-scheme.yaml": "requireRegistry: https://quay.io\n",
    "cfg/owner-bad.yaml": "ownerLabel: nolabel\n",
    "cfg/mirrors-int.yaml": "remoteMirrors: [1]\n",
    "cfg/manager-list.yaml": "manager: [replicas]\n",
    "cfg/manager-replicas.yaml": "manager: {replicas: 0}\n",
    "cfg/manager-unknown.yaml": "manager: {replica: 2}\n",
    "cfg/manager-affinity.yaml": "manager: {affinity: {nodeAffinity: {sometimes: true}}}\n",
    "cfg/overlay-empty.yaml": "overlay: ''\n",
    "cfg/cachedir-empty.yaml": "cacheDir: ' '\n",
    "cfg/cachedir-file.yaml": "cacheDir: file.txt\n",
    "cfg/mirrors-noequals.yaml": "remoteMirrors: [noequals]\n",
    "cfg/timeout-zero.yaml": "timeout: 0\n",
    "cfg/timeout-str.yaml": "timeout: '300'\n",
    "cfg/timeout-bool.yaml": "timeout: true\n",
    "cfg/lock-timeout-negative.yaml": "lockTimeout: -1\n",
    "cfg/field-manager-empty.yaml": "fieldManager: ''\n",
    "cfg/channel-and-source.yaml": "channel: stable\nsource: {ref: v2.3.0}\n",
    "cfg/channel-unknown.yaml": "channel: nightly\n",
    "cfg/channel-number.yaml": "channel: 3.5\n",
    # lock files (--lock)
    "locks/binary.lock": b"source:\n  url: \xff\xfe\n",
    "locks/bad.lock": "source: [\n",
    "locks/list.lock": "- a\n",
    "locks/no-source.lock": "other: 1\n",
    "locks/missing-ref.lock": LOCK.replace("  ref: odh-3.5.0\n", ""),
    "locks/bad-commit.lock": LOCK.replace("d063877c480bbd9a35512691ded96c97d8937b44", "HEAD"),
    "locks/bad-digest.lock": LOCK.replace("sha256:", "md5:"),
    "locks/unknown.lock": LOCK + "  extra: 1\n",
    "locks/other-source.lock": LOCK.replace("opendatahub-io/trainer", "kubeflow/trainer").replace("odh-3.5.0", "v2.3.0"),
    "locks/good.lock": LOCK,
    # kubeconfigs (--kubeconfig)
    "kc/down.kubeconfig": _kubeconfig(),
    "kc/binary.kubeconfig": b"\xff\xfe\x00\x01",
    "kc/not-yaml.kubeconfig": "clusters: [\n",
    "kc/server-not-url.kubeconfig": _kubeconfig("not a url"),
    "kc/server-no-scheme.kubeconfig": _kubeconfig("127.0.0.1:6443"),
    "kc/server-ftp.kubeconfig": _kubeconfig("ftp://127.0.0.1"),
    "kc/server-int.kubeconfig": _kubeconfig(6443),
    "kc/server-bad-port.kubeconfig": _kubeconfig("https://127.0.0.1:99999"),
    "kc/ca-not-base64.kubeconfig": _kubeconfig(cluster={"certificate-authority-data": "%%%not base64%%%"}),
    "kc/ca-not-pem.kubeconfig": _kubeconfig(cluster={"certificate-authority-data": base64.b64encode(b"junk").decode()}),
    "kc/ca-missing-file.kubeconfig": _kubeconfig(cluster={"certificate-authority": "/nonexistent/ca.crt"}),
    "kc/key-not-base64.kubeconfig": _kubeconfig(user={"client-certificate-data": B64, "client-key-data": "!!!"}),
    "kc/cert-without-key.kubeconfig": _kubeconfig(user={"client-certificate-data": B64}),
    "kc/cert-not-pem.kubeconfig": _kubeconfig(user={"client-certificate-data": B64, "client-key-data": B64}),
    "kc/token-file-missing.kubeconfig": _kubeconfig(user={"tokenFile": "/nonexistent/token"}),
    "kc/unknown-context.kubeconfig": _kubeconfig(context="nope"),
}
SOURCES = {
    "tiny": {},
    "params-binary": {"params": b"odh-kubeflow-trainer-controller-image=quay.io/x\xff:1\n"},
    "params-bad-image": {"params": "odh-kubeflow-trainer-controller-image=Not An Image\n"},
    "params-image-upper": {"params": "odh-kubeflow-trainer-controller-image=quay.io/OpenDataHub/Trainer:1\n"},
    "missing-resource": {"kustomization": "resources:\n- nothere.yaml\n"},
    "bad-yaml": {"deploy": "apiVersion: [\n"},
    "bad-kustomization": {"kustomization": "resources: deploy.yaml\n"},
    "binary-kustomization": {"kustomization": b"resources:\n- \xff\n"},
}


@dataclass
class Case:
    args: list[str]
    code: int
    says: str  # a fragment the one line must contain (the flag, file or field)
    env: dict | None = None


def _cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    tiny = ["--source", "sources/tiny"]
    commands = ["kustomize", "render", "fetch", "install", "uninstall", "diff", "status", "upgrade-check"]

    # -- usage: unknown commands and flags, missing and extra arguments, bad values ------------
    c["unknown command"] = Case(["nosuchcommand"], BAD, "nosuchcommand")
    c["unknown command, close to one"] = Case(["instal"], BAD, "instal")
    c["unknown global flag"] = Case(["--bogus"], BAD, "--bogus")
    for cmd in commands:
        c[f"{cmd}: unknown flag"] = Case([cmd, "--bogus-flag"], BAD, "--bogus-flag")
        c[f"{cmd}: unknown short flag"] = Case([cmd, "-Z"], BAD, "-Z")
    for cmd in commands[1:]:
        c[f"{cmd}: stray argument"] = Case([cmd, "stray"], BAD, "stray")
    c["kustomize: no directory"] = Case(["kustomize"], BAD, "DIR")
    c["kustomize: two directories"] = Case(["kustomize", "adir", "adir"], BAD, "adir")
    for flag in ("--source", "--ref", "--overlay", "-n", "--image", "--set", "-o", "--config", "--lock", "--channel"):
        c[f"render: {flag} without a value"] = Case(["render", flag], BAD, flag)
    # -- release channels: an unknown one, one beside another source, one with -f ---------------
    for cmd in ("render", "fetch", "install", "diff", "check", "upgrade-check", "images"):
        c[f"{cmd}: --channel unknown"] = Case([cmd, "--channel", "9.9"], BAD, "--channel '9.9': unknown channel")
    c["render: --channel ''"] = Case(["render", "--channel", ""], BAD, "--channel '': expected a value")
    c["render: --channel and --source"] = Case(["render", "--channel", "3.5", *tiny], BAD, "--channel 3.5 and --source")
    c["render: --channel and --ref"] = Case(["render", "--channel", "3.5", "--ref", "odh-3.5.0"], BAD, "choose one")
    c["install: --channel with -f"] = Case(["install", "-f", "one.yaml", "--channel", "3.5"], BAD, "--channel")
    c["render: --config channel and source"] = Case(["render", "--config", "cfg/channel-and-source.yaml"], BAD,
                                                    "cfg/channel-and-source.yaml: channel: a channel is a pinned source")
    c["render: --config channel unknown"] = Case(["render", "--config", "cfg/channel-unknown.yaml"], BAD,
                                                 "cfg/channel-unknown.yaml: channel: 'nightly': unknown channel")
    c["render: --config channel a number"] = Case(["render", "--config", "cfg/channel-number.yaml"], BAD,
                                                  "cfg/channel-number.yaml: channel: expected a string")
    for flag in ("--kubeconfig", "--context", "-f", "--timeout"):
        c[f"install: {flag} without a value"] = Case(["install", flag], BAD, flag)
    c["install: --dry-run=yes"] = Case(["install", "--dry-run=yes"], BAD, "--dry-run")
    c["install: --wait=maybe"] = Case(["install", "--wait=maybe"], BAD, "--wait")
    for cmd in ("install", "uninstall"):
        for value in ("abc", "nan", "inf", "-inf", "0", "-5", "1e400", "", "5s"):
            c[f"{cmd}: --timeout {value!r}"] = Case([cmd, "--timeout", value], BAD, "--timeout")
    for cmd, value in (("render", "xml"), ("render", "text"), ("install", "xml"), ("uninstall", "csv"),
                       ("status", "table"), ("upgrade-check", "html"), ("render", ""), ("status", "JSON")):
        c[f"{cmd}: -o {value!r}"] = Case([cmd, *(tiny if cmd == "render" else []), "-o", value], BAD, "-o")
    c["render: -o with --output-dir"] = Case(["render", *tiny, "-o", "json", "--output-dir", "out"], BAD, "--output-dir")
    gitops = ["--output-dir", "out", "--gitops"]
    c["render: --gitops unknown"] = Case(["render", *tiny, *gitops, "fluxcd"], BAD, "--gitops")
    c["render: --gitops without --output-dir"] = Case(["render", *tiny, "--gitops", "flux"], BAD, "--output-dir")
    c["render: --gitops argocd without a repo"] = Case(["render", *tiny, *gitops, "argocd", "--gitops-path", "x"], BAD,
                                                       "--gitops-repo")
    c["render: --gitops-repo without --gitops"] = Case(["render", *tiny, "--gitops-repo", "https://x/y.git"], BAD,
                                                       "--gitops-repo")
    c["render: --gitops outside a work tree"] = Case(["render", *tiny, *gitops, "flux"], BAD, "--gitops-path")
    for path in ("../up", "/abs"):
        c[f"render: --gitops-path {path}"] = Case(["render", *tiny, *gitops, "flux", "--gitops-path", path], BAD,
                                                  "--gitops-path")
    c["render: --gitops-repo a command"] = Case(["render", *tiny, *gitops, "flux", "--gitops-path", "x",
                                                 "--gitops-repo", "ext::sh -c id"], BAD, "--gitops-repo")
    c["render: --gitops-branch bad"] = Case(["render", *tiny, *gitops, "flux", "--gitops-path", "x",
                                             "--gitops-branch", "-bad"], BAD, "--gitops-branch")
    c["render: --update-lock with --no-lock"] = Case(["render", *tiny, "--update-lock", "--no-lock"], BAD, "--no-lock")
    c["render: --update-lock of a local checkout"] = Case(["render", *tiny, "--update-lock", "--lock", "new.lock"],
                                                          BAD, "--update-lock")

    # -- render flags ----------------------------------------------------------------------
    for ns in ("", "OpenDataHub", "a_b", "a.b", "-a", "a-", "x" * 64, " ns", "ns/x"):
        c[f"render: -n {ns!r}"] = Case(["render", *tiny, "-n", ns], BAD, "--namespace")
    for platform in ("windows", "", "OpenShift", "k8s"):
        c[f"render: --platform {platform!r}"] = Case(["render", *tiny, "--platform", platform], BAD, "--platform")
    for comp in ("everything", "", "runtime"):
        c[f"render: -c {comp!r}"] = Case(["render", *tiny, "-c", comp], BAD, "--component")
    c["render: -c imagestreams on kubernetes"] = Case(["render", *tiny, "-c", "imagestreams"], BAD, "imagestreams")
    for label in ("nolabel", "=x", "bad key!=x", "k=bad value", "k=" + "x" * 64, "/k=v", "UPPER_/k=v"):
        c[f"render: --owner-label {label!r}"] = Case(["render", *tiny, "--owner-label", label], BAD, "--owner-label")
    for image in ("noequals", "=quay.io/x:1", "odh-kubeflow-trainer-controller-image=",
                  "odh-kubeflow-trainer-controller-image=Not Valid", "odh-kubeflow-trainer-controller-image=x:y:z",
                  "RELATED_IMAGE_NOPE=quay.io/x:1", "RELATED_IMAGE_ODH_TRAINER_IMAGE=quay.io/X:1",
                  "Bad/Name=quay.io/x:1", "unknown-key=quay.io/x:1", "x/y=quay.io/x@sha256:123"):
        c[f"render: --image {image!r}"] = Case(["render", *tiny, "--image", image], BAD, "--image")
    c["render: RELATED_IMAGE_* in the environment"] = Case(
        ["render", *tiny], BAD, "RELATED_IMAGE_ODH_TRAINER_IMAGE", env={"RELATED_IMAGE_ODH_TRAINER_IMAGE": "bad image"})
    for registry in ("http://bad host/", "https://quay.io", "", "bad host", "quay.io/UPPER", "quay.io:port",
                     "quay.io//x", "-quay.io"):
        c[f"render: --require-registry {registry!r}"] = Case(["render", *tiny, "--require-registry", registry],
                                                             BAD, "--require-registry")
    c["render: images outside --require-registry"] = Case(["render", *tiny, "--require-registry", "registry.example.com"],
                                                          FAILED, "--require-registry")
    for mirror in ("noequals", "=https://mirror"):
        c[f"render: --remote-mirror {mirror!r}"] = Case(["render", *tiny, "--remote-mirror", mirror], BAD,
                                                        "--remote-mirror")
    sets = ["manager.replicas=0", "manager.replicas=-1", "manager.replicas=2147483648", "manager.replicas=1e10",
            "manager.replicas=abc", "manager.replicas=1.5", "manager.replicas=true", "manager.replicas=[",
            "manager.nope=1", "manager.affinity.nodeAffinity.sometimes=true", "manager.affinity.bogus={}",
            "manager.affinity=[]", "manager.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution=x",
            "manager.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution=[{weight: 1, extra: 2}]",
            "manager.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution=[{weight: 99999999999}]",
            "manager.tolerations=x", "manager.tolerations=[{operator: Sometimes}]",
            "manager.tolerations=[{tolerationSeconds: 1e30}]", "manager.resources.requests.cpu=lots",
            "manager.resources.limit.cpu=1", "manager.podDisruptionBudget.minAvailable=-1",
            "manager.podDisruptionBudget.maxUnavailable=200%", "manager.podDisruptionBudget.minAvailable=2147483648",
            "manager.priorityClassName=UPPER", "manager.topologySpreadConstraints=[{maxSkew: 0}]",
            "manager.topologySpreadConstraints=[{maxSkew: 4294967296, topologyKey: z, whenUnsatisfiable: Never}]",
            "manager.nodeSelector.disk=1", "nomanager.replicas=1", "manager", "manager.=1", "=1",
            "manager.ha=maybe"]
    for value in sets:
        c[f"render: --set {value!r}"] = Case(["render", *tiny, "--set", value], BAD, "manager" if "manager" in value
                                             else "--set")
    for overlay in ("nothere", "", "/etc", "../../..", "rhoai/deploy.yaml"):
        c[f"render: --overlay {overlay!r}"] = Case(["render", *tiny, "--overlay", overlay], BAD, "overlay")

    # -- sources and refs --------------------------------------------------------------------
    c["render: --source ''"] = Case(["render", "--source", ""], BAD, "--source")
    c["render: --source that does not exist"] = Case(["render", "--source", "nowhere"], BAD, "nowhere")
    c["render: --source a file"] = Case(["render", "--source", "file.txt"], BAD, "file.txt")
    c["render: --source PATH --ref"] = Case(["render", *tiny, "--ref", "v1"], BAD, "--ref")
    for url in ("ext::sh -c touch% /tmp/pwned", "https://host/x.git --upload-pack=x", "ftp://host/x.git",
                "--upload-pack=touch /tmp/x", "file://", "https://"):
        c[f"render: --source {url!r}"] = Case(["render", "--source", url, "--ref", "v1", "--offline"], BAD, "")
    c["render: git URL without --ref"] = Case(["render", "--source", "https://github.com/kubeflow/trainer.git",
                                               "--offline"], BAD, "--ref")
    for ref in ("-bad", "a..b", "ref with space", "refs/../x", "", "a~1", "a^", "x:y"):
        c[f"render: --ref {ref!r}"] = Case(["render", "--ref", ref, "--offline"], BAD, "")
    for name, path in (("a file", "file.txt"), ("under a file", "file.txt/sub"), ("empty", "")):
        c[f"render: --cache-dir {name}"] = Case(["render", "--cache-dir", path, "--offline"], BAD, "--cache-dir")
        c[f"fetch: --cache-dir {name}"] = Case(["fetch", "--cache-dir", path], BAD, "--cache-dir")
    c["render: TRAINERCTL_CACHE_DIR is a file"] = Case(["render", "--offline"], BAD, "TRAINERCTL_CACHE_DIR",
                                                      env={"TRAINERCTL_CACHE_DIR": "file.txt"})
    for name, path in (("a file", "file.txt"), ("under a file", "file.txt/sub"), ("foreign", "foreign"),
                       ("empty", "")):
        c[f"render: --output-dir {name}"] = Case(["render", *tiny, "--output-dir", path], BAD, "--output-dir")
    for name, src in (("params.env not UTF-8", "params-binary"), ("invalid image in params.env", "params-bad-image"),
                      ("upper-case image in params.env", "params-image-upper"),
                      ("missing resource", "missing-resource"), ("bad YAML resource", "bad-yaml"),
                      ("kustomization field of the wrong type", "bad-kustomization"),
                      ("kustomization not UTF-8", "binary-kustomization")):
        c[f"render: {name}"] = Case(["render", "--source", f"sources/{src}"], BAD,
                                    "params.env" if "params" in src else f"sources/{src}")

    # -- trainerctl.yaml (--config) ------------------------------------------------------------
    config_says = {"binary": "not UTF-8", "bad": "not valid YAML", "list": "mapping", "unknown": "namepsace",
                   "ns-int": "namespace", "ns-upper": "namespace", "ns-empty": "namespace", "source-str": "source",
                   "source-both": "source", "source-unknown": "source.uri", "source-int": "source.ref",
                   "images-list": "images", "images-int": "images", "components-bad": "components",
                   "components-str": "components", "platform-bad": "platform", "registry-scheme": "requireRegistry",
                   "owner-bad": "ownerLabel", "mirrors-int": "remoteMirrors", "manager-list": "manager",
                   "manager-replicas": "replicas", "manager-unknown": "replica",
                   "manager-affinity": "affinity.nodeAffinity", "overlay-empty": "overlay",
                   "cachedir-empty": "cacheDir", "cachedir-file": "cfg/cachedir-file.yaml: cacheDir:",
                   "mirrors-noequals": "cfg/mirrors-noequals.yaml: remoteMirrors:",
                   "timeout-zero": "cfg/timeout-zero.yaml: timeout:", "timeout-str": "timeout: expected a number",
                   "timeout-bool": "timeout: expected a number", "lock-timeout-negative": "lockTimeout",
                   "field-manager-empty": "fieldManager"}
    for name, says in config_says.items():
        c[f"render: --config {name}"] = Case(["render", *tiny, "--config", f"cfg/{name}.yaml"], BAD, says)
    for cmd in ("install", "diff", "upgrade-check"):
        c[f"{cmd}: --config unknown field"] = Case([cmd, "--config", "cfg/unknown.yaml"], BAD, "namepsace")
    c["install: trainerctl.yaml timeout 0"] = Case(["install", "--config", "cfg/timeout-zero.yaml"], BAD, "timeout")
    c["fetch: --config not UTF-8"] = Case(["fetch", "--config", "cfg/binary.yaml"], BAD, "not UTF-8")
    c["render: --config missing"] = Case(["render", *tiny, "--config", "nope.yaml"], BAD, "--config")
    c["render: --config a directory"] = Case(["render", *tiny, "--config", "adir"], BAD, "--config")

    # -- lock files ----------------------------------------------------------------------------
    lock_says = {"binary": "not UTF-8", "bad": "not valid YAML", "list": "source", "no-source": "source",
                 "missing-ref": "source.ref", "bad-commit": "source.commit", "bad-digest": "source.digest",
                 "unknown": "source.extra"}
    for name, says in lock_says.items():
        c[f"render: --lock {name}"] = Case(["render", "--lock", f"locks/{name}.lock", "--offline"], BAD, says)
        c[f"fetch: --lock {name}"] = Case(["fetch", "--lock", f"locks/{name}.lock"], BAD, says)
    c["render: --lock a directory"] = Case(["render", "--lock", "adir", "--offline"], BAD, "adir")
    c["render: lock pins another source"] = Case(["render", "--lock", "locks/other-source.lock", "--offline"], BAD,
                                                 "--no-lock")
    c["render: --source PATH with a lock file"] = Case(["render", *tiny, "--lock", "locks/good.lock"], BAD, "--no-lock")
    c["fetch: --source PATH"] = Case(["fetch", *tiny], BAD, "local checkout")
    c["fetch: --ref bad"] = Case(["fetch", "--ref", "-x"], BAD, "")

    # -- kustomize -----------------------------------------------------------------------------
    c["kustomize: no such directory"] = Case(["kustomize", "nowhere"], BAD, "nowhere")
    c["kustomize: a file"] = Case(["kustomize", "file.txt"], BAD, "file.txt")
    c["kustomize: no kustomization.yaml"] = Case(["kustomize", "adir"], BAD, "adir")
    c["kustomize: ''"] = Case(["kustomize", ""], BAD, "")
    c["kustomize: kustomization not UTF-8"] = Case(["kustomize", "sources/binary-kustomization/manifests/rhoai"],
                                                   BAD, "kustomization.yaml")
    c["kustomize: missing resource"] = Case(["kustomize", "sources/missing-resource/manifests/rhoai"], BAD,
                                            "nothere.yaml")
    c["kustomize: --remote-mirror without ="] = Case(["kustomize", "sources/tiny/manifests/rhoai", "--remote-mirror",
                                                      "x"], BAD, "--remote-mirror")

    # -- cluster commands: bad input is found before the (unreachable) cluster is contacted ------
    target_cmds = ("install", "diff", "upgrade-check")
    files = {"missing": ("nope.yaml", "nope.yaml"), "a directory": ("adir", "adir"), "binary": ("binary.bin", "UTF-8"),
             "empty": ("empty.yaml", "no objects"), "only comments": ("comments.yaml", "no objects"),
             "a List": ("list.yaml", "List"), "no kind": ("no-kind.yaml", "kind"), "no apiVersion": ("no-api.yaml",
                                                                                                     "apiVersion"),
             "no name": ("no-name.yaml", "metadata.name"), "kind not a string": ("kind-int.yaml", "kind"),
             "a scalar": ("scalar.yaml", "document 1"), "a sequence": ("seq.yaml", "document 1"),
             "bad YAML": ("bad.yaml", "bad.yaml"), "a tab": ("tab.yaml", "tab.yaml"),
             "second document bad": ("second-bad.yaml", "document 2"),
             "a broken GitOps folder": ("broken-folder", "gone.yaml"),
             "a folder whose index is a list": ("list-index-folder", "expected a Kustomization (a mapping)"),
             "a folder whose metadata is a list": ("list-meta-folder", "metadata: expected a mapping"),
             "a folder whose annotations are a list": ("list-annotations-folder", "metadata.annotations: expected"),
             "a folder with a mapping as annotation": ("mapping-value-folder", "metadata.annotations: expected")}
    for cmd in (*target_cmds, "status"):
        for name, (path, says) in files.items():
            c[f"{cmd}: -f {name}"] = Case([cmd, "-f", path], BAD, says)
    for cmd in target_cmds:
        for flag in (["--source", "x"], ["--ref", "v1"], ["--set", "manager.replicas=2"], ["--ha"],
                     ["--image", "k=quay.io/x:1"], ["--platform", "kubernetes"], ["--overlay", "x"],
                     ["--offline"], ["--remote-mirror", "a=b"], ["--require-registry", "quay.io"]):
            c[f"{cmd}: -f with {flag[0]}"] = Case([cmd, "-f", "one.yaml", *flag], BAD, flag[0])
        for ns in ("", "UPPER", "a_b"):
            c[f"{cmd}: -n {ns!r}"] = Case([cmd, "-f", "one.yaml", "-n", ns], BAD, "--namespace")
        c[f"{cmd}: --platform bad"] = Case([cmd, *tiny, "--platform", "win"], BAD, "--platform")
        c[f"{cmd}: --image bad"] = Case([cmd, *tiny, "--image", "k=Bad Image"], BAD, "--image")
        c[f"{cmd}: --set bad"] = Case([cmd, *tiny, "--set", "manager.replicas=0"], BAD, "replicas")
        c[f"{cmd}: --require-registry bad"] = Case([cmd, *tiny, "--require-registry", "http://bad host/"], BAD,
                                                   "--require-registry")
    for cmd in ("status", "uninstall"):
        for ns in ("", "UPPER", "x" * 64):
            c[f"{cmd}: -n {ns!r}"] = Case([cmd, "-n", ns], BAD, "--namespace")
    c["uninstall: -o bad"] = Case(["uninstall", "-o", "xml"], BAD, "-o")

    # -- kubeconfigs (each cluster command) ----------------------------------------------------
    kubeconfigs = {"missing": ("nope.kubeconfig", "not found"), "a directory": ("adir", "directory"),
                   "binary": ("kc/binary.kubeconfig", "kubeconfig"), "not YAML": ("kc/not-yaml.kubeconfig",
                                                                                   "kubeconfig"),
                   "server not a URL": ("kc/server-not-url.kubeconfig", "server"),
                   "server without scheme": ("kc/server-no-scheme.kubeconfig", "server"),
                   "ftp server": ("kc/server-ftp.kubeconfig", "server"),
                   "server a number": ("kc/server-int.kubeconfig", "server"),
                   "server port out of range": ("kc/server-bad-port.kubeconfig", "server"),
                   "CA not base64": ("kc/ca-not-base64.kubeconfig", "certificate-authority-data"),
                   "CA not PEM": ("kc/ca-not-pem.kubeconfig", "certificate-authority"),
                   "CA file missing": ("kc/ca-missing-file.kubeconfig", "certificate-authority"),
                   "key not base64": ("kc/key-not-base64.kubeconfig", "client-key-data"),
                   "certificate without key": ("kc/cert-without-key.kubeconfig", "client-key"),
                   "certificate not PEM": ("kc/cert-not-pem.kubeconfig", "client-certificate"),
                   "tokenFile missing": ("kc/token-file-missing.kubeconfig", "tokenFile"),
                   "unknown current-context": ("kc/unknown-context.kubeconfig", "kubeconfig"),
                   "empty flag": ("", "--kubeconfig")}
    for cmd in ("status", "uninstall", "install", "diff", "upgrade-check"):
        extra = ["-f", "one.yaml"] if cmd in target_cmds else []
        for name, (path, says) in kubeconfigs.items():
            c[f"{cmd}: kubeconfig {name}"] = Case([cmd, *extra, "--kubeconfig", path], BAD, says)
        c[f"{cmd}: unknown --context"] = Case([cmd, *extra, "--context", "nope"], BAD, "nope")
        c[f"{cmd}: --context ''"] = Case([cmd, *extra, "--context", ""], BAD, "--context")
        # Not bad input, but the same table proves the code: an unreachable server is 3 everywhere.
        c[f"{cmd}: unreachable server"] = Case([cmd, *extra], UNREACHABLE, "cannot reach the API server")
    c["install: unreachable while rendering"] = Case(["install", *tiny], UNREACHABLE, "cannot reach the API server")
    c["diff: unreachable while rendering"] = Case(["diff", *tiny], UNREACHABLE, "cannot reach the API server")
    c["upgrade-check: unreachable while rendering"] = Case(["upgrade-check", *tiny], UNREACHABLE,
                                                           "cannot reach the API server")
    return c


CASES = _cases()


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory) -> Path:
    """work/ (the fixture files), cache/, tmp/ and home/: shared by all cases, since none may write."""
    root = tmp_path_factory.mktemp("bad-input")
    work = root / "work"
    for rel, content in FILES.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for name, parts in SOURCES.items():
        _tiny_source(work / "sources" / name, **parts)
    for name in ("cache", "tmp", "home"):
        (root / name).mkdir()
    return root


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames:  # a directory's mtime moves when a temp dir comes and goes
                out[os.path.join(dirpath, name)] = (0, 0)
            for name in filenames:
                p = os.path.join(dirpath, name)
                st = os.lstat(p)
                out[p] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def scratch(fixture_root, monkeypatch):
    """Run in work/ with the private cache, temp dir and HOME of fixture_root."""
    work = fixture_root / "work"
    monkeypatch.chdir(work)
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(fixture_root / "cache"))
    monkeypatch.setenv("HOME", str(fixture_root / "home"))
    monkeypatch.setenv("KUBECONFIG", str(work / "kc" / "down.kubeconfig"))
    monkeypatch.setenv("TMPDIR", str(fixture_root / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(fixture_root / "tmp"))
    for var in [v for v in os.environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)
    return fixture_root


def test_there_are_enough_cases():
    assert len(CASES) >= 250, len(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name, scratch, capsys, monkeypatch):
    case = CASES[name]
    for key, value in (case.env or {}).items():
        monkeypatch.setenv(key, value)
    before = _snapshot(scratch)
    code = main(case.args)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == case.code, f"exit {code}, expected {case.code}: {err}"
    assert out == "", f"stdout is not empty: {out[:300]}"
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "internal error" not in err
    assert case.says in lines[0], lines[0]
    assert "trainerctl-render-" not in err and str(scratch / "tmp") not in err, "names an internal temp path"
    assert _snapshot(scratch) == before, "the command wrote or changed files"
