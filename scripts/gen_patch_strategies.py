"""Generate trainerctl/kustomize/data/patch_strategies.json from a Kubernetes OpenAPI v2 document.

Strategic merge patch needs, for each built-in type, which lists merge (and by which key) and
which fields lead to which nested type. Those are facts of the Kubernetes API, published as
`x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key` in the server's /openapi/v2.

Usage:
  python scripts/gen_patch_strategies.py --kubeconfig KUBECONFIG   # ask a live API server
  python scripts/gen_patch_strategies.py --file swagger.json        # or read a saved document
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "trainerctl" / "kustomize" / "data" / "patch_strategies.json"


def fetch(kubeconfig: str) -> dict:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    resp = api.call_api("/openapi/v2", "GET", _preload_content=False, auth_settings=["BearerToken"])
    return json.loads(resp[0].data)


def ref_name(schema: dict) -> str | None:
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[-1] if ref else None


def build(doc: dict) -> dict:
    defs = doc["definitions"]
    table: dict[str, dict] = {}
    gvks: dict[str, str] = {}
    for name, d in defs.items():
        for gvk in d.get("x-kubernetes-group-version-kind", []):
            key = "/".join(filter(None, [gvk.get("group", ""), gvk["version"], gvk["kind"]]))
            gvks.setdefault(key, name)
        fields = {}
        for field, prop in (d.get("properties") or {}).items():
            strategy = prop.get("x-kubernetes-patch-strategy")
            merge_key = prop.get("x-kubernetes-patch-merge-key")
            child = ref_name(prop)
            if prop.get("type") == "array":
                child = ref_name(prop.get("items") or {})
            elif prop.get("type") == "object" and "additionalProperties" in prop:
                child = None  # a map: merged key by key, values replaced
            if child and child not in defs:
                child = None
            map_keys = prop.get("x-kubernetes-list-map-keys") if strategy else None
            if child or strategy:
                # [nested type, patch strategy, merge key, list-map keys when there are several]
                entry = [child, strategy or None, merge_key or None,
                         map_keys if map_keys and len(map_keys) > 1 else None]
                while entry and entry[-1] is None:
                    entry.pop()
                fields[field] = entry
        if fields:
            table[name] = fields
    # Keep only definitions reachable from a kind.
    keep: set[str] = set()
    stack = list(gvks.values())
    while stack:
        n = stack.pop()
        if n in keep:
            continue
        keep.add(n)
        for entry in table.get(n, {}).values():
            if entry and entry[0]:
                stack.append(entry[0])
    version = doc.get("info", {}).get("version", "unknown")
    return {
        "source": f"Kubernetes OpenAPI v2 {version}",
        "kinds": dict(sorted(gvks.items())),
        "types": {k: table[k] for k in sorted(table) if k in keep},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--kubeconfig")
    g.add_argument("--file")
    ap.add_argument("--note", default="", help="where the document came from, kept in the data file")
    args = ap.parse_args()
    doc = fetch(args.kubeconfig) if args.kubeconfig else json.loads(Path(args.file).read_text())
    out = build(doc)
    if args.note:
        out["source"] += f" ({args.note})"
    OUT.write_text(json.dumps(out, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {OUT} from {out['source']}: {len(out['kinds'])} kinds, {len(out['types'])} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
