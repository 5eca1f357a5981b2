"""Issue 10's strict input and input limits: a kustomization field of the wrong type is refused
naming the file and field (kubectl refuses each too); deep nesting kustomize builds is built;
an alias bomb is refused by a bound; a kustomization.yaml symlinked outside the root is refused.
test_kustomize_strict.py also runs each through the CLI (exit 2, one line, nothing on stdout)."""

from tests.support.kustomize_cases import CM, DEPLOY, bounded, refuse, same

K = "kustomization.yaml"


def _nested(depth: int) -> str:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  x: "
            + "[" * depth + "]" * depth + "\n")


def _block_nested(depth: int) -> str:
    lines = ["apiVersion: example.com/v1", "kind: Deep", "metadata: {name: deep}", "spec:"]
    lines += ["  " * (i + 1) + f"l{i}:" for i in range(depth)]
    lines[-1] += " leaf"
    return "\n".join(lines) + "\n"


_BOMB = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
    f"*a{i - 1}, *a{i - 1}]\n" for i in range(1, 9))

CASES = {
    "include_selectors_string": refuse({
        K: "resources: [deploy.yaml]\nlabels:\n- pairs: {a: b}\n  includeSelectors: \"yes\"\n",
        "deploy.yaml": DEPLOY,
    }, "labels[0].includeSelectors"),
    "new_tag_list": refuse({
        K: "resources: [deploy.yaml]\nimages:\n- name: example.com/app\n  newTag: [a]\n",
        "deploy.yaml": DEPLOY,
    }, "images[0].newTag"),
    "new_tag_number": refuse({
        K: "resources: [deploy.yaml]\nimages:\n- {name: example.com/app, newTag: 1.0}\n",
        "deploy.yaml": DEPLOY,
    }, "images[0].newTag"),
    "replicas_entry_without_name": refuse({
        K: "resources: [deploy.yaml]\nreplicas:\n- count: 3\n", "deploy.yaml": DEPLOY,
    }, "replicas[0]"),
    "replicas_count_fraction": refuse({
        K: "resources: [deploy.yaml]\nreplicas:\n- {name: app, count: 1.5}\n",
        "deploy.yaml": DEPLOY,
    }, "replicas[0].count"),
    "generator_options_labels_list": refuse({
        K: "generatorOptions:\n  labels: [a, b]\nconfigMapGenerator:\n- name: c\n"
           "  literals: [a=1]\n",
    }, "generatorOptions.labels"),
    "secret_type_list": refuse({
        K: "secretGenerator:\n- name: s\n  type: [Opaque]\n  literals: [a=1]\n",
    }, "secretGenerator[0].type"),
    "disable_name_suffix_hash_string": refuse({
        K: "configMapGenerator:\n- name: c\n  literals: [a=1]\n  options:\n"
           "    disableNameSuffixHash: \"false\"\n",
    }, "configMapGenerator[0].options.disableNameSuffixHash"),
    "name_prefix_number": refuse({
        K: "resources: [cm.yaml]\nnamePrefix: 123\n", "cm.yaml": CM,
    }, "namePrefix"),
    "name_prefix_yaml11_boolean": refuse({
        K: "resources: [cm.yaml]\nnamePrefix: yes\n", "cm.yaml": CM,
    }, "namePrefix"),
    "common_annotation_value_number": refuse({
        K: "resources: [cm.yaml]\ncommonAnnotations: {port: 80}\n", "cm.yaml": CM,
    }, "commonAnnotations.port"),
    "unknown_nested_field": refuse({
        K: "resources: [cm.yaml]\nlabels:\n- pairs: {a: b}\n  includeSelector: true\n",
        "cm.yaml": CM,
    }, "includeSelector"),
    "resources_not_a_list": refuse({K: "resources: cm.yaml\n", "cm.yaml": CM}, "resources"),
    "patch_options_not_boolean": refuse({
        K: "resources: [cm.yaml]\npatches:\n- path: p.yaml\n  options: {allowNameChange: 1}\n",
        "cm.yaml": CM, "p.yaml": CM,
    }, "patches[0].options.allowNameChange"),
    "deep_flow_nesting_builds": same({K: "resources: [deep.yaml]\n", "deep.yaml": _nested(3000)}),
    "deep_block_nesting_builds": same({K: "resources: [deep.yaml]\n",
                                       "deep.yaml": _block_nested(1500)}),
    "nesting_beyond_kustomize_limit": refuse({K: "resources: [deep.yaml]\n",
                                              "deep.yaml": _nested(10001)}, "depth"),
    "alias_bomb": bounded({K: "resources: [bomb.yaml]\n", "bomb.yaml": _BOMB}, "aliasing"),
    "symlinked_kustomization_outside_root": refuse(
        {"outside/" + K: "resources: [cm.yaml]\n", "outside/cm.yaml": CM, "root/cm.yaml": CM},
        "kustomization.yaml", target="root",
        links={"root/kustomization.yaml": "../outside/kustomization.yaml"}),
}
