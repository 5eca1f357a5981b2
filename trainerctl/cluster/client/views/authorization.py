"""Views of the answers to an access review (authorization.k8s.io/v1 SelfSubjectAccessReview and
SubjectAccessReview) and to "who am I" (authentication.k8s.io/v1 SelfSubjectReview).

An answer decides whether a command goes on to write, so it is read by its declared types:
`"allowed": "false"` (a string) is no grant and no denial, it is an answer that does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor


@dataclass(frozen=True)
class AccessReview:
    allowed: bool = False
    denied: bool = False  # an authorizer said no outright (others are not asked)
    reason: str = ""

    @property
    def granted(self) -> bool:
        return self.allowed and not self.denied

    @classmethod
    def read(cls, raw: Any, kind: str = "SelfSubjectAccessReview", asked: str | None = None) -> "AccessReview":
        """`asked`: what the review asked (the answer has no name of its own), for messages."""
        status = Cursor.of(kind, raw, f"of {asked}" if asked else None).mapping("status")
        status.string("evaluationError")  # its type checked: it goes into no decision
        return cls(status.boolean("allowed"), status.boolean("denied"), status.string("reason"))


@dataclass(frozen=True)
class UserReview:
    username: str = ""

    @classmethod
    def read(cls, raw: Any) -> "UserReview":
        return cls(Cursor.of("SelfSubjectReview", raw).mapping("status").mapping("userInfo").string("username"))
