"""Property-based tests of every parser of outside input trainerctl owns.

Each property: the parser returns valid output, or raises a TrainerctlError (one line, exit 2 for
input, 1 or 3 for a server), never another exception, never a hang (hypothesis' deadline is off,
but every input is small and the parsers are linear).

Fixed seed (derandomize) and TRAINERCTL_HYPOTHESIS_EXAMPLES examples each (default 200, what CI
runs). Run longer with e.g. `TRAINERCTL_HYPOTHESIS_EXAMPLES=20000 pytest tests/cli/test_properties.py`.
"""

from __future__ import annotations

import json
import os
import string

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from trainerctl.errors import TrainerctlError

EXAMPLES = int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "200"))
PROPERTY = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])

# -- building blocks ----------------------------------------------------------------------------
keys = st.sampled_from(["apiVersion", "kind", "metadata", "name", "namespace", "spec", "data", "items", "status",
                        "clusters", "users", "contexts", "cluster", "user", "context", "server", "token", "exec",
                        "current-context", "source", "url", "ref", "commit", "digest", "versions", "groups",
                        "resources", "verbs", "conditions", "replicas", "labels", "annotations", "managedFields",
                        "stringData", "command", "apiVersion", "interactiveMode", "auth-provider", "config",
                        "certificate-authority-data", "client-key-data", "tokenFile", "images", "components"]) \
    | st.text(max_size=8)
scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) \
    | st.text(max_size=30) | st.sampled_from(["v1", "Secret", "ConfigMap", "https://127.0.0.1:1", "True", "Never",
                                             "client.authentication.k8s.io/v1", "x", "sha256:" + "0" * 64,
                                             "0" * 40, "gcp", "oidc"])
json_values = st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(keys, children, max_size=5), max_leaves=12)
documents = st.dictionaries(keys, json_values, max_size=6)
noise = st.binary(max_size=300) | st.text(alphabet=string.printable + "\x00\x1b\u2028\ufeff{}[]:-#&*!|>'\"%@`",
                                          max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))


def yamlish(doc) -> bytes:
    return json.dumps(doc, default=str).encode()


texts = documents.map(yamlish) | noise | st.lists(documents, max_size=3).map(
    lambda docs: b"\n---\n".join(yamlish(d) for d in docs))


def only_trainerctl_errors(fn, *args):
    try:
        return fn(*args)
    except TrainerctlError as exc:
        message = str(exc)
        # one non-empty line, bounded: what the `error:` line shows is the whole message
        assert message.strip() and "\n" not in message and len(message) < 5000, message
        assert exc.exit_code in (1, 2, 3), exc.exit_code
        return None


# -- -f documents ----------------------------------------------------------------------------------
@PROPERTY
@given(texts)
@example(b"\x00")  # the YAML reader's own message ran over two lines
def test_f_documents(tmp_path_factory, data):
    from trainerctl.target.manifest_files import _parse

    docs = only_trainerctl_errors(_parse, data, "-f x.yaml")
    if docs is not None:
        assert docs and all(isinstance(d, dict) and isinstance(d["apiVersion"], str) and d["metadata"]["name"]
                            for d in docs)


# -- -f DIR: a folder `render --output-dir` wrote, as anyone may have edited it ----------------------
MARKER = "# Written by `trainerctl render --output-dir`; files listed here are replaced on the next run.\n"
index_docs = (documents | json_values | st.fixed_dictionaries({"metadata": st.fixed_dictionaries(
    {"annotations": json_values | st.dictionaries(keys | st.just("trainerctl.io/gitops"), json_values, max_size=3)})},
    optional={"resources": json_values})).map(yamlish)


@PROPERTY
@given(index=index_docs | texts, stages=st.lists(st.tuples(st.sampled_from(["00-a", "01-b", "x"]),
                                                           texts | documents.map(yamlish)), max_size=3))
def test_f_folders(tmp_path_factory, index, stages):
    """Whatever a marked folder holds, -f DIR reads its objects or says why in one line (exit 2)."""
    from trainerctl.gitops.folder import load_folder

    root = tmp_path_factory.mktemp("folder")
    (root / "kustomization.yaml").write_bytes(MARKER.encode() + index)
    for name, text in stages:
        (root / "stages" / name).mkdir(parents=True, exist_ok=True)
        (root / "stages" / name / "kustomization.yaml").write_bytes(text)
    try:
        folder = load_folder(root)
    except TrainerctlError as exc:
        assert exc.exit_code == 2, str(exc)  # one line: the error line folds the parser's own lines
        return
    assert folder.objects and all(isinstance(d, dict) for d in folder.objects)


# -- params.env ------------------------------------------------------------------------------------
@PROPERTY
@given(st.text(max_size=300))
def test_params_env_round_trips_every_byte(text):
    from trainerctl.render.params_env import ParamsEnv

    params = ParamsEnv.parse(text)
    assert params.render() == text  # a missing final newline included
    for key in params.keys():
        assert "\n" not in key


@PROPERTY
@given(st.text(max_size=200), st.text(alphabet=string.ascii_letters + "=._-", min_size=1, max_size=10),
       st.text(max_size=20))
def test_params_env_set_changes_only_that_value(text, key, value):
    from trainerctl.render.params_env import ParamsEnv

    params = ParamsEnv.parse(text)
    before = [ln.raw for ln in params.lines if ln.key != key]
    try:
        params.set(key, value)
    except TrainerctlError:
        assert "\n" in value or "\r" in value
        return
    assert [ln.raw for ln in params.lines if ln.key != key] == before


# -- kubeconfig ------------------------------------------------------------------------------------
@PROPERTY
@given(texts, st.none() | st.sampled_from(["x", "c", ""]))
def test_kubeconfig(data, context):
    from trainerctl.cluster.client import kubeconfig_files

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # the reader refuses it before parsing (tested in test_trust_inputs)
    config = only_trainerctl_errors(kubeconfig_files.parse, text, "/tmp/kc")
    if config is not None:
        selected = only_trainerctl_errors(kubeconfig_files.select, config, context)
        if selected is not None:
            assert selected.cluster.server.startswith(("https://", "http://"))


@PROPERTY
@given(st.dictionaries(st.sampled_from(["server", "certificate-authority-data", "insecure-skip-tls-verify",
                                        "proxy-url", "tls-server-name"]), json_values, max_size=4),
       st.dictionaries(st.sampled_from(["token", "tokenFile", "username", "password", "client-certificate-data",
                                        "client-key-data", "exec", "auth-provider", "as", "as-groups"]),
                       json_values, max_size=4))
def test_kubeconfig_sections(cluster, user):
    from trainerctl.cluster.client import kubeconfig_files

    cluster.setdefault("server", "https://127.0.0.1:1")
    text = json.dumps({"clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": user}],
                       "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                       "current-context": "x"}, default=str)
    config = only_trainerctl_errors(kubeconfig_files.parse, text, "/tmp/kc")
    if config is not None:
        only_trainerctl_errors(kubeconfig_files.select, config, None)


# -- lock and config files ---------------------------------------------------------------------------
@PROPERTY
@given(texts | documents.map(lambda d: yamlish({"source": d})))
def test_lock_file(tmp_path_factory, data):
    from trainerctl.source.lock_file import read_lock

    path = tmp_path_factory.mktemp("lock") / "trainerctl.lock"
    path.write_bytes(data)
    lock = only_trainerctl_errors(read_lock, path)
    if lock is not None:
        assert len(lock.commit) == 40 and lock.digest.startswith("sha256:")


@PROPERTY
@given(texts)
def test_config_file(data):
    from trainerctl.settings.config_file import parse_config

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    only_trainerctl_errors(parse_config, text, "trainerctl.yaml")


# -- API responses -----------------------------------------------------------------------------------
@PROPERTY
@given(st.integers(200, 299), texts)
def test_api_response_bodies(status, body):
    from trainerctl.cluster.client.client import decode_body
    from trainerctl.net.transport import Response

    doc = only_trainerctl_errors(decode_body, Response(status, "OK", {}, body), "GET", "/x", "https://h")
    if doc is not None:
        assert isinstance(doc, dict)


@PROPERTY
@given(st.integers(300, 599), texts, st.none() | st.text(max_size=40))
def test_api_error_bodies(status, body, retry_after):
    from trainerctl.cluster.client.client import _api_error, retry_after_seconds
    from trainerctl.net.transport import Response

    err = _api_error(Response(status, "X", {}, body), "GET", "/x", "ctx", "https://h")
    assert len(str(err)) <= 1200 and "\n" not in str(err) and "\x1b" not in str(err)
    assert isinstance(err.causes, list) and all(isinstance(v, str) for c in err.causes for v in c.values())
    wait = retry_after_seconds(retry_after)
    assert wait is None or wait >= 0


@PROPERTY
@given(documents)
def test_discovery_and_crd_documents(doc):
    from trainerctl.cluster.client import api_shape

    for fn in (api_shape.discovery_versions, api_shape.discovery_groups, api_shape.discovery_resources,
               api_shape.discovery_aggregated, api_shape.check_crd, api_shape.check_body):
        only_trainerctl_errors(fn, doc, "GET /apis")


@PROPERTY
@given(st.lists(documents, max_size=3))
def test_discovery_through_the_client(docs):
    """Discovery.refresh over a server answering these documents: a map of kinds, or one error."""
    from trainerctl.cluster.client.client import ApiError
    from trainerctl.cluster.client import api_shape
    from trainerctl.cluster.client.discovery import Discovery

    answers = iter(docs + [{}] * 10)

    class Fake:
        server = "https://h"

        def request(self, method, path, **kwargs):
            doc = next(answers)
            if doc.get("kind") == "Status":
                raise ApiError(404, "NotFound", "no")
            return api_shape.check_body(doc, path)

    discovery = Discovery(Fake())
    if only_trainerctl_errors(discovery.refresh) is None and discovery._loaded:
        for res in discovery.all_resources():
            assert isinstance(res.resource, str) and isinstance(res.kind, str)


@pytest.mark.parametrize("value, seconds", [("3", 3.0), ("0", 0.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
                                            ("soon", None), ("-1", None), ("", None), ("1.5", None)])
def test_retry_after_forms(value, seconds):
    from trainerctl.cluster.client.client import retry_after_seconds

    assert retry_after_seconds(value) == seconds
