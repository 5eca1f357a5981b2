"""The generic engine: talks to an API server, applies in stages, waits, prunes, records.

It knows nothing of Trainer: what to install, in which stages, and what never to prune come
from its callers (trainerctl.cluster.trainer holds that policy for Trainer)."""
