"""Transformer and generator behaviour, each case checked against the real kubectl kustomize
(test_kustomize_fixtures) and, where a value is a documented fact of kustomize, against a
golden value as well (test_kustomize_behaviour)."""

from tests.support.kustomize_cases import same
from tests.support.kustomize_cases.openapi import GADGET

DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: web}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: sa
      containers:
      - name: main
        image: example.com/app:1.0
        args: [a, b]
        env:
        - {name: A, value: "1"}
        - name: FROM_CM
          valueFrom: {configMapKeyRef: {name: cfg, key: k}}
        ports:
        - {containerPort: 80, name: http, protocol: TCP}
        volumeMounts:
        - {name: conf, mountPath: /etc/conf}
      volumes:
      - name: conf
        configMap: {name: cfg}
      - name: cert
        secret: {secretName: creds}
"""

CASES = {
    "scalar_quoting_yaml11": same({
        "kustomization.yaml": "resources: [foo.yaml]\n",
        "foo.yaml": """
            apiVersion: example.com/v1
            kind: Foo
            metadata:
              name: x
              annotations: {z10: a, z9: b, Z1: c, a_b: d, a-b: e, a.b: f, a1: g}
            data:
              a: yes
              b: 'on'
              c: "0400"
              d: 01234
              e: 'single'
              f: "1_000"
              h: "2001-12-14"
              i: 1.0
              j: 1e3
              k: ~
              l: "with: colon"
              m: "- dash"
              n: "#hash"
              o: " lead"
              p: "trail "
              q: "line1\\nline2"
              r: "line1\\nline2\\n"
              s: "line1\\nline2\\n\\n"
              t: " lead\\nline2"
              u: "trailsp \\nline2"
              v: "a very long string that goes over the eighty column limit because it keeps going and going on"
              w: "x,y[z]{a}"
              x: "@at"
              y: "`tick"
              z: "unicodé ✓"
              aa: "tab\\there"
              ab: "089"
              ac: "0x1F"
              ad: ".5"
              ae: "+1"
              af: "1:20"
              ag: "Null"
              ah: "NO"
              ai: "y"
              al: "<<"
              am: "*star"
              as: "'sq"
              ax: ""
              ay: "1.2.3"
              bb: ".NaN"
              bd: "0o17"
              bn: "emoji 😀"
              bs: "x\\n  indented\\ny"
              bv: 12345678901234567890
              bw: 0.1
              bx: 1.5e-7
              by: 100000000.0
              bz: 1234567.5
              ca: [[1, 2], [], {}]
              cb: {"": empty-key}
            """,
    }),
    "configmap_generator_hash_and_nameref": same({
        "kustomization.yaml": """
            resources: [deploy.yaml]
            configMapGenerator:
            - name: cfg
              literals: [a=1, b=x, 'q="quoted"']
              files: [conf.txt, renamed.txt=conf.txt]
              envs: [vars.env]
            secretGenerator:
            - name: creds
              literals: [password=hunter2]
              type: kubernetes.io/basic-auth
            generatorOptions:
              labels: {gen: "yes"}
            """,
        "deploy.yaml": DEPLOY,
        "conf.txt": "line one\nline two\n",
        "vars.env": "# comment\nX=1\n\nY=two words\n",
    }),
    "generator_behaviors_merge_replace": same({
        "base/kustomization.yaml": """
            configMapGenerator:
            - {name: one, literals: [a=1, b=2]}
            - {name: two, literals: [a=1]}
            """,
        "kustomization.yaml": """
            resources: [base]
            namePrefix: p-
            configMapGenerator:
            - {name: one, behavior: merge, literals: [b=3, c=4]}
            - {name: two, behavior: replace, literals: [z=9], options: {disableNameSuffixHash: true}}
            """,
    }),
    "strategic_merge_lists_and_directives": same({
        "kustomization.yaml": """
            resources: [deploy.yaml]
            patches:
            - path: patch.yaml
            - patch: |-
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: app}
                spec:
                  template:
                    spec:
                      volumes:
                      - {name: cert, $patch: delete}
            """,
        "deploy.yaml": DEPLOY,
        "patch.yaml": """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: app, finalizers: [f1]}
            spec:
              template:
                spec:
                  containers:
                  - name: sidecar
                    image: side:1
                  - name: main
                    args: [c]
                    env:
                    - {name: B, value: "2"}
                    - {name: A, $patch: delete}
                    ports:
                    - {containerPort: 80, name: web}
                    - {containerPort: 9090}
                    securityContext:
                      $patch: replace
                      runAsNonRoot: true
                  serviceAccountName: null
            """,
    }),
    "json6902_and_targets": same({
        "kustomization.yaml": """
            resources: [deploy.yaml, crd-ish.yaml]
            patches:
            - target: {kind: Deployment, name: "ap.*"}
              patch: |-
                - op: add
                  path: /spec/replicas
                  value: 3
                - op: replace
                  path: /spec/template/spec/containers/0/image
                  value: other:2
                - op: remove
                  path: /spec/template/spec/containers/0/args/0
            - target: {labelSelector: "tier in (x, y),!skip"}
              patch: |-
                - {op: add, path: /metadata/annotations, value: {patched: "true"}}
            patchesJson6902:
            - target: {group: example.com, version: v1, kind: Thing, name: t}
              path: ops.yaml
            """,
        "deploy.yaml": DEPLOY,
        "crd-ish.yaml": """
            apiVersion: example.com/v1
            kind: Thing
            metadata: {name: t, labels: {tier: x}}
            spec: {keep: null, items: [{name: a}, {name: b}]}
            """,
        "ops.yaml": "- {op: add, path: /spec/items/-, value: {name: c}}\n",
    }),
    "namespace_prefix_and_references": same({
        "kustomization.yaml": """
            namespace: prod
            namePrefix: pre-
            nameSuffix: -suf
            resources: [deploy.yaml, rbac.yaml, webhook.yaml]
            configurations: [webhook-config.yaml]
            """,
        "deploy.yaml": DEPLOY,
        "rbac.yaml": """
            apiVersion: v1
            kind: ServiceAccount
            metadata: {name: sa}
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata: {name: role}
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: binding}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: role}
            subjects:
            - {kind: ServiceAccount, name: sa, namespace: old}
            - {kind: User, name: sa}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: old}
            """,
        "webhook.yaml": """
            apiVersion: v1
            kind: Service
            metadata: {name: hook}
            spec: {selector: {app: web}, ports: [{port: 443}]}
            ---
            apiVersion: admissionregistration.k8s.io/v1
            kind: ValidatingWebhookConfiguration
            metadata: {name: vwc}
            webhooks:
            - name: v.example.com
              clientConfig:
                service: {name: hook, namespace: old, path: /validate}
            """,
        "webhook-config.yaml": """
            namespace:
            - kind: ValidatingWebhookConfiguration
              group: admissionregistration.k8s.io
              path: webhooks/clientConfig/service/namespace
              create: true
            """,
    }),
    "labels_annotations_images_replicas": same({
        "kustomization.yaml": """
            resources: [deploy.yaml, runtime.yaml]
            commonLabels: {team: a}
            labels:
            - pairs: {plain: only-metadata}
            - pairs: {tmpl: t}
              includeTemplates: true
            - pairs: {sel: s}
              includeSelectors: true
            commonAnnotations: {note: "0400"}
            images:
            - {name: example.com/app, newName: registry.local/app, newTag: "2.0"}
            - {name: busybox, digest: "sha256:0123456789abcdef"}
            replicas:
            - {name: app, count: 4}
            """,
        "deploy.yaml": DEPLOY,
        "runtime.yaml": """
            apiVersion: trainer.kubeflow.org/v1alpha1
            kind: ClusterTrainingRuntime
            metadata: {name: rt}
            spec:
              template:
                spec:
                  replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            initContainers: [{name: init, image: "busybox:1.36"}]
                            containers: [{name: node, image: "example.com/app"}]
            """,
    }),
    "replacements_paths_options": same({
        "kustomization.yaml": """
            resources: [deploy.yaml, runtime.yaml]
            configMapGenerator:
            - name: params
              envs: [params.env]
            replacements:
            - source: {kind: ConfigMap, name: params, fieldPath: data.image}
              targets:
              - select: {kind: ClusterTrainingRuntime}
                fieldPaths:
                - spec.template.spec.replicatedJobs.[name=node].template.spec.containers.[name=node].image
              - select: {kind: Deployment}
                reject: [{name: nothing}]
                fieldPaths: [spec.template.spec.containers.0.image]
            - source: {kind: ConfigMap, name: params, fieldPath: data.tag}
              targets:
              - select: {kind: Deployment, name: app}
                fieldPaths: [spec.template.spec.containers.0.image]
                options: {delimiter: ":", index: 1}
            - source: {kind: ConfigMap, name: params, fieldPath: data.image, options: {delimiter: /, index: 0}}
              targets:
              - select: {kind: Deployment}
                fieldPaths: [metadata.annotations.registry]
                options: {create: true}
            """,
        "deploy.yaml": DEPLOY,
        "params.env": "image=quay.io/org/img:v1\ntag=v9\n",
        "runtime.yaml": """
            apiVersion: trainer.kubeflow.org/v1alpha1
            kind: ClusterTrainingRuntime
            metadata: {name: rt}
            spec:
              template:
                spec:
                  replicatedJobs:
                  - name: init
                    template: {spec: {containers: [{name: node, image: keep}]}}
                  - name: node
                    template: {spec: {containers: [{name: other, image: keep}, {name: node, image: old}]}}
            """,
    }),
    "components_and_fifo_order": same({
        "kustomization.yaml": """
            sortOptions: {order: fifo}
            resources: [svc.yaml, deploy.yaml]
            components: [comp]
            """,
        "svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 1}]}\n",
        "deploy.yaml": DEPLOY,
        "comp/kustomization.yaml": """
            apiVersion: kustomize.config.k8s.io/v1alpha1
            kind: Component
            commonAnnotations: {from: component}
            resources: [extra.yaml]
            """,
        "comp/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
    }),
    "legacy_order_and_delete_patch": same({
        "kustomization.yaml": """
            resources: [all.yaml]
            patches:
            - target: {kind: Namespace}
              patch: |-
                $patch: delete
                apiVersion: v1
                kind: Namespace
                metadata: {name: any}
            """,
        "all.yaml": """
            apiVersion: admissionregistration.k8s.io/v1
            kind: MutatingWebhookConfiguration
            metadata: {name: m}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: ns}
            ---
            apiVersion: example.com/v1
            kind: Zeta
            metadata: {name: z}
            ---
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata: {name: things.example.com}
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: b}
            data: {null-kept: null}
            ---
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: a}
            """,
    }),

    # Trees of the golden-value tests (test_kustomize_behaviour).
    "golden_generator_hash": same({"kustomization.yaml": """
        configMapGenerator:
        - {name: cm, literals: [a=1, b=x]}
        """}),
    "yaml11_words_are_quoted": same({"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: c}
        data: {a: "yes", b: "on", c: "0400", d: "01234", e: "y", f: "true", g: "1e3"}
        """}),
    "nulls_kept_from_resources_and_deleted_by_patches": same({
        "kustomization.yaml": "resources: [t.yaml]\npatches:\n- path: p.yaml\n",
        "t.yaml": "apiVersion: v1\nkind: Thing\nmetadata: {name: t}\nspec: {a: null, b: 1, c: 2}\n",
        "p.yaml": "apiVersion: v1\nkind: Thing\nmetadata: {name: t}\nspec: {c: null}\n",
    }),
    "custom_kind_is_namespaced_without_a_schema": same({
        "kustomization.yaml": "namespace: prod\nresources: [g.yaml]\n", "g.yaml": GADGET,
    }),
}
