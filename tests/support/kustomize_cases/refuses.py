"""Inputs kubectl refuses that trainerctl once built: now both refuse, trainerctl in one line
naming the file and the field."""

from tests.support.kustomize_cases import CM, DEPLOY, SA, refuse

K = "kustomization.yaml"

CASES = {
    "blank_namespace_of_binding_subject": refuse({
        K: "resources: [rb.yaml, sa.yaml]\n", "sa.yaml": SA,
        "rb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
                   "metadata: {name: rb}\nroleRef: {apiGroup: rbac.authorization.k8s.io, "
                   "kind: Role, name: r}\nsubjects:\n- kind: ServiceAccount\n  name: sa\n"
                   "  namespace:\n",
    }, "namespace is blank"),
    "empty_patches_strategic_merge_entry": refuse({
        K: "resources: [cm.yaml]\npatchesStrategicMerge:\n- ''\n", "cm.yaml": CM,
    }, "patch appears to be empty"),
    "legacy_sort_options_with_fifo": refuse({
        K: "resources: [cm.yaml]\nsortOptions:\n  order: fifo\n  legacySortOptions:\n"
           "    orderFirst: [ConfigMap]\n", "cm.yaml": CM,
    }, "legacySortOptions"),
    "sort_order_unknown": refuse({
        K: "resources: [cm.yaml]\nsortOptions: {order: random}\n", "cm.yaml": CM,
    }, "sortOptions.order"),
    "two_bases_same_resource_id": refuse({
        "a/" + K: "resources: [cm.yaml]\n", "a/cm.yaml": CM,
        "b/" + K: "resources: [cm.yaml]\n", "b/cm.yaml": CM,
        K: "resources: [a, b]\n",
    }, "already registered id"),
    "same_base_listed_twice": refuse({
        "base/" + K: "resources: [cm.yaml]\n", "base/cm.yaml": CM,
        K: "resources: [base, base]\n",
    }, "already registered id"),
    "strategic_merge_patch_without_name": refuse({
        K: "resources: [deploy.yaml]\npatches:\n- target: {kind: Deployment}\n  patch: |\n"
           "    apiVersion: apps/v1\n    kind: Deployment\n    spec: {replicas: 2}\n",
        "deploy.yaml": DEPLOY,
    }, "patch"),
    "json6902_legacy_without_target_name": refuse({
        K: "resources: [deploy.yaml]\npatchesJson6902:\n- target: {kind: Deployment}\n"
           "  patch: '[{\"op\": \"remove\", \"path\": \"/spec/replicas\"}]'\n",
        "deploy.yaml": DEPLOY,
    }, "target name"),
    "multiple_sm_patches_with_target": refuse({
        K: "resources: [deploy.yaml]\npatches:\n- target: {kind: Deployment}\n  patch: |\n"
           "    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: app}\n    ---\n"
           "    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: app}\n",
        "deploy.yaml": DEPLOY,
    }, "Multiple Strategic-Merge"),
    "component_listed_as_resource": refuse({
        "comp/" + K: "kind: Component\ncommonLabels: {a: b}\n",
        K: "resources: [comp, cm.yaml]\n", "cm.yaml": CM,
    }, "Component"),
    "kustomization_listed_as_component": refuse({
        "base/" + K: "resources: [cm.yaml]\n", "base/cm.yaml": CM,
        K: "components: [base]\n",
    }, "Component"),
    "absolute_base_path": refuse({
        K: "resources: [/etc]\n",
    }, "/etc"),
    "generator_merge_without_base": refuse({
        K: "configMapGenerator:\n- name: c\n  behavior: merge\n  literals: [a=1]\n",
    }, "does not exist"),
    "generator_create_over_existing": refuse({
        K: "resources: [cm.yaml]\nconfigMapGenerator:\n- name: cfg\n  literals: [a=1]\n",
        "cm.yaml": CM,
    }, "behavior must be merge or replace"),
    "namespace_transform_id_conflict": refuse({
        K: "namespace: same\nresources: [r.yaml]\n",
        "r.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: one}\n---\n"
                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: two}\n",
    }, "ID conflict"),
    "var_defined_twice": refuse({
        K: "resources: [cm.yaml]\nvars:\n- name: V\n  objref: {kind: ConfigMap, name: cfg, "
           "apiVersion: v1}\n- name: V\n  objref: {kind: ConfigMap, name: cfg, apiVersion: v1}\n",
        "cm.yaml": CM,
    }, "already encountered"),
    "var_without_resource": refuse({
        K: "resources: [cm.yaml]\nvars:\n- name: V\n  objref: {kind: Secret, name: none, "
           "apiVersion: v1}\n", "cm.yaml": CM,
    }, "cannot be mapped"),
    "replacement_without_targets": refuse({
        K: "resources: [cm.yaml]\nreplacements:\n- source: {kind: ConfigMap}\n", "cm.yaml": CM,
    }, "at least one target"),
    "replacement_source_and_value": refuse({
        K: "resources: [cm.yaml]\nreplacements:\n- source: {kind: ConfigMap}\n  sourceValue: x\n"
           "  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.k]}]\n", "cm.yaml": CM,
    }, "mutually exclusive"),
    "replicas_kind_without_replicas_field": refuse({
        K: "resources: [cm.yaml]\nreplicas:\n- {name: cfg, count: 2}\n", "cm.yaml": CM,
    }, "does not match"),
    "configurations_conflicting_create": refuse({
        K: "resources: [cm.yaml]\nconfigurations: [c.yaml]\n", "cm.yaml": CM,
        "c.yaml": "commonLabels:\n- {path: metadata/labels, create: false}\n",
    }, "conflicting fieldspecs"),
    "configurations_unknown_field": refuse({
        K: "resources: [cm.yaml]\nconfigurations: [c.yaml]\n", "cm.yaml": CM,
        "c.yaml": "prefixes:\n- {path: metadata/name}\n",
    }, "prefixes"),
    "openapi_version_not_built_in": refuse({
        K: "resources: [cm.yaml]\nopenapi: {version: v1.99.0}\n", "cm.yaml": CM,
    }, "openapi.version"),
    "resource_kind_missing": refuse({
        K: "resources: [a.yaml]\n", "a.yaml": "apiVersion: v1\nmetadata: {name: a}\n",
    }, "kind"),
    "kustomization_wrong_kind": refuse({
        K: "kind: Deployment\nresources: [cm.yaml]\n", "cm.yaml": CM,
    }, "kind"),
    "kustomization_wrong_api_version": refuse({
        K: "apiVersion: kustomize.config.k8s.io/v1\nresources: [cm.yaml]\n", "cm.yaml": CM,
    }, "apiVersion"),
    "kustomization_only_type_meta_is_empty": refuse({
        K: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
    }, "empty"),
    "helm_charts_need_helm": refuse({
        K: "helmCharts:\n- name: x\n  repo: https://example.invalid\n",
    }, "helm"),
    "validator_that_modifies": refuse({
        K: "resources: [cm.yaml]\nvalidators: [v.yaml]\n", "cm.yaml": CM,
        "v.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: v}\n"
                  "labels: {a: b}\nfieldSpecs:\n- {path: metadata/labels, create: true}\n",
    }, "shouldn't modify"),
}
