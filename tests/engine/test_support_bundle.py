"""The support bundle's two promises, over their whole class (issue 25):

- no secret in any member, in any form JSON or YAML could give it: a Secret's values and every
  registered credential are blanked as values (redact.scrub) before a member is serialized, so
  escapes (`\\u00e4`, `\\"`, `\\\\`), quoting and folding cannot hide one;
- member names are trainerctl's: whatever the server names its objects, extracting the archive
  with Python's tarfile `data` filter or with GNU tar writes nothing outside the target folder,
  and two objects never share a member.

Property tests run with tests/support/properties.py's settings (fixed seed; more examples with
TRAINERCTL_HYPOTHESIS_EXAMPLES); the collection tests drive the real collectors against
tests/support/hostile_api.py's planted and bad-names worlds.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.support.hostile_api import HOSTILE_NAME, HostileServer, strings
from tests.support.properties import EXAMPLES, PROPERTY
from trainerctl.trust import redact
from tests.support.actions import session
from trainerctl.cluster.operations import bundle_archive
from trainerctl.trust.serialize import json_text, yaml_text


@pytest.fixture(autouse=True)
def fresh_registry():
    redact.forget_all()
    yield
    redact.forget_all()


# -- what a leak looks like -----------------------------------------------------------------
_MASKS = tuple(f"{redact.MASK} ({d} bytes)" for d in range(10))


def _encodings(secret: str) -> set[str]:
    """Every form the value takes in JSON (ensure_ascii on and off) and YAML (plain, single- and
    double-quoted; folding is caught by reading the members back), and base64."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             base64.b64encode(secret.encode()).decode()}
    for style in (None, "'", '"'):
        dumped = yaml.safe_dump(secret, default_style=style, width=10**6, allow_unicode=True)
        forms.add(dumped.removesuffix("\n...\n").removesuffix("\n"))
        dumped = yaml.safe_dump(secret, default_style=style, width=10**6)
        forms.add(dumped.removesuffix("\n...\n").removesuffix("\n"))
    forms = {f.strip("'\"") for f in forms}
    return {f for f in forms if len(f.strip()) >= redact.MIN_LENGTH}


def _touches_mask(secret: str) -> bool:
    """A value that a blank could spell, alone or with its neighbours ("EDACTED (1 by", say):
    finding it would be no leak."""
    for form in _encodings(secret) | {secret}:
        for mask in _MASKS:
            if form in mask or mask[:8] in form:
                return True
            if any(form.startswith(mask[i:]) or form.endswith(mask[:i]) for i in range(1, len(mask))):
                return True
    return False


def _leaks(members: dict[str, bytes], secrets) -> list[str]:
    """Where a secret shows, in the bytes of a member or in what its JSON or YAML reads back as."""
    found = []
    for name, data in members.items():
        text = data.decode("utf-8")
        read = [text]
        if name.endswith(".json"):
            read += list(strings(json.loads(text)))
        elif name.endswith(".yaml"):
            read += list(strings(yaml.safe_load(text)))
        for secret in secrets:
            for form in _encodings(secret):
                if any(form in s for s in read):
                    found.append(f"{name}: {form!r}")
            if any(secret.strip() in s for s in read[1:]):
                found.append(f"{name}: read back")
            if secret in name:
                found.append(f"{name}: in the name")
    return found


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


SECRET_WORDS = "apiVersion: v1\nkind: Secret\ndata:\nstringData:\n"
_SECRET = st.text(min_size=redact.MIN_LENGTH, max_size=300).filter(lambda s: len(s.strip()) >= redact.MIN_LENGTH)
_SECRETS = st.lists(_SECRET, min_size=1, max_size=3, unique=True)


# -- the bundle: every slot, every member form ------------------------------------------------
@PROPERTY
@given(secrets=_SECRETS, token=_SECRET, data=st.data())
def test_no_secret_in_any_member_in_any_encoding(tmp_path_factory, secrets, token, data):
    """Secrets (a Secret's data and stringData) and a registered credential (a kubeconfig token),
    planted in every kind of member: text, JSON and YAML values, keys, long lines YAML folds,
    members added before the Secret was read."""
    # A value spelled inside the Secret's own field names ("stringDa") is not hidden by them.
    assume(not any(_touches_mask(s) or s in SECRET_WORDS for s in [*secrets, token]))
    redact.forget_all()
    redact.register(token)
    planted = [*secrets, token]
    pick = data.draw(st.lists(st.sampled_from(planted), min_size=1, max_size=4))
    bundle = bundle_archive.Bundle("root")
    line = " ".join(f"a {v} {json.dumps(v)} {base64.b64encode(v.encode()).decode()}" for v in pick)
    bundle.add_text("logs/ns/p/c.log", f"starting\n{line}\n")  # before the Secret: blanked all the same
    bundle.add_json("events/ns.json", [{"message": line, "object": {v: v for v in pick}}])
    bundle.add_yaml("objects/core/ConfigMap/ns/c.yaml", {"kind": "ConfigMap", "data": {
        "long": "fold " * 40 + line, "plain": pick[0], "nested": [{"k": pick[-1]}]}})
    bundle.add_yaml("objects/core/Secret/ns/s.yaml", {"apiVersion": "v1", "kind": "Secret", "data": {
        f"k{i}": base64.b64encode(v.encode()).decode() for i, v in enumerate(secrets)},
        "stringData": {f"s{i}": v for i, v in enumerate(secrets)}})
    bundle.add_json("status.json", {"nested": {"deeper": [pick]}, pick[0]: "as a key"})
    archive = tmp_path_factory.mktemp("bundle") / "b.tar.gz"
    bundle.write(str(archive))
    members = _members(archive)
    assert _leaks(members, planted) == []
    secret = yaml.safe_load(members["objects/core/Secret/ns/s.yaml"])
    assert set(secret["data"]) == {f"k{i}" for i in range(len(secrets))}
    assert all(v.startswith(f"{redact.MASK} (") for v in secret["data"].values())


@PROPERTY
@given(token=_SECRET)
def test_every_report_is_redacted_before_it_is_serialized(token):
    """status/check/install -o json and -o yaml go through serialize: a registered credential
    never shows, whatever JSON or YAML would have made of it."""
    assume(not _touches_mask(token))
    redact.forget_all()
    redact.register(token)
    report = {"message": f"failed: {token}", "long": "word " * 40 + token, token: [token], "n": 1}
    for text in (json_text(report), json_text(report, ensure_ascii=False), yaml_text(report),
                 yaml_text(report, allow_unicode=True)):
        read = [text, *strings(yaml.safe_load(text))]
        assert not [f for f in _encodings(token) if any(f in s for s in read)]


def test_a_long_log_is_redacted_in_time(monkeypatch):
    """Many registered values and a 4 MiB log: the values present are searched, not all (work
    counted, not timed: the pattern run over the long text holds the one value in it)."""
    import re

    for i in range(300):
        redact.register(f"credential-value-{i:04d}-abcdef")
    log = ("E0101 12:00:00 reconcile failed: the same line again\n" * 80000) + "credential-value-0007-abcdef\n"
    redact.redact("warm")  # the pattern of every value is built once, before counting
    compiled: list[str] = []
    original = re.compile
    monkeypatch.setattr(redact.re, "compile", lambda pattern, *a: compiled.append(pattern) or original(pattern, *a))
    out = redact.scrub(log)
    assert "credential-value-0007" not in out
    present, absent = re.escape("credential-value-0007"), re.escape("credential-value-0008")
    assert compiled and all(present in p and absent not in p for p in compiled), compiled


# -- the collectors, against a cluster that plants secrets everywhere ---------------------------
@settings(PROPERTY, max_examples=max(3, EXAMPLES // 20))
@given(secrets=st.lists(_SECRET, min_size=1, max_size=2, unique=True))
def test_a_collected_bundle_holds_no_planted_secret(tmp_path_factory, secrets):
    """Every slot the bundle reads (an owned Secret's data and stringData; an owned ConfigMap's
    data and annotations, the Deployment's annotations and env, the recorded source, events,
    logs, a node, a CRD, plain and JSON-escaped and base64) holds the planted values."""
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.status import status
    from trainerctl.cluster.trainer import support

    assume(not any(_touches_mask(s) for s in secrets))
    redact.forget_all()
    tmp = tmp_path_factory.mktemp("planted")
    with HostileServer("planted", tls=True, planted=tuple(secrets)) as server:
        cluster = connect(str(server.kubeconfig(tmp / "kubeconfig", token="hostile-test-token-0123456789")))
        bundle = support.collect(session(cluster, "opendatahub"), status=lambda part: json.loads(json.dumps(status(session(part, "opendatahub")))))
        bundle.write(str(tmp / "b.tar.gz"))
    members = _members(tmp / "b.tar.gz")
    assert "objects/core/Secret/opendatahub/s1.yaml" in members and "logs/opendatahub/d1-5f7c9-x2k4q/c.log" in members
    assert _leaks(members, [*secrets, "hostile-test-token-0123456789"]) == []
    assert b"connecting with" in members["logs/opendatahub/d1-5f7c9-x2k4q/c.log"]


# -- member names ---------------------------------------------------------------------------
def _extract_both(archive: Path, tmp: Path) -> dict[str, list[str]]:
    """The archive extracted with tarfile's data filter and with GNU tar, each into its own folder
    inside `tmp`; what each wrote, relative to its folder. Anything written elsewhere fails."""
    out = {}
    for how in ("tarfile", "gnu-tar"):
        dest = tmp / how / "inside"
        dest.mkdir(parents=True)
        if how == "tarfile":
            with tarfile.open(archive) as tar:
                tar.extractall(dest, filter="data")
        else:
            subprocess.run(["tar", "-xzf", str(archive)], cwd=dest, check=True, capture_output=True)
        outside = [p for p in (tmp / how).rglob("*") if not p.is_relative_to(dest)]
        assert outside == [], outside
        written = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file() or p.is_symlink())
        assert not any(p.is_symlink() for p in dest.rglob("*"))
        out[how] = written
    return out


_NAME = st.one_of(st.text(max_size=80), st.sampled_from([
    "..", ".", "", "/", "../../../../tmp/pwned", "/etc/passwd", "a/../../b", "..\\..\\x", "\x00", "%2e%2e",
    "-", "_", "~", "a" * 400, "Ä" * 300, "REDACTED", "kubeflow-trainer", "x.y.z", "core", "_cluster", "c.previous",
    "c"]))


@settings(PROPERTY, max_examples=max(20, EXAMPLES // 2))  # GNU tar runs per example
@given(names=st.lists(st.tuples(_NAME, _NAME, _NAME, _NAME), min_size=1, max_size=6, unique=True))
def test_member_names_from_any_server_names_stay_inside_and_apart(tmp_path_factory, names):
    bundle = bundle_archive.Bundle(f"trainerctl-support-{bundle_archive.member_part(names[0][2])}-20260101T000000Z")
    for i, (group, kind, namespace, name) in enumerate(names):
        bundle.add_yaml(bundle_archive.object_file(group, kind, namespace, name), {"i": i})
        for previous in ("", ".previous"):
            bundle.add_text(f"logs/{bundle_archive.member_part(namespace)}/{bundle_archive.member_part(name)}/"
                            f"{bundle_archive.member_part(kind, 'label')}{previous}.log", str(i))
    assert len(bundle.files) == 3 * len(names)  # member_part never maps two names to one
    for part in (bundle_archive.member_part(p, rule) for t in names for p in t for rule in bundle_archive.RULES):
        assert part not in ("", ".", "..") and "/" not in part and "\\" not in part and "\0" not in part
        assert len(part) <= bundle_archive.MAX_PART
    tmp = tmp_path_factory.mktemp("names")
    bundle.write(str(tmp / "b.tar.gz"))
    extracted = _extract_both(tmp / "b.tar.gz", tmp)
    assert len(extracted["tarfile"]) == len(extracted["gnu-tar"]) == len(bundle.files)


def test_kubernetes_names_are_kept_as_they_are():
    assert bundle_archive.object_file("apps", "Deployment", "kubeflow-system", "kubeflow-trainer-controller-manager") == \
        "objects/apps/Deployment/kubeflow-system/kubeflow-trainer-controller-manager.yaml"
    assert bundle_archive.object_file("", "CustomResourceDefinition", "", "trainjobs.trainer.kubeflow.org") == \
        "objects/core/CustomResourceDefinition/_cluster/trainjobs.trainer.kubeflow.org.yaml"
    assert bundle_archive.member_part("../../../../tmp/pwned") == "%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E%2Ftmp%2Fpwned"


@pytest.mark.skipif(shutil.which("tar") is None, reason="GNU tar is not installed")
def test_a_bundle_from_a_server_with_hostile_names_extracts_inside(tmp_path):
    """The bad-names world: inventory entries and the objects the server answers named
    `../../../../tmp/pwned`, `..`, `.`, with NUL, of kind `../../ConfigMap`."""
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.trainer import support

    with HostileServer("bad-names", tls=True) as server:
        cluster = connect(str(server.kubeconfig(tmp_path / "kubeconfig")))
        bundle = support.collect(session(cluster, "opendatahub"), status=lambda part: {})
        bundle.write(str(tmp_path / "b.tar.gz"))
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        names = [m.name for m in tar.getmembers()]
        assert all(m.isfile() for m in tar.getmembers())
    assert not [n for n in names if ".." in n.split("/") or n.startswith("/") or HOSTILE_NAME in n], names
    assert any("%2E%2E%2F" in n for n in names), names  # the hostile objects are in it, escaped
    extracted = _extract_both(tmp_path / "b.tar.gz", tmp_path / "x")
    assert len(extracted["tarfile"]) == len(names)
