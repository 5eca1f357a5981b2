"""Everything that talks to a cluster: connect, discover, plan, apply, wait, prune, record."""
