"""A Kubernetes API client: kubeconfig and credentials, the transport, discovery.

Self-contained: it knows nothing of applying, installing or Trainer."""
