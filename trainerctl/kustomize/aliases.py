"""Bounds on alias expansion in YAML kustomize reads.

kustomize decodes a kustomization file (and a JSON 6902 patch in YAML) with go-yaml v2, which
refuses a document once too much of what it decoded came from aliases: check_alias_ratio counts
as it counts. Resources and patches go through kyaml, which expands aliases with no bound (kubectl
runs out of memory on an alias bomb there): check_alias_budget refuses more than NODE_BUDGET
expanded nodes. Both judge a document from its node tree, each anchor's expanded size computed
once, before anything is expanded: a 1 KB "billion laughs" costs nothing.
"""

from __future__ import annotations

import yaml

from trainerctl.kustomize.errors import KustomizeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The most nodes aliases may expand to in one document (JSON 6902 copies share the bound).
NODE_BUDGET = 1_000_000


def node_count(value: Any) -> int:
    """How many nodes (maps, lists, scalars) `value` holds."""
    if isinstance(value, dict):
        return 1 + sum(node_count(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(node_count(v) for v in value)
    return 1


class ExcessiveAliasing(KustomizeError):
    """Aliases past a bound: whoever reads YAML tentatively (is this a patch?) passes it on."""


def has_anchor(text: str) -> bool:
    """Whether `text` may define an anchor (`&name` after a blank, a line start or a flow
    indicator): the walks over a document's aliases run only then. `&&`, common in CEL rules,
    is no anchor."""
    i = text.find("&")
    while i >= 0:
        if (i == 0 or text[i - 1] in " \t\r\n[{,") and text[i + 1:i + 2] not in _NOT_ANCHOR:
            return True
        i = text.find("&", i + 1)
    return False


_NOT_ANCHOR = frozenset(["", " ", "\t", "\r", "\n", "[", "]", "{", "}", ",", "&"])


# go-yaml v2 and v3 refuse a document once more than a share of what they decoded came from
# aliases: 99% up to 400,000 decoded nodes, falling to 10% at 4,000,000 (decode.go,
# allowedAliasRatio), checked only past 100 aliased and 1,000 decoded nodes.
def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= 400_000:
        return 0.99
    if decoded >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * ((decoded - 400_000) / 3_600_000.0)


def _excessive(aliased: int, decoded: int) -> bool:
    return aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded)


def check_alias_ratio(root: yaml.Node, plain_tag: str) -> None:
    """Raise as go-yaml v2's decoder does ("document contains excessive aliasing") when it reads
    `root` into plain values, as kustomize reads a kustomization file (`plain_tag`: the tag the
    reader gives an untagged plain scalar, which a `<<` key has).

    v2 counts one decode per node it visits in document order (an alias: one, then the whole of
    its anchor's value, all counted as aliased), skipping `<<` keys and a merge list's own node,
    and checks after each. Within an alias both counts only grow, so checking once at its end
    gives the same verdict; the anchor's size is computed once, so a bomb costs nothing."""
    alias_at = _alias_places(root)
    sizes: dict[int, int] = {}

    def size(node) -> int:  # decodes to read `node` (each alias in it: one plus its anchor's)
        got = sizes.get(id(node))
        if got is None and node.__class__ is yaml.ScalarNode:
            return 1
        if got is None:
            sizes[id(node)] = -1
            got = 1
            for place, child in _decoded(node, alias_at, plain_tag):
                inner = size(child)
                if inner < 0:
                    raise KustomizeError(f"line {child.start_mark.line + 1}: anchor value "
                                         "contains itself")
                got += inner + (place in alias_at)
            sizes[id(node)] = got
        return got

    counts = [1, 0]  # decoded (the document node first), aliased

    def walk(node) -> None:
        for place, child in _decoded(node, alias_at, plain_tag):
            counts[0] += 1
            if place in alias_at:
                n = size(child)
                counts[0] += n
                counts[1] += n
            elif child.__class__ is not yaml.ScalarNode:
                walk(child)
            if _excessive(counts[1], counts[0]):
                raise ExcessiveAliasing("document contains excessive aliasing (kubectl's YAML "
                                     f"reader refuses {counts[1]} of {counts[0]} nodes from aliases)")

    walk(_Root(root))


def _alias_places(root: yaml.Node) -> set[tuple[int, int]]:
    """(parent id, child index) of each alias in `root` (PyYAML gives an alias as its anchor's
    node: where a node is met again in document order, it is an alias)."""
    alias_at: set[tuple[int, int]] = set()
    seen: set[int] = set()
    stack = [(0, 0, root)]
    while stack:
        parent, index, node = stack.pop()
        if id(node) in seen:
            alias_at.add((parent, index))
            continue
        seen.add(id(node))
        if node.__class__ is not yaml.ScalarNode:
            children = _children(node)
            stack.extend((id(node), i, children[i]) for i in range(len(children) - 1, -1, -1))
    return alias_at


def check_alias_budget(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand to more than NODE_BUDGET nodes, before any is
    expanded: each anchor's expanded size is computed once from the node tree."""
    alias_at = _alias_places(root)
    if not alias_at:
        return
    sizes: dict[int, int] = {}

    def size(node) -> int:  # nodes of `node`'s value, its aliases expanded (keys not counted)
        got = sizes.get(id(node))
        if got is None:
            if node.__class__ is yaml.ScalarNode:
                return 1
            sizes[id(node)] = 0  # a cycle: converting it says so
            values = node.value if node.__class__ is yaml.SequenceNode else [v for _, v in node.value]
            got = sizes[id(node)] = 1 + sum(size(v) for v in values)
        return got

    aliased = 0
    stack = [root]
    seen: set[int] = set()
    while stack:  # every alias written in the document, outside the anchors it copies
        node = stack.pop()
        if id(node) in seen or node.__class__ is yaml.ScalarNode:
            continue
        seen.add(id(node))
        children = _children(node)
        for i, child in enumerate(children):
            if (id(node), i) in alias_at:
                aliased += size(child)
                if aliased > NODE_BUDGET:
                    raise ExcessiveAliasing(
                        f"line {child.start_mark.line + 1}: document contains excessive aliasing "
                        f"(aliases expand to more than {NODE_BUDGET} nodes)")
            else:
                stack.append(child)


class _Root:
    """The document node of go-yaml's tree: its one child is the document's root."""

    def __init__(self, root) -> None:
        self.value = [root]


def _children(node) -> list:
    if node.__class__ is yaml.MappingNode:
        return [n for pair in node.value for n in pair]
    return node.value


def _decoded(node, alias_at: set, plain_tag: str) -> list:
    """((parent id, index), child) in the order go-yaml v2 decodes `node`'s children: a `<<`
    key is not decoded, nor the node of a merge list, whose items go last to first."""
    if node.__class__ is not yaml.MappingNode:
        return [((id(node), i), child) for i, child in enumerate(node.value)]
    out = []
    for j, (key, value) in enumerate(node.value):
        place = (id(node), 2 * j + 1)
        if key.__class__ is yaml.ScalarNode and key.value == "<<" and key.tag == plain_tag:
            if value.__class__ is yaml.SequenceNode and place not in alias_at:
                out.extend(((id(value), i), value.value[i]) for i in range(len(value.value) - 1, -1, -1))
            else:
                out.append((place, value))
            continue
        out.append(((id(node), 2 * j), key))
        out.append((place, value))
    return out
