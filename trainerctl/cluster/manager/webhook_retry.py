"""Writes an admission webhook cannot answer yet, retried until a deadline.

A webhook is briefly unreachable in the ordinary life of a cluster: its Deployment rolls out (the
old pod's connections are reset), its certificate rotates (the CA bundle is injected before the
pod serves the new certificate), its endpoints change. Every write that passes admission (apply,
the managed-fields takeover, a finalizer removal, a recreate) retries such errors the same way, so
none of them fails an install on a transient the next attempt would pass.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

from trainerctl.cluster.client.client import ApiError
from trainerctl.errors import WaitTimeout

T = TypeVar("T")

# A write outside a stage's budget (a finalizer removal during prune) waits this long.
DEFAULT_BUDGET_SECONDS = 60.0


def is_webhook_unavailable(exc: ApiError) -> bool:
    text = str(exc)
    return exc.status >= 500 and ("calling webhook" in text or "call webhook" in text
                                  or "conversion webhook" in text or "no endpoints available" in text)


def until_webhook_answers(call: Callable[[], T], what: str, deadline: float | None = None) -> T:
    """`call()`, again with backoff while a webhook is unreachable; WaitTimeout at `deadline`."""
    if deadline is None:
        deadline = time.monotonic() + DEFAULT_BUDGET_SECONDS
    delay = 0.2
    while True:
        try:
            return call()
        except ApiError as exc:
            if not is_webhook_unavailable(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise WaitTimeout(f"{what}: admission webhook still unreachable at the time-out: {exc}") from None
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
