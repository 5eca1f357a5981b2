"""Paths through the engine's filesystem: `..` is lexical (as Go's filepath.Join), symlinks are
followed one hop at a time and refused at the first hop out of the root, loops are one line."""

from tests.support.kustomize_cases import CM, ours_refuse, refuse, same

K = "kustomization.yaml"

CASES = {
    "symlink_loop": refuse({K: "resources: [a.yaml]\n"}, "too many levels of symbolic links",
                           links={"a.yaml": "b.yaml", "b.yaml": "a.yaml"}),
    "symlink_loop_as_base": refuse({K: "resources: [loop]\n"}, "loop", links={"loop": "loop"}),
    "dotdot_is_lexical_before_links": same({"root/" + K: "resources: [sub/../cm.yaml]\n",
                                            "root/cm.yaml": CM, "elsewhere/other.yaml": CM},
                                           target="root", links={"root/sub": "../elsewhere"}),
    "links_inside_the_root": same({K: "resources: [a.yaml, dir/b.yaml]\n", "real/cm.yaml": CM,
                                   "real/other.yaml": CM.replace("name: cfg", "name: other")},
                                  links={"a.yaml": "real/cm.yaml", "dir": "real",
                                         "real/b.yaml": "other.yaml"}),
    "link_chain_that_leaves_and_comes_back": ours_refuse(
        {"root/" + K: "resources: [back.yaml]\n", "root/cm.yaml": CM}, "security",
        target="root", links={"root/back.yaml": "../root/cm.yaml"}),
    "link_to_a_directory_outside_as_a_base": same(
        {"root/" + K: "resources: [base]\n", "shared/" + K: "resources: [cm.yaml]\n",
         "shared/cm.yaml": CM}, target="root", links={"root/base": "../shared"}),
}
