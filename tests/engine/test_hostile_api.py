"""Every cluster command against a hostile API server (tests/support/hostile_api.py).

Whatever the server does (garbage, null, [], truncated or endless bodies, escape sequences, a
drip feed, silence, redirects, 429s with either form of Retry-After, discovery documents of the
wrong shape; and, in an installed world, wrong-shaped Leases, pods, events and Helm records,
endless or dripping logs), each command ends in time, with at most one `error:` line (the last
line), one of the documented exit codes, no traceback, no terminal escape sequence, no line of
unbounded length, and no credential sent anywhere but to the server it was meant for. Where a
command can go on past an object that does not fit (status, the support bundle, install past a
Helm record), it names the object and goes on; where it cannot, it refuses (exit 3) before writing,
and a Lease that does not fit is a lock held by an unknown holder (waited for, exit 4).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.hostile_api import ANSWER_VARIANTS, LEASE_VARIANTS, MODES, OBJECTS, WORLD_MODES, HostileServer


# Every command that talks to a cluster, with the flags that make it reach the server quickly.
# (Commands added later belong here too.)
COMMANDS = {
    "install": ["install", "-f", "{objects}", "--no-wait", "--timeout", "5"],
    "uninstall": ["uninstall", "--yes", "--timeout", "5"],
    "diff": ["diff", "-f", "{objects}"],
    "status": ["status"],
    "upgrade-check": ["upgrade-check", "-f", "{objects}"],
    "check": ["check", "-f", "{objects}"],
    "support-bundle": ["support-bundle"],
    "verify": ["verify", "--timeout", "5"],
}
COMMAND_TIMEOUT = 6  # TRAINERCTL_COMMAND_TIMEOUT: a drip feed or a silent server ends here
HANG = 120  # the harness stops a command still running after this: a hang, named by _check
# A log read and a support bundle's part give up sooner, so the world modes show the command
# going on past them within COMMAND_TIMEOUT.
LIMITS = {"TRAINERCTL_LOG_TIMEOUT": "2", "TRAINERCTL_BUNDLE_PART_TIMEOUT": "3"}
LATER = ("garbage", "null", "wrong-shape", "escapes", "truncated", "huge", "500-json-list", "array")


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def _cases() -> list[tuple[str, str, int]]:
    cases = [(cmd, mode, 0) for cmd in COMMANDS for mode in MODES]
    # Healthy at first, hostile later: the answers deeper in a command's work are checked too.
    cases += [(cmd, mode, after) for cmd in ("install", "status", "diff") for mode in LATER for after in (3, 8)]
    return cases


def _run_case(cmd: str, mode: str, after: int, tmp: Path, *, variant: str = "",
              env_extra: dict | None = None, extra: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess, list, list]:
    """One command against one server; a bad-lease world's variant, unless given, by the command
    (so the matrix meets every wrong-shaped Lease)."""
    tmp.mkdir(parents=True, exist_ok=True)
    objects = tmp / "objects.yaml"
    objects.write_text(OBJECTS)
    variants = list(ANSWER_VARIANTS) if mode == "bad-answers" else LEASE_VARIANTS
    variant = variant or variants[list(COMMANDS).index(cmd) % len(variants)]
    with HostileServer("healthy", tls=True) as elsewhere, \
            HostileServer(mode, healthy_requests=after, tls=True, drip_seconds=1.0,
                          redirect_to=elsewhere.url, variant=variant) as server:
        kubeconfig = server.kubeconfig(tmp / "kubeconfig", token="hostile-test-token-0123456789")
        env = {**os.environ, "TRAINERCTL_COMMAND_TIMEOUT": str(COMMAND_TIMEOUT), "TRAINERCTL_MAX_API_RESPONSE": "4Mi",
               "HOME": str(tmp), "TRAINERCTL_CACHE_DIR": str(tmp / "cache"), "NO_COLOR": "1", "CI": "true",
               "KUBECONFIG": str(kubeconfig), **LIMITS, **(env_extra or {})}
        args = [a.format(objects=objects) for a in COMMANDS[cmd]] + list(extra)
        proc = _ended(subprocess.run, [*_entry(), *args], capture_output=True, text=True, env=env, cwd=tmp,
                      stdin=subprocess.DEVNULL, timeout=HANG)
        return proc, list(server.requests), list(elsewhere.requests)


def _ended(run, args, **kwargs) -> subprocess.CompletedProcess:
    """The command's result; one still running after HANG seconds (a harness guard far past every
    deadline, not a speed claim) is a result with no exit code, which _check names."""
    try:
        return run(args, **kwargs)
    except subprocess.TimeoutExpired as exc:
        text = [x.decode() if isinstance(x, bytes) else (x or "") for x in (exc.stdout, exc.stderr)]
        return subprocess.CompletedProcess(args, None, text[0], text[1])


def _check(case: tuple[str, str, int], result) -> list[str]:
    proc, requests, elsewhere = result
    problems = []
    err, out = proc.stderr, proc.stdout
    lines = err.splitlines()
    if proc.returncode is None:
        problems.append(f"still running after {HANG}s: no deadline ended it")
    elif proc.returncode not in (0, 1, 2, 3, 4):
        problems.append(f"exit {proc.returncode}")
    if proc.returncode != 0 and not (lines and lines[-1].startswith("error: ")):
        problems.append("no error line last")
    if sum(line.startswith("error: ") for line in lines) > 1:
        problems.append("more than one error line")
    if "Traceback" in err or "internal error" in err:
        problems.append("a traceback or internal error")
    if any(c in err + out for c in "\x1b\x07\x9b\u202e\r"):
        problems.append("a control character reached the terminal")
    if any(len(line) > 4200 for line in lines + out.splitlines()):
        problems.append("a line of unbounded length")
    if elsewhere:
        problems.append(f"followed a redirect ({len(elsewhere)} request(s) elsewhere)")
    if "hostile-test-token" in err + out:
        problems.append("printed the token")
    return [f"{case}: {p}: {err[-300:]!r}" for p in problems]


def test_every_cluster_command_survives_every_hostile_server(tmp_path):
    cases = _cases()
    with ThreadPoolExecutor(4) as pool:  # mostly waiting on servers: run a few at once
        results = list(pool.map(lambda c: (c, _run_case(*c, tmp_path / f"{c[0]}-{c[1]}-{c[2]}")), cases))
    problems = [p for case, result in results for p in _check(case, result)]
    assert not problems, "\n".join(problems[:30])
    assert len(results) == len(COMMANDS) * len(MODES) + 3 * len(LATER) * 2


@pytest.mark.parametrize("mode", ["429-seconds", "429-date"])
def test_retry_after_in_both_forms_is_honoured(tmp_path, mode):
    proc, requests, _ = _run_case("status", mode, 0, tmp_path)
    assert proc.returncode == 1 and "not Ready" in proc.stderr, proc.stderr  # got through after the 429s
    assert sum(1 for r in requests if r.path.split("?")[0] in ("/api", "/apis")) >= 3  # asked again


def test_a_drip_feed_cannot_hang_a_command(tmp_path):
    proc, _, _ = _run_case("status", "drip", 0, tmp_path)
    # Ended by its deadline (the server drips for ever), and says so in its one line.
    assert proc.returncode in (3, 4) and "did not answer completely in time" in proc.stderr, proc.stderr


# -- objects that do not fit their views (client/views), in an installed world ---------------------
LEASE_FIELDS = {"duration-abc": "spec.leaseDurationSeconds: expected an integer 1..2147483647, got 'abc'",
                "duration-1e400": "spec.leaseDurationSeconds: expected an integer 1..2147483647, got inf",
                "holder-list": "spec.holderIdentity: expected a string, got a list of 1",
                "acquire-no-zone": "spec.acquireTime: expected an RFC 3339 time with a zone",
                "create-no-rv": "metadata.resourceVersion: expected a non-empty string"}


@pytest.mark.parametrize("variant", LEASE_VARIANTS)
def test_a_lease_that_does_not_fit_is_waited_for_and_status_names_it(tmp_path, variant):
    """A Lease that does not fit names no holder: install and uninstall wait for it like any held
    lock and time out with the lock's code (4), the field in the line, nothing written. The answer
    to our own create must fit (it is what we renew and release by): exit 3."""
    for cmd in ("install", "uninstall"):
        proc, requests, _ = _run_case(cmd, "bad-lease", 0, tmp_path / cmd, variant=variant,
                                      extra=("--lock-timeout", "0"))
        last = proc.stderr.splitlines()[-1]
        if variant == "create-no-rv":
            assert proc.returncode == 3 and last.startswith(
                f"error: unreadable Lease opendatahub/trainerctl-lock: {LEASE_FIELDS[variant]}"), proc.stderr
            assert "stopped before changing anything" in last
        else:
            assert proc.returncode == 4 and last.startswith(
                "error: timed out after 0s waiting for the install lock (Lease opendatahub/trainerctl-lock), which "
                f"cannot be read (unreadable Lease opendatahub/trainerctl-lock: {LEASE_FIELDS[variant]}"), proc.stderr
            assert "nothing was changed" in last
        # nothing replaced or patched, and nothing but reads outside the Lease
        assert not [r for r in requests
                    if r.method in ("PATCH", "PUT") or ("/leases" not in r.path and r.method != "GET")]
    proc, _, _ = _run_case("status", "bad-lease", 0, tmp_path / "status", variant=variant)
    assert proc.returncode == 1 and "not Ready" in proc.stderr.splitlines()[-1], proc.stderr  # went on to the end
    if variant != "create-no-rv":  # status only reads a Lease that is there
        assert f"unreadable Lease opendatahub/trainerctl-lock: {LEASE_FIELDS[variant]}" in proc.stdout


# What each command decides by, answered with a field of the wrong type: the command refuses with
# the view's line naming the field (exit 3), and writes nothing after that read.
DECIDED_BY = {
    "review-allowed-string": ("unreadable SelfSubjectAccessReview of ", "status.allowed: expected true or false, "
                              "got 'false'", ("install", "check", "verify")),
    "review-denied-string": ("unreadable SelfSubjectAccessReview of ", "status.denied: expected true or false, "
                             "got 'true'", ("install", "check", "verify")),
    "whoami-list": ("unreadable SelfSubjectReview (without a name): ", "status.userInfo.username: expected a string, "
                    "got a list of 2", ("install", "check", "verify")),
    "version-numbers": ("unreadable version.Info /version: ", "major: expected a string, got 1",
                        ("install", "check")),
    "operator-namespace-list": ("unreadable Trainer default-trainer: ", "spec.appNamespace: expected a Kubernetes "
                                "name", ("install", "check")),
}


@pytest.mark.parametrize("variant", list(ANSWER_VARIANTS))
def test_an_answer_of_the_wrong_type_refuses_before_any_write(tmp_path, variant):
    head, field, commands = DECIDED_BY[variant]
    assert set(DECIDED_BY) == set(ANSWER_VARIANTS)
    for cmd in commands:
        proc, requests, _ = _run_case(cmd, "bad-answers", 0, tmp_path / cmd, variant=variant)
        lines = proc.stderr.splitlines()
        # (check lists every check, and its error line names the first that failed, with the same line)
        assert proc.returncode == 3 and lines[-1].startswith("error: ") and head in lines[-1] \
            and f": {field}" in lines[-1], (cmd, proc.stderr)
        assert sum(line.startswith("error: ") for line in lines) == 1 and "Traceback" not in proc.stderr
        writes = [f"{r.method} {r.path}" for r in requests if r.method in ("POST", "PUT", "PATCH", "DELETE")
                  and "/leases" not in r.path and not r.path.split("?")[0].endswith(
                      ("selfsubjectaccessreviews", "selfsubjectreviews"))]
        assert not writes, (cmd, writes)  # nothing created, applied or deleted (the lock's own Lease aside)


def test_wrong_shaped_pods_and_replicasets_are_named_and_the_rest_diagnosed(tmp_path):
    proc, _, _ = _run_case("status", "bad-pods", 0, tmp_path)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "container c crashes (CrashLoopBackOff, exit code 1, 5 restart(s))" in out  # from the pod that fits
    for line in ("unreadable ReplicaSet opendatahub/d1-abc: metadata.annotations['deployment.kubernetes.io/revision']: "
                 "expected a revision number, got 'abc'",
                 "unreadable Pod opendatahub/d1-5f7c9-string: status.containerStatuses[0].restartCount: expected an "
                 "integer 0..2147483647, got '5'",
                 "unreadable Pod opendatahub/d1-5f7c9-scalars: status.containerStatuses[0]: expected a mapping",
                 "unreadable Pod opendatahub/d1-5f7c9-nameless: spec.containers[0].name: expected a Kubernetes name"):
        assert f"  could not read: {line}" in out, out


def _bundle(tmp: Path) -> dict[str, str]:
    [archive] = tmp.glob("trainerctl-support-*.tar.gz")
    with tarfile.open(archive) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


@pytest.mark.parametrize("mode, unreadable, present", [
    ("bad-pods", ["nodes: unreadable Node (without a name): metadata.name",
                  "CustomResourceDefinitions: unreadable CustomResourceDefinition (without a name): metadata.name",
                  "pods of Deployment opendatahub/d1: unreadable Pod opendatahub/d1-5f7c9-nameless: spec.containers[0]",
                  "pods of Deployment opendatahub/d1: unreadable Pod opendatahub/../../../../tmp/pwned: metadata.name"],
     ["nodes.json", "crds.json", "logs/opendatahub/d1-5f7c9-x2k4q/c.log"]),
    ("bad-events", ["events in namespace opendatahub: unreadable Event opendatahub/e-no-zone: lastTimestamp: expected "
                    "an RFC 3339 time with a zone",
                    "events in namespace opendatahub: unreadable Event opendatahub/e-series: series: expected a mapping",
                    "events in namespace opendatahub: unreadable Event opendatahub/e-count: count: expected an integer",
                    "events in namespace opendatahub: unreadable Event opendatahub/e-micro: eventTime: expected an "
                    "RFC 3339 time with a zone and microseconds",
                    "events in namespace opendatahub: unreadable Event opendatahub/e-source: source: expected a mapping",
                    "events in namespace opendatahub: unreadable Event (without a name): the object: expected a mapping"],
     ["events/opendatahub.json"]),
    ("endless-log", ["log of opendatahub/d1-5f7c9-x2k4q c: GET /api/v1/namespaces/opendatahub/pods/d1-5f7c9-x2k4q/log: "
                     "the answer of", "is larger than the 4 MiB limit for one container log read"],
     ["nodes.json", "events/opendatahub.json"]),
    ("drip-log", ["log of opendatahub/d1-5f7c9-x2k4q c: GET /api/v1/namespaces/opendatahub/pods/d1-5f7c9-x2k4q/log"],
     ["nodes.json", "crds.json"]),
])
def test_the_support_bundle_is_written_and_lists_what_it_could_not_read(tmp_path, mode, unreadable, present):
    """A container without a name, a Node or CRD without metadata.name, a wrong-shaped event, an
    endless or dripping log: each costs its own part, never the bundle."""
    proc, _, _ = _run_case("support-bundle", mode, 0, tmp_path, env_extra={"TRAINERCTL_COMMAND_TIMEOUT": "40"})
    assert proc.returncode == 0, proc.stderr
    files = _bundle(tmp_path)
    readme = files["README.txt"]
    for line in unreadable:
        assert line in readme, readme
    assert set(present) <= set(files), sorted(files)
    assert all(".." not in name for name in files)


@pytest.mark.parametrize("mode", ["endless-log", "drip-log"])
def test_a_log_that_never_ends_costs_its_limit_once_per_command(tmp_path, mode):
    """status, the diagnosis and the bundle read the same logs: a log its limits ended (endless,
    dripping) is not asked for again, so a bundle's time is not that limit times the readers."""
    proc, requests, _ = _run_case("support-bundle", mode, 0, tmp_path, env_extra={"TRAINERCTL_COMMAND_TIMEOUT": "40"})
    assert proc.returncode == 0, proc.stderr
    logs = [r.path for r in requests if r.path.split("?")[0].endswith("/log")]
    asked = [(path.split("?")[0], "previous=true" in path) for path in logs]
    assert asked and len(asked) == len(set(asked)), logs  # the current and the previous log, once each
    assert "(earlier in this command; not asked again)" in _bundle(tmp_path)["README.txt"]


@pytest.mark.parametrize("mode, said", [("endless-log", "is larger than the 4 MiB limit for one container log read"),
                                        ("drip-log", "did not answer completely in time")])
def test_a_log_that_never_ends_is_reported_and_status_goes_on(tmp_path, mode, said):
    """The docs promise it: an unreadable log is reported, never fatal (status exits 1 for not
    Ready, never 3)."""
    proc, _, _ = _run_case("status", mode, 0, tmp_path, env_extra={"TRAINERCTL_COMMAND_TIMEOUT": "40"})
    assert proc.returncode == 1 and "not Ready" in proc.stderr.splitlines()[-1], proc.stderr
    assert "could not read: the previous log of Pod opendatahub/d1-5f7c9-x2k4q container c: " in proc.stdout
    assert said in proc.stdout  # the log read's own bound ended it: status went on to its verdict


HELM_LINES = {"info-string": "release.info: expected a mapping, got 'deployed'",
              "chart-list": "release.chart: expected a mapping, got a list of 1",
              "long-revision": "metadata.name: expected sh.helm.release.v1.NAME.vREVISION with a revision",
              "revision-digits": "release.version: expected an integer 0..2147483647, got a number of about 401",
              "deep-json": "nested deeper than 200 levels", "deep-yaml": "exceeded maximum nesting depth",
              "bomb": "larger than the 64 MiB limit for a payload inside a server object",
              "not-base64": "data.release: expected Helm's encoding of a release (base64 of gzip of JSON): not base64",
              "in-a-configmap": "release.info: expected a mapping, got 7"}


def test_helm_records_that_do_not_fit_refuse_install_before_it_writes(tmp_path):
    """A record that does not fit says nothing of its chart, so whether Helm holds Trainer here
    cannot be judged: install (with or without the hand-over, also --dry-run) refuses with the
    first record's line (exit 3) and writes nothing; each record's own line is what the record
    reading gives (every one named, the others skipped on)."""
    for extra in ((), ("--take-over-helm",), ("--dry-run",)):
        proc, requests, _ = _run_case("install", "bad-helm", 0, tmp_path / "-".join(extra or ("plain",)),
                                      env_extra={"TRAINERCTL_COMMAND_TIMEOUT": "40"}, extra=extra)
        last = proc.stderr.splitlines()[-1]
        assert proc.returncode == 3 and last.startswith("error: unreadable "), proc.stderr
        assert any(why in last for why in HELM_LINES.values()) and f"({len(HELM_LINES) - 1} more record(s) do not fit)" \
            in last and "stopped before changing anything" in last, last
        assert not [r for r in requests if r.method != "GET" and "/leases" not in r.path
                    and not r.path.endswith(("selfsubjectaccessreviews", "selfsubjectreviews"))], requests
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.operations import helm_releases

    with HostileServer("bad-helm", tls=True) as server:
        cluster = connect(str(server.kubeconfig(tmp_path / "kubeconfig", token="hostile-test-token-0123456789")))
        skipped: list[str] = []
        releases = helm_releases.find_releases(cluster, "opendatahub", skipped)
    lines = skipped + [line for r in releases for line in r.unreadable]
    for name, why in HELM_LINES.items():
        assert any(f".{name}." in line and why in line for line in lines), (name, lines)
    assert len(lines) == len(HELM_LINES)


FUZZ_SEEDS = int(os.environ.get("TRAINERCTL_FUZZ_SEEDS", "4"))  # more: TRAINERCTL_FUZZ_SEEDS=200


def test_a_real_server_with_corrupted_answers(test_cluster, tmp_path):
    """The real API server behind a proxy that corrupts one value in some answers (a seeded
    MutatingProxy; discovery spared so the corruption lands deeper): install, diff and status
    each end cleanly, whichever field was hit."""
    from tests.support.hostile_api import MutatingProxy

    objects = tmp_path / "objects.yaml"
    objects.write_text(OBJECTS)
    commands = (["install", "-f", str(objects), "--no-wait", "--skip-preflight", "-n", "fuzz"],
                ["diff", "-f", str(objects), "-n", "fuzz"], ["status", "-n", "fuzz"], ["status", "-n", "fuzz", "-f", str(objects)])
    problems = []
    for seed in range(FUZZ_SEEDS):
        for args in commands:
            with MutatingProxy(test_cluster.server, test_cluster.ca_file.read_bytes(), test_cluster.admin_token,
                               seed=seed, rate=0.5, spare_discovery=True) as proxy:
                kubeconfig = proxy.kubeconfig(tmp_path / "kubeconfig", token="fuzz-token-0123456789")
                env = {**os.environ, "TRAINERCTL_COMMAND_TIMEOUT": "60", "CI": "true", "HOME": str(tmp_path)}
                proc = _ended(subprocess.run, [*_entry(), *args, "--kubeconfig", str(kubeconfig)],
                              capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=300)
                result = (proc, [], [])
                problems += [f"seed {seed} {p} (mutations: {proxy.mutations[-3:]})"
                             for p in _check((args[0], "corrupted", seed), result)]
    assert not problems, "\n".join(problems[:20])
