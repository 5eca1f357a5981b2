"""The transformer configuration a build accumulates (kustomize's TransformerConfig): built-in
field specs plus whatever `configurations:` and `crds:` files add; bases pass theirs up."""

from __future__ import annotations

import functools

from trainerctl.kustomize import fieldspecs, schema
from trainerctl.kustomize.cachedread import SmallParses, load_yaml11
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.fieldspecs import FieldSpec

LISTS = ("namePrefix", "nameSuffix", "namespace", "commonLabels", "labels", "templateLabels",
         "commonAnnotations", "varReference", "images", "replicas")
_FS_LIST = schema.List(schema.FIELD_SPEC)
CONFIG_FILE = schema.Struct("TransformerConfig", {
    **{name: _FS_LIST for name in LISTS},
    "nameReference": schema.List(schema.Struct("NameBackReferences", {
        **schema.GVK, "fieldSpecs": _FS_LIST})),
})


def merge_one(specs: list[FieldSpec], new: FieldSpec, where: str) -> None:
    """kustomize's FsSlice.MergeOne: a spec already covered (same path, selected by the new
    one's kind/group/version) is not added twice; one differing only in `create` conflicts."""
    for existing in specs:
        if existing.path == new.path and existing.selected_by(new):
            if existing.create != new.create:
                raise KustomizeError(f"{where}: conflicting fieldspecs for {new.path_string}")
            return
    specs.append(new)


class TransformerConfig:
    """Which fields each transformer touches: kustomize's TransformerConfig."""

    __slots__ = ("specs", "name_reference")

    def __init__(self, specs: dict[str, list[FieldSpec]] | None = None,
                 name_reference: list[tuple[tuple[str, str, str], list[FieldSpec]]] | None = None):
        self.specs = specs if specs is not None else {}
        # referral (group, version, kind) -> referrer field specs
        self.name_reference = name_reference if name_reference is not None else []

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is TransformerConfig and self.specs == other.specs
                and self.name_reference == other.name_reference)

    __hash__ = None  # mutable

    @classmethod
    def default(cls) -> "TransformerConfig":
        return _default_config().copy()

    @classmethod
    def for_kustomization(cls, loader, paths: list[str], parses: SmallParses | None = None) -> "TransformerConfig":
        """kustomize's MakeTransformerConfig: the `configurations:` files, then the built-in
        specs they do not already cover (a file's `metadata/name` spec for one kind replaces the
        built-in one for all kinds)."""
        if not paths:
            return cls.default()
        own = cls()
        for path in paths:
            own.load_file(loader.read_text(path), loader.name(path), parses)
        own.merge(_default_config())
        return own

    def copy(self) -> "TransformerConfig":
        return TransformerConfig({k: list(v) for k, v in self.specs.items()},
                                 [(k, list(v)) for k, v in self.name_reference])

    def add(self, name: str, spec: FieldSpec, where: str) -> None:
        merge_one(self.specs.setdefault(name, []), spec, where)

    def add_nameref(self, key: tuple[str, str, str], specs: list[FieldSpec], where: str) -> None:
        for existing_key, existing in self.name_reference:
            if existing_key == key:
                if existing is specs or existing == specs:  # as merge(): bases share the built-ins
                    return
                for s in specs:
                    merge_one(existing, s, where)
                return
        self.name_reference.append((key, list(specs)))

    def merge(self, other: "TransformerConfig", where: str = "configurations") -> None:
        """kustomize's Merge: our specs stay, and one of `other`'s that ours already cover (same
        path, ours selected by its kind/group/version) is dropped."""
        for name, specs in other.specs.items():
            mine = self.specs.setdefault(name, [])
            if not mine:
                mine.extend(specs)
                continue
            if mine is specs or mine == specs:
                continue
            for s in specs:
                merge_one(mine, s, where)
        for key, specs in other.name_reference:
            self.add_nameref(key, specs, where)

    def load_file(self, text: str, source: str, parses: SmallParses | None = None) -> None:
        """A `configurations:` file, read strictly (kustomize's yaml.UnmarshalStrict); `parses`
        keeps its parse."""
        docs = load_yaml11(text, source, None, parses)
        if len(docs) > 1:
            raise KustomizeError(f"{source}: expected one YAML document, found {len(docs)}")
        data = docs[0] if docs else None
        if data is None:
            return
        if not isinstance(data, dict):
            raise KustomizeError(f"{source}: a configurations file must be a mapping")
        for key in data:
            if key not in CONFIG_FILE.fields:
                raise KustomizeError(f"{source}: unknown transformer configuration `{key}`")
        cfg = schema.Decoder(source, strict=True).struct(data, CONFIG_FILE, "")
        for name in LISTS:
            for i, raw in enumerate(cfg.get(name) or []):
                self.add(name, FieldSpec.from_config(raw, f"{source}: {name}[{i}]"), source)
        for i, entry in enumerate(cfg.get("nameReference") or []):
            if not entry.get("kind"):
                raise KustomizeError(f"{source}: nameReference[{i}] needs a `kind`")
            key = (entry.get("group", ""), entry.get("version", ""), entry["kind"])
            specs = [FieldSpec.from_config(f, f"{source}: nameReference[{i}]")
                     for f in entry.get("fieldSpecs") or []]
            self.add_nameref(key, specs, source)


@functools.lru_cache(maxsize=1)
def _default_config() -> TransformerConfig:
    # Parsed once per process; every kustomization starts from a copy.
    cfg = TransformerConfig({name: fieldspecs.builtin(name) for name in LISTS})
    for entry in fieldspecs.builtin_namereference():
        key = (entry.get("group") or "", entry.get("version") or "", entry["kind"])
        cfg.add_nameref(key, [FieldSpec.parse(f, "built-in nameReference")
                              for f in entry.get("fieldSpecs") or []], "built-in")
    return cfg
