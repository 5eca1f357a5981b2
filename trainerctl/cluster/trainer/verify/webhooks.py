"""Which admission webhook an API server error is about, the Service behind it, and the cause,
named the way a platform engineer acts on it.

The API server words a webhook it could not call as `failed calling webhook "NAME": failed to
call webhook: Post "URL": ERROR`, and one that answered no as `admission webhook "NAME" denied
the request: MESSAGE` (k8s.io/apiserver admission/plugin/webhook/errors). The cause comes from
ERROR, and from the Service's EndpointSlices: a Service with no ready endpoint is "no endpoints"
whatever the dial said (kube-proxy refuses, or drops, a connection to a Service without one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.client.views import WebhookConfiguration, read_each
from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.manager.wait import service_endpoint_ready

_FAILED = re.compile(r'failed calling webhook "(?P<name>[^"]+)": (?P<error>.*)', re.S)
_DENIED = re.compile(r'admission webhook "(?P<name>[^"]+)" denied the request:?\s*(?P<error>.*)', re.S)
_URL = re.compile(r'(?:Post|Get|Put|Patch|Delete) "[^"]*":? ?')
_KINDS = {"validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
          "mutatingwebhookconfigurations": "MutatingWebhookConfiguration"}

# What the dial error says, in the order they are tried (a TLS error means the server was reached).
# Go's crypto/x509 words each certificate problem its own way; each names what to fix.
UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"
EXPIRED = "x509: certificate expired or not yet valid"
WRONG_NAME = "x509: certificate not valid for the Service's name"
CERTIFICATE = "x509: certificate not trusted"
NO_ENDPOINTS = "no endpoints"
REFUSED = "connection refused"
TIMED_OUT = "timed out"
RESET = "connection reset"
DENIED = "denied"
_DIAL = ((UNKNOWN_AUTHORITY, ("unknown authority",)),
         (EXPIRED, ("expired or is not yet valid",)),
         (WRONG_NAME, ("certificate is valid for", "certificate is not valid for any names")),
         (CERTIFICATE, ("x509", "certificate")),
         (NO_ENDPOINTS, ("no endpoints available",)),
         (REFUSED, ("connection refused",)),
         (TIMED_OUT, ("deadline exceeded", "timeout", "timed out")),
         (RESET, ("connection reset", "eof", "broken pipe")))
_ROTATOR = "is the certificate rotator (the controller) or cert-manager running and injecting it?"
_NEXT = {
    UNKNOWN_AUTHORITY: "the caBundle of the webhook configuration does not sign the certificate the webhook serves: "
                       + _ROTATOR,
    EXPIRED: "the webhook serves a certificate outside its validity (or the clocks differ): is the certificate "
             "rotator (the controller) or cert-manager renewing it?",
    WRONG_NAME: "the certificate the webhook serves does not name the Service (SERVICE.NAMESPACE.svc): was it "
                "made for another Service or namespace?",
    CERTIFICATE: "the API server does not trust the certificate the webhook serves: check the webhook "
                 "configuration's caBundle; " + _ROTATOR,
    NO_ENDPOINTS: "no pod backs the Service: is the controller running and ready?",
    REFUSED: "the Service's port reaches nothing that listens: check its targetPort against the controller's "
             "webhook port, and NetworkPolicies",
    TIMED_OUT: "the API server cannot reach the pod: check NetworkPolicies, a mesh sidecar (Istio) in front of "
               "the webhook port, and the controller's health",
    RESET: "the connection was cut: a mesh sidecar (Istio) in front of the webhook port, or the pod restarting",
}


def certificate(cause: str) -> bool:
    """A cause that says the server was reached and its certificate is the problem."""
    return cause.startswith("x509")


@dataclass
class WebhookFailure:
    webhook: str  # the webhook's name, as the API server said it
    error: str  # the API server's words after the name
    denied: bool = False
    configuration: str = ""  # "ValidatingWebhookConfiguration NAME", when found
    service: tuple[str, str, int] | None = None  # (namespace, name, port)
    url: str = ""  # clientConfig.url, for a webhook outside the cluster
    cause: str = ""  # one of the names above
    explanation: str = ""  # what to look at next, or why the Service has no endpoint

    @property
    def service_name(self) -> str:
        if self.service:
            return f"Service {self.service[0]}/{self.service[1]}:{self.service[2]}"
        return f"URL {self.url}" if self.url else "an unknown Service"

    def line(self) -> str:
        where = f"webhook {self.webhook}" + (f" ({self.configuration})" if self.configuration else "")
        if self.denied:
            return f"{where} denied it: {self.error}"
        text = f"{where} via {self.service_name}: {self.cause}"
        return f"{text}: {self.explanation}" if self.explanation else text

    def details(self) -> list[str]:
        return [] if self.denied else [f"the API server said: {self.error}"]


def parse(message: str) -> WebhookFailure | None:
    """The webhook an API server error names, or None for any other error."""
    denied = _DENIED.search(message)
    if denied:
        return WebhookFailure(denied["name"], denied["error"].strip(), denied=True, cause=DENIED)
    failed = _FAILED.search(message)
    if failed:
        return WebhookFailure(failed["name"], failed["error"].strip())
    return None


def dial_cause(error: str) -> str:
    low = _URL.sub("", error).lower()  # the URL's ?timeout=10s is not a time-out
    return next((cause for cause, words in _DIAL if any(w in low for w in words)), "unreachable")


def explain(cluster: Cluster, exc: ApiError | str) -> WebhookFailure | None:
    """The failure an admission error names, with its webhook configuration, Service and cause;
    None when the error is not a webhook's."""
    found = parse(str(exc))
    if found is None:
        return None
    _locate(cluster, found)
    if found.denied:
        return found
    found.cause = dial_cause(found.error)
    if found.service and not certificate(found.cause):
        namespace, name, port = found.service
        try:
            ready, _, why = service_endpoint_ready(cluster, namespace, name, port)()
        except ApiError:  # may not read EndpointSlices: the dial error is all there is
            ready, why = True, ""
        if not ready:
            found.cause = NO_ENDPOINTS
            diag = diagnose.service(cluster, namespace, name, logs=False)
            found.explanation = diag.short() or why or _NEXT[NO_ENDPOINTS]
            if diag.causes and diag.causes[0].message:
                found.explanation += f": {diag.causes[0].message}"
            return found
    found.explanation = _NEXT.get(found.cause, "")
    return found


def _hooks(cluster: Cluster):
    """(configuration, webhook) for each webhook the configurations hold; a configuration or a
    webhook that does not fit its view is skipped, a kind that cannot be listed (forbidden) too."""
    for resource, kind in _KINDS.items():
        try:
            items = cluster.items(f"/apis/admissionregistration.k8s.io/v1/{resource}")
        except ApiError:
            continue
        for config in read_each(lambda raw: WebhookConfiguration.read(raw, kind), items, []):
            for hook in config.webhooks:
                yield config, hook


def _locate(cluster: Cluster, found: WebhookFailure) -> None:
    """Fill in the configuration and Service of the webhook (best effort: listing them may be forbidden)."""
    for config, hook in _hooks(cluster):
        if hook.name == found.webhook:
            found.configuration = config.display
            if hook.service:
                found.service = (hook.service.namespace, hook.service.name, hook.service.port)
            found.url = hook.url
            return


def services_for(cluster: Cluster, group: str) -> list[tuple[str, str, int]]:
    """The Services of the webhooks that judge objects of API `group` (its controller's pods back
    them); empty when the configurations cannot be read."""
    found: list[tuple[str, str, int]] = []
    for _, hook in _hooks(cluster):
        service = (hook.service.namespace, hook.service.name, hook.service.port) if hook.service else None
        if group in hook.groups and service and service not in found:
            found.append(service)
    return found
