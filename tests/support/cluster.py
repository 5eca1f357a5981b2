"""Test-side stand-ins for what a real cluster runs next to trainerctl (tests/cluster/test_fake_controller.py tests them).

The test cluster has no kubelet and no controllers. `FakeController` plays, honestly, the parts
an install depends on: it serves the admission webhooks over TLS on each webhook Service's
ClusterIP and port (the test cluster allocates ClusterIPs in 127.100.0.0/16 and the API server
dials a webhook Service's ClusterIP, so it really calls this server), writes the
webhook cert Secret data and the webhook caBundle like the controller's cert rotator (as another
field manager), publishes a ready EndpointSlice and marks the Deployments Available like the
deployment controller. Nothing in the rendered objects is relaxed: failurePolicy stays Fail, so
a runtime is only admitted once this webhook answers, exactly as on a real cluster.

Also here: the API servers the install tests run against (`env`, fresh per test, and
`shared_env`, the session's) and the rendered test inputs.
"""

from __future__ import annotations

import base64
import datetime as dt
import http.server
import json
import os
import ssl
import tempfile
import threading
from pathlib import Path

import pytest

from tests.support.waiting import Not, wait_until
from trainerctl.cluster.client.client import ApiError, Cluster, connect, object_path
from trainerctl.cluster.client.discovery import Discovery
from tests.support.tls_listen import listen_tls

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CERT_ROTATOR = "cert-rotator"
ODH = "opendatahub-trainer"
KF = "kubeflow-trainer"


# -- inputs -------------------------------------------------------------------------------
def require_shared() -> Path:
    if not SHARED.is_dir():
        if os.environ.get("TRAINERCTL_REQUIRE_SHARED", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{SHARED} is absent but TRAINERCTL_REQUIRE_SHARED=1")
        pytest.skip(f"{SHARED} (upstream reference data) is absent")
    return SHARED


_RENDER_CACHE: dict[tuple[str, str, str], list[dict]] = {}


def build_overlay(repo: str, ref: str, overlay: str) -> list[dict]:
    """The engine's build of an upstream overlay (remote JobSet served locally); cached per session."""
    import copy

    key = (repo, ref, overlay)
    if key not in _RENDER_CACHE:
        shared = require_shared()
        from tests.support import remotes

        with tempfile.TemporaryDirectory() as tmp:
            rem = remotes.start(shared, Path(tmp))
            try:
                src = shared / "upstream" / repo / ref / "manifests"
                from trainerctl.kustomize import build

                _RENDER_CACHE[key] = build(str(src / overlay), remote_mirrors=rem.mirrors)
            finally:
                rem.stop()
    return copy.deepcopy(_RENDER_CACHE[key])


OWNER = ("platform.opendatahub.io/part-of", "trainer")


def labelled(objects: list[dict], label: tuple[str, str] = OWNER) -> list[dict]:
    """What render adds on top of the overlay: the ownership label on every object."""
    for obj in objects:
        obj.setdefault("metadata", {}).setdefault("labels", {})[label[0]] = label[1]
    return objects


def odh_objects(ref: str = "odh-3.5.0") -> list[dict]:
    objs = labelled(build_overlay(ODH, ref, "rhoai"))
    # Not OpenShift: the render leaves the ImageStreams out (--platform kubernetes).
    return [o for o in objs if o.get("kind") != "ImageStream"]


def kubeflow_objects(ref: str = "v2.3.0") -> list[dict]:
    return labelled(build_overlay(KF, ref, "overlays/manager"))


def jobset_crd(version: str = "v0.10.1") -> dict:
    import yaml

    path = require_shared() / "remote" / "jobset" / "releases" / "download" / version / "manifests.yaml"
    for doc in yaml.safe_load_all(path.read_text()):
        if doc and doc.get("kind") == "CustomResourceDefinition":
            return doc
    raise AssertionError("no JobSet CRD in " + str(path))


def podmonitor_crd() -> dict:
    """The Prometheus Operator's PodMonitor API, which the rhoai overlay uses (present on OpenShift)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "podmonitors.monitoring.coreos.com"},
        "spec": {
            "group": "monitoring.coreos.com",
            "names": {"kind": "PodMonitor", "listKind": "PodMonitorList", "plural": "podmonitors",
                      "singular": "podmonitor"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }


def versioned_crd(group: str, kind: str, *versions: tuple[str, bool, bool]) -> dict:
    """A namespaced CRD of `kind` in `group` (plural: kind lower-cased + s) with these (name,
    served, storage) versions, any object fitting each."""
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    plural = f"{kind.lower()}s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": n, "served": served, "storage": storage, "schema": schema}
                                  for n, served, storage in versions]}}


def prepare_cluster_for_odh(cluster: Cluster) -> None:
    """What an ODH target cluster already has: JobSet and the PodMonitor API."""
    for crd in (jobset_crd(), podmonitor_crd()):
        apply_raw(cluster, crd, manager="test-setup")
    wait_established(cluster, "jobsets.jobset.x-k8s.io", "podmonitors.monitoring.coreos.com")


def established(cluster: Cluster, name: str) -> bool:
    """Whether the CRD `name` is Established (its condition, as the API server reports it)."""
    crd = cluster.get_or_none(f"{CRDS}/{name}") or {}
    return any(c["type"] == "Established" and c["status"] == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def wait_established(cluster: Cluster, *names: str, timeout: float = 60) -> None:
    for name in names:
        wait_until(lambda name=name: established(cluster, name), timeout, f"CRD {name} to be Established")


def wait_served(cluster: Cluster, crd: dict, timeout: float = 60) -> None:
    """The CRD is Established and discovery serves its kind in every version it serves."""
    name, spec = crd["metadata"]["name"], crd["spec"]
    wait_established(cluster, name, timeout=timeout)
    for version in (v["name"] for v in spec["versions"] if v.get("served", True)):
        def served(version=version) -> bool:
            listed = cluster.get_or_none(f"/apis/{spec['group']}/{version}") or {}
            return any(r.get("name") == spec["names"]["plural"] for r in listed.get("resources") or [])

        wait_until(served, timeout, f"{spec['group']}/{version} to serve {spec['names']['plural']}")


def apply_raw(cluster: Cluster, obj: dict, manager: str, path: str | None = None, dry_run: bool = False) -> dict:
    """Server-side apply as some other tool (test setup)."""
    from trainerctl.cluster.client.discovery import Discovery

    if path is None:
        res = Discovery(cluster).resolve(obj["apiVersion"], obj["kind"])
        from trainerctl.cluster.client.client import object_path

        ns = obj["metadata"].get("namespace") if res.namespaced else None
        path = object_path(res.group, res.version, res.resource, ns, obj["metadata"]["name"])
    query = {"fieldManager": manager, "force": "true", **({"dryRun": "All"} if dry_run else {})}
    return cluster.request("PATCH", path, body=obj, query=query, content_type="application/apply-patch+yaml")


def apply_once_admitted(cluster: Cluster, obj: dict, manager: str, timeout: float = 60) -> dict:
    """Apply `obj` once, as a tool that does not retry (Helm, kubectl) would, after waiting until
    the webhooks that judge it answer: a dry run of the same apply is admitted."""
    def dry_run_admitted():
        try:
            return apply_raw(cluster, obj, manager, dry_run=True)
        except ApiError as exc:
            if "failed calling webhook" not in str(exc):
                raise
            return Not(exc)

    wait_until(dry_run_admitted, timeout, f"the webhooks to admit {obj['kind']} {obj['metadata']['name']}")
    return apply_raw(cluster, obj, manager)


# -- a fresh API server per test ----------------------------------------------------------
class Env:
    """One fresh test cluster: `cluster` is a trainerctl connection as the admin."""

    def __init__(self, tc):
        self.tc = tc
        self.kubeconfig = str(tc.admin_kubeconfig)
        self.restricted_kubeconfig = str(tc.restricted_kubeconfig)
        self.cluster = connect(self.kubeconfig)

    def get(self, path: str) -> dict | None:
        try:
            return self.cluster.request("GET", path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise


class FreshServers:
    """Fresh API servers, each started one test ahead: while a test runs on one, the next starts
    beside it (a start is mostly kube-apiserver's own start-up, about 5 s of waiting and 2 s of
    CPU), so the next `env` test finds its server up. Starts run on one long-lived thread, since
    etcd and kube-apiserver die with the thread that started them (PR_SET_PDEATHSIG)."""

    def __init__(self, bin_dir: Path):
        from concurrent.futures import ThreadPoolExecutor

        self.bin_dir = bin_dir
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="fresh-api-server")
        self.ahead = None

    def _start(self):
        from tests.testenv.cluster import TestCluster

        return TestCluster(bin_dir=self.bin_dir).start()

    def take(self, another_follows: bool):
        started = self.ahead or self.pool.submit(self._start)
        self.ahead = self.pool.submit(self._start) if another_follows else None
        return started.result()

    def close(self) -> None:
        if self.ahead is not None:
            try:
                self.ahead.result().stop()
            except Exception:  # noqa: BLE001 - it failed to start: nothing to stop
                pass
        self.pool.shutdown()


@pytest.fixture(scope="session")
def fresh_servers(cluster_binaries):
    servers = FreshServers(cluster_binaries)
    yield servers
    servers.close()


def _env_follows(request) -> bool:
    """Whether a test after this one in the session also uses `env`."""
    items = request.session.items
    here = items.index(request.node)
    return any("env" in getattr(item, "fixturenames", ()) for item in items[here + 1:])


@pytest.fixture
def env(fresh_servers, request):
    """A fresh kube-apiserver for one test that changes cluster-wide state.

    Every test that installs Trainer does: its CRDs, ClusterRoles and bindings, webhook
    configurations and ClusterTrainingRuntimes are cluster-scoped, and the tests assert what an
    install creates, adopts or prunes, which another test's leftovers would change (so do tests
    that install CRDs of their own, or take over the Go operator's cluster-scoped CR). Without
    kube-controller-manager a deleted namespace never goes, so the fixed namespaces the overlays
    name cannot be cleaned between tests either. These are the `env` tests of tests/cluster
    (install, install_faults, install_ownership, install_upgrade, install_terminal, lock_installs, helm_handover,
    migration, manager_options_install, status, uninstall, diff, dependencies, fake_controller, consumers)
    and of tests/render (runtimes, gitops). Tests that write nothing cluster-wide use
    `shared_env`, or `test_cluster` and a `namespace` of their own (tests/conftest.py)."""
    require_shared()
    tc = fresh_servers.take(another_follows=_env_follows(request))
    try:
        yield Env(tc)
    finally:
        tc.stop()


@pytest.fixture(scope="session")
def shared_env(test_cluster):
    """The session's API server (tests/conftest.py `test_cluster`), for tests that change nothing
    cluster-wide: they only read it, or only need a server that answers."""
    return Env(test_cluster)


# -- the fake controller ------------------------------------------------------------------
def _make_certs(dns_names: list[str]) -> tuple[bytes, bytes, bytes]:
    """(ca_pem, cert_pem, key_pem) for a webhook server answering for `dns_names`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-cert-rotator-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return (ca.public_bytes(pem), cert.public_bytes(pem),
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def host_ip() -> str:
    """A non-loopback address of this host: EndpointSlices refuse 127.0.0.0/8."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("10.255.255.255", 1))  # UDP connect sends nothing; it picks a route
            ip = sock.getsockname()[0]
        except OSError:
            ip = ""
    if not ip or ip.startswith("127."):
        pytest.skip("no non-loopback IPv4 address for the fake webhook's EndpointSlice")
    return ip


class _AdmissionHandler(http.server.BaseHTTPRequestHandler):
    calls: list[str]

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        request = review.get("request") or {}
        self.server.calls.append(f"{self.path.split('?')[0]} {request.get('operation')} {request.get('name')}")  # type: ignore[attr-defined]
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": {"uid": request.get("uid", ""), "allowed": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class FakeController:
    """Plays the Trainer (and JobSet) controllers for the objects of one render.

    ready=False: it still rotates certs but never marks anything Available (time-out tests);
    fail=True: it reports ProgressDeadlineExceeded on the Deployments.
    """

    def __init__(self, env: Env, objects: list[dict], *, ready: bool = True, fail: bool = False,
                 endpoints: bool = True):
        self.env, self.cluster = env, env.cluster
        self.ready, self.fail, self.endpoints = ready, fail, endpoints
        self.deployments = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects
                            if o["kind"] == "Deployment"]
        self.webhook_configs = [(o["kind"], o["metadata"]["name"]) for o in objects
                                if o["kind"] in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")]
        services = []
        for o in objects:
            for hook in o.get("webhooks") or []:
                svc = (hook.get("clientConfig") or {}).get("service")
                if svc and (svc["namespace"], svc["name"], svc.get("port", 443)) not in services:
                    services.append((svc["namespace"], svc["name"], svc.get("port", 443)))
        self.services = services
        self.secrets = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects
                        if o["kind"] == "Secret" and "cert" in o["metadata"]["name"]]
        names = [f"{n}.{ns}.svc" for ns, n, _ in services] or ["fake.invalid"]
        self.ca, cert, key = _make_certs(names)
        self.cert, self.key = cert, key
        self.ip = host_ip()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.servers: dict[tuple[str, str], http.server.ThreadingHTTPServer] = {}
        self._calls: list[str] = []
        self.done_slices: set = set()
        self.errors: list[str] = []

    # webhook servers: one per Service, bound where the API server dials it
    def _serve(self, ip: str, port: int) -> http.server.ThreadingHTTPServer:
        tmp = tempfile.mkdtemp(prefix="fake-webhook-")
        Path(tmp, "tls.crt").write_bytes(self.cert)
        Path(tmp, "tls.key").write_bytes(self.key)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(Path(tmp, "tls.crt"), Path(tmp, "tls.key"))
        server = http.server.ThreadingHTTPServer((ip, port), _AdmissionHandler)
        listen_tls(server, ctx)
        server.calls = self._calls  # type: ignore[attr-defined]
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    @property
    def calls(self) -> list[str]:
        return list(self._calls)

    def start(self) -> "FakeController":
        if os.geteuid() != 0:
            pytest.skip("the fake webhook binds the Service port (443) on its ClusterIP: needs root")
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        for server in self.servers.values():
            server.shutdown()
            server.server_close()

    def __enter__(self) -> "FakeController":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def settled(self) -> bool:
        """Whether it has done all it will do for what is live now: certificates written,
        caBundles injected and, when ready, webhooks served, EndpointSlices published and
        Deployments Available at their generation."""
        ca = base64.b64encode(self.ca).decode()
        for ns, name in self.secrets:
            sec = self.env.get(f"/api/v1/namespaces/{ns}/secrets/{name}")
            if sec is not None and not (sec.get("data") or {}).get("tls.crt"):
                return False
        for kind, name in self.webhook_configs:
            plural = "validatingwebhookconfigurations" if kind.startswith("Validating") else "mutatingwebhookconfigurations"
            cfg = self.env.get(f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}")
            if cfg is not None and any(h["clientConfig"].get("caBundle") != ca for h in cfg.get("webhooks") or []):
                return False
        if not self.ready or self.fail:
            return True
        for ns, name, _ in self.services:
            if self.env.get(f"/api/v1/namespaces/{ns}/services/{name}") is not None and (
                    (ns, name) not in self.servers or (self.endpoints and (ns, name) not in self.done_slices)):
                return False
        for ns, name in self.deployments:
            dep = self.env.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}")
            status = (dep or {}).get("status") or {}
            available = any(c["type"] == "Available" and c["status"] == "True" for c in status.get("conditions") or [])
            if dep is not None and (status.get("observedGeneration", 0) < dep["metadata"]["generation"] or not available):
                return False
        return True

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._tick()
            except Exception as exc:  # the API server may be down in fault tests
                if len(self.errors) < 20:
                    self.errors.append(str(exc))
            self._stop.wait(0.1)

    def _tick(self) -> None:
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        for ns, name in self.secrets:
            path = f"/api/v1/namespaces/{ns}/secrets/{name}"
            sec = self.env.get(path)
            if sec is not None and not (sec.get("data") or {}).get("tls.crt"):
                self.cluster.request("PATCH", path, body={"data": {"ca.crt": b64(self.ca), "tls.crt": b64(self.cert),
                                                                    "tls.key": b64(self.key)}},
                                     content_type="application/merge-patch+json", query={"fieldManager": CERT_ROTATOR})
        for kind, name in self.webhook_configs:
            plural = "validatingwebhookconfigurations" if kind.startswith("Validating") else "mutatingwebhookconfigurations"
            path = f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}"
            cfg = self.env.get(path)
            if cfg is None:
                continue
            patch = [{"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": b64(self.ca)}
                     for i, h in enumerate(cfg.get("webhooks") or []) if h["clientConfig"].get("caBundle") != b64(self.ca)]
            if patch:
                self.cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json",
                                     query={"fieldManager": CERT_ROTATOR})
        for ns, name, port in self.services if self.ready and not self.fail else ():
            if (ns, name) not in self.servers:  # the controller pod is up: its webhook answers
                svc = self.env.get(f"/api/v1/namespaces/{ns}/services/{name}")
                if svc is not None and svc["spec"].get("clusterIP", "None") != "None":
                    self.servers[(ns, name)] = self._serve(svc["spec"]["clusterIP"], port)
        if self.endpoints and self.ready and not self.fail:
            for ns, name, port in self.services:
                if (ns, name) in self.done_slices:
                    continue
                svc = self.env.get(f"/api/v1/namespaces/{ns}/services/{name}")
                if svc is None:
                    continue
                # What the endpoints controller publishes once the pod is ready (addresses may
                # not be loopback, so this host's own; the API server dials the ClusterIP).
                port_name = next((p.get("name") for p in svc["spec"]["ports"] if p["port"] == port), None)
                sl = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                      "metadata": {"name": f"{name}-fake", "namespace": ns,
                                   "labels": {"kubernetes.io/service-name": name}},
                      "addressType": "IPv4",
                      "endpoints": [{"addresses": [self.ip], "conditions": {"ready": True}}],
                      "ports": [{"name": port_name, "port": 9443, "protocol": "TCP"}]}
                if port_name is None:
                    del sl["ports"][0]["name"]
                apply_raw(self.cluster, sl, "endpointslice-controller",
                          f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/{name}-fake")
                self.done_slices.add((ns, name))
        if self.ready or self.fail:
            from tests.testenv import readiness

            for ns, name in self.deployments:
                dep = self.env.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}")
                if dep is None:
                    continue
                status = dep.get("status") or {}
                conds = {c["type"]: c for c in status.get("conditions") or []}
                if self.fail:
                    if (conds.get("Progressing") or {}).get("reason") != "ProgressDeadlineExceeded":
                        readiness.mark_deployment_failed(Path(self.env.kubeconfig), ns, name)
                elif (status.get("observedGeneration", 0) < dep["metadata"]["generation"]
                      or (conds.get("Available") or {}).get("status") != "True"):
                    readiness.mark_deployment_available(Path(self.env.kubeconfig), ns, name)


# -- what install tests read back ---------------------------------------------------------
ODH_NS = "opendatahub"
KF_NS = "kubeflow-system"


def live_objects(env, report) -> dict[str, dict]:
    """Every object the report names, read back from the API server."""
    disc = Discovery(env.cluster)
    out = {}
    for o in report.objects:
        res = disc.preferred(o.group, o.kind)
        path = object_path(res.group, res.version, res.resource, o.namespace or None, o.name)
        out[f"{o.group}/{o.kind}/{o.namespace}/{o.name}"] = env.get(path)
    return out


def managers(obj: dict) -> set[str]:
    return {e["manager"] for e in obj["metadata"].get("managedFields") or [] if e.get("operation") == "Apply"}


CTR = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def user_trainjob(env) -> None:
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": "users-job", "namespace": ODH_NS},
           "spec": {"runtimeRef": {"name": "torch-distributed"}}}
    env.cluster.request("POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ODH_NS}/trainjobs", body=job)
