"""`generators:` and `transformers:` with builtin plugin configs (inline, files, directories),
mapped onto the same code as the kustomization fields; external plugins refused by name."""

from tests.support.kustomize_cases import CM, DEPLOY, SA, SVC, refuse, same

K = "kustomization.yaml"


def plugin(kind: str, body: str, name: str = "p") -> str:
    return f"apiVersion: builtin\nkind: {kind}\nmetadata:\n  name: {name}\n{body}"


CASES = {
    "configmap_generator_file": same({
        K: "generators: [gen.yaml]\n",
        "gen.yaml": plugin("ConfigMapGenerator", "literals: [a=1, b=two]\n", "from-meta"),
    }),
    "configmap_generator_inline": same({
        K: "generators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n"
           "  metadata: {name: inline}\n  literals: [x=y]\n",
    }),
    "configmap_generator_options_and_namespace": same({
        K: "generators: [gen.yaml]\n",
        "gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: c\n"
                    "  namespace: ns1\nname: explicit\nliterals: [a=1]\noptions:\n"
                    "  disableNameSuffixHash: true\n  labels: {l: v}\n",
    }),
    "secret_generator_file": same({
        K: "generators: [gen.yaml]\n",
        "gen.yaml": plugin("SecretGenerator", "type: kubernetes.io/basic-auth\n"
                                              "literals: [username=u, password=p]\n", "creds"),
    }),
    "generator_reads_files_from_kustomization_root": same({
        K: "generators: [gens/gen.yaml]\n",
        "gens/gen.yaml": plugin("ConfigMapGenerator", "files: [data/conf.txt]\n", "files"),
        "data/conf.txt": "hello\n",
    }),
    "iam_policy_generator": same({
        K: "generators: [iam.yaml]\n",
        "iam.yaml": plugin("IAMPolicyGenerator",
                           "cloud: gke\nkubernetesService:\n  namespace: ns\n  name: ksa\n"
                           "serviceAccount:\n  name: gsa\n  projectId: proj\n"),
    }),
    "generated_then_referenced_and_hashed": same({
        K: "resources: [deploy.yaml]\ngenerators: [gen.yaml]\n", "deploy.yaml": DEPLOY,
        "gen.yaml": plugin("ConfigMapGenerator", "literals: [k=v]\n", "cfg"),
    }),
    "label_transformer_file": same({
        K: "resources: [deploy.yaml]\ntransformers: [labels.yaml]\n", "deploy.yaml": DEPLOY,
        "labels.yaml": plugin("LabelTransformer",
                              "labels: {team: a, num: 1}\nfieldSpecs:\n"
                              "- {path: metadata/labels, create: true}\n"
                              "- {path: spec/selector/matchLabels, kind: Deployment, create: true}\n"),
    }),
    "label_transformer_without_field_specs_does_nothing": same({
        K: "resources: [cm.yaml]\ntransformers: [labels.yaml]\n", "cm.yaml": CM,
        "labels.yaml": plugin("LabelTransformer", "labels: {team: a}\n"),
    }),
    "annotations_transformer": same({
        K: "resources: [cm.yaml]\ntransformers: [ann.yaml]\n", "cm.yaml": CM,
        "ann.yaml": plugin("AnnotationsTransformer", "annotations: {note: hi}\nfieldSpecs:\n"
                                                     "- {path: metadata/annotations, create: true}\n"),
    }),
    "prefix_suffix_transformer_legacy": same({
        K: "resources: [deploy.yaml, cm.yaml]\ntransformers: [ps.yaml]\n",
        "deploy.yaml": DEPLOY, "cm.yaml": CM,
        "ps.yaml": plugin("PrefixSuffixTransformer", "prefix: pre-\nsuffix: -suf\nfieldSpecs:\n"
                                                      "- {path: metadata/name}\n"),
    }),
    "prefix_transformer_custom_specs": same({
        K: "resources: [deploy.yaml, cm.yaml]\ntransformers: [p.yaml]\n",
        "deploy.yaml": DEPLOY, "cm.yaml": CM,
        "p.yaml": plugin("PrefixTransformer", "prefix: only-cm-\nfieldSpecs:\n"
                                              "- {path: metadata/name, kind: ConfigMap}\n"),
    }),
    "prefix_transformer_without_field_specs_refused": refuse({
        K: "resources: [cm.yaml]\ntransformers: [p.yaml]\n", "cm.yaml": CM,
        "p.yaml": plugin("PrefixTransformer", "prefix: x-\n"),
    }, "fieldSpecs"),
    "suffix_transformer": same({
        K: "resources: [cm.yaml]\ntransformers: [s.yaml]\n", "cm.yaml": CM,
        "s.yaml": plugin("SuffixTransformer", "suffix: -v2\nfieldSpecs:\n- {path: metadata/name}\n"),
    }),
    "namespace_transformer_unset_only": same({
        K: "resources: [r.yaml]\ntransformers: [ns.yaml]\n",
        "r.yaml": CM + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: keep}\n",
        "ns.yaml": "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: ns\n"
                   "  namespace: fill\nunsetOnly: true\n",
    }),
    "namespace_transformer_all_service_accounts": same({
        K: "resources: [rb.yaml]\ntransformers: [ns.yaml]\n",
        "rb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
                   "metadata: {name: rb}\nroleRef: {apiGroup: rbac.authorization.k8s.io, "
                   "kind: Role, name: r}\nsubjects:\n- {kind: ServiceAccount, name: a}\n"
                   "- {kind: User, name: u}\n",
        "ns.yaml": "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: ns\n"
                   "  namespace: team\nsetRoleBindingSubjects: allServiceAccounts\n",
    }),
    "namespace_transformer_bad_mode_refused": refuse({
        K: "resources: [cm.yaml]\ntransformers: [ns.yaml]\n", "cm.yaml": CM,
        "ns.yaml": "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: ns\n"
                   "  namespace: team\nsetRoleBindingSubjects: sometimes\n",
    }, "setRoleBindingSubjects"),
    "image_tag_transformer": same({
        K: "resources: [deploy.yaml]\ntransformers: [img.yaml]\n", "deploy.yaml": DEPLOY,
        "img.yaml": plugin("ImageTagTransformer",
                           "imageTag: {name: example.com/app, newName: mirror/app, newTag: v3}\n"
                           "fieldSpecs:\n- {path: 'spec/template/spec/containers[]/image'}\n"),
    }),
    "replica_count_transformer": same({
        K: "resources: [deploy.yaml]\ntransformers: [rc.yaml]\n", "deploy.yaml": DEPLOY,
        "rc.yaml": plugin("ReplicaCountTransformer",
                          "replica: {name: app, count: 6}\nfieldSpecs:\n"
                          "- {path: spec/replicas, kind: Deployment, create: true}\n"),
    }),
    "patch_transformer_inline": same({
        K: "resources: [deploy.yaml]\ntransformers:\n- |-\n  apiVersion: builtin\n"
           "  kind: PatchTransformer\n  metadata: {name: p}\n  target: {kind: Deployment}\n"
           "  patch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]'\n",
        "deploy.yaml": DEPLOY,
    }),
    "patch_transformer_strategic_file": same({
        K: "resources: [deploy.yaml]\ntransformers: [p.yaml]\n", "deploy.yaml": DEPLOY,
        "p.yaml": plugin("PatchTransformer", "path: patch.yaml\n"),
        "patch.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n"
                      "spec:\n  template:\n    spec:\n      containers:\n      - name: main\n"
                      "        resources: {limits: {cpu: '1'}}\n",
    }),
    "patch_strategic_merge_transformer": same({
        K: "resources: [deploy.yaml]\ntransformers: [p.yaml]\n", "deploy.yaml": DEPLOY,
        "p.yaml": plugin("PatchStrategicMergeTransformer",
                         "patches: |-\n  apiVersion: apps/v1\n  kind: Deployment\n"
                         "  metadata: {name: app}\n  spec: {replicas: 4}\n"),
    }),
    "patch_json6902_transformer": same({
        K: "resources: [deploy.yaml]\ntransformers: [p.yaml]\n", "deploy.yaml": DEPLOY,
        "p.yaml": plugin("PatchJson6902Transformer",
                         "target: {group: apps, version: v1, kind: Deployment, name: app}\n"
                         "jsonOp: '[{\"op\": \"add\", \"path\": \"/spec/paused\", \"value\": true}]'\n"),
    }),
    "patch_json6902_transformer_needs_name": refuse({
        K: "resources: [deploy.yaml]\ntransformers: [p.yaml]\n", "deploy.yaml": DEPLOY,
        "p.yaml": plugin("PatchJson6902Transformer",
                         "target: {kind: Deployment}\njsonOp: '[{\"op\": \"remove\", "
                         "\"path\": \"/spec/replicas\"}]'\n"),
    }, "target name"),
    "replacement_transformer": same({
        K: "resources: [deploy.yaml, svc.yaml]\ntransformers: [r.yaml]\n",
        "deploy.yaml": DEPLOY, "svc.yaml": SVC,
        "r.yaml": plugin("ReplacementTransformer",
                         "replacements:\n- source: {kind: Service, name: svc}\n  targets:\n"
                         "  - select: {kind: Deployment}\n"
                         "    fieldPaths: [spec.template.spec.serviceAccountName]\n"),
    }),
    "hash_transformer_mid_build": same({
        K: "configMapGenerator:\n- name: c\n  literals: [a=1]\ntransformers: [h.yaml]\n",
        "h.yaml": plugin("HashTransformer", ""),
    }),
    "transformers_directory_reused": same({
        "shared/" + K: "resources: [labels.yaml]\nnamePrefix: tx-\n",
        "shared/labels.yaml": plugin("LabelTransformer",
                                     "labels: {env: staging}\nfieldSpecs:\n"
                                     "- {path: metadata/labels, create: true}\n", "lt"),
        K: "resources: [cm.yaml, sa.yaml]\ntransformers: [shared]\n", "cm.yaml": CM, "sa.yaml": SA,
    }),
    "transformers_run_after_builtin_fields": same({
        K: "resources: [cm.yaml]\nnamePrefix: first-\ntransformers: [s.yaml]\n", "cm.yaml": CM,
        "s.yaml": plugin("PrefixTransformer", "prefix: second-\nfieldSpecs:\n- {path: metadata/name}\n"),
    }),
    "several_configs_in_one_file": same({
        K: "resources: [cm.yaml]\ntransformers: [t.yaml]\n", "cm.yaml": CM,
        "t.yaml": plugin("AnnotationsTransformer", "annotations: {a: '1'}\nfieldSpecs:\n"
                                                   "- {path: metadata/annotations, create: true}\n", "one")
        + "---\n" + plugin("LabelTransformer", "labels: {b: '2'}\nfieldSpecs:\n"
                                               "- {path: metadata/labels, create: true}\n", "two"),
    }),
    "plugin_config_scalars_become_strings": same({
        K: "resources: [cm.yaml]\ntransformers: [t.yaml]\n", "cm.yaml": CM,
        "t.yaml": plugin("LabelTransformer", "labels: {n: 1, b: true}\nfieldSpecs:\n"
                                             "- {path: metadata/labels, create: true}\n"),
    }),
    "generators_with_build_metadata": same({
        K: "generators: [gen.yaml]\nbuildMetadata: [originAnnotations]\n",
        "gen.yaml": plugin("ConfigMapGenerator", "literals: [a=1]\n", "g"),
    }),
    "exec_plugin_refused": refuse({
        K: "resources: [cm.yaml]\ntransformers: [t.yaml]\n", "cm.yaml": CM,
        "t.yaml": "apiVersion: someteam.example.com/v1\nkind: SedTransformer\nmetadata:\n"
                  "  name: s\nargsOneLiner: one two\n",
    }, "plugins are not run"),
    "krm_function_container_refused": refuse({
        K: "resources: [cm.yaml]\ntransformers: [fn.yaml]\n", "cm.yaml": CM,
        "fn.yaml": "apiVersion: example.com/v1\nkind: SetLabels\nmetadata:\n  name: f\n"
                   "  annotations:\n    config.kubernetes.io/function: |\n      container:\n"
                   "        image: example.com/set-labels:v1\n",
    }, "container"),
    "krm_function_exec_refused": refuse({
        K: "resources: [cm.yaml]\ngenerators: [fn.yaml]\n", "cm.yaml": CM,
        "fn.yaml": "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: f\n"
                   "  annotations:\n    config.kubernetes.io/function: |\n      exec:\n"
                   "        path: ./gen.sh\n",
    }, "exec"),
    "helm_chart_inflation_generator_refused": refuse({
        K: "generators: [h.yaml]\n",
        "h.yaml": plugin("HelmChartInflationGenerator", "chartName: x\n"),
    }, "helm"),
    "transformer_listed_as_generator_refused": refuse({
        K: "generators: [t.yaml]\n",
        "t.yaml": plugin("LabelTransformer", "labels: {a: b}\n"),
    }, "not a generator"),
    "unknown_builtin_refused": refuse({
        K: "transformers: [t.yaml]\nresources: [cm.yaml]\n", "cm.yaml": CM,
        "t.yaml": plugin("NoSuchTransformer", ""),
    }, "NoSuchTransformer"),
    "plugin_config_wrong_type_refused": refuse({
        K: "transformers: [t.yaml]\nresources: [cm.yaml]\n", "cm.yaml": CM,
        "t.yaml": plugin("LabelTransformer", "labels: [a, b]\n"),
    }, "labels"),
}
