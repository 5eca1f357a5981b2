"""The structural-schema validator agrees with a real kube-apiserver on generated schemas and values.

Each example is a batch of generated cases: one CRD holds every case's schema as a property of
`spec` (`c0`, `c1`, ...), and each case's value is created as its own object, which sets only its
property. The API server's verdict (created, or refused as invalid) must be the validator's on
every case. A case whose schema the API server refuses as a CRD is no case and is left out (the
generator keeps to the CRD rules, so these are few; a batch must keep most of its cases).

Fixed seed (derandomize); a fifth of TRAINERCTL_HYPOTHESIS_EXAMPLES batches of 16 cases (640 cases
with the default 200, what CI runs: each batch's CRD costs the API server about two seconds to
serve). Raise it for a longer run: TRAINERCTL_HYPOTHESIS_EXAMPLES=2000.
"""

from __future__ import annotations

import itertools
import json
import re

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.support.properties import PROPERTY
from tests.support.schema_cases import schemas, value_for
from tests.support.waiting import wait_until
from trainerctl.cluster.client.client import ApiError
from trainerctl.upgrade.schema.validate import validate

GROUP = "prop.schema.test"
BATCH = 16
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_COUNTER = itertools.count()
_CASE = re.compile(r"properties\[c(\d+)\]")


@st.composite
def cases(draw):
    schema = draw(schemas)
    return schema, draw(value_for(schema))


def _crd(n: int, props: dict) -> dict:
    plural, kind = f"things{n}", f"Thing{n}"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": f"thing{n}", "kind": kind, "listKind": f"{kind}List"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": {"type": "object", "properties": props}}}}}]}}


def _create_crd(api, n: int, batch: list[tuple[dict, object]]) -> tuple[dict, set[int]] | None:
    """The CRD holding the batch's schemas, less those the API server refuses; None if none is left."""
    left = set(range(len(batch)))
    for _ in range(3):
        crd = _crd(n, {f"c{i}": batch[i][0] for i in sorted(left)})
        try:
            api.request("POST", CRDS, body=crd)
            return crd, left
        except ApiError as exc:
            refused = {int(m) for m in _CASE.findall(str(exc))} & left
            assert exc.status == 422 and refused, f"the CRD was refused for no case of its own: {exc}"
            left -= refused
            if not left:
                return None
    return None


def _served(api, n: int) -> bool:
    listed = api.get_or_none(f"/apis/{GROUP}/v1") or {}
    return any(r.get("name") == f"things{n}" for r in listed.get("resources") or [])


# No shrinking: each step costs a CRD on the API server, and a failure lists every case of its batch.
@settings(PROPERTY, max_examples=max(1, PROPERTY.max_examples // 5),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(cases(), min_size=BATCH, max_size=BATCH))
def test_the_validator_agrees_with_the_api_server(env, batch):
    """On a fresh API server (`env`): the batches' CRDs are cluster-wide state of their own."""
    api, n = env.cluster, next(_COUNTER)
    made = _create_crd(api, n, batch)
    if made is None:
        return
    crd, left = made
    assert len(left) >= BATCH // 2, f"the API server refused most schemas of the batch: {batch}"
    try:
        wait_until(lambda: _served(api, n), 60, f"things{n}.{GROUP} to be served")
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        wrong = []
        for i in sorted(left):
            obj = {"apiVersion": f"{GROUP}/v1", "kind": f"Thing{n}",
                   "metadata": {"name": f"o{i}", "namespace": "default"}, "spec": {f"c{i}": batch[i][1]}}
            try:
                api.request("POST", f"/apis/{GROUP}/v1/namespaces/default/things{n}", body=obj)
                server = None
            except ApiError as exc:
                # 422: invalid; 400 "cannot be handled as": refused while decoding (an embedded
                # resource's apiVersion or kind that is no string), which a stored object fails on
                # every read too
                assert exc.status == 422 or (exc.status == 400 and "cannot be handled as" in str(exc)), \
                    f"not a validation answer: {exc}"
                server = str(exc)
            verdict = validate(obj, schema)
            if verdict.valid != (server is None):
                wrong.append(f"schema {json.dumps(batch[i][0])}\n  value {json.dumps(batch[i][1])}\n"
                             f"  API server: {server or 'created'}\n  validator: {verdict.problems or 'valid'}")
        assert not wrong, "the validator and the API server disagree:\n" + "\n".join(wrong)
    finally:
        api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")
