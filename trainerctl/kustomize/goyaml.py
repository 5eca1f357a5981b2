r"""Where go-yaml's scanner and libyaml's disagree, read as go-yaml reads.

PyYAML reads with libyaml 0.2.x; go-yaml (v2 and v3 alike, both ports of an older libyaml)
differs in a few lexical rules, each found by comparing the two on generated input:

- In a double-quoted scalar go-yaml knows the escape `\\'` (an apostrophe) and not `\\/`;
  libyaml knows `\\/` and not `\\'`.
- In a flow collection a plain scalar ends at `?` in go-yaml (which then fails: `[a?b]`), while
  libyaml reads on; and go-yaml reads `x:` followed by `,` `]` `}` `[` `{` or `?` as part of the
  scalar, where libyaml stops with "found unexpected ':'".
- go-yaml lets an anchor be defined again (an alias names the latest definition); PyYAML's
  composer refuses a "duplicate anchor". Such a text is composed here from libyaml's events.
- go-yaml v3 (not v2) reads a comment line ahead, up to 512 characters, to the next comment: the
  lines it passes on the way may hold tabs (`# a` / a line of a tab / `# b`), and so may the
  indentation of that next comment. libyaml stops at such a tab ("found character that cannot
  start any token"). Those tabs are made spaces first.

`compose(text, first_only)` gives libyaml's nodes of what go-yaml reads: what libyaml refuses and
go-yaml reads is rewritten in the text first (an escaped apostrophe becomes a plain one; such a
colon becomes a private-use character, turned back into a colon in the nodes), and a `\/` escape
is refused after parsing. `check_flow(node)` refuses a `?` in a flow collection's plain scalars;
the reader calls it on each flow collection it converts. Inputs without these characters cost a
substring search.
"""

from __future__ import annotations

import yaml

from trainerctl.kustomize.errors import KustomizeError

_FLOW_INDICATORS = ",[]{}?"


def compose(loader_for, text: str, first_only: bool, v3: bool = False) -> tuple[list, str]:
    """The documents of `text` (only the first with `first_only`) as nodes, and the text libyaml
    read. `loader_for(text)` makes the composer; `v3` reads as go-yaml v3 (else v2). Raises
    yaml.YAMLError or KustomizeError."""
    colon = None
    while True:
        try:
            nodes = _compose(loader_for(text), first_only)
            break
        except yaml.composer.ComposerError as exc:
            if "duplicate anchor" not in str(exc.context):
                raise
            nodes = _compose_events(loader_for(text), first_only)
            break
        except yaml.MarkedYAMLError as exc:
            fixed = _rewritten(text, exc, colon, v3)
            if fixed is None:
                raise
            text, colon = fixed
    if colon is not None:
        _restore_colons(nodes, colon)
    if "\\/" in text:
        for node in nodes:
            _refuse_slash_escapes(node, text)
    return nodes, text


def _compose(loader, first_only: bool) -> list:
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
            if first_only:
                break
        return nodes
    finally:
        loader.dispose()


def _compose_events(loader, first_only: bool) -> list:
    """PyYAML's composition over libyaml's events, where an anchor defined again replaces the
    earlier one."""
    try:
        loader.get_event()  # stream start
        nodes = []
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # document start
            nodes.append(_event_node(loader, {}))
            loader.get_event()  # document end
            if first_only:
                break
        return nodes
    finally:
        loader.dispose()


def _event_node(loader, anchors: dict):
    event = loader.get_event()
    cls = event.__class__
    if cls is yaml.AliasEvent:
        if event.anchor not in anchors:
            raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}",
                                              event.start_mark)
        return anchors[event.anchor]
    if cls is yaml.ScalarEvent:
        tag = event.tag
        if tag is None or tag == "!":
            tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
    else:
        kind = yaml.SequenceNode if cls is yaml.SequenceStartEvent else yaml.MappingNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = loader.resolve(kind, None, event.implicit)
        node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
    if event.anchor is not None:
        anchors[event.anchor] = node  # before the children, as PyYAML does
    if cls is yaml.SequenceStartEvent:
        while not loader.check_event(yaml.SequenceEndEvent):
            node.value.append(_event_node(loader, anchors))
        node.end_mark = loader.get_event().end_mark
    elif cls is yaml.MappingStartEvent:
        while not loader.check_event(yaml.MappingEndEvent):
            key = _event_node(loader, anchors)
            node.value.append((key, _event_node(loader, anchors)))
        node.end_mark = loader.get_event().end_mark
    return node


def _rewritten(text: str, exc: yaml.MarkedYAMLError, colon: str | None, v3: bool):
    """`text` with what libyaml refused and go-yaml reads made readable to libyaml, or None."""
    mark = exc.problem_mark
    if mark is None:
        return None
    i = mark.index
    if v3 and exc.problem == "found character that cannot start any token" and text[i:i + 1] == "\t":
        fixed = _comment_tabs(text, i)
        return None if fixed is None else (fixed, colon)
    if exc.problem == "found unknown escape character" and text[i:i + 2] == "\\'":
        return text[:i] + text[i + 1:], colon
    if exc.problem == "found unexpected ':'" and text[i:i + 1] == ":":
        if colon is None:
            colon = next(c for c in map(chr, range(0xE000, 0xF900)) if c not in text)
        return text[:i] + colon + text[i + 1:], colon
    return None


def _comment_tabs(text: str, i: int) -> str | None:
    """`text` with spaces for the tabs go-yaml v3's comment lookahead passes over, if the tab at
    `i` is one of them: on a line of only blanks (or blanks and a comment), after a comment line
    (blank lines between), with a `#` starting a line within 512 characters of that comment's
    end."""
    start = text.rfind("\n", 0, i) + 1
    rest = text[start:].split("\n", 1)[0].lstrip(" \t")
    if rest and rest[0] != "#":
        return None
    end = start - 1  # the line break that ends the line before
    while end > 0:
        prev_start = text.rfind("\n", 0, end) + 1
        prev = text[prev_start:end].lstrip(" \t")
        if prev:
            break
        end = prev_start - 1
    else:
        return None
    if prev[0] != "#" or not _outside_scalars(text, prev_start):
        return None
    hash_at = end
    while hash_at < len(text) and text[hash_at] in " \t\n":
        hash_at += 1
    if text[hash_at:hash_at + 1] != "#" or hash_at - end >= 512:
        return None
    return text[:end] + text[end:hash_at].replace("\t", " ") + text[hash_at:]


def _outside_scalars(text: str, at: int) -> bool:
    """Whether libyaml read no scalar reaching past `at` (a `#` there is a comment, not text)."""
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if event.end_mark.index > at and event.__class__ in (yaml.ScalarEvent, yaml.AliasEvent):
                return False
    except yaml.YAMLError:
        pass
    return True


def _restore_colons(nodes: list, colon: str) -> None:
    for root in nodes:
        for node in _scalars(root):
            if colon in node.value:
                node.value = node.value.replace(colon, ":")


def _refuse_slash_escapes(root, text: str) -> None:
    for node in _scalars(root):
        if node.style == '"' and _has_slash_escape(text, node):
            raise KustomizeError(f"line {node.start_mark.line + 1}: found unknown escape character "
                                 "\\/ (kubectl's YAML reader knows no such escape)")


def check_flow(collection, seen: set[int]) -> None:
    """Refuse a plain scalar with `?` written inside the flow collection `collection` (an alias
    there names a scalar written elsewhere: its anchor is judged where it stands). The nodes
    walked go into `seen`, which the caller passes again to skip the collections inside."""
    start, end = collection.start_mark.index, collection.end_mark.index
    for node in _scalars(collection, seen):
        if not node.style and "?" in node.value and start <= node.start_mark.index < end:
            raise KustomizeError(
                f"line {node.start_mark.line + 1}: a plain scalar with '?' in a flow collection "
                f"({node.value!r}): kubectl's YAML reader ends the scalar there and fails; quote it")


def _scalars(root, seen: set[int] | None = None):
    seen = set() if seen is None else seen
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        cls = node.__class__
        if cls is yaml.ScalarNode:
            yield node
        elif cls is yaml.SequenceNode:
            stack.extend(node.value)
        else:
            stack.extend(n for pair in node.value for n in pair)


def _has_slash_escape(text: str, node) -> bool:
    source = text[node.start_mark.index:node.end_mark.index]
    if "\\/" not in source:
        return False
    i = source.find("\\")
    while i >= 0:
        if source[i + 1:i + 2] == "/":
            return True
        i = source.find("\\", i + 2)  # an escaped backslash is no escape of what follows
    return False
