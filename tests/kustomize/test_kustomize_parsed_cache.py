"""The engine's cache (parsed resource files, large objects' YAML): a hit gives exactly what
parsing or writing gives, a bad entry only means doing it again, nothing holding a Secret reaches
the disk, and the folder is private."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainerctl.kustomize import build, build_yaml, cachedread, cachedwrite, yamlemit, yamlread
from trainerctl.kustomize.cachedread import MIN_CHARS, load_resources, resource_cache
from trainerctl.parsed_cache import ParsedCache, Storable

PADDING = "# " + "x" * MIN_CHARS + "\n"  # makes a file large enough to be cached

# Values whose type or text JSON could blur: ints of every base, floats that look integral,
# -0.0, huge ints, timestamps, YAML 1.1 words, keys out of order, numbers in annotations, labels
# and data (their texts are kept beside the value), unicode and escapes.
TRICKY = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: tricky
  labels: {version: 1.10, count: 010, flag: true, plain: text}
  annotations: {port: 8080, when: 2001-12-14, ratio: 0.50, hex: 0x1F, empty: ""}
zeta: last
alpha: first
data:
  n: 12
  f: 1.0
  e: 1e3
  neg: -0.0
  big: 123456789012345678901234567890
  oct: 0o17
  legacy_oct: 0755
  ts: 2001-12-14t21:59:43.10-05:00
  yes: yes
  on: on
  quoted: "123"
  null_word: null
  tilde: ~
  unicode: "caf\\u00e9 \\U0001F600 \\t"
  multi: |
    line one
    line two
list: [1, 1.5, "1", true, null, {b: 2, a: 1}, [nested]]
""" + PADDING


def _strict(value):
    """`value` with every type spelled out: 1, 1.0 and True differ; key order counts."""
    return repr(_typed(value))


def _typed(value):
    if isinstance(value, dict):
        return ("dict", type(value).__name__, [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _same(a: list, b: list) -> None:
    assert [(_strict(x.doc), x.marked, _strict(x.texts)) for x in a] == \
           [(_strict(x.doc), x.marked, _strict(x.texts)) for x in b]


def _cache_files(cache: ParsedCache) -> list[Path]:
    return sorted([*cache.dir.glob("*.json"), *cache.dir.glob("*.text")]) if cache.dir.is_dir() else []


def test_a_hit_gives_exactly_what_parsing_gives(tmp_path, monkeypatch):
    cache = resource_cache(tmp_path / "cache")
    parsed = yamlread.load_documents(TRICKY, "t.yaml", raw_annotations=True)
    assert parsed[0].texts  # the texts of labels and data are part of what is compared
    _same(load_resources(TRICKY, "t.yaml", cache), parsed)  # a miss: parsed and stored
    assert len(_cache_files(cache)) == 1

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed although cached")

    monkeypatch.setattr(yamlread, "load_documents", no_parse)
    _same(load_resources(TRICKY, "t.yaml", cache), parsed)


def test_every_upstream_file_reads_back_exactly(tmp_path, upstream):
    cache = resource_cache(tmp_path / "cache")
    checked = 0
    for path in sorted(upstream.rglob("*.yaml")):
        text = path.read_text(errors="replace")
        try:
            parsed = yamlread.load_documents(text, str(path), raw_annotations=True)
        except Exception:  # noqa: BLE001 - not a resource file kustomize could read either
            continue
        if len(text) < MIN_CHARS or any(d.marked for d in parsed):
            continue
        key = cache.key(text.encode(), cachedread.parser_tag())
        if not cache.put(key, Storable.documents([d.doc for d in parsed], cachedread._encode(parsed))):
            continue  # a Secret, or a value JSON cannot hold
        _same(load_resources(text, str(path), cache), parsed)
        checked += 1
    assert checked > 20


def test_a_build_reads_the_same_from_a_cold_and_a_warm_cache(tmp_path, upstream):
    rhoai = str(upstream / "opendatahub-trainer" / "main-d140e85" / "manifests" / "rhoai")
    cache = resource_cache(tmp_path / "cache")
    plain = build_yaml(rhoai)
    assert build_yaml(rhoai, parsed_cache=cache) == plain  # cold: parses and stores
    assert _cache_files(cache)
    assert build_yaml(rhoai, parsed_cache=cache) == plain  # warm: read back


def test_values_json_cannot_hold_are_not_stored(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    nan = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\nvalue: .nan\n" + PADDING
    bare = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\nvalue:\n" + PADDING  # a Mapping
    for text in (nan, bare):
        docs = load_resources(text, "x.yaml", cache)
        assert repr(docs[0].doc) == repr(yamlread.load_documents(text, "x.yaml", raw_annotations=True)[0].doc)
    assert _cache_files(cache) == []
    assert isinstance(load_resources(bare, "x.yaml", cache)[0].doc, yamlread.Mapping)


@pytest.mark.parametrize("garbage", [b"{not json", b"[]", b'[["only one"]]', b'{"a": 1}',
                                     b'[[null, null]]', b'[[{"kind": "X"}, [["a"]]]]', b"\xff\xfe"])
def test_a_corrupt_entry_means_parsing_again(tmp_path, garbage):
    cache = resource_cache(tmp_path / "cache")
    parsed = yamlread.load_documents(TRICKY, "t.yaml", raw_annotations=True)
    load_resources(TRICKY, "t.yaml", cache)
    (entry,) = _cache_files(cache)
    entry.write_bytes(garbage)
    _same(load_resources(TRICKY, "t.yaml", cache), parsed)


def test_an_unusable_cache_folder_means_parsing_every_time(tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "kustomize").write_text("a file where the folder should be")
    cache = resource_cache(tmp_path / "cache")
    parsed = yamlread.load_documents(TRICKY, "t.yaml", raw_annotations=True)
    _same(load_resources(TRICKY, "t.yaml", cache), parsed)
    _same(load_resources(TRICKY, "t.yaml", cache), parsed)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache2").mkdir()
    (tmp_path / "cache2" / "kustomize").symlink_to(outside)  # never written through
    _same(load_resources(TRICKY, "t.yaml", resource_cache(tmp_path / "cache2")), parsed)
    assert list(outside.iterdir()) == []


SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: parsed-cache-canary-42}\n"


@pytest.mark.parametrize("text", [
    SECRET,
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + SECRET,
    "apiVersion: v1\nkind: List\nitems:\n- " + SECRET.replace("\n", "\n  ").rstrip() + "\n",
    'apiVersion: v1\nkind: "Secret"\nmetadata: {name: s}\ndata: {p: cGFyc2VkLWNhY2hlLWNhbmFyeS00Mg==}\n',
])
def test_nothing_holding_a_secret_is_stored(tmp_path, text):
    cache = resource_cache(tmp_path / "cache")
    load_resources(text + PADDING, "s.yaml", cache)
    assert _cache_files(cache) == []


def test_a_stored_secret_is_removed_unread(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    load_resources(TRICKY, "t.yaml", cache)
    (entry,) = _cache_files(cache)
    planted = json.loads(entry.read_text())
    planted[0][0]["kind"] = "Secret"
    entry.write_text(json.dumps(planted, separators=(",", ":")))
    docs = load_resources(TRICKY, "t.yaml", cache)
    assert docs[0].doc["kind"] == "ConfigMap"  # parsed again
    assert all(b"Secret" not in p.read_bytes() for p in _cache_files(cache))


def test_the_folder_is_private_and_stays_bounded(tmp_path):
    cache = ParsedCache(tmp_path / "cache" / "parsed", keep=3)
    for i in range(6):
        assert cache.put(cache.key(str(i).encode()), Storable.documents([{"i": i}]))
        os.utime(cache._path(cache.key(str(i).encode())), (i + 1, i + 1))
    assert stat.S_IMODE(cache.dir.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in _cache_files(cache))
    ParsedCache(cache.dir, keep=3).put(cache.key(b"new"), Storable.documents([]))  # the next process prunes
    kept = sorted(json.dumps(json.loads(p.read_text())) for p in _cache_files(cache))
    assert kept == sorted(['[{"i": 4}]', '[{"i": 5}]', "[]"])  # the newest by last use


def test_the_kustomize_command_keeps_its_parses_in_the_cache_dir(tmp_path, upstream):
    rhoai = upstream / "opendatahub-trainer" / "main-d140e85" / "manifests" / "rhoai"
    env = {**os.environ, "TRAINERCTL_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(rhoai)], env=env,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == build_yaml(str(rhoai))
    folder = tmp_path / "cache" / "kustomize"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and list(folder.iterdir())


def _large(kind: str = "ConfigMap", **extra) -> dict:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "big"},
            "data": {f"k{i}": f"value {i} " * 20 for i in range(200)}, **extra}


def test_a_written_object_reads_back_as_the_emitter_writes_it(tmp_path, monkeypatch, upstream):
    rhoai = str(upstream / "opendatahub-trainer" / "main-d140e85" / "manifests" / "rhoai")
    cache = resource_cache(tmp_path / "cache")
    objects = build(rhoai) + [_large(), _large(extra={"n": 1, "f": 1.0, "b": True, "z": None})]
    plain = yamlemit.dump_all(objects)
    assert cachedwrite.dump_all(objects, cache) == plain  # cold: written and stored
    stored = len(_cache_files(cache))
    assert stored >= 4
    real_dump = yamlemit.dump

    def small_only(obj):
        assert len(json.dumps(obj)) < cachedwrite.MIN_BYTES, "written although cached"
        return real_dump(obj)

    monkeypatch.setattr(yamlemit, "dump", small_only)
    assert cachedwrite.dump_all(objects, cache) == plain  # warm: read back
    assert len(_cache_files(cache)) == stored


def test_a_corrupt_written_entry_means_writing_again(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    objects = [_large()]
    plain = yamlemit.dump_all(objects)
    cachedwrite.dump_all(objects, cache)
    (entry,) = _cache_files(cache)
    for garbage in (b"[1, 2]", b'"no newline at the end"', b"{broken"):
        entry.write_bytes(garbage)
        assert cachedwrite.dump_all(objects, cache) == plain


def test_a_secret_is_never_written_to_the_cache(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    secret = _large("Secret")
    listed = {"apiVersion": "v1", "kind": "List", "items": [_large(), secret]}
    assert cachedwrite.dump_all([secret, listed], cache) == yamlemit.dump_all([secret, listed])
    assert _cache_files(cache) == []


def test_what_json_cannot_say_is_written_directly(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    with pytest.raises(Exception) as direct:
        yamlemit.dump_all([_large(extra={"x": float("nan")})])
    with pytest.raises(type(direct.value)):
        cachedwrite.dump_all([_large(extra={"x": float("nan")})], cache)
    assert _cache_files(cache) == []


# --- small files: one entry per build root -------------------------------------------------

SMALL_TRICKY = TRICKY.replace(PADDING, "")
KUSTOMIZATION = "resources: [a.yaml]\nnamePrefix: p-\nlabels:\n- pairs: {mode: yes, count: 010, f: 1.0}\n"


def _no_parse(*args, **kwargs):
    raise AssertionError("parsed although cached")


def test_small_files_are_kept_together_and_read_back_exactly(tmp_path, monkeypatch):
    cache = resource_cache(tmp_path / "cache")
    assert len(SMALL_TRICKY) < MIN_CHARS
    parsed = yamlread.load_documents(SMALL_TRICKY, "t.yaml", raw_annotations=True)
    kparsed = yamlread.load_all(KUSTOMIZATION, "k", yaml11=True)
    small = cachedread.SmallParses(cache, "/a/root")
    _same(load_resources(SMALL_TRICKY, "t.yaml", cache, small), parsed)
    assert _strict(cachedread.load_yaml11(KUSTOMIZATION, "k", cache, small)) == _strict(kparsed)
    small.save()
    assert len(_cache_files(cache)) == 1  # both in the root's one entry

    monkeypatch.setattr(cachedread, "_parse", _no_parse)
    small = cachedread.SmallParses(cache, "/a/root")
    first = load_resources(SMALL_TRICKY, "t.yaml", cache, small)
    second = load_resources(SMALL_TRICKY, "t.yaml", cache, small)
    _same(first, parsed)
    _same(second, parsed)
    assert first[0].doc["data"] is not second[0].doc["data"]  # a transformer may edit either
    assert _strict(cachedread.load_yaml11(KUSTOMIZATION, "k", cache, small)) == _strict(kparsed)


def test_a_warm_build_parses_no_file_it_could_keep(tmp_path, monkeypatch, upstream):
    """Kustomizations, resources, patches and configurations alike: on a warm build, the only
    YAML parsed is what the cache may not keep."""
    real = yamlread.load_documents

    def only_unkept(text, source="<input>", *, yaml11=False, raw_annotations=False):
        docs = real(text, source, yaml11=yaml11, raw_annotations=raw_annotations)
        storable = Storable.kustomization if yaml11 else Storable.documents
        assert any(d.marked for d in docs) or storable([d.doc for d in docs]) is None, \
            f"{source}: parsed although cached"
        return docs

    for tree in ("opendatahub-trainer/odh-3.5.0/manifests/rhoai",
                 "opendatahub-trainer/main-d140e85/manifests/rhoai"):
        path = str(upstream / tree)
        cache = resource_cache(tmp_path / tree.replace("/", "_"))
        plain = build_yaml(path)
        assert build_yaml(path, parsed_cache=cache) == plain
        with monkeypatch.context() as m:
            m.setattr(yamlread, "load_documents", only_unkept)
            assert build_yaml(path, parsed_cache=cache) == plain


def test_the_small_entry_holds_what_the_last_build_read(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    other = SMALL_TRICKY.replace("name: tricky", "name: other")
    small = cachedread.SmallParses(cache, "root")
    load_resources(SMALL_TRICKY, "t.yaml", cache, small)
    load_resources(other, "o.yaml", cache, small)
    small.save()
    small = cachedread.SmallParses(cache, "root")
    load_resources(SMALL_TRICKY, "t.yaml", cache, small)
    small.save()
    (entry,) = _cache_files(cache)
    assert len(json.loads(entry.read_text())) == 1


@pytest.mark.parametrize("text", [
    "secretGenerator:\n- name: s\n  literals: [password=kustomization-canary-42]\n",
    "SECRETGENERATOR:\n- name: s\n  LITERALS: [password=kustomization-canary-42]\n",
    "resources: [a.yaml]\npatches:\n- patch: |\n    apiVersion: v1\n    kind: Secret\n"
    "    metadata: {name: s}\n    stringData: {p: kustomization-canary-42}\n",
    "generators:\n- |\n  apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n"
    "  stringData: {p: kustomization-canary-42}\n",
])
@pytest.mark.parametrize("padding", ["", PADDING])
def test_a_kustomization_that_can_hold_a_secret_payload_is_not_kept(tmp_path, text, padding):
    cache = resource_cache(tmp_path / "cache")
    small = cachedread.SmallParses(cache, "root")
    assert cachedread.load_yaml11(text + padding, "k", cache, small)
    small.save()
    assert all(b"canary" not in p.read_bytes() for p in _cache_files(cache))


def test_a_secret_planted_in_the_small_entry_is_never_read_and_is_dropped(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    small = cachedread.SmallParses(cache, "root")
    load_resources(SMALL_TRICKY, "t.yaml", cache, small)
    small.save()
    (entry,) = _cache_files(cache)
    stored = json.loads(entry.read_text())
    (key,) = stored
    planted = json.loads(stored[key])
    planted[0][0]["kind"] = "Secret"
    stored[key] = json.dumps(planted, separators=(",", ":"))
    entry.write_text(json.dumps(stored))
    small = cachedread.SmallParses(cache, "root")
    assert load_resources(SMALL_TRICKY, "t.yaml", cache, small)[0].doc["kind"] == "ConfigMap"
    small.save()
    assert all(b"Secret" not in p.read_bytes() for p in _cache_files(cache))


@pytest.mark.parametrize("garbage", [b"{not json", b"[]", b'{"k": 1}', b"\xff\xfe", "KEY:not json",
                                     "KEY:[[null, null]]", "KEY:[1]"])
def test_a_corrupt_small_entry_means_parsing_again(tmp_path, garbage):
    cache = resource_cache(tmp_path / "cache")
    parsed = yamlread.load_documents(SMALL_TRICKY, "t.yaml", raw_annotations=True)
    small = cachedread.SmallParses(cache, "root")
    load_resources(SMALL_TRICKY, "t.yaml", cache, small)
    small.save()
    (entry,) = _cache_files(cache)
    if isinstance(garbage, str):  # the real key, holding something this module did not write
        (key,) = json.loads(entry.read_text())
        garbage = json.dumps({key: garbage[4:]}).encode()
    entry.write_bytes(garbage)
    _same(load_resources(SMALL_TRICKY, "t.yaml", cache, cachedread.SmallParses(cache, "root")), parsed)


# --- large objects' YAML ---------------------------------------------------------------------

def test_a_cut_off_or_swapped_yaml_entry_means_writing_again(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    objects = [_large(), _large(extra={"other": 1})]
    plain = yamlemit.dump_all(objects)
    cachedwrite.dump_all(objects, cache)
    first, second = _cache_files(cache)
    whole = first.read_bytes()
    first.write_bytes(whole[: len(whole) // 2].rsplit(b"\n", 1)[0] + b"\n")  # cut at a line's end
    assert cachedwrite.dump_all(objects, cache) == plain
    first.write_bytes(second.read_bytes())  # another object's text under this one's name
    assert cachedwrite.dump_all(objects, cache) == plain


def test_every_process_finds_the_entries_of_the_last(tmp_path, upstream):
    """The output cache's keys depend on the values alone (not on which strings a process
    happened to share), so a second run writes no entry the first did not."""
    rhoai = upstream / "opendatahub-trainer" / "odh-3.5.0" / "manifests" / "rhoai"
    env = {**os.environ, "TRAINERCTL_CACHE_DIR": str(tmp_path / "cache")}
    folder = tmp_path / "cache" / "kustomize"
    seen = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(rhoai)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        seen.append(sorted(p.name for p in folder.iterdir()))
    assert seen[0] == seen[1] and any(name.endswith(".text") for name in seen[0])


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20)


@settings(max_examples=int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "200")), derandomize=True,
          deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_VALUES)
def test_a_large_objects_yaml_from_the_cache_is_what_the_emitter_writes(tmp_path_factory, value):
    """For any value: a cold and a warm write give the emitter's text, and an equal value made of
    other objects (as another process reads it) finds the same entry."""
    cache = resource_cache(tmp_path_factory.mktemp("cache"))
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "value": value,
           "pad": "p" * cachedwrite.MIN_BYTES}
    try:
        plain = yamlemit.dump(obj)
    except Exception as exc:  # noqa: BLE001 - whatever the emitter refuses, the cache refuses too
        with pytest.raises(type(exc)):
            cachedwrite.dump_all([obj], cache)
        return
    assert cachedwrite.dump_all([obj], cache) == plain
    stored = _cache_files(cache)
    assert len(stored) == 1
    rebuilt = json.loads(json.dumps(obj))
    assert cachedwrite.dump_all([rebuilt], cache) == plain
    assert _cache_files(cache) == stored


def test_values_that_differ_only_in_type_never_share_an_entry(tmp_path):
    cache = resource_cache(tmp_path / "cache")
    twins = [1, 1.0, True, "1", None, "", 0, False, -0.0, 0.0, [1], {"1": 1}]
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "value": v,
                "pad": "p" * cachedwrite.MIN_BYTES} for v in twins]
    for _ in range(2):  # cold, then every one from its own entry
        for obj in objects:
            assert cachedwrite.dump_all([obj], cache) == yamlemit.dump(obj), obj["value"]
    assert len(_cache_files(cache)) == len(twins)


def test_the_cache_stores_only_storables_and_a_storable_is_made_only_checked(tmp_path):
    cache = ParsedCache(tmp_path / "cache", keep=3)
    with pytest.raises(TypeError):
        cache.put(cache.key(b"x"), [{"kind": "ConfigMap"}])  # a bare value: no check was made
    with pytest.raises(TypeError):
        Storable(b'[{"kind":"Secret"}]', ".json", object())
    assert _cache_files(cache) == []


_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_VALUES = st.recursive(_JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=20)


@given(value=_VALUES, path=st.lists(st.integers(min_value=0, max_value=7), max_size=6),
       shape=st.sampled_from(["Secret", "List", "Template"]))
@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_secret_anywhere_in_a_value_makes_it_unstorable(value, path, shape):
    """Whatever surrounds it, a value holding a Secret object gives no Storable of any kind."""
    secret = {"apiVersion": "v1", "kind": "Secret", "stringData": {"p": "storable-canary-42"}}
    if shape == "List":
        secret = {"apiVersion": "v1", "kind": "List", "items": [secret]}
    elif shape == "Template":
        secret = {"apiVersion": "template.openshift.io/v1", "kind": "Template", "objects": [secret]}
    holder = [value]
    node = holder
    for step in path:  # walk into the value as far as it goes, then put the Secret there
        child = node[step % len(node)] if isinstance(node, list) and node else None
        if isinstance(node, dict) and node:
            child = node[sorted(node)[step % len(node)]]
        if not isinstance(child, (list, dict)):
            break
        node = child
    if isinstance(node, list):
        node.append(secret)
    else:
        node["planted"] = secret
    assert Storable.documents(holder) is None
    assert Storable.kustomization(holder) is None
    assert Storable.text("k", holder, "text") is None


@pytest.mark.parametrize("text", [
    "patches:\n- target: {kind: Secret}\n  patch: '[{\"op\": \"add\", \"path\": \"/data/p\", \"value\": \"Y2FuYXJ5\"}]'\n",
    "patchesStrategicMerge:\n- '{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"stringData\": {\"p\": \"canary\"}}'\n",
    "helmCharts:\n- name: x\n  valuesInline: {password: canary}\n",
])
def test_a_kustomization_with_a_one_line_inline_document_or_helm_values_is_not_kept(text):
    assert Storable.kustomization(yamlread.load_all(text, "k", yaml11=True)) is None
