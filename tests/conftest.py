"""Fixtures shared by all tests: ../shared upstream data and the real test clusters; the support
modules' fixtures are registered here, so test modules never import fixtures (or each other)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from tests.support.cluster import env, fresh_servers, shared_env  # noqa: F401 (API servers)
from tests.support.e2e import api, tctl  # noqa: F401 (trainerctl and the API of the e2e cluster)
from tests.support.render import (embedded_copy, installed_copy, mirrors, remotes,  # noqa: F401 (git mirrors,
                                  remotes_outlive_each_test, upstream)  # remote resources, the wheel's embedded release)
from tests.support.registry import registry_stack  # noqa: F401 (crane and distribution registries)

ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = ROOT.parent / "shared"


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: needs the real kube-apiserver test cluster (tests/testenv)")
    config.addinivalue_line("markers", "e2e: runs the real controllers on the e2e cluster (tests/testenv/e2e.py)")
    config.addinivalue_line("markers", "registry: runs real registries (crane, distribution: tests/support/registry.py)")
    _check_tested_package()
    _take_ctrl_c()


def _take_ctrl_c() -> None:
    """The Ctrl-C tests need SIGINT delivered. A runner started in the background (`cmd &`, nohup)
    hands it down ignored, and an ignored signal stays ignored across exec; a handler does not."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _check_tested_package() -> None:
    """Under .ci/run (TRAINERCTL_TEST_INSTALLED=1) the suite must test the installed wheel.

    pytest puts the checkout on sys.path (rootdir of the `tests` package), and `python -m`
    puts the working directory there too; either would quietly test the source tree instead.
    """
    if not _env_true("TRAINERCTL_TEST_INSTALLED"):
        return
    import trainerctl

    where = Path(trainerctl.__file__).resolve()
    if where.is_relative_to(ROOT):
        pytest.exit(f"TRAINERCTL_TEST_INSTALLED=1 but trainerctl was imported from the checkout ({where}); "
                    "run pytest with --import-mode=append and PYTHONSAFEPATH=1 (see .ci/run)", returncode=3)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # One rule marks what needs a cluster, so `-m "not cluster"` (or `-m "not e2e"`) deselects it:
    # every fixture that starts an API server needs `cluster_binaries`, and fixturenames holds a
    # test's whole fixture closure.
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "cluster_binaries" in names:
            item.add_marker(pytest.mark.cluster)
        if "e2e_cluster" in names:
            item.add_marker(pytest.mark.e2e)
        if "registry_binaries" in names:
            item.add_marker(pytest.mark.registry)
    # Tests without a cluster first, then the base cluster's, then the e2e tests (each in their own
    # order): the quick failures come first, a cold test-cluster build (.ci/run starts it beside
    # the suite) has time to finish, and the e2e cluster, which lives until the session ends, is
    # only started once everything else has run.
    # Among the e2e tests, those on the Flux controllers go last: .ci/run builds Flux (the
    # longest build) while the other e2e tests run.
    # The registry tests wait on their own build (crane, distribution) like the cluster tests.
    items.sort(key=lambda item: (item.get_closest_marker("e2e") is not None,
                                 item.get_closest_marker("cluster") is not None
                                 or item.get_closest_marker("registry") is not None,
                                 "flux" in getattr(item, "fixturenames", ())))


def _unavailable(reason: str):
    """Skip, or fail under CI=true: CI must never pass by skipping the cluster tests."""
    if _env_true("CI"):
        pytest.fail(f"{reason} (CI=true)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared (upstream reference data); skip when absent, fail if TRAINERCTL_REQUIRE_SHARED=1."""
    if not SHARED_DIR.is_dir():
        reason = f"{SHARED_DIR} (upstream reference data) is absent"
        if _env_true("TRAINERCTL_REQUIRE_SHARED"):
            pytest.fail(f"{reason} but TRAINERCTL_REQUIRE_SHARED=1")
        pytest.skip(reason)
    return SHARED_DIR


@pytest.fixture(scope="session")
def cluster_binaries() -> Path:
    """The base test cluster's binaries (built once into the cache); skips when Go is missing
    (fails under CI=true). Every fixture that starts an API server depends on it."""
    from tests.testenv.build import BuildError, ensure_binaries

    try:
        return ensure_binaries()
    except BuildError as exc:
        _unavailable(f"test cluster unavailable: {exc}")


@pytest.fixture(scope="session")
def registry_binaries() -> Path:
    """crane, the distribution registry and htpasswd (built once into the cache); skips when Go is
    missing (fails under CI=true)."""
    from tests.testenv.build import BuildError, ensure_registry_binaries

    try:
        return ensure_registry_binaries()
    except BuildError as exc:
        _unavailable(f"registries unavailable: {exc}")


@pytest.fixture(scope="session")
def test_cluster(cluster_binaries):
    """A started etcd + kube-apiserver (tests.testenv.cluster.TestCluster), stopped at session end."""
    from tests.testenv.cluster import TestCluster

    cluster = TestCluster(bin_dir=cluster_binaries, keep_workdir=_env_true("TRAINERCTL_TESTENV_KEEP"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def namespace(test_cluster) -> str:
    """A fresh namespace in the test cluster, with the `default` ServiceAccount a controller would add.

    It is not deleted afterwards: without kube-controller-manager a deleted namespace stays
    Terminating forever, and each name is unique anyway.
    """
    from kubernetes import client

    name = f"t-{secrets.token_hex(4)}"
    core = client.CoreV1Api(test_cluster.api_client())
    core.create_namespace({"metadata": {"name": name}}, _preload_content=False)
    # ServiceAccount admission rejects Pods until `default` exists; no controller makes it here.
    core.create_namespaced_service_account(name, {"metadata": {"name": "default"}}, _preload_content=False)
    return name


@pytest.fixture(scope="session")
def e2e_cluster(cluster_binaries):
    """One e2e cluster for the session (tests.testenv.e2e.E2ECluster): kube-apiserver, controller
    manager, scheduler, kwok nodes, the service proxy and the process kubelet that runs the real
    Trainer and JobSet controllers. Tests share it, so each installs into its own namespaces or
    cleans up what it installs cluster-wide (see tests/support/e2e.py).

    Skips when Go, root or `ip` is missing (fails under CI=true).
    """
    from tests.testenv.build import BuildError, ensure_e2e_binaries
    from tests.testenv.e2e import E2ECluster, missing_prerequisites

    reason = missing_prerequisites()
    if reason:
        _unavailable(reason)
    try:
        bin_dir, e2e_bin_dir = cluster_binaries, ensure_e2e_binaries()
    except BuildError as exc:
        _unavailable(f"e2e cluster unavailable: {exc}")
    cluster = E2ECluster(bin_dir=bin_dir, e2e_bin_dir=e2e_bin_dir, keep_workdir=_env_true("TRAINERCTL_TESTENV_KEEP"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
