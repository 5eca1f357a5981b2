"""What a person watching a cluster run sees: on a terminal one live line per stage, fit to the
terminal's width a whole word at a time, ending done or failed with its counts; every object only
with -v; plain output (not a terminal, CI, NO_COLOR, TERM=dumb) one line per event as before.

The terminal is a real pseudo-terminal (tests/support/terminal.py); the cluster runs are in
tests/cluster/test_install_terminal.py."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, strategies as st

from tests.support.properties import PROPERTY
from tests.support.terminal import run_in_terminal, screen_lines
from trainerctl import ui
from trainerctl.cluster.manager.report import ObjectResult, Report
from trainerctl.stage_lines import MORE, Stage, cut, fit

WORD = st.text(st.sampled_from("abcdefghij-/.=()0123456789"), min_size=1, max_size=30)
ITEM = st.lists(WORD, min_size=1, max_size=6).map(" ".join)
HEAD = "controllers: waiting for"


def _words(text: str) -> set[str]:
    return {w.rstrip(" ,;:(") for w in text.split(" ")}


@PROPERTY
@given(items=st.lists(ITEM, max_size=5), width=st.integers(1, 160), seconds=st.integers(0, 999))
def test_a_waiting_line_fits_the_width_and_never_cuts_a_word(items, width, seconds):
    line = fit(HEAD, items, width, f"({seconds}s)")
    assert len(line) <= width, line
    known = set().union(*map(_words, items), _words(HEAD), {"and", "more", f"+{len(items) - 1}", f"({seconds}s)"})
    for word in line.split(" "):
        whole = word.removesuffix(MORE).rstrip(" ,;:(")
        assert not whole or whole in known or whole.isdigit(), (word, line)


@PROPERTY
@given(text=st.lists(WORD, min_size=1, max_size=12).map(" ".join), width=st.integers(0, 120))
def test_cut_keeps_whole_words(text, width):
    shown = cut(text, width)
    assert len(shown) <= width
    if len(text) <= width:
        assert shown == text
    else:
        assert shown in ("", MORE) or (shown.endswith(MORE) and text.startswith(shown[:-1]))
        assert _words(shown.removesuffix(MORE)) <= _words(text) | {""}


def test_on_a_normal_width_terminal_the_object_waited_for_is_named_whole():
    items = ["Deployment kubeflow-trainer-controller-manager (1 of 2 updated replica(s) available)",
             "Service kubeflow-trainer-controller-manager (no ready endpoint)"]
    stage = Stage("webhooks", 2, {"created": 2}, waiting=items, waited=12)
    # 80 columns, the spinner's two taken
    assert stage.running(78) == "webhooks: waiting for Deployment kubeflow-trainer-controller-manager… +1 (12s)"
    assert stage.running(98) == ("webhooks: waiting for Deployment kubeflow-trainer-controller-manager (1 of 2… "
                                 "and 1 more (12s)")
    assert stage.running(200) == f"webhooks: waiting for {items[0]}, {items[1]} (12s)"
    assert stage.finished() == "webhooks: 2 created, ready after 12s"
    assert Stage("runtimes", 3, {"failed": 1, "would be created": 2}).finished() == "runtimes: 2 would be created, 1 failed"
    assert Stage("CRDs", 4, {"unchanged": 3, "configured": 1}).running(80) == "CRDs: 4/4 object(s)"


def test_plain_output_is_decided_as_the_docs_say(monkeypatch):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    for name in ("CI", "NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    assert not ui.plain_output()
    for name, value in (("CI", "true"), ("NO_COLOR", "1"), ("TERM", "dumb")):
        monkeypatch.setenv(name, value)
        assert ui.plain_output(), name
        monkeypatch.delenv(name)


def test_the_text_report_leaves_the_objects_to_the_stage_lines():
    report = Report("install", seconds=1.0)
    report.add(ObjectResult("ConfigMap", "c", "ns", "", "config", "created"))
    assert report.text() == "ConfigMap ns/c created\ninstall: 1 created (1.0s)\n"
    assert report.text(objects=False) == "install: 1 created (1.0s)\n"


# A run as the install pipeline reports it (pipeline.py, staged.py), without a cluster.
RUN = """
import sys
from trainerctl.trust import stdio
stdio.install()
from trainerctl.ui import Progress
p = Progress(5, verbose="-v" in sys.argv)
p.name_stages({"crds": "CRDs", "webhooks": "webhooks"})
p.step("preflight"); p.stage_done("9 check(s)")
p.stage("crds", 2)
for name in ("a.x", "b.x"):
    p.object_done(f"CustomResourceDefinition.apiextensions.k8s.io {name}", "created")
p.stage_done()
p.stage("webhooks", 3)
p.object_done("ValidatingWebhookConfiguration v", "created")
p.object_done("MutatingWebhookConfiguration m", "unchanged")
p.waiting("Deployment ns/d", 3, items=["Deployment d (0 of 1 updated replica(s) available)"])
p.object_done("ConfigMap ns/c", "failed", "denied")
p.close(ok=False)
print("lists objects:", p.lists_objects)
"""


def test_a_terminal_sees_one_line_per_stage_and_with_v_every_object(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(RUN)
    lines = screen_lines(run_in_terminal([sys.executable, str(script)], columns=80).output)
    assert lines == ["✓ preflight: 9 check(s)", "✓ CRDs: 2 created", "ConfigMap ns/c failed (denied)",
                     "✗ webhooks: 1 created, 1 unchanged, 1 failed, waited 3s", "lists objects: False"], lines
    verbose = screen_lines(run_in_terminal([sys.executable, str(script), "-v"], columns=80).output)
    assert verbose == ["✓ preflight: 9 check(s)",
                       "CustomResourceDefinition.apiextensions.k8s.io a.x created",
                       "CustomResourceDefinition.apiextensions.k8s.io b.x created",
                       "✓ CRDs: 2 created",
                       "ValidatingWebhookConfiguration v created",
                       "MutatingWebhookConfiguration m unchanged",
                       "ConfigMap ns/c failed (denied)",
                       "✗ webhooks: 1 created, 1 unchanged, 1 failed, waited 3s", "lists objects: False"], verbose


@pytest.mark.parametrize("env", [{"CI": "true"}, {"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_plain_mode_on_a_terminal_lists_every_event_as_before(tmp_path, env):
    script = tmp_path / "run.py"
    script.write_text(RUN)
    lines = screen_lines(run_in_terminal([sys.executable, str(script)], columns=80, env=env).output)
    assert lines == ["stage crds: 2 object(s)",
                     "CustomResourceDefinition.apiextensions.k8s.io a.x created",
                     "CustomResourceDefinition.apiextensions.k8s.io b.x created",
                     "stage webhooks: 3 object(s)",
                     "ValidatingWebhookConfiguration v created",
                     "MutatingWebhookConfiguration m unchanged",
                     "waiting for Deployment ns/d (3s)",
                     "ConfigMap ns/c failed (denied)", "lists objects: True"], lines
