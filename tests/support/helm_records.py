"""Helm release payloads as Helm's storage driver writes them (pkg/storage/driver/util.go: JSON,
gzip at best compression, standard base64), for tests that build release records."""

from __future__ import annotations

import base64
import gzip
import json


def encode_payload(release: dict) -> str:
    raw = json.dumps(release, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9)).decode()
