"""Schema checks for rendered objects in tests: the CRD check is the one render uses
(trainerctl/render/crd_schema.py; tests/render/test_runtimes.py also has the real API server judge it);
OpenShift's ImageStream API, which ships no CRD, is described here."""

from __future__ import annotations

from trainerctl.render.crd_schema import crd_schema, schema_errors, validate_against_crd  # noqa: F401


# image.openshift.io/v1 ImageStream (OpenShift's built-in API, so no CRD ships with Trainer):
# the fields our ImageStreams use, typed as in openshift/api image/v1 types.go.
_OBJECT_REFERENCE = {"type": "object", "properties": {
    "kind": {"type": "string"}, "name": {"type": "string"}, "namespace": {"type": "string"},
    "apiVersion": {"type": "string"}, "uid": {"type": "string"}, "resourceVersion": {"type": "string"},
    "fieldPath": {"type": "string"}}}
IMAGESTREAM_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind"],
    "properties": {
        "apiVersion": {"type": "string", "enum": ["image.openshift.io/v1"]},
        "kind": {"type": "string", "enum": ["ImageStream"]},
        "spec": {"type": "object", "properties": {
            "lookupPolicy": {"type": "object", "required": ["local"], "properties": {"local": {"type": "boolean"}}},
            "dockerImageRepository": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                "from": _OBJECT_REFERENCE,
                "reference": {"type": "boolean"},
                "generation": {"type": "integer"},
                "importPolicy": {"type": "object", "properties": {
                    "insecure": {"type": "boolean"}, "scheduled": {"type": "boolean"},
                    "importMode": {"type": "string", "enum": ["Legacy", "PreserveOriginal"]}}},
                "referencePolicy": {"type": "object", "required": ["type"], "properties": {
                    "type": {"type": "string", "enum": ["Source", "Local"]}}},
            }}},
        }},
    },
}


def validate_imagestream(obj: dict) -> list[str]:
    body = {k: v for k, v in obj.items() if k != "metadata"}
    return schema_errors(body, IMAGESTREAM_SCHEMA)
