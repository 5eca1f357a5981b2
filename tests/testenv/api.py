"""A small keep-alive JSON client for the test cluster's own helper processes (kubelet, proxy).

They run as separate processes for the whole life of a cluster, so they do not import the
kubernetes client (slow start, a thread pool) or trainerctl's (the product under test).
"""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.parse
from pathlib import Path


class ApiError(RuntimeError):
    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body


class Api:
    """One persistent HTTPS connection to kube-apiserver (not thread-safe: one per thread)."""

    def __init__(self, server: str, token: str, ca_file: str, timeout: float = 30.0):
        parsed = urllib.parse.urlparse(server)
        self.host, self.port = parsed.hostname, parsed.port or 443
        self.token = token
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=ca_file)
        self._conn: http.client.HTTPSConnection | None = None

    @classmethod
    def from_kubeconfig(cls, path: str | Path) -> "Api":
        """Our own kubeconfigs only (tests/testenv/cluster.py writes them): a token and a CA file."""
        config = json.loads(Path(path).read_text())
        cluster = config["clusters"][0]["cluster"]
        return cls(cluster["server"], config["users"][0]["user"]["token"], cluster["certificate-authority"])

    def request(self, method: str, path: str, body: dict | None = None, query: dict | None = None,
                content_type: str = "application/json") -> dict:
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):  # a kept-alive connection the server closed is retried once
            try:
                if self._conn is None:
                    self._conn = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                             timeout=self.timeout)
                self._conn.request(method, path, body=data, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.close()
                if attempt == 2:
                    raise
        text = raw.decode(errors="replace")
        if response.status >= 400:
            raise ApiError(response.status, text)
        return json.loads(text) if text else {}

    def get_or_none(self, path: str) -> dict | None:
        try:
            return self.request("GET", path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
