"""The view of the API server's /version answer (k8s.io/apimachinery version.Info): what preflight
judges the Kubernetes floor by, and what a support bundle records."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor

_LEADING_NUMBER = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True)
class ServerVersion:
    major: int
    minor: int
    git_version: str  # e.g. v1.37.2; "vMAJOR.MINOR" when the server leaves it out
    platform: str = ""
    go_version: str = ""

    @classmethod
    def read(cls, raw: Any) -> "ServerVersion":
        obj = Cursor.of("version.Info", raw, "/version")
        # Providers add to the number ("27+" on GKE): its leading digits are the version.
        major, minor = (_number(obj.string(key)) for key in ("major", "minor"))
        return cls(major, minor, obj.string("gitVersion") or f"v{major}.{minor}", obj.string("platform"),
                   obj.string("goVersion"))


def _number(text: str) -> int:
    match = _LEADING_NUMBER.match(text)
    return int(match.group()) if match else 0
