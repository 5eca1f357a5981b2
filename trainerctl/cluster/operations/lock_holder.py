"""Who holds the install lock (install_lock.py), in words a person can act on: user, host, pid,
the command, and the CI job's identity when the environment gives one (holder_from_env). The
Lease carries it in its holder annotation, which another run reads to say who holds the lock."""

from __future__ import annotations

import getpass
import json
import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Callable

# CI systems and the environment variables that identify a job, first match wins. Tekton sets
# none by itself; PIPELINE_RUN / TASKRUN are the names its docs use for $(context.*.name).
CI_SYSTEMS: tuple[tuple[str, tuple[str, ...], Callable[[dict], str]], ...] = (
    ("GitHub Actions", ("GITHUB_RUN_ID",), lambda e: " ".join(filter(None, (
        e.get("GITHUB_REPOSITORY", ""), f"run {e['GITHUB_RUN_ID']}",
        f"attempt {e['GITHUB_RUN_ATTEMPT']}" if e.get("GITHUB_RUN_ATTEMPT") else "",
        f"job {e['GITHUB_JOB']}" if e.get("GITHUB_JOB") else "")))),
    ("GitLab CI", ("CI_JOB_ID",), lambda e: " ".join(filter(None, (
        e.get("CI_PROJECT_PATH", ""), f"pipeline {e['CI_PIPELINE_ID']}" if e.get("CI_PIPELINE_ID") else "",
        f"job {e['CI_JOB_ID']}", e.get("CI_JOB_URL", ""))))),
    ("Tekton", ("PIPELINE_RUN", "TASKRUN"), lambda e: " ".join(filter(None, (
        f"PipelineRun {e['PIPELINE_RUN']}" if e.get("PIPELINE_RUN") else "",
        f"TaskRun {e['TASKRUN']}" if e.get("TASKRUN") else "")))),
    ("Buildkite", ("BUILDKITE_BUILD_ID",), lambda e: " ".join(filter(None, (
        f"build {e['BUILDKITE_BUILD_ID']}", f"job {e['BUILDKITE_JOB_ID']}" if e.get("BUILDKITE_JOB_ID") else "",
        e.get("BUILDKITE_BUILD_URL", ""))))),
    ("Jenkins", ("BUILD_URL",), lambda e: e["BUILD_URL"]),
    ("CircleCI", ("CIRCLE_BUILD_URL",), lambda e: e["CIRCLE_BUILD_URL"]),
    ("Azure Pipelines", ("BUILD_BUILDID",), lambda e: " ".join(filter(None, (
        e.get("BUILD_REPOSITORY_NAME", ""), f"build {e['BUILD_BUILDID']}")))),
    ("Prow", ("PROW_JOB_ID",), lambda e: f"{e.get('JOB_NAME', 'job')} {e['PROW_JOB_ID']}"),
    ("Argo Workflows", ("ARGO_WORKFLOW_NAME",), lambda e: f"Workflow {e['ARGO_WORKFLOW_NAME']}"),
)


def ci_identity(env: dict[str, str]) -> str:
    """'GitHub Actions org/repo run 42 attempt 1', or '' outside a known CI system."""
    for name, keys, describe in CI_SYSTEMS:
        if any(env.get(k) for k in keys):
            return f"{name} {describe(env)}".strip()
    return ""


@dataclass(frozen=True)
class Holder:
    user: str
    host: str
    pid: int
    command: str
    ci: str = ""
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:12])  # this run, even if a pid repeats

    @property
    def identity(self) -> str:
        """What `kubectl get lease` shows; unique to this run through the token."""
        return f"{self.describe()} #{self.token}"

    def describe(self) -> str:
        who = f"{self.user}@{self.host} pid {self.pid}"
        return f"{who} ({self.command}{', ' + self.ci if self.ci else ''})"

    def annotation(self) -> str:
        """The Lease's holder annotation (what another run reads to say who holds the lock)."""
        return json.dumps({"user": self.user, "host": self.host, "pid": self.pid, "command": self.command,
                           "ci": self.ci, "token": self.token}, sort_keys=True)


def holder_from_env(command: str, env: dict[str, str] | None = None) -> Holder:
    env = dict(os.environ) if env is None else env
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # a container user with no passwd entry
        user = f"uid {os.getuid()}"
    return Holder(user, socket.gethostname(), os.getpid(), command, ci_identity(env))
