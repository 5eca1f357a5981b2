"""A resource under construction: the object plus the build state kustomize keeps beside it
(in its build annotations: previous ids, name prefixes and suffixes, generator behaviour,
hash request, origin). Here the state is fields; `finish` gives the object kustomize prints."""

from __future__ import annotations

from trainerctl.kustomize import roundtrip
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.origin import as_text
from trainerctl.kustomize.resid import Gvk, ResId
from trainerctl.kustomize.yamlemit import scalar_text
from trainerctl.kustomize.yamlread import Styled

# Annotations kustomize removes from every object it prints (its build annotations and the
# reader's bookkeeping), whether it wrote them or the input did.
BUILD_ANNOTATIONS = frozenset([
    *(f"internal.config.kubernetes.io/{k}" for k in (
        "previousKinds", "previousNames", "prefixes", "suffixes", "previousNamespaces",
        "allowNameChange", "allowKindChange", "refBy", "generatorBehavior", "needsHashSuffix",
        "path", "index", "seqindent", "id", "annotations-migration-resource-id",
        "helm-generated")),
    "config.kubernetes.io/path", "config.kubernetes.io/index", "config.k8s.io/id",
])
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
TRANSFORMATIONS_ANNOTATION = "alpha.config.kubernetes.io/transformations"


class Resource:
    # The build state: what equality compares (the id memo below is not state).
    STATE = ("obj", "source", "previous", "prefixes", "suffixes", "needs_hash", "behavior",
             "allow_name_change", "allow_kind_change", "ref_var_names", "origin",
             "transformations", "marked", "texts")
    __slots__ = (*STATE, "_id_memo", "_prev_memo")

    def __init__(self, obj: dict, source: str, *, needs_hash: bool = False, behavior: str = "",
                 marked: bool = False, texts: dict | None = None):
        self.obj = obj
        self.source = source  # file (or generator) it came from, for error messages
        # (name, effective namespace, kind) before each rename, oldest first: kustomize's
        # previousNames/previousNamespaces/previousKinds. Name references follow them.
        self.previous: list[tuple[str, str, str]] = []
        self.prefixes: list[str] = []
        self.suffixes: list[str] = []
        self.needs_hash = needs_hash
        self.behavior = behavior  # generators: create | merge | replace
        self.allow_name_change = False  # a patch's options
        self.allow_kind_change = False
        self.ref_var_names: list[str] = []
        self.origin: dict | None = None  # buildMetadata: where the object came from
        self.transformations: list[dict] | None = None
        # The object holds yamlread.Mapping values (nulls written as nothing), whose fate
        # follows kustomize's: dropped by a strategic merge, "" when printed from a flow mapping.
        self.marked = marked
        # What yamlread read as text for labels, data and binaryData: {(field, key): (value, text)}.
        self.texts = texts
        # Selectors and patches ask for the id thousands of times per build while transformers
        # change objects in place: the last id, with the exact values it was made from.
        self._id_memo: tuple | None = None
        self._prev_memo: tuple | None = None  # (previous as a tuple, gvk, its ids)

    def __eq__(self, other: object) -> bool:
        return other.__class__ is Resource and all(
            getattr(self, s) == getattr(other, s) for s in Resource.STATE)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Resource({self.id}, source={self.source!r})"

    @property
    def gvk(self) -> Gvk:
        return Gvk.of(self.obj)

    @property
    def kind(self) -> str:
        kind = self.obj.get("kind")
        return kind if isinstance(kind, str) else ""

    @property
    def metadata(self) -> dict:
        md = self.obj.get("metadata")
        if not isinstance(md, dict):
            md = {}
            self.obj["metadata"] = md
        return md

    @property
    def name(self) -> str:
        md = self.obj.get("metadata")
        name = md.get("name") if isinstance(md, dict) else None
        return name if isinstance(name, str) else ""

    @property
    def namespace(self) -> str:
        md = self.obj.get("metadata")
        ns = md.get("namespace") if isinstance(md, dict) else None
        return ns if isinstance(ns, str) else ""

    @property
    def id(self) -> ResId:
        obj = self.obj
        md = obj.get("metadata")
        name, ns = (md.get("name"), md.get("namespace")) if isinstance(md, dict) else (None, None)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        memo = self._id_memo
        # The very same (immutable) values give the same id; anything else is computed afresh.
        if (memo is not None and memo[0] is api_version and memo[1] is kind
                and memo[2] is name and memo[3] is ns):
            return memo[4]
        rid = ResId(self.gvk, self.name, self.namespace)
        if all(v is None or type(v) is str for v in (api_version, kind, name, ns)):
            self._id_memo = (api_version, kind, name, ns, rid)
        return rid

    def prev_ids(self) -> list[ResId]:
        if not self.previous:
            return []
        previous, gvk = tuple(self.previous), self.gvk
        memo = self._prev_memo
        if memo is not None and memo[1] is gvk and memo[0] == previous:
            return list(memo[2])
        ids = [ResId(Gvk(gvk.group, gvk.version, kind), name, ns) for name, ns, kind in previous]
        self._prev_memo = (previous, gvk, ids)
        return list(ids)

    def orig_id(self) -> ResId:
        """The id this object had when first read or generated."""
        if self.previous:
            name, ns, kind = self.previous[0]
            gvk = self.gvk
            return ResId(Gvk(gvk.group, gvk.version, kind), name, ns)
        return self.id

    def all_ids(self) -> list[ResId]:
        return self.prev_ids() + [self.id]

    def store_previous(self) -> None:
        """kustomize's StorePreviousId, before a transformer may change the id."""
        cur = self.id
        entry = (cur.name, cur.effective_namespace_go, cur.gvk.kind)
        if any("," in part for part in entry):
            # kustomize keeps previous ids in comma-separated annotations and reads them back
            # split at commas: it panics (or finds the wrong ids) for such a name.
            raise KustomizeError(f"{self.source}: {cur.gvk.kind} {cur.name!r}: a name, namespace or "
                                 "kind with ',' cannot be renamed or moved (kustomize keeps them "
                                 "comma-separated and kubectl fails)")
        self.previous.append(entry)

    def annotations_as_text(self) -> None:
        """kyaml's SetAnnotations(GetAnnotations()): every annotation the string of its text
        (a null's too), and none left for annotations that are not a map."""
        md = self.obj.get("metadata")
        if not isinstance(md, dict) or "annotations" not in md:
            return
        texts = self.text_map("annotations")
        if texts:
            md["annotations"] = texts
        else:
            del md["annotations"]

    def build_annotations(self) -> dict[str, str]:
        """The build state kustomize keeps in annotations while it transforms (previous ids,
        prefixes, suffixes), as it writes them."""
        out = {}
        if self.previous:
            for i, what in enumerate(("previousNames", "previousNamespaces", "previousKinds")):
                out[f"internal.config.kubernetes.io/{what}"] = ",".join(p[i] for p in self.previous)
        for what, values in (("prefixes", self.prefixes), ("suffixes", self.suffixes)):
            if values:
                out[f"internal.config.kubernetes.io/{what}"] = ",".join(values)
        return out

    def text_map(self, field: str) -> dict[str, str]:
        """kyaml's GetLabels/GetAnnotations/GetDataMap: `field` ("labels", "annotations",
        "data", "binaryData") as strings, each value's text: as written while the value is
        unchanged, "" for a collection; a null is "" in data and its text (`null` unless read
        otherwise) in metadata."""
        meta = field in ("labels", "annotations")
        values = self.metadata.get(field) if meta else self.obj.get(field)
        if meta and isinstance(values, list):
            values = _pairs(values, field, self.source)
        if not isinstance(values, dict):
            return {}
        if meta and getattr(values, "dups", ()):
            values = dict((*values.items(), *values.dups))  # kyaml reads each, the last stays
        texts = self.texts or {}
        out = {}
        for k, v in values.items():
            kept = texts.get((field, k))
            if kept is not None and kept[0] == v and type(kept[0]) is type(v):
                out[k] = kept[1]
            elif isinstance(v, (dict, list)) or (v is None and not meta):
                out[k] = ""
            else:
                out[k] = annotation_text(v)
        return out

    def labels(self) -> dict:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    def annotations(self) -> dict:
        ann = self.metadata.get("annotations")
        return ann if isinstance(ann, dict) else {}

    def copy_build_state(self, other: "Resource") -> None:
        self.previous = list(other.previous)
        self.prefixes = list(other.prefixes)
        self.suffixes = list(other.suffixes)
        self.ref_var_names = list(other.ref_var_names)

    def finish(self, keep_origin: bool, keep_transformations: bool) -> dict:
        """The object as kustomize prints it. Every object goes through its SetAnnotations at
        the end: build annotations leave, values become strings of their text, and an empty
        `annotations` disappears."""
        md = self.obj.get("metadata")
        if self.marked:
            _written_out(self.obj, md.get("annotations") if isinstance(md, dict) else None,
                         self.source)
        if not isinstance(md, dict):
            return self.obj
        ann = md.get("annotations")
        if isinstance(ann, dict):
            # set again from GetAnnotations: of a key written twice, the last
            ann = {k: v for k, v in (*ann.items(), *getattr(ann, "dups", ()))
                   if k not in BUILD_ANNOTATIONS}
        elif isinstance(ann, list):
            ann = {k: v for k, v in self.text_map("annotations").items() if k not in BUILD_ANNOTATIONS}
        else:
            ann = {}  # kyaml reads a scalar's (or a null's) annotations as none
        if keep_origin and self.origin is not None:
            ann[ORIGIN_ANNOTATION] = as_text(self.origin)
        elif not keep_origin:
            ann.pop(ORIGIN_ANNOTATION, None)
        if keep_transformations and self.transformations:
            ann[TRANSFORMATIONS_ANNOTATION] = as_text(self.transformations)
        elif not keep_transformations:
            ann.pop(TRANSFORMATIONS_ANNOTATION, None)
        if not ann:
            if keep_origin and keep_transformations and "annotations" in md and not md["annotations"]:
                return self.obj
            md.pop("annotations", None)
            return self.obj
        md["annotations"] = texts = {k: v if v.__class__ is str else self._annotation_text(k, v)
                                     for k, v in ann.items()}
        for k, v in texts.items():
            if v.__class__ is str and "\n" in v and roundtrip.unreadable(v):
                # Set again as a new node, a multi-line value is a literal block scalar, which
                # kyaml writes back without an indentation indicator and cannot read.
                raise KustomizeError(f"{self.source}: metadata.annotations.{k}: a multi-line value "
                                     "starting with a tab, which kubectl fails to write (found a tab "
                                     "character where an indentation space is expected)")
        return self.obj


    def _annotation_text(self, key: str, value) -> str:
        """A null annotation prints as written (`~`, `Null`, `` for one written as nothing)."""
        if value is None and self.texts:
            kept = self.texts.get(("annotations", key))
            if kept is not None and kept[0] is None:
                return kept[1]
        return annotation_text(value)


def _pairs(items: list, field: str, source: str) -> dict:
    """A list where kyaml expects a map of metadata: it reads the items as keys and values."""
    if len(items) % 2:
        raise KustomizeError(f"{source}: metadata.{field} is a list of {len(items)} items; kubectl "
                             "reads one as keys and values and fails on an odd number")
    out = {}
    for key, value in zip(items[::2], items[1::2]):
        out["" if isinstance(key, (dict, list)) else annotation_text(key)] = value
    return out


def _written_out(value, annotations, source: str) -> None:
    """kustomize prints an object through kyaml's MarshalJSON, which writes it as YAML first:
    a null written as nothing inside a flow mapping comes out as '' there, an empty string;
    a key written twice fails go-yaml's reading back (but in `annotations`, set again from
    their text before)."""
    if isinstance(value, dict):
        if getattr(value, "flow", False):
            for k in value.bare:
                if k in value and value[k] is None:
                    value[k] = ""
        dups = getattr(value, "dups", ())
        if dups and value is not annotations:
            raise KustomizeError(f"{source}: the object (or a patch of it) writes the mapping key "
                                 f"{dups[0][0]!r} twice, which kubectl fails to write out (mapping "
                                 "key already defined)")
        for k, v in value.items():
            if v.__class__ is Styled:
                value[k] = str(v)
            else:
                _written_out(v, annotations, source)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if v.__class__ is Styled:
                value[i] = str(v)
            else:
                _written_out(v, annotations, source)


def annotation_text(value) -> str:
    """An annotation value as kustomize's GetAnnotations reads it: the scalar's text."""
    if isinstance(value, str):
        return value
    text = scalar_text(value)
    return value if text is None else text
