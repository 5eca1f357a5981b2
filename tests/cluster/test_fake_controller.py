"""The fake controller the base-cluster install tests use really serves the API server's webhook calls."""

from __future__ import annotations

from tests.support.cluster import FakeController, apply_raw
from tests.support.waiting import Not, wait_until
from trainerctl.cluster.client.client import ApiError


def test_fake_webhook_is_really_called_by_the_api_server(env):
    """The route the install tests rely on: API server -> EndpointSlice -> TLS webhook server."""
    ns = "wh-test"
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook", "namespace": ns},
           "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]}}
    cfg = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
           "metadata": {"name": "hook.test"},
           "webhooks": [{"name": "cm.hook.test", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                         "failurePolicy": "Fail",
                         "clientConfig": {"service": {"name": "hook", "namespace": ns, "path": "/validate"}},
                         "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                         "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                    "resources": ["configmaps"]}]}]}
    objs = [svc, cfg]
    with FakeController(env, objs) as fake:
        apply_raw(env.cluster, svc, "test")
        apply_raw(env.cluster, cfg, "test")
        # The API server picks up a new webhook configuration asynchronously: create until it calls.
        made = []

        def called() -> bool:
            name = f"x{len(made)}"
            made.append(name)
            try:
                env.cluster.request("POST", f"/api/v1/namespaces/{ns}/configmaps", body={"metadata": {"name": name}})
            except ApiError as exc:
                assert "webhook" in str(exc), exc
            return any(f"/validate CREATE {name}" in c for c in fake.calls) or Not(f"{fake.calls}; {fake.errors}")

        wait_until(called, 30, "the API server to call the fake webhook")
