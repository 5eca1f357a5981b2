"""`replacements` whose target path runs into YAML or JSON held in a string (kustomize v5.8),
and the list selectors of replacement paths (regular expressions), against kubectl."""

from tests.support.kustomize_cases import CM, ours_refuse, refuse, same

K = "kustomization.yaml"
SOURCE = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: src
  annotations: {host: www.example.com}
data:
  host: db.example.com
  port: "5432"
  image: nginx:1.20
  env: dev
  flag: "true"
  text: "a: b"
  many: many
"""


def copy_to(field: str, *paths: str, create: bool = False, extra: str = "") -> str:
    """A replacement copying ConfigMap src's `field` into `paths` of ConfigMap tgt."""
    opts = "    options: {create: true}\n" if create else ""
    fps = "".join(f"    - '{p}'\n" for p in paths)
    return (f"- source: {{kind: ConfigMap, name: src, fieldPath: {field}}}\n  targets:\n"
            f"  - select: {{kind: ConfigMap, name: tgt}}\n    fieldPaths:\n{fps}{opts}{extra}")


def replace(*args, **kwargs) -> str:
    """A kustomization of src.yaml and tgt.yaml with one replacement (see copy_to)."""
    return "resources: [src.yaml, tgt.yaml]\nreplacements:\n" + copy_to(*args, **kwargs)


def target(data: str) -> str:
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tgt}\ndata:\n" + data


PRETTY_JSON = """  config.json: |-
    {
      "database": {
        "connections": {
          "primary": {"host": "localhost", "port": 3306, "ssl": true},
          "secondary": {"host": "backup", "port": 3307, "ratio": 0.5, "big": 1e21}
        },
        "pool": {"min": 5, "max": 10, "tags": ["a", "b"], "none": null}
      },
      "logging": {"level": "info", "html": "<a & b>", "uni": "caf\\u00e9"}
    }
"""
PROMETHEUS = """  prometheus.yml: |-
    global:
        scrape_interval: 15s
        external_labels:
            prometheus_env: TARGET_ENVIRONMENT
            quoted: 'single'
            dq: "double"
            flag: "false"
            empty:
    scrape_configs:
      - job_name: "prometheus"
        static_configs:
          - targets: ["localhost:9090", 'x:1']
        relabel: {from: a, to: b}
      - job_name: node
        honor: true
        interval: 30
"""
DEPLOYMENT_YAML = """  deployment.yaml: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web-app
    spec:
      replicas: 1
      template:
        spec:
          containers:
          - name: web
            image: nginx:1.18
          - name: webapp
            image: busybox:latest
"""

CASES = {
    # --- JSON held in a string: re-encoded as Go's encoding/json writes it
    "json_pretty_nested_fields": same({
        K: replace("data.host", r"data.config\.json.database.connections.primary.host")
        + copy_to("data.port", r"data.config\.json.database.connections.primary.port"),
        "src.yaml": SOURCE, "tgt.yaml": target(PRETTY_JSON),
    }),
    "json_compact_in_annotation": same({
        K: replace("metadata.name",
                   r"metadata.annotations.cloud\.google\.com/backend-config.ports.appA"),
        "src.yaml": SOURCE,
        "tgt.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tgt\n  annotations:\n"
                    "    cloud.google.com/backend-config: '{\"ports\": {\"appA\": \"x\", "
                    "\"b\": [1, 2.50, -0.0, 1e-7, 123456789012]}}'\n",
    }),
    "json_array_with_list_selector": same({
        K: replace("data.image", r"data.list\.json.[name=web].image"),
        "src.yaml": SOURCE,
        "tgt.yaml": target("  list.json: '[{\"name\": \"web\", \"image\": \"a\"}, "
                           "{\"name\": \"db\", \"image\": \"b\"}]'\n"),
    }),
    "json_create_new_fields": same({
        K: replace("data.port", r"data.c\.json.server.port", r"data.c\.json.server.tls.port",
                   create=True),
        "src.yaml": SOURCE, "tgt.yaml": target("  c.json: '{\"server\": {\"host\": \"h\"}}'\n"),
    }),
    "json_string_target_keeps_string": same({
        K: replace("data.flag", r"data.c\.json.enabled", r"data.c\.json.name"),
        "src.yaml": SOURCE,
        "tgt.yaml": target("  c.json: '{\"enabled\": \"no\", \"name\": 7}'\n"),
    }),
    "json_number_target_given_text_left_alone": same({
        K: replace("data.many", r"data.c\.json.replicas"),
        "src.yaml": SOURCE, "tgt.yaml": target("  c.json: '{\"replicas\": 2, \"z\": [3, 1]}'\n"),
    }),
    "json_mapping_target_replaced_by_value": same({
        K: replace("metadata.annotations", r"data.c\.json.meta"),
        "src.yaml": SOURCE, "tgt.yaml": target("  c.json: '{\"meta\": {\"old\": true}}'\n"),
    }),
    "json_delimiter_option_not_applied_inside": same({
        K: replace("data.env", r"data.c\.json.image",
                   extra="    options: {delimiter: ':', index: 1}\n"),
        "src.yaml": SOURCE, "tgt.yaml": target("  c.json: '{\"image\": \"nginx:old\"}'\n"),
    }),
    # --- YAML held in a string: rewritten as kyaml writes YAML
    "yaml_config_field": same({
        K: replace("data.env", r"data.prometheus\.yml.global.external_labels.prometheus_env"),
        "src.yaml": SOURCE, "tgt.yaml": target(PROMETHEUS),
    }),
    "yaml_values_that_need_quotes": same({
        K: replace("data.flag", r"data.prometheus\.yml.global.external_labels.quoted",
                   r"data.prometheus\.yml.global.external_labels.prometheus_env")
        + copy_to("data.text", r"data.prometheus\.yml.global.external_labels.dq",
                  r"data.prometheus\.yml.scrape_configs.[job_name=node].honor"),
        "src.yaml": SOURCE, "tgt.yaml": target(PROMETHEUS),
    }),
    "yaml_number_target_given_text": same({
        K: replace("data.many", r"data.prometheus\.yml.scrape_configs.1.interval"),
        "src.yaml": SOURCE, "tgt.yaml": target(PROMETHEUS),
    }),
    "yaml_list_element_by_name": same({
        K: replace("data.image", r"data.deployment\.yaml.spec.template.spec.containers.[name=web$].image",
                   r"data.deployment\.yaml.spec.replicas"),
        "src.yaml": SOURCE, "tgt.yaml": target(DEPLOYMENT_YAML),
    }),
    "yaml_flow_style": same({
        K: replace("data.env", r"data.config\.yaml.labels.app",
                   r"data.config\.yaml.spec.selector.matchLabels.app"),
        "src.yaml": SOURCE,
        "tgt.yaml": target("  config.yaml: |-\n    labels: {\n      app: \"X\",\n"
                           "      version: \"1.0.0\",\n    }\n    spec: {replicas: 3, "
                           "selector: {matchLabels: {app: \"X\"}}}\n"),
    }),
    "yaml_create_field": same({
        K: replace("data.port", r"data.app\.yaml.server.port", r"data.app\.yaml.extra.list.0",
                   create=True),
        "src.yaml": SOURCE, "tgt.yaml": target("  app.yaml: 'server: {host: h}'\n"),
    }),
    # --- what kustomize refuses, and what trainerctl will not guess
    "path_through_plain_string_refused": refuse({
        K: replace("data.env", "data.plain.key"),
        "src.yaml": SOURCE, "tgt.yaml": target("  plain: just text\n"),
    }, "data.plain.key"),
    "path_through_invalid_yaml_refused": refuse({
        K: replace("data.env", "data.bad.key"),
        "src.yaml": SOURCE, "tgt.yaml": target("  bad: '{unclosed: [1, 2'\n"),
    }, "data.bad.key"),
    "path_missing_inside_string_refused": refuse({
        K: replace("data.env", r"data.c\.json.nope"),
        "src.yaml": SOURCE, "tgt.yaml": target("  c.json: '{\"a\": 1}'\n"),
    }, "nope"),
    "yaml_with_comments_not_guessed": ours_refuse({
        K: replace("data.env", r"data.c\.yaml.env"),
        "src.yaml": SOURCE, "tgt.yaml": target("  c.yaml: |\n    # settings\n    env: x\n"),
    }, "comments"),
    "path_through_null_with_create_not_guessed": ours_refuse({
        K: replace("data.env", "data.a.b", create=True),
        "src.yaml": SOURCE, "tgt.yaml": target("  a: null\n"),
    }, "null"),
    # --- list selectors in replacement paths are regular expressions, searched
    "list_selector_is_a_regular_expression": same({
        K: "resources: [d.yaml]\nreplacements:\n- sourceValue: NEW\n  targets:\n"
           "  - select: {kind: Deployment}\n    fieldPaths:\n"
           "    - spec.template.spec.containers.[name=web].image\n"
           "    - spec.template.spec.initContainers.[name=^in.t$].image\n",
        "d.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: app}
            spec:
              template:
                spec:
                  initContainers: [{name: init, image: x}, {name: it, image: x}]
                  containers:
                  - {name: web, image: a}
                  - {name: webapp, image: b}
                  - {name: my-web, image: c}
                  - {name: db, image: d}
            """,
    }),
    "escaped_dot_and_bracketed_key_in_path": same({
        K: "resources: [cm.yaml]\nreplacements:\n- sourceValue: NEW\n  targets:\n"
           "  - select: {kind: ConfigMap}\n    fieldPaths:\n    - 'data.a\\.b'\n"
           "    - 'data.[c.d]'\n",
        "cm.yaml": CM.replace("{k: v}", "{a.b: x, c.d: y}"),
    }),
}
