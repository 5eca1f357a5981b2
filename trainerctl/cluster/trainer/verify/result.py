"""What `verify` found: one result per tier and check, and the exit code they add up to.

A check is ok, warn (a consumer that needs a newer Trainer), fail (the link is broken: exit 1),
timeout (what was waited for did not happen in time and nothing said why: exit 4) or error
(verify could not run the check, say a permission is missing: exit 3). A failed check beats a
time-out, which beats an error: the first is what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.errors import EXIT_FAILED, EXIT_OK, EXIT_PREFLIGHT, EXIT_TIMEOUT
from trainerctl.trust.serialize import Reported

OK, WARN, FAIL, TIMEOUT, ERROR = "ok", "warn", "fail", "timeout", "error"
_EXIT = ((FAIL, EXIT_FAILED), (TIMEOUT, EXIT_TIMEOUT), (ERROR, EXIT_PREFLIGHT))


@dataclass
class Result:
    tier: str  # admission, reconcile, namespace, run, consumers
    check: str  # what was checked: "ClusterTrainingRuntime torch-distributed", "JobSet created", ...
    status: str
    message: str = ""
    details: list[str] = field(default_factory=list)  # the lines that explain a failure
    seconds: float | None = None  # how long it took (a phase of --run, a wait)

    def to_dict(self) -> dict:
        out = {"tier": self.tier, "check": self.check, "status": self.status, "message": self.message}
        if self.details:
            out["details"] = self.details
        if self.seconds is not None:
            out["seconds"] = round(self.seconds, 1)
        return out

    def line(self) -> str:
        took = f" ({self.seconds:.1f}s)" if self.seconds is not None else ""
        text = f"{self.status if self.status != OK else 'ok':<7} {self.tier}: {self.check}{took}"
        return f"{text}: {self.message}" if self.message else text


@dataclass
class VerifyReport(Reported):
    results: list[Result] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)  # what verify deleted, or could not

    def add(self, result: Result) -> Result:
        self.results.append(result)
        return result

    @property
    def first_problem(self) -> Result | None:
        for status, _ in _EXIT:
            found = next((r for r in self.results if r.status == status), None)
            if found is not None:
                return found
        return None

    @property
    def exit_code(self) -> int:
        first = self.first_problem
        return dict(_EXIT)[first.status] if first is not None else EXIT_OK

    def to_dict(self) -> dict:
        return {"ok": self.exit_code == EXIT_OK, "exitCode": self.exit_code,
                "results": [r.to_dict() for r in self.results], "cleanup": self.cleanup}



    def text(self) -> str:
        lines = []
        for r in self.results:
            lines.append(r.line())
            lines.extend(f"        {d}" for d in r.details)
        lines.extend(f"cleanup: {c}" for c in self.cleanup)
        counts = {s: sum(1 for r in self.results if r.status == s) for s in (FAIL, TIMEOUT, ERROR, WARN, OK)}
        lines.append("verify: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
        return "\n".join(lines) + "\n"

    def error_line(self) -> str:
        """The one line that names the broken link (the command's error line)."""
        first = self.first_problem
        if first is None:
            return ""
        return f"verify {first.tier}: {first.check}: {first.message}"
