"""`-f FILE`'s documents through the parse cache (kustomize/cachedstream.py): for any text, a
cold read and a warm one give exactly what the whole-stream reader gives (or the same error),
and no Secret reaches the disk."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainerctl.kustomize import cachedstream, yamlio
from trainerctl.kustomize.errors import KustomizeError

SECRET_VALUE = "c3VwZXJzZWNyZXQtdmFsdWU="


def _read(text: str, cache):
    try:
        return "ok", json.dumps(cachedstream.load_all(text, "-f x", cache))
    except (KustomizeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _whole(text: str):
    try:
        return "ok", json.dumps(yamlio.load_all(text, "-f x"))
    except (KustomizeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _same_cold_and_warm(text: str, tmp_path_factory) -> None:
    cache = cachedstream.stream_cache(tmp_path_factory.mktemp("home"))
    expected = _whole(text)
    assert _read(text, cache) == expected  # cold: parsed, stored
    assert _read(text, cache) == expected  # warm: read back


# Lines a stream of objects is made of, the ones the cut must not misread among them: markers
# with and without text after them, directives, document ends, block scalars whose lines would
# be markers at the start of a line, quoted scalars across lines, flow collections, anchors.
LINES = st.sampled_from([
    "---", "--- ", "---\t# c", "--- {a: 1}", "--- |", "---x: 1", "----", "...", "... # end", "%YAML 1.2",
    "%TAG ! tag:x,2000:", "apiVersion: v1", "kind: ConfigMap", "kind: Secret", "metadata:", "  name: a",
    "data:", "  k: |", "    ---", "    text", "  q: \"a", "b\"", "  s: 'x", "--- y'", "  f: {a: 1,", "  b: 2}",
    "  l: [1,", "---", "2]", "  &x a: 1", "  b: *x", "key: value", "1: int key", "n: .nan", "t: 2001-12-14",
    "  - item", "- top", "# comment", "", "  ", "\t", "x: \"\\/\"", "y: a:b", "z: [a?b]", "v: on",
    f"  secret: {SECRET_VALUE}",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=30), small=st.booleans())
def test_any_stream_reads_as_the_whole_stream_reader_reads_it(lines, small, tmp_path_factory, monkeypatch):
    if small:  # every part large enough to be stored
        monkeypatch.setattr(cachedstream, "MIN_CHARS", 0)
    _same_cold_and_warm("\n".join(lines) + "\n", tmp_path_factory)


SCALARS = st.one_of(st.text(max_size=20), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
DOCS = st.lists(st.dictionaries(st.text(min_size=1, max_size=10), st.one_of(
    SCALARS, st.lists(SCALARS, max_size=4), st.dictionaries(st.text(max_size=5), SCALARS, max_size=4))),
    min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=DOCS, flow=st.sampled_from([None, True, False]), start=st.booleans(), comments=st.booleans())
def test_any_dumped_objects_read_back_the_same_cold_and_warm(docs, flow, start, comments, tmp_path_factory,
                                                             monkeypatch):
    import yaml

    monkeypatch.setattr(cachedstream, "MIN_CHARS", 0)
    text = yaml.safe_dump_all(docs, default_flow_style=flow, explicit_start=start, allow_unicode=True)
    if comments:
        text = "# head\n" + text.replace("\n---", "\n# between\n---")
    _same_cold_and_warm(text, tmp_path_factory)


def test_a_render_is_stored_but_its_secret_and_read_back_faster(tmp_path):
    crd = "".join(f"  field{i}: {'x' * 60}\n" for i in range(100))
    text = (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n{crd}---\n"
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: cert\ndata:\n  tls.key: {SECRET_VALUE}\n"
            f"  pad: {'y' * cachedstream.MIN_CHARS}\n")
    cache = cachedstream.stream_cache(tmp_path)
    assert cachedstream.load_all(text, "-f x", cache) == yamlio.load_all(text, "-f x")
    stored = list((tmp_path / "parsed").iterdir())
    assert len(stored) == 1  # the ConfigMap; the Secret, as large, is parsed every time
    assert all(SECRET_VALUE not in p.read_text() for p in stored)
    assert "big" in stored[0].read_text()


def test_an_entry_holding_a_secret_is_dropped_and_the_part_parsed(tmp_path):
    """An entry not written by this code (one holding a Secret) is never used."""
    part = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: " + "v" * cachedstream.MIN_CHARS + "\n"
    cache = cachedstream.stream_cache(tmp_path)
    cachedstream.load_all(part, "-f x", cache)
    (entry,) = (tmp_path / "parsed").iterdir()
    entry.write_text(json.dumps([{"kind": "Secret", "data": {"k": SECRET_VALUE}}]))
    assert cachedstream.load_all(part, "-f x", cache) == yamlio.load_all(part, "-f x")
    assert SECRET_VALUE not in entry.read_text()  # dropped, and the part's own parse stored again


@pytest.mark.parametrize("text", ["%YAML 1.2\n---\na: 1\n", "a: 1\n...\n---\nb: 2\n", "a: 1\r\n---\r\nb: 2\r\n",
                                  "\ufeffa: 1\n---\nb: 2\n", "--- |\n---\n", "a: \"x\n---\ny\"\n"])
def test_streams_the_cut_could_misread_are_read_whole(text, tmp_path, monkeypatch):
    monkeypatch.setattr(cachedstream, "MIN_CHARS", 0)
    cache = cachedstream.stream_cache(tmp_path)
    assert _read(text, cache) == _whole(text)
    assert _read(text, cache) == _whole(text)
