"""Outputs that once differed from kubectl with exit 0 (the worst class): each must now be
byte-identical."""

from tests.support.kustomize_cases import CM, DEPLOY, SA, SVC, same

K = "kustomization.yaml"
LONG = "x" * 200

CASES = {
    "annotation_values_unquoted": same({
        K: "resources: [a.yaml]\n",
        "a.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: a
              annotations: {happy: true, port: 8080, ratio: 1.50, none: null, mode: 0400,
                            tilde: ~, empty: , hex: 0x1F, yes-word: yes, date: 2001-12-14}
            """,
    }),
    "annotation_values_after_transformers": same({
        K: "resources: [a.yaml]\nnamePrefix: p-\ncommonAnnotations: {team: a}\n",
        "a.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations: {n: 1}\n",
    }),
    "empty_annotations_removed": same({
        K: "resources: [a.yaml]\n",
        "a.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: a, annotations: {}, labels: {}}
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: b
              annotations:
            """,
    }),
    "build_annotations_in_input_removed": same({
        K: "resources: [a.yaml]\n",
        "a.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: a
              annotations:
                config.kubernetes.io/index: "3"
                internal.config.kubernetes.io/path: x
                config.kubernetes.io/origin: y
                alpha.config.kubernetes.io/transformations: z
                config.k8s.io/id: "1"
                keep: me
            """,
    }),
    "secret_long_value_wrapped": same({
        K: f"secretGenerator:\n- name: s\n  literals: [long={LONG}, short=x, b51={'y' * 51},"
           f" b54={'z' * 54}]\n",
    }),
    "configmap_binary_wrapped": same({
        K: "configMapGenerator:\n- name: c\n  files: [blob.bin]\n",
        "blob.bin": bytes(range(256)) * 2,
    }),
    "secret_from_file_wrapped": same({
        K: "secretGenerator:\n- name: s\n  files: [cert.pem]\n",
        "cert.pem": "-----BEGIN CERT-----\n" + ("A" * 64 + "\n") * 5 + "-----END CERT-----\n",
    }),
    "patch_renames_then_later_patch_uses_new_name": same({
        K: """
            resources: [deploy.yaml]
            patches:
            - path: rename.yaml
              options: {allowNameChange: true}
            - path: by-new-name.yaml
            """,
        "deploy.yaml": DEPLOY,
        "rename.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n---\n"
                       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n"
                       "spec: {replicas: 2}\n",
        "by-new-name.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n"
                            "spec: {replicas: 3}\n",
    }),
    "patch_allow_name_change_with_target": same({
        K: """
            resources: [deploy.yaml, sa.yaml]
            patches:
            - target: {kind: ServiceAccount, name: sa}
              options: {allowNameChange: true}
              patch: |
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: renamed-sa}
            """,
        "deploy.yaml": DEPLOY, "sa.yaml": SA,
    }),
    "patch_allow_kind_change": same({
        K: """
            resources: [deploy.yaml]
            patches:
            - target: {kind: Deployment}
              options: {allowKindChange: true, allowNameChange: true}
              patch: |
                apiVersion: apps/v1
                kind: StatefulSet
                metadata: {name: app-sts}
                spec: {serviceName: app}
            """,
        "deploy.yaml": DEPLOY,
    }),
    "patch_name_change_not_allowed_keeps_name": same({
        K: "resources: [deploy.yaml]\npatches:\n- target: {kind: Deployment}\n  patch: |\n"
           "    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: other}\n"
           "    spec: {replicas: 5}\n",
        "deploy.yaml": DEPLOY,
    }),
    "json_patch_rename_followed_by_references": same({
        K: """
            resources: [deploy.yaml, cm.yaml]
            patches:
            - target: {kind: ConfigMap, name: cfg}
              patch: '[{"op": "replace", "path": "/metadata/name", "value": "cfg2"}]'
            """,
        "deploy.yaml": DEPLOY, "cm.yaml": CM,
    }),
    "roleref_follows_clusterrole_rename": same({
        K: """
            resources: [rbac.yaml]
            patches:
            - target: {kind: ClusterRole}
              options: {allowNameChange: true}
              patch: |
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: reader-v2}
            """,
        "rbac.yaml": """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata: {name: reader}
            rules: []
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: Role
            metadata: {name: reader}
            rules: []
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: b}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
            subjects: [{kind: ServiceAccount, name: sa, namespace: x}]
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: RoleBinding
            metadata: {name: rb}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
            subjects: [{kind: ServiceAccount, name: sa}]
            """,
    }),
    "admission_policy_binding_follows_prefix": same({
        K: "resources: [vap.yaml]\nnamePrefix: a-\n",
        "vap.yaml": """
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicy
            metadata: {name: policy}
            spec: {validations: [{expression: "true"}]}
            ---
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicyBinding
            metadata: {name: binding}
            spec: {policyName: policy, validationActions: [Deny]}
            """,
    }),
    "local_config_as_name_reference_source": same({
        K: "resources: [r.yaml]\nnamePrefix: prefix-\nconfigurations: [nameref.yaml]\n",
        "nameref.yaml": """
            nameReference:
            - kind: IngressHost
              fieldSpecs:
              - {path: spec/rules/host, kind: Ingress}
            namePrefix:
            - {path: metadata/name, kind: IngressHost}
            """,
        "r.yaml": """
            apiVersion: local/v1
            kind: IngressHost
            metadata:
              name: test.example.com
              annotations: {config.kubernetes.io/local-config: "true"}
            ---
            apiVersion: networking.k8s.io/v1
            kind: Ingress
            metadata: {name: ing}
            spec:
              rules: [{host: test.example.com}, {host: other.example.com}]
            """,
    }),
    "generator_merge_into_plain_configmap_keeps_name": same({
        K: "resources: [cm.yaml]\nconfigMapGenerator:\n- name: cfg\n  behavior: merge\n"
           "  literals: [NEW=1]\n",
        "cm.yaml": CM,
    }),
    "generator_replace_keeps_labels": same({
        "base/" + K: "configMapGenerator:\n- name: c\n  literals: [a=1]\n  options:\n"
                     "    labels: {from: base}\n",
        K: "resources: [base]\nconfigMapGenerator:\n- name: c\n  behavior: replace\n"
           "  literals: [b=2]\n  options: {labels: {from: overlay}, annotations: {x: z}}\n",
    }),
    "namespace_kind_other_api_version": same({
        K: "namespace: foo\nresources: [ns.yaml]\n",
        "ns.yaml": "apiVersion: v2\nkind: Namespace\nmetadata: {name: b}\n---\n"
                   "apiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n",
    }),
    "cluster_scope_by_api_version": same({
        K: "namespace: foo\nresources: [r.yaml]\n",
        "r.yaml": """
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingAdmissionPolicy
            metadata: {name: a}
            ---
            apiVersion: rbac.authorization.k8s.io/v1alpha1
            kind: ClusterRole
            metadata: {name: b}
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata: {name: c}
            ---
            apiVersion: scheduling.k8s.io/v1
            kind: PriorityClass
            metadata: {name: d}
            """,
    }),
    "managed_by_label_with_fifo": same({
        K: "resources: [cm.yaml, sa.yaml]\nbuildMetadata: [managedByLabel]\n"
           "sortOptions: {order: fifo}\n",
        "cm.yaml": CM, "sa.yaml": SA,
    }),
    "managed_by_label_with_generators_and_labels": same({
        K: "buildMetadata: [managedByLabel]\nconfigMapGenerator:\n- name: g\n  literals: [a=b]\n"
           "labels:\n- pairs: {team: x}\n",
    }),
    "managed_by_label_from_top_only": same({
        "base/" + K: "resources: [cm.yaml]\nbuildMetadata: [managedByLabel]\n",
        "base/cm.yaml": CM,
        K: "resources: [base]\n",
    }),
    "endpoints_sort_order": same({
        K: "resources: [r.yaml]\n",
        "r.yaml": """
            apiVersion: v1
            kind: Service
            metadata: {name: a}
            ---
            apiVersion: v1
            kind: Endpoints
            metadata: {name: a}
            ---
            apiVersion: v1
            kind: Secret
            metadata: {name: a}
            """,
    }),
    "yaml_merge_keys": same({
        K: "resources: [a.yaml]\n",
        "a.yaml": """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: a
              labels: &l {x: "1", y: "2"}
              annotations:
                <<: *l
                z: "3"
            data:
              <<: [*l, {q: r}]
              x: override
            """,
    }),
    "yaml_aliases_are_copies": same({
        K: "resources: [d.yaml]\npatches:\n- patch: |\n    apiVersion: apps/v1\n"
           "    kind: Deployment\n    metadata: {name: d}\n    spec:\n      template:\n"
           "        metadata:\n          labels: {extra: only-here}\n",
        "d.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: d, labels: &l {app: x}}
            spec:
              selector: {matchLabels: *l}
              template:
                metadata: {labels: *l}
            """,
    }),
    "image_tag_suffix": same({
        K: "resources: [deploy.yaml]\nimages:\n- name: example.com/app\n  tagSuffix: -debug\n",
        "deploy.yaml": DEPLOY,
    }),
    "image_digest_and_tag_forms": same({
        K: """
            resources: [p.yaml]
            images:
            - {name: nginx, newTag: "1.25"}
            - {name: busybox, digest: "sha256:abc"}
            - {name: registry:5000/img, newName: mirror/img}
            """,
        "p.yaml": """
            apiVersion: v1
            kind: Pod
            metadata: {name: p}
            spec:
              containers:
              - {name: a, image: "nginx@sha256:123"}
              - {name: b, image: "busybox:1.0"}
              - {name: c, image: "registry:5000/img:2"}
              - {name: d, image: nginxy}
            """,
    }),
    "env_file_key_without_value_and_blank_key": same({
        K: "configMapGenerator:\n- name: c\n  envs: [a.env]\n",
        "a.env": "HOME\n=skipped\n  # comment\nA=1=2\nB=\n",
    }),
    "kustomization_yaml11_booleans": same({
        K: "resources: [deploy.yaml]\nlabels:\n- pairs: {tier: web}\n  includeSelectors: yes\n",
        "deploy.yaml": DEPLOY,
    }),
    "legacy_sort_custom_first_only": same({
        K: "resources: [r.yaml]\nsortOptions:\n  order: legacy\n  legacySortOptions:\n"
           "    orderFirst: [Service]\n",
        "r.yaml": CM + "---\n" + SVC + "---\n" + SA,
    }),
    "namespaces_sort_by_group": same({
        K: "resources: [r.yaml]\n",
        "r.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n---\n"
                  "apiVersion: example.com/v1\nkind: Namespace\nmetadata: {name: a}\n",
    }),
    "generator_unknown_behavior_acts_as_create": same({
        K: "configMapGenerator:\n- name: c\n  behavior: whatever\n  literals: [a=1]\n",
    }),
    "replicas_by_original_name_after_prefix": same({
        "base/" + K: "resources: [deploy.yaml]\nnamePrefix: b-\n", "base/deploy.yaml": DEPLOY,
        K: "resources: [base]\nreplicas:\n- {name: app, count: 4}\n",
    }),
    "patch_target_kind_regex": same({
        K: "resources: [deploy.yaml, svc.yaml]\npatches:\n- target: {kind: 'Dep.*|Serv.*'}\n"
           "  patch: '[{\"op\": \"add\", \"path\": \"/spec/extra\", \"value\": \"y\"}]'\n",
        "deploy.yaml": DEPLOY, "svc.yaml": SVC,
    }),
    "label_selector_on_numeric_label": same({
        K: "resources: [r.yaml]\npatches:\n- target: {labelSelector: 'tier=1'}\n"
           "  patch: |\n    - {op: add, path: /metadata/annotations, value: {a: b}}\n",
        "r.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {tier: 1}}\n---\n"
                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, labels: {tier: 2}}\n",
    }),
    "hash_not_added_to_unrelated_reference": same({
        K: "resources: [deploy.yaml]\nconfigMapGenerator:\n- name: other\n  literals: [a=1]\n",
        "deploy.yaml": DEPLOY,
    }),
    "json_patch_yaml_booleans": same({
        K: "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |\n"
           "    - op: add\n      path: /data/flag\n      value: \"on\"\n"
           "    - op: add\n      path: /data/other\n      value: x\n",
        "cm.yaml": CM,
    }),
    "secret_empty_has_data_map": same({
        K: "secretGenerator:\n- name: empty\n",
    }),
    "list_kind_expanded": same({
        K: "resources: [list.yaml]\n",
        "list.yaml": """
            apiVersion: v1
            kind: ConfigMapList
            items:
            - apiVersion: v1
              kind: ConfigMap
              metadata: {name: a}
            - apiVersion: v1
              kind: ConfigMap
              metadata: {name: b}
            """,
    }),
    # kustomize merges with kyaml, whose only directive is `$patch`: the apimachinery ones are
    # ordinary fields, and a list that does not merge is the patch's, `$patch` keys and all.
    "smp_directives_kyaml_does_not_know": same({
        K: "resources: [deploy.yaml]\npatches:\n- path: p.yaml\n", "deploy.yaml": DEPLOY,
        "p.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: app
              finalizers: [q]
              $deleteFromPrimitiveList/finalizers: [y]
            spec:
              strategy:
                $retainKeys: [type]
                type: Recreate
              template:
                spec:
                  $setElementOrder/volumes: [{name: cert}, {name: conf}]
                  volumes: [{name: conf, configMap: {name: other}}]
                  containers:
                  - name: main
                    args: [{$patch: delete, name: x}, b]
                    env: [{$patch: replace}, {name: ONLY, value: "1"}]
                    volumeMounts: [{$patch: delete}]
            """,
    }),
    "smp_new_list_with_directive_element": same({
        K: "resources: [deploy.yaml]\npatches:\n- path: p.yaml\n", "deploy.yaml": DEPLOY,
        "p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n"
                  "  template:\n    spec:\n      initContainers: [{$patch: replace}, {name: i}]\n",
    }),
}


# opentelemetry-operator's two OpenShift overlays (config/overlays/openshift and
# config/manifests/openshift), rebuilt from what they do: a null deletes the CRDs' cert-manager
# annotation (it was printed "null"), and env entries a JSON 6902 patch appends a second time
# collapse into one per name when a later strategic merge patch merges the container (both
# copies were printed).
def _otel_crd(plural: str, kind: str) -> str:
    return f"""
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata:
          annotations:
            cert-manager.io/inject-ca-from: $(CERTIFICATE_NAMESPACE)/$(CERTIFICATE_NAME)
            controller-gen.kubebuilder.io/version: v0.18.0
          name: {plural}.opentelemetry.io
        spec:
          group: opentelemetry.io
          names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {kind.lower()}}}
          scope: Namespaced
          versions:
          - name: v1beta1
            served: true
            storage: true
            schema:
              openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
        """


def _otel_manager(fields: str) -> str:
    """A strategic merge patch of the manager container with `fields` (YAML lines)."""
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: controller-manager}\n"
            "spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n"
            + "".join(f"        {line}\n" for line in fields.splitlines()))


_OTEL_CRDS = {"collectors": ("opentelemetrycollectors", "OpenTelemetryCollector"),
              "instrumentations": ("instrumentations", "Instrumentation"),
              "opampbridges": ("opampbridges", "OpAMPBridge"),
              "targetallocators": ("targetallocators", "TargetAllocator")}
_OTEL_PATCHES = {
    "no-cert-manager.yaml": "".join(f"""
        ---
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata:
          name: {plural}.opentelemetry.io
          annotations:
            cert-manager.io/inject-ca-from: null
            service.beta.openshift.io/inject-cabundle: "true"
        """ for plural, _ in _OTEL_CRDS.values()),
    "manager-env.yaml": """
        - op: add
          path: /spec/template/spec/containers/0/env/-
          value: {name: METRICS_ADDR, value: "0.0.0.0:8443"}
        - op: add
          path: /spec/template/spec/containers/0/env/-
          value: {name: ENABLE_LEADER_ELECTION, value: "false"}
        """,
    "manager-openshift.yaml": _otel_manager(
        "args: [--metrics-addr=0.0.0.0:8443, --openshift-create-dashboard=true]\n"
        "env: [{name: OPENSHIFT, value: 'true'}]"),
}
_OTEL_BASE = {
    **{f"config/crd/{f}.yaml": _otel_crd(*v) for f, v in _OTEL_CRDS.items()},
    "config/crd/kustomization.yaml": "resources:\n" + "".join(f"- {f}.yaml\n" for f in _OTEL_CRDS),
    "config/manager/manager.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: controller-manager
          labels: {app.kubernetes.io/name: opentelemetry-operator}
        spec:
          selector:
            matchLabels: {app.kubernetes.io/name: opentelemetry-operator}
          template:
            metadata:
              labels: {app.kubernetes.io/name: opentelemetry-operator}
            spec:
              containers:
              - name: manager
                image: controller:latest
                args: [--metrics-addr=127.0.0.1:8080, --enable-leader-election]
                env:
                - name: METRICS_ADDR
                  value: 127.0.0.1:8080
                - name: ENABLE_LEADER_ELECTION
                  value: "true"
                - name: SERVICE_ACCOUNT_NAME
                  valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}
              - name: kube-rbac-proxy
                image: quay.io/brancz/kube-rbac-proxy:v0.13.1
        """,
    "config/manager/kustomization.yaml": "resources: [manager.yaml]\n",
    "config/default/kustomization.yaml": """
        namespace: opentelemetry-operator-system
        namePrefix: opentelemetry-operator-
        resources: [../crd, ../manager]
        """,
    **{f"config/overlays/openshift/{f}": t for f, t in _OTEL_PATCHES.items()},
    "config/overlays/openshift/kustomization.yaml": """
        resources: [../../default]
        patches:
        - path: no-cert-manager.yaml
        - path: manager-env.yaml
          target: {kind: Deployment, name: opentelemetry-operator-controller-manager}
        - path: manager-openshift.yaml
        """,
}
CASES["otel_overlays_openshift"] = same(_OTEL_BASE, target="config/overlays/openshift")
CASES["otel_manifests_openshift"] = same({
    **_OTEL_BASE,
    "config/manifests/openshift/kustomization.yaml": """
        resources: [../../crd, ../../manager]
        patches:
        - path: no-cert-manager.yaml
        - path: manager-env.yaml
          target: {kind: Deployment}
        - path: manager-openshift.yaml
        - path: manager-bundle.yaml
        """,
    **{f"config/manifests/openshift/{f}": t for f, t in _OTEL_PATCHES.items()},
    "config/manifests/openshift/manager-bundle.yaml": _otel_manager(
        "env: [{name: ENABLE_LEADER_ELECTION, value: 'true'}]"),
}, target="config/manifests/openshift")
