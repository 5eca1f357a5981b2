"""Documents from outside, parsed within bounds: nesting at most MAX_DEPTH levels (checked before
anything walks it) and aliases that add at most ALIAS_SLACK nodes (a kilobyte alias bomb is
refused before it is built); a YAML error as one line that never quotes the input."""

from __future__ import annotations

from typing import Any

from trainerctl.errors import InputError
from trainerctl.trust.safe_text import clean


# Nesting deeper than this in a document from outside is refused before anything walks it (the
# walk would recurse). Real Kubernetes objects, CRD schemas included, stay far below it.
MAX_DEPTH = 200


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed document nests deeper than `limit`. Walked level by level, without
    recursion and without a record per node: every install walks megabytes of CRD schema."""
    containers = (dict, list)
    level = [value] if isinstance(value, containers) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, containers)]
    return False


def check_depth(value: Any, label: str) -> Any:
    if too_deep(value):
        raise InputError(f"{label}: nested deeper than {MAX_DEPTH} levels")
    return value


def load_yaml(text: str, label: str, *, expected: str = "YAML") -> Any:
    """One YAML document of outside input: safe types only, bounded nesting and alias expansion
    (the same budget as server data: a 1 KB alias bomb in a kubeconfig or trainerctl.yaml is
    refused before anything is built), one-line errors that never quote the input (a wrong file,
    say /etc/shadow, must not be echoed)."""
    import yaml

    try:
        if not alias_expansion_ok(text):
            raise InputError(f"{label}: not valid {expected}: its aliases expand to more than "
                             f"{ALIAS_SLACK:,} nodes (an alias bomb?)")
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise InputError(f"{label}: not valid {expected}: {yaml_problem(exc)}") from None
    except RecursionError:
        raise InputError(f"{label}: nested deeper than {MAX_DEPTH} levels") from None
    return check_depth(data, label)


def yaml_problem(exc: Exception) -> str:
    """A YAML error as one line with its position, without the snippet of input PyYAML adds.
    Every form: a parser's or scanner's (a problem at a mark), or the reader's (a character the
    stream may not hold, at a position), whose own text runs over several lines."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc).split("\n", 1)[0] \
        or "invalid YAML"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    position = getattr(exc, "position", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None \
        else f" (character {position + 1})" if isinstance(position, int) else ""
    return clean(str(problem), 200) + where


# Aliases may repeat what an anchor holds; past this many nodes beyond the text's own, a document
# is an alias bomb (a kilobyte expanding to billions of nodes), refused before it is built.
ALIAS_SLACK = 100_000


def alias_expansion_ok(text: str, slack: int = ALIAS_SLACK) -> bool:
    """Whether a YAML stream's aliases add at most `slack` nodes to those it spells out: counted
    on the parser's events, so a bomb is found without building (or walking) what it expands to."""
    import yaml

    if "*" not in text:  # no alias without one: nothing to count (most inputs)
        return True
    sizes: dict[str, int] = {}
    stack: list[list] = []  # [anchor, nodes] per open collection
    added = 0
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 1])
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            anchor, nodes = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, nodes = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, nodes = None, sizes.get(event.anchor, 1)
            added += nodes
            if added > slack:
                return False
        else:
            continue
        if anchor is not None:
            sizes[anchor] = nodes
        if stack:
            stack[-1][1] += nodes
    return True
