"""Read the live side of an upgrade check from the API server (kubernetes imported lazily)."""

from __future__ import annotations

import json
from typing import Iterable

from trainerctl.errors import PreflightError, TrainerctlError
from trainerctl.upgrade.crd_diff import FIELD_REMOVED, Finding, is_crd

_PAGE = 500


def _api_error(exc: Exception, verb: str, what: str) -> TrainerctlError:
    status = getattr(exc, "status", None)
    if status in (401, 403):
        return TrainerctlError(f"forbidden: cannot {verb} {what} (HTTP {status}); "
                               "upgrade-check needs read access to CRDs and the custom resources")
    if status is None:
        return PreflightError(f"cannot reach the API server to {verb} {what}: {exc}")
    reason = getattr(exc, "reason", "") or ""
    return TrainerctlError(f"cannot {verb} {what}: HTTP {status} {reason}".rstrip())


def _raw(response) -> dict:
    # _preload_content=False skips the client's model deserialisation, which takes seconds
    # on CRDs of a megabyte; the API already speaks JSON dicts in the shape we compare.
    return json.loads(response.data)


def read_live_crds(api_client, target_objects: Iterable[dict], *, owner_label: str | None = None) -> list[dict]:
    from kubernetes.client import ApiextensionsV1Api
    from kubernetes.client.exceptions import ApiException

    api = ApiextensionsV1Api(api_client)
    names = sorted({o["metadata"]["name"] for o in target_objects if is_crd(o)})
    found: dict[str, dict] = {}
    try:
        for name in names:
            try:
                found[name] = _raw(api.read_custom_resource_definition(name, _preload_content=False))
            except ApiException as exc:
                if exc.status != 404:
                    raise
        if owner_label:
            listed = _raw(api.list_custom_resource_definition(label_selector=owner_label,
                                                               _preload_content=False))
            for crd in listed.get("items") or []:
                found.setdefault(crd["metadata"]["name"], dict(crd, apiVersion="apiextensions.k8s.io/v1",
                                                              kind="CustomResourceDefinition"))
    except ApiException as exc:
        raise _api_error(exc, "read", "customresourcedefinitions") from None
    except Exception as exc:  # urllib3 connection errors and the like
        if isinstance(exc, TrainerctlError):
            raise
        raise _api_error(exc, "read", "customresourcedefinitions") from None
    return [found[n] for n in sorted(found)]


def list_custom_objects(api_client, live_crds: list[dict], findings: list[Finding]) -> dict[str, list[dict]]:
    """Objects of each CRD that loses a field, read at the version the field is removed from."""
    from kubernetes.client import CustomObjectsApi
    from kubernetes.client.exceptions import ApiException

    wanted: dict[str, set[str]] = {}
    for f in findings:
        if f.kind == FIELD_REMOVED and f.version:
            wanted.setdefault(f.crd, set()).add(f.version)
    api = CustomObjectsApi(api_client)
    out: dict[str, list[dict]] = {}
    for crd in live_crds:
        name = crd["metadata"]["name"]
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        for version in sorted(wanted.get(name, ())):
            token = None
            while True:
                kwargs = {"limit": _PAGE, "_preload_content": False}
                if token:
                    kwargs["_continue"] = token
                try:
                    page = _raw(api.list_cluster_custom_object(group, version, plural, **kwargs))
                except ApiException as exc:
                    if exc.status == 404:
                        break
                    raise _api_error(exc, "list", f"{plural}.{group}") from None
                except Exception as exc:
                    raise _api_error(exc, "list", f"{plural}.{group}") from None
                out.setdefault(name, []).extend(page.get("items") or [])
                token = (page.get("metadata") or {}).get("continue")
                if not token:
                    break
    return out
