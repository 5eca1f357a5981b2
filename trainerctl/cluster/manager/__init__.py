"""A generic resource manager over the client: plan, server-side apply in stages, wait for
health (and say why a rollout failed), diff by dry-run, prune with caller-given rules, and the
inventory that records what was applied.

It knows nothing of Trainer: what to install, in which stages, and what never to prune come
from its callers (trainerctl.cluster.trainer holds that policy for Trainer)."""
