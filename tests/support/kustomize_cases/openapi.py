"""`openapi:` — a custom schema (JSON or YAML) giving merge keys and scope for custom kinds, or
the built-in version — against kubectl: where the schema is set (top, base, component), which
one wins, whether it replaces or joins the built-in data, and bad schemas refused by name."""

import json

from tests.support.kustomize_cases import CM, DEPLOY, refuse, same

K = "kustomization.yaml"


def gvk(group: str, version: str, kind: str) -> list:
    return [{"group": group, "version": version, "kind": kind}]


# A custom kind whose spec.items merge by `name`, whose spec.ports merge by port + protocol,
# whose spec.hosts merge by `id` (list-map keys over the merge key), whose spec.rules only say
# list-type map (no patch strategy), and whose spec.tags merge as a set of scalars.
WIDGET_DEFS = {
    "com.example.v1.Widget": {
        "type": "object",
        "x-kubernetes-group-version-kind": gvk("example.com", "v1", "Widget"),
        "properties": {"spec": {"$ref": "#/definitions/com.example.v1.WidgetSpec"}},
    },
    "com.example.v1.WidgetSpec": {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/definitions/com.example.v1.Item"},
                      "x-kubernetes-patch-strategy": "merge",
                      "x-kubernetes-patch-merge-key": "name"},
            "ports": {"type": "array", "items": {"type": "object"},
                      "x-kubernetes-patch-strategy": "merge",
                      "x-kubernetes-patch-merge-key": "port",
                      "x-kubernetes-list-map-keys": ["port", "protocol"]},
            "hosts": {"type": "array", "items": {"type": "object"},
                      "x-kubernetes-patch-strategy": "merge",
                      "x-kubernetes-patch-merge-key": "name",
                      "x-kubernetes-list-map-keys": ["id"]},
            "rules": {"type": "array", "items": {"type": "object"},
                      "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
            "tags": {"type": "array", "items": {"type": "string"},
                     "x-kubernetes-patch-strategy": "merge"},
        },
    },
    "com.example.v1.Item": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "env": {"type": "array", "items": {"type": "object"},
                    "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "key"},
        },
    },
}
WIDGET_SCHEMA = json.dumps({"definitions": WIDGET_DEFS}, indent=2)
WIDGET_SCHEMA_YAML = """
swagger: "2.0"
definitions:
  com.example.v1.Widget:
    type: object
    x-kubernetes-group-version-kind:
    - {group: example.com, version: v1, kind: Widget}
    properties:
      spec:
        type: object
        properties:
          items:
            type: array
            x-kubernetes-patch-strategy: merge
            x-kubernetes-patch-merge-key: name
            items:
              type: object
              properties:
                env:
                  type: array
                  items: {type: object}
                  x-kubernetes-patch-strategy: merge
                  x-kubernetes-patch-merge-key: key
"""
WIDGET = """
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  items:
  - name: a
    value: "1"
    env: [{key: A, value: a}, {key: B, value: b}]
  - name: b
    value: "2"
  ports:
  - {port: 80, protocol: TCP, note: web}
  - {port: 80, protocol: UDP, note: dns}
  hosts:
  - {id: h1, name: same, addr: 10.0.0.1}
  - {id: h2, name: same, addr: 10.0.0.2}
  rules:
  - {name: r1, allow: true}
  - {name: r2, allow: false}
  tags: [x, y]
"""
WIDGET_PATCH = """
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  items:
  - name: b
    value: "22"
  - name: c
    value: "3"
  - name: a
    env: [{key: B, value: bb}, {key: C, value: c}]
"""
ALL_LISTS_PATCH = WIDGET_PATCH + """
  ports:
  - {port: 80, protocol: UDP, note: changed}
  - {port: 443, protocol: TCP, note: tls}
  hosts:
  - {id: h2, addr: 10.0.0.22}
  rules:
  - {name: r2, allow: true}
  tags: [z, x]
"""
# A Deployment patch: with only a custom schema in use, kustomize has no merge keys for it.
DEPLOY_PATCH = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: side:1
"""


def patches(*texts: str) -> str:
    out = "patches:\n"
    for text in texts:
        out += "- patch: |-\n" + "".join(f"    {line}\n" for line in text.strip().splitlines())
    return out


def widget_patched(spec_lines: str):
    """The Widget under WIDGET_SCHEMA, patched with `spec_lines` (YAML under `spec:`)."""
    patch = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n" + spec_lines
    return same({K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n" + patches(patch),
                 "schema.json": WIDGET_SCHEMA, "widget.yaml": WIDGET})


SCOPE_SCHEMA = """
swagger: "2.0"
paths:
  /apis/example.com/v1/gadgets/{name}:
    get:
      x-kubernetes-group-version-kind: {group: example.com, version: v1, kind: Gadget}
  /apis/example.com/v1/namespaces/{namespace}/widgets/{name}:
    get:
      x-kubernetes-group-version-kind: {group: example.com, version: v1, kind: Widget}
  /apis/example.com/v1/widgets:
    get:
      x-kubernetes-group-version-kind: {group: example.com, version: v1, kind: Widget}
  /apis/apps/v1/deployments/{name}:
    get:
      x-kubernetes-group-version-kind: {group: apps, version: v1, kind: Deployment}
"""
GADGET = """
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g}
spec: {owner: {kind: ServiceAccount, name: sa}}
"""

CASES = {
    # --- merge keys from a custom schema
    "json_schema_merges_custom_lists": same({
        K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n" + patches(ALL_LISTS_PATCH),
        "schema.json": WIDGET_SCHEMA, "widget.yaml": WIDGET,
    }),
    "yaml_schema_merges_custom_lists": same({
        K: "openapi: {path: schema.yaml}\nresources: [widget.yaml]\n" + patches(WIDGET_PATCH),
        "schema.yaml": WIDGET_SCHEMA_YAML, "widget.yaml": WIDGET,
    }),
    "list_map_keys_port_and_protocol": widget_patched(
        "  ports:\n  - {port: 80, protocol: TCP, note: changed}\n  - {port: 8080, protocol: TCP}\n"),
    "list_map_keys_take_over_merge_key": widget_patched(
        "  hosts:\n  - {id: h1, addr: 10.9.9.9}\n  - {id: h3, name: same}\n"),
    "list_type_map_without_patch_strategy_replaces": widget_patched(
        "  rules:\n  - {name: r3, allow: true}\n"),
    # kustomize's merge knows only `$patch`; the other SMP directives stay as fields.
    "merge_directives_on_custom_lists": widget_patched(
        "  items:\n  - {name: a, $patch: delete}\n  tags: [q]\n"
        "  $deleteFromPrimitiveList/tags: [y]\n  $setElementOrder/items: [{name: b}]\n"),
    "patches_strategic_merge_field_uses_schema": same({
        K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n"
           "patchesStrategicMerge: [patch.yaml]\n",
        "schema.json": WIDGET_SCHEMA, "widget.yaml": WIDGET, "patch.yaml": WIDGET_PATCH,
    }),
    "map_values_typed_by_additional_properties": same({
        K: "openapi: {path: schema.yaml}\nresources: [pool.yaml]\n" + patches(
            "apiVersion: example.com/v1\nkind: Pool\nmetadata: {name: p}\nspec:\n  groups:\n"
            "    east:\n      members: [{name: m2, weight: 5}, {name: m3}]\n"),
        "schema.yaml": """
            definitions:
              Pool:
                x-kubernetes-group-version-kind: [{group: example.com, version: v1, kind: Pool}]
                properties:
                  spec:
                    properties:
                      groups:
                        type: object
                        additionalProperties: {$ref: '#/definitions/Group'}
              Group:
                properties:
                  members:
                    type: array
                    items: {type: object}
                    x-kubernetes-patch-strategy: merge
                    x-kubernetes-patch-merge-key: name
            """,
        "pool.yaml": """
            apiVersion: example.com/v1
            kind: Pool
            metadata: {name: p}
            spec:
              groups:
                east: {members: [{name: m1}, {name: m2, weight: 1}]}
                west: {members: [{name: w1}]}
            """,
    }),
    "array_without_type_has_no_element_schema": same({
        K: "openapi: {path: schema.yaml}\nresources: [widget.yaml]\n" + patches(WIDGET_PATCH),
        "schema.yaml": WIDGET_SCHEMA_YAML.replace("          items:\n            type: array\n",
                                                  "          items:\n"),
        "widget.yaml": WIDGET,
    }),
    "two_kinds_one_definition_and_core_group": same({
        K: "openapi: {path: schema.json}\nresources: [widgets.yaml]\n" + patches(
            WIDGET_PATCH, WIDGET_PATCH.replace("example.com/v1", "v1alpha1")),
        "schema.json": json.dumps({"definitions": {**WIDGET_DEFS, "com.example.v1.Widget": {
            **WIDGET_DEFS["com.example.v1.Widget"],
            "x-kubernetes-group-version-kind": gvk("example.com", "v1", "Widget")
            + [{"version": "v1alpha1", "kind": "Widget"}]}}}),
        "widgets.yaml": WIDGET + "---\n" + WIDGET.replace("example.com/v1", "v1alpha1"),
    }),
    # --- a custom schema replaces the built-in data, or joins it
    "custom_schema_replaces_builtin_merge_keys": same({
        K: "openapi: {path: schema.json}\nresources: [deploy.yaml, widget.yaml]\n"
           + patches(DEPLOY_PATCH, WIDGET_PATCH),
        "schema.json": WIDGET_SCHEMA, "widget.yaml": WIDGET, "deploy.yaml": DEPLOY,
    }),
    "schema_in_base_applies_to_overlay_patches": same({
        "base/" + K: "openapi: {path: schema.json}\nresources: [deploy.yaml, widget.yaml]\n",
        "base/schema.json": WIDGET_SCHEMA, "base/widget.yaml": WIDGET, "base/deploy.yaml": DEPLOY,
        K: "resources: [base]\n" + patches(DEPLOY_PATCH, WIDGET_PATCH),
    }),
    "schema_in_base_after_a_custom_kind_joins_builtin": same({
        "base/" + K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n",
        "base/schema.json": WIDGET_SCHEMA, "base/widget.yaml": WIDGET,
        K: "resources: [gadget.yaml, deploy.yaml, base]\n" + patches(DEPLOY_PATCH, WIDGET_PATCH),
        "gadget.yaml": GADGET, "deploy.yaml": DEPLOY,
    }),
    "schema_in_base_after_a_patch_joins_builtin": same({
        "one/" + K: "resources: [deploy.yaml]\n" + patches(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec: {replicas: 2}"),
        "one/deploy.yaml": DEPLOY,
        "two/" + K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n",
        "two/schema.json": WIDGET_SCHEMA, "two/widget.yaml": WIDGET,
        K: "resources: [one, two]\n" + patches(DEPLOY_PATCH, WIDGET_PATCH),
    }),
    "schema_in_overlay_applies_to_base_resources": same({
        "base/" + K: "resources: [widget.yaml]\n", "base/widget.yaml": WIDGET,
        "overlay/" + K: "openapi: {path: schema.yaml}\nresources: [../base]\n"
                        + patches(WIDGET_PATCH),
        "overlay/schema.yaml": WIDGET_SCHEMA_YAML,
    }, target="overlay"),
    "schema_in_component": same({
        "comp/" + K: "kind: Component\nopenapi: {path: schema.json}\n" + patches(WIDGET_PATCH),
        "comp/schema.json": WIDGET_SCHEMA,
        K: "resources: [widget.yaml]\ncomponents: [comp]\n", "widget.yaml": WIDGET,
    }),
    "overlay_version_wins_over_base_schema": same({
        "base/" + K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n",
        "base/schema.json": WIDGET_SCHEMA, "base/widget.yaml": WIDGET,
        K: "openapi: {version: v1.21.2}\nresources: [base]\n" + patches(WIDGET_PATCH),
    }),
    "overlay_schema_wins_over_base_schema": same({
        "base/" + K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n",
        "base/schema.json": WIDGET_SCHEMA.replace('"merge-key": "name"', '"merge-key": "value"')
        .replace('"x-kubernetes-patch-merge-key": "name"', '"x-kubernetes-patch-merge-key": "value"'),
        "base/widget.yaml": WIDGET,
        K: "openapi: {path: schema.yaml}\nresources: [base]\n" + patches(WIDGET_PATCH),
        "schema.yaml": WIDGET_SCHEMA_YAML,
    }),
    "first_base_schema_wins": same({
        "a/" + K: "openapi: {path: s.yaml}\nresources: [widget.yaml]\n",
        "a/s.yaml": WIDGET_SCHEMA_YAML, "a/widget.yaml": WIDGET,
        "b/" + K: "openapi: {path: s.json, version: v9}\nresources: [cm.yaml]\n",
        "b/s.json": "{not json", "b/cm.yaml": CM,
        K: "resources: [a, b]\n" + patches(WIDGET_PATCH),
    }),
    "builtin_version_is_the_default_data": same({
        K: "openapi: {version: v1.21.2}\nresources: [deploy.yaml, widget.yaml]\n"
           + patches(DEPLOY_PATCH, WIDGET_PATCH),
        "deploy.yaml": DEPLOY, "widget.yaml": WIDGET,
    }),
    "broken_schema_never_needed_builds": same({
        K: "openapi: {path: schema.json}\nresources: [deploy.yaml, cm.yaml]\nnamespace: x\n",
        "schema.json": '{"definitions": [1, 2]}', "deploy.yaml": DEPLOY, "cm.yaml": CM,
    }),
    # --- scope from a custom schema's paths
    "scope_from_schema_paths": same({
        K: "openapi: {path: schema.yaml}\nnamespace: prod\nresources: [r.yaml]\n",
        "schema.yaml": SCOPE_SCHEMA,
        "r.yaml": GADGET + "---\n" + WIDGET + "---\napiVersion: example.com/v1\nkind: Other\n"
                  "metadata: {name: o}\n---\n" + DEPLOY,
    }),
    "scope_from_schema_in_base_reaches_overlay": same({
        "base/" + K: "openapi: {path: schema.yaml}\nresources: [g.yaml]\n",
        "base/schema.yaml": SCOPE_SCHEMA, "base/g.yaml": GADGET,
        K: "namespace: prod\nresources: [base, cm.yaml]\n", "cm.yaml": CM,
    }),
    # --- bad schemas and fields, refused by name
    "schema_file_missing": refuse({
        K: "openapi: {path: nope.json}\nresources: [cm.yaml]\n", "cm.yaml": CM,
    }, "openapi.path"),
    "schema_file_outside_root": refuse({
        "s.json": WIDGET_SCHEMA,
        "app/" + K: "openapi: {path: ../s.json}\nresources: [cm.yaml]\n", "app/cm.yaml": CM,
    }, "openapi.path", target="app"),
    "schema_not_json": refuse({
        K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n", "widget.yaml": WIDGET,
        "schema.json": '{"definitions": {"a": }',
    }, "schema.json"),
    "schema_definitions_not_a_mapping": refuse({
        K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n", "widget.yaml": WIDGET,
        "schema.json": '{"definitions": [1, 2]}',
    }, "`definitions`"),
    "schema_kind_without_version": refuse({
        K: "openapi: {path: schema.yaml}\nresources: [deploy.yaml]\n" + patches(DEPLOY_PATCH),
        "deploy.yaml": DEPLOY,
        "schema.yaml": "definitions:\n  W:\n    x-kubernetes-group-version-kind:\n"
                       "    - {group: example.com, kind: Widget}\n",
    }, "x-kubernetes-group-version-kind"),
    "schema_patch_strategy_not_a_string": refuse({
        K: "openapi: {path: schema.json}\nresources: [widget.yaml]\n" + patches(WIDGET_PATCH),
        "widget.yaml": WIDGET,
        "schema.json": WIDGET_SCHEMA.replace('"x-kubernetes-patch-strategy": "merge",\n'
                                             '          "x-kubernetes-patch-merge-key": "name"',
                                             '"x-kubernetes-patch-strategy": true,\n'
                                             '          "x-kubernetes-patch-merge-key": "name"'),
    }, "x-kubernetes-patch-strategy"),
    "schema_a_yaml_scalar": refuse({
        K: "openapi: {path: schema.yaml}\nresources: [widget.yaml]\n", "widget.yaml": WIDGET,
        "schema.yaml": "just text\n",
    }, "schema.yaml"),
    "schema_file_empty": refuse({
        K: "openapi: {path: schema.json}\nresources: [deploy.yaml]\n" + patches(DEPLOY_PATCH),
        "deploy.yaml": DEPLOY, "schema.json": "",
    }, "empty"),
    "schema_path_and_version": refuse({
        K: "openapi: {path: schema.json, version: v1.21.2}\nresources: [cm.yaml]\n",
        "cm.yaml": CM, "schema.json": WIDGET_SCHEMA,
    }, "cannot use both"),
    "base_schema_path_and_version": refuse({
        "base/" + K: "openapi: {path: schema.json, version: v1.21.2}\nresources: [cm.yaml]\n",
        "base/cm.yaml": CM, "base/schema.json": WIDGET_SCHEMA,
        K: "resources: [base]\n",
    }, "cannot use both"),
    "ignored_base_schema_must_still_exist": refuse({
        "base/" + K: "openapi: {path: nope.json}\nresources: [cm.yaml]\n", "base/cm.yaml": CM,
        K: "openapi: {version: v1.21.2}\nresources: [base]\n",
    }, "openapi.path"),
    "base_version_not_built_in": refuse({
        "base/" + K: "openapi: {version: v1.30.0}\nresources: [cm.yaml]\n", "base/cm.yaml": CM,
        K: "resources: [base]\n",
    }, "openapi.version"),
}
