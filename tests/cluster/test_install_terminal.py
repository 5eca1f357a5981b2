"""`trainerctl install` as a person sees it on a terminal (a real pseudo-terminal, 100 columns): one
line per stage ending done with its counts, the summary and the command to run next, and no line
per object; with -v every object once; with -o json, and in plain mode (CI=true) on the same
terminal, every object as before. kubeflow/trainer v2.3.0 `overlays/manager` against a fresh API
server, the fake controller of the install tests answering the webhooks."""

from __future__ import annotations

import json
import re
import sys

import pytest
import yaml

from tests.support.cluster import FakeController, kubeflow_objects
from tests.support.terminal import run_in_terminal, screen_lines

pytestmark = pytest.mark.cluster

NS = "kubeflow-system"
# The stages of a fresh install of this overlay (it has no runtimes), in order, as the terminal names them.
TITLES = ("preflight", "CRDs", "namespace", "RBAC", "config", "controllers", "webhooks")
DONE = re.compile(r"^✓ (?P<title>[^:]+): (?P<said>.*)$")


def _install(api, rendered, tmp_path, *extra: str, **how):
    ran = run_in_terminal([sys.executable, "-m", "trainerctl", "install", "-f", str(rendered), "-n", NS,
                           "--kubeconfig", api.kubeconfig, "--timeout", "120", *extra], cwd=str(tmp_path), **how)
    return ran, screen_lines(ran.output)


def _displays(objects: list[dict]) -> set[str]:
    """Each object as its line names it (report.ObjectResult.display)."""
    out = set()
    for obj in objects:
        group = obj["apiVersion"].rpartition("/")[0]
        kind = f"{obj['kind']}.{group}" if group else obj["kind"]
        ns = obj["metadata"].get("namespace", "")
        out.add(f"{kind} {ns}/{obj['metadata']['name']}" if ns else f"{kind} {obj['metadata']['name']}")
    return out


def _object_lines(lines: list[str], displays: set[str]) -> list[str]:
    return [line for line in lines if line.rpartition(" ")[0] in displays]


@pytest.fixture
def rendered(tmp_path):
    objects = kubeflow_objects()
    path = tmp_path / "trainer.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return objects, path


def test_a_terminal_sees_one_line_per_stage_a_summary_and_the_next_command(env, rendered, tmp_path):
    objects, path = rendered
    with FakeController(env, objects):
        ran, lines = _install(env, path, tmp_path)
        assert ran.code == 0, ran.output
        done = [m for m in map(DONE.match, lines) if m]
        assert [m["title"] for m in done] == list(TITLES), lines
        assert re.fullmatch(r"\d+ check\(s\)(, \d+ warning\(s\))?", done[0]["said"]), done[0]["said"]
        counts = [re.fullmatch(r"(\d+) created(, ready after \d+s)?", m["said"]) for m in done[1:]]
        assert all(counts), lines
        assert sum(int(c[1]) for c in counts) == len(objects)
        # No line per object: the stage lines, the summary and what to run next are all there is.
        assert not _object_lines(lines, _displays(objects)), lines
        assert re.fullmatch(rf"install: {len(objects)} created \(\d+\.\ds\)", lines[-2]), lines
        assert lines[-1] == f"next: trainerctl verify -n {NS} --kubeconfig {env.kubeconfig}", lines
        # nothing else between them but the revision recorded (the preflight warned of nothing)
        assert lines[len(done):-2] == ["history: revision 1 recorded"], lines
        # -o json on the same terminal: the stage lines there, every object in the JSON.
        with open(tmp_path / "report.json", "w") as out:
            again, lines = _install(env, path, tmp_path, "-o", "json", stdout=out)
    assert again.code == 0, again.output
    assert [m["title"] for m in map(DONE.match, lines) if m] == list(TITLES), lines
    assert all(line.endswith(" unchanged") for line in lines[1:len(TITLES)]), lines
    assert lines[len(TITLES):] == [f"next: trainerctl verify -n {NS} --kubeconfig {env.kubeconfig}"], lines
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["objects"]) == len(objects) and report["summary"] == {"changed": 0, "unchanged": len(objects)}


def test_with_v_and_in_plain_mode_every_object_is_listed(env, rendered, tmp_path):
    objects, path = rendered
    displays = _displays(objects)
    with FakeController(env, objects):
        ran, lines = _install(env, path, tmp_path, "-v")
        assert ran.code == 0, ran.output
        listed = _object_lines(lines, displays)
        assert sorted(listed) == sorted(f"{d} created" for d in displays), lines  # each once, live
        assert [m["title"] for m in map(DONE.match, lines) if m] == list(TITLES), lines
        # CI=true: plain lines, one per event, whatever the terminal (as CI's logs read them).
        plain, lines = _install(env, path, tmp_path, env={"CI": "true"})
    assert plain.code == 0, plain.output
    assert not any(DONE.match(line) for line in lines), lines
    assert any(re.fullmatch(r"stage crds: \d+ object\(s\)", line) for line in lines), lines
    assert sorted(_object_lines(lines, displays)) == sorted(f"{d} unchanged" for d in displays), lines
    assert re.fullmatch(rf"install: {len(objects)} unchanged \(\d+\.\ds\)", lines[-1]), lines
