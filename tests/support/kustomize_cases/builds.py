"""Kustomizations kubectl builds that trainerctl once refused: vars, configurations for every
transformer, buildMetadata, crds, any letter case, duplicate keys, reused bases, name references
told apart by namespace, components."""

from tests.support.kustomize_cases import CM, DEPLOY, SA, SVC, ours_refuse, same

K = "kustomization.yaml"
POD_CMD = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
      - name: main
        image: img
        command: [run, --svc=$(SVC_NAME), --port=$(SVC_PORT)]
        args: ["$(SVC_NAME).$(NS)", "$$(SVC_NAME)", "$(UNKNOWN)"]
        env:
        - {name: PORT, value: "$(SVC_PORT)"}
"""
VARS = """
vars:
- name: SVC_NAME
  objref: {kind: Service, name: svc, apiVersion: v1}
- name: SVC_PORT
  objref: {kind: Service, name: svc, apiVersion: v1}
  fieldref:
    fieldPath: spec.ports[0].port
- name: NS
  objref: {kind: Service, name: svc, apiVersion: v1}
  fieldref:
    fieldPath: metadata.namespace
"""
SVC_NS = SVC.replace("metadata: {name: svc}", "metadata: {name: svc, namespace: prod}")

CASES = {
    "vars_basic": same({K: "resources: [svc.yaml, d.yaml]\n" + VARS, "svc.yaml": SVC_NS,
                        "d.yaml": POD_CMD}),
    "vars_follow_prefix": same({K: "resources: [svc.yaml, d.yaml]\nnamePrefix: p-\n" + VARS,
                                "svc.yaml": SVC_NS, "d.yaml": POD_CMD}),
    "vars_from_base": same({
        "base/" + K: "resources: [svc.yaml]\n" + VARS, "base/svc.yaml": SVC_NS,
        K: "resources: [base, d.yaml]\nnameSuffix: -x\n", "d.yaml": POD_CMD,
    }),
    "vars_in_ingress_and_annotations": same({
        K: "resources: [svc.yaml, i.yaml]\nvars:\n- name: S\n  objref: {kind: Service, "
           "name: svc, apiVersion: v1}\n",
        "svc.yaml": SVC,
        "i.yaml": """
            apiVersion: networking.k8s.io/v1
            kind: Ingress
            metadata:
              name: i
              annotations: {target: "$(S)"}
            spec:
              rules:
              - host: "$(S).example.com"
                http:
                  paths:
                  - path: /
                    pathType: Prefix
                    backend: {service: {name: svc, port: {number: 80}}}
            """,
    }),
    "vars_unused_is_fine": same({K: "resources: [svc.yaml]\nvars:\n- name: S\n  objref: "
                                    "{kind: Service, name: svc, apiVersion: v1}\n",
                                 "svc.yaml": SVC}),
    "vars_custom_var_reference": same({
        K: "resources: [svc.yaml, cm.yaml]\nconfigurations: [c.yaml]\nvars:\n- name: S\n"
           "  objref: {kind: Service, name: svc, apiVersion: v1}\n",
        "c.yaml": "varReference:\n- {path: data/k, kind: ConfigMap}\n",
        "svc.yaml": SVC, "cm.yaml": CM.replace("{k: v}", "{k: '$(S)'}"),
    }),
    "openapi_builtin_version": same({K: "resources: [cm.yaml]\nopenapi: {version: v1.21.2}\n",
                                     "cm.yaml": CM}),
    "openapi_custom_schema_unused": same({
        K: "resources: [cm.yaml]\nopenapi: {path: schema.json}\n", "cm.yaml": CM,
        "schema.json": '{"definitions": {}}',
    }),
    "configurations_name_prefix_for_kind": same({
        K: "resources: [r.yaml]\nnamePrefix: p-\nconfigurations: [c.yaml]\n",
        "c.yaml": "namePrefix:\n- {path: metadata/name, kind: Foo}\n",
        "r.yaml": DEPLOY + "---\napiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\n",
    }),
    "configurations_name_prefix_extra_path": same({
        K: "resources: [r.yaml]\nnamePrefix: p-\nconfigurations: [c.yaml]\n",
        "c.yaml": "namePrefix:\n- {path: spec/alias, kind: Foo}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {alias: f}\n",
    }),
    "configurations_name_suffix": same({
        K: "resources: [r.yaml]\nnameSuffix: -s\nconfigurations: [c.yaml]\n",
        "c.yaml": "nameSuffix:\n- {path: spec/alias, kind: Foo}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {alias: f}\n",
    }),
    "configurations_common_labels": same({
        K: "resources: [r.yaml]\ncommonLabels: {app: z}\nconfigurations: [c.yaml]\n",
        "c.yaml": "commonLabels:\n- {path: spec/selector/labels, kind: Foo, create: true}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
    }),
    "configurations_labels_field": same({
        K: "resources: [r.yaml]\nlabels:\n- pairs: {app: z}\nconfigurations: [c.yaml]\n",
        "c.yaml": "labels:\n- {path: spec/podLabels, kind: Foo, create: true}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
    }),
    "configurations_template_labels": same({
        K: "resources: [r.yaml]\nlabels:\n- pairs: {app: z}\n  includeTemplates: true\n"
           "configurations: [c.yaml]\n",
        "c.yaml": "templateLabels:\n- {path: spec/template/labels, kind: Foo, create: true}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
    }),
    "configurations_common_annotations": same({
        K: "resources: [r.yaml]\ncommonAnnotations: {team: z}\nconfigurations: [c.yaml]\n",
        "c.yaml": "commonAnnotations:\n- {path: spec/notes, kind: Foo, create: true}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
    }),
    "configurations_namespace": same({
        K: "resources: [r.yaml]\nnamespace: prod\nconfigurations: [c.yaml]\n",
        "c.yaml": "namespace:\n- {path: spec/targetNamespace, kind: Foo, create: true}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
    }),
    "configurations_images": same({
        K: "resources: [r.yaml]\nimages:\n- {name: img, newTag: v2}\nconfigurations: [c.yaml]\n",
        "c.yaml": "images:\n- {path: spec/runner/image, kind: Foo}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {runner: {image: img:v1}}\n",
    }),
    "configurations_replicas": same({
        K: "resources: [r.yaml]\nreplicas:\n- {name: f, count: 3}\nconfigurations: [c.yaml]\n",
        "c.yaml": "replicas:\n- {path: spec/size, kind: Foo, create: true}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
    }),
    "configurations_name_reference": same({
        K: "resources: [r.yaml, cm.yaml]\nnamePrefix: p-\nconfigurations: [c.yaml]\n",
        "c.yaml": "nameReference:\n- kind: ConfigMap\n  fieldSpecs:\n"
                  "  - {path: spec/configRef, kind: Foo}\n",
        "r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {configRef: cfg}\n",
        "cm.yaml": CM,
    }),
    "configurations_from_base_apply_in_overlay": same({
        "base/" + K: "resources: [r.yaml]\nconfigurations: [c.yaml]\n",
        "base/c.yaml": "commonLabels:\n- {path: spec/sel, kind: Foo, create: true}\n",
        "base/r.yaml": "apiVersion: x/v1\nkind: Foo\nmetadata: {name: f}\nspec: {}\n",
        K: "resources: [base]\ncommonLabels: {a: b}\n",
    }),
    "build_metadata_origin": same({
        "base/" + K: "resources: [cm.yaml]\nconfigMapGenerator:\n- name: gen\n  literals: [a=b]\n",
        "base/cm.yaml": CM,
        K: "resources: [base, sa.yaml]\nbuildMetadata: [originAnnotations]\n", "sa.yaml": SA,
    }),
    "build_metadata_transformers": same({
        K: "resources: [cm.yaml]\nnamePrefix: p-\nlabels:\n- pairs: {x: z}\n"
           "buildMetadata: [transformerAnnotations]\n", "cm.yaml": CM,
    }),
    "build_metadata_both": same({
        "base/" + K: "resources: [cm.yaml]\nnamespace: ns\n", "base/cm.yaml": CM,
        K: "resources: [base]\nnameSuffix: -s\ncommonAnnotations: {a: b}\n"
           "buildMetadata: [originAnnotations, transformerAnnotations]\n",
    }),
    "build_metadata_generator_merge": same({
        "base/" + K: "configMapGenerator:\n- name: g\n  literals: [a=1]\n",
        K: "resources: [base]\nconfigMapGenerator:\n- name: g\n  behavior: merge\n"
           "  literals: [b=2]\nbuildMetadata: [originAnnotations]\n",
    }),
    "crds_name_reference": same({
        K: "crds: [crd.json]\nresources: [r.yaml, cm.yaml]\nnamePrefix: p-\n",
        "crd.json": """
            {"example.com/v1.Foo": {"Schema": {"properties": {
               "apiVersion": {"type": "string"}, "kind": {"type": "string"},
               "metadata": {"type": "object"},
               "spec": {"$ref": "example.com/v1.FooSpec"}}}},
             "example.com/v1.FooSpec": {"Schema": {"properties": {
               "configName": {"type": "string",
                 "x-kubernetes-object-ref-api-version": "v1",
                 "x-kubernetes-object-ref-kind": "ConfigMap"}}}}}
            """,
        "r.yaml": "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: f}\n"
                  "spec: {configName: {name: cfg}}\n",
        "cm.yaml": CM,
    }),
    "field_names_any_case": same({
        K: "Resources: [cm.yaml]\nnameprefix: p-\nNAMESPACE: ns\ncommonlabels: {a: b}\n",
        "cm.yaml": CM,
    }),
    "field_name_case_clash_last_sorted_wins": same({
        K: "resources: [cm.yaml]\nnamePrefix: first-\nnameprefix: second-\n", "cm.yaml": CM,
    }),
    "duplicate_keys_last_wins": same({
        K: "resources: [cm.yaml]\nnamePrefix: a-\nnamePrefix: b-\n", "cm.yaml": CM,
    }),
    "duplicate_keys_nested_last_wins": same({
        K: "resources: [cm.yaml]\nlabels:\n- pairs: {x: one}\n  pairs: {z: two}\n",
        "cm.yaml": CM,
    }),
    "base_reused_under_two_prefixes": same({
        "base/" + K: "resources: [deploy.yaml, cm.yaml]\n", "base/deploy.yaml": DEPLOY,
        "base/cm.yaml": CM,
        "a/" + K: "resources: [../base]\nnamePrefix: a-\n",
        "b/" + K: "resources: [../base]\nnamePrefix: b-\n",
        K: "resources: [a, b]\n",
    }),
    "base_reused_under_two_namespaces": same({
        "base/" + K: "resources: [deploy.yaml, cm.yaml, sa.yaml]\n", "base/deploy.yaml": DEPLOY,
        "base/cm.yaml": CM, "base/sa.yaml": SA,
        "a/" + K: "resources: [../base]\nnamespace: a\n",
        "b/" + K: "resources: [../base]\nnamespace: b\n",
        K: "resources: [a, b]\n",
    }),
    "same_named_secrets_in_two_namespaces": same({
        K: "resources: [s.yaml, role.yaml]\n",
        "s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: dummy, namespace: default}\n"
                  "---\napiVersion: v1\nkind: Secret\nmetadata: {name: dummy, namespace: kube-system}\n",
        "role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
                     "metadata: {name: r}\nrules:\n- {apiGroups: [''], resources: [secrets], "
                     "resourceNames: [dummy], verbs: [get]}\n",
    }),
    "webhook_service_in_merged_namespaces": same({
        "base/" + K: "resources: [svc.yaml, hook.yaml]\n",
        "base/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: admission}\n",
        "base/hook.yaml": """
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingWebhookConfiguration
            metadata: {name: hook}
            webhooks:
            - name: v.example.com
              clientConfig:
                service: {name: admission, namespace: default}
            """,
        "one/" + K: "resources: [../base]\nnamespace: one\nnameSuffix: -one\n",
        "two/" + K: "resources: [../base]\nnamespace: two\nnameSuffix: -two\n",
        K: "resources: [one, two]\n",
    }),
    "prefixed_generators_from_two_bases": same({
        "base/" + K: "resources: [deploy.yaml]\nconfigMapGenerator:\n- name: cfg\n"
                     "  literals: [k=v]\n", "base/deploy.yaml": DEPLOY,
        "x/" + K: "resources: [../base]\nnamePrefix: x-\n",
        "z/" + K: "resources: [../base]\nnamePrefix: z-\n",
        K: "resources: [x, z]\n",
    }),
    "component_from_overlay": same({
        "base/" + K: "resources: [deploy.yaml]\n", "base/deploy.yaml": DEPLOY,
        "comp/" + K: "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                     "labels:\n- pairs: {feature: on-label}\nconfigMapGenerator:\n- name: cfg\n"
                     "  literals: [k=v]\n",
        K: "resources: [base]\ncomponents: [comp]\nnamePrefix: o-\n",
    }),
    "component_nested_and_patching": same({
        "base/" + K: "resources: [deploy.yaml, cm.yaml]\n", "base/deploy.yaml": DEPLOY,
        "base/cm.yaml": CM,
        "inner/" + K: "kind: Component\npatches:\n- target: {kind: Deployment}\n  patch: |\n"
                      "    - {op: replace, path: /spec/replicas, value: 7}\n",
        "outer/" + K: "kind: Component\ncomponents: [../inner]\nconfigMapGenerator:\n"
                      "- name: cfg\n  behavior: merge\n  literals: [extra=1]\n",
        K: "resources: [base]\ncomponents: [outer]\n",
    }),
    "component_in_base": same({
        "comp/" + K: "kind: Component\ncommonAnnotations: {c: yes-comp}\n",
        "base/" + K: "resources: [cm.yaml]\ncomponents: [../comp]\n", "base/cm.yaml": CM,
        K: "resources: [base]\nnamespace: nn\n",
    }),
    "generator_options_merged_into_generator": same({
        K: "generatorOptions:\n  labels: {a: global, b: global}\n  annotations: {g: x}\n"
           "  disableNameSuffixHash: true\nconfigMapGenerator:\n- name: c\n  literals: [k=v]\n"
           "  options: {labels: {a: local}, immutable: true}\n",
    }),
    "secret_types_and_namespaces": same({
        K: "namespace: top\nsecretGenerator:\n- name: tls\n  type: kubernetes.io/tls\n"
           "  literals: [tls.crt=c, tls.key=k]\n- name: other\n  namespace: own\n"
           "  literals: [a=b]\n",
    }),
    "replacements_from_file_and_options": same({
        K: "resources: [deploy.yaml, cm.yaml]\nreplacements:\n- path: r.yaml\n",
        "r.yaml": """
            - source: {kind: ConfigMap, name: cfg, fieldPath: data.k}
              targets:
              - select: {kind: Deployment}
                fieldPaths: ["spec.template.spec.containers.[name=main].image"]
                options: {delimiter: ':', index: 1}
            """,
        "deploy.yaml": DEPLOY, "cm.yaml": CM,
    }),
    "replacements_source_value_and_create": same({
        K: "resources: [deploy.yaml]\nreplacements:\n- sourceValue: hello\n  targets:\n"
           "  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.greeting]\n"
           "    options: {create: true}\n",
        "deploy.yaml": DEPLOY,
    }),
    "replacements_keep_target_type": same({
        K: "resources: [deploy.yaml, cm.yaml]\nreplacements:\n- source: {kind: ConfigMap, "
           "fieldPath: data.n}\n  targets:\n  - select: {kind: Deployment}\n"
           "    fieldPaths: [spec.replicas]\n",
        "deploy.yaml": DEPLOY, "cm.yaml": CM.replace("{k: v}", "{n: '5'}"),
    }),
    "replacements_reject_by_name_regex": same({
        K: "resources: [cms.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: src, "
           "fieldPath: data.v}\n  targets:\n  - select: {kind: ConfigMap}\n"
           "    reject: [{name: 'src|skip-.*'}]\n    fieldPaths: [data.v]\n",
        "cms.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src}\ndata: {v: new}\n---\n"
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dst}\ndata: {v: old}\n---\n"
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skip-me}\ndata: {v: old}\n",
    }),
    "patches_strategic_merge_inline": same({
        K: "resources: [deploy.yaml]\npatchesStrategicMerge:\n- |-\n  apiVersion: apps/v1\n"
           "  kind: Deployment\n  metadata: {name: app}\n  spec: {replicas: 9}\n",
        "deploy.yaml": DEPLOY,
    }),
    "patches_json6902_legacy_field": same({
        K: "resources: [deploy.yaml]\npatchesJson6902:\n- target: {group: apps, version: v1, "
           "kind: Deployment, name: app}\n  path: ops.yaml\n",
        "ops.yaml": "- {op: add, path: /spec/paused, value: true}\n",
        "deploy.yaml": DEPLOY,
    }),
    "empty_patch_file_ignored": same({
        K: "resources: [cm.yaml]\npatches:\n- path: empty.yaml\n- path: comments.yaml\n",
        "cm.yaml": CM, "empty.yaml": "", "comments.yaml": "# nothing\n",
    }),
    "bases_field": same({
        "base/" + K: "resources: [cm.yaml]\n", "base/cm.yaml": CM,
        K: "bases: [base]\nresources: [sa.yaml]\n", "sa.yaml": SA,
    }),
    "image_tags_field": same({
        K: "resources: [deploy.yaml]\nimageTags:\n- {name: example.com/app, newTag: '9'}\n",
        "deploy.yaml": DEPLOY,
    }),
    "env_field_of_generator": same({
        K: "configMapGenerator:\n- name: c\n  env: a.env\n  envs: [b.env]\n",
        "a.env": "A=1\n", "b.env": "B=2\n",
    }),
    "validator_that_changes_nothing": same({
        K: "resources: [cm.yaml]\nvalidators: [v.yaml]\n", "cm.yaml": CM,
        "v.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: v}\n",
    }),
    "namespace_on_role_binding_subjects_default_only": same({
        K: "namespace: nn\nresources: [rb.yaml, sa.yaml]\n",
        "rb.yaml": """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: RoleBinding
            metadata: {name: rb}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
            subjects:
            - {kind: ServiceAccount, name: default}
            - {kind: ServiceAccount, name: sa}
            - {kind: ServiceAccount, name: elsewhere, namespace: other}
            """,
        "sa.yaml": SA,
    }),
}
