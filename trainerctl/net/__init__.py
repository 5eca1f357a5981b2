"""HTTP to servers trainerctl does not trust: the bounded transport and the proxy rules, shared by
the Kubernetes API client (cluster/client) and the container registry client (registry/)."""
