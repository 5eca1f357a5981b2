"""The kubelet's back-off (client-go's flowcontrol.Backoff), for restarts and image pulls.

Per key: the first Next() sets the initial period, each later one doubles it up to the maximum,
and an entry not updated for twice the maximum starts over. The kubelet asks "still in back-off
since this event?" before each container start (since the last exit) and each pull (since the
last failed pull).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Backoff:
    initial: float
    maximum: float
    clock: object = time.monotonic
    _entries: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> (period, last update)

    def _live(self, key: str, at: float) -> tuple[float, float] | None:
        entry = self._entries.get(key)
        if entry is None or at - entry[1] > 2 * self.maximum:
            return None
        return entry

    def next(self, key: str, event_time: float) -> float:
        entry = self._live(key, event_time)
        period = self.initial if entry is None else min(entry[0] * 2, self.maximum)
        self._entries[key] = (period, event_time)
        return period

    def get(self, key: str) -> float:
        return self._entries.get(key, (0.0, 0.0))[0]

    def in_backoff_since(self, key: str, event_time: float) -> bool:
        """flowcontrol's IsInBackOffSince: less than the period has passed since event_time."""
        now = self.clock()
        entry = self._live(key, now)
        return entry is not None and now - event_time < entry[0]

    def in_backoff_since_update(self, key: str) -> bool:
        """flowcontrol's IsInBackOffSinceUpdate: less than the period since the last Next()."""
        now = self.clock()
        entry = self._live(key, now)
        return entry is not None and now - entry[1] < entry[0]
