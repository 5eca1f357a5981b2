"""The container registry client: the OCI distribution API (manifest HEAD/GET) over trainerctl's
bounded HTTP (trainerctl/net), with the auth a platform engineer's registries use.

No library: oras-py, the maintained Python client, brings requests and jsonschema (with its Rust
rpds-py) for the two calls trainerctl makes, and none of it knows docker credential helpers,
certs.d or trainerctl's deadlines, limits and redaction. The protocol is small:

- names.py: an image reference as a registry sees it (host, repository, tag or digest);
- auth.py: credentials as docker and podman find them (auth files, `credHelpers`, `credsStore`);
- tls.py: trust for one registry (system roots, --registry-ca, certs.d) and its client certificate;
- client.py: requests, the WWW-Authenticate challenge (Basic, or a Bearer token from the realm),
  redirects, the answers' checks; one client per registry host for a run.
"""
