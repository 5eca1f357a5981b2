"""The generic cluster engine: talks to any Kubernetes API server, knows nothing of Trainer."""
