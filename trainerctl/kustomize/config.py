"""The transformer configuration a build accumulates: built-in field specs plus whatever
`configurations:` files add (and bases pass up to their parents)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from trainerctl.kustomize import fieldspecs, yamlio
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.fieldspecs import FieldSpec

_LISTS = ("namePrefix", "nameSuffix", "commonLabels", "templateLabels", "commonAnnotations",
          "namespace", "varReference", "images", "replicas")


@dataclass
class TransformerConfig:
    specs: dict[str, list[FieldSpec]] = field(default_factory=dict)
    # referral kind selector (group, version, kind) -> referrer field specs
    name_reference: list[tuple[tuple[str, str, str], list[FieldSpec]]] = field(default_factory=list)

    @classmethod
    def default(cls) -> "TransformerConfig":
        return _default_config().copy()

    def copy(self) -> "TransformerConfig":
        return TransformerConfig({k: list(v) for k, v in self.specs.items()},
                                 [(k, list(v)) for k, v in self.name_reference])

    def _add_nameref(self, entry: dict, source: str) -> None:
        if not isinstance(entry, dict) or not entry.get("kind"):
            raise KustomizeError(f"{source}: nameReference entries need a `kind`")
        unknown = set(entry) - {"kind", "group", "version", "fieldSpecs"}
        if unknown:
            raise KustomizeError(f"{source}: unknown nameReference field(s) {sorted(unknown)}")
        key = (entry.get("group") or "", entry.get("version") or "", entry["kind"])
        specs = [FieldSpec.parse(f, source) for f in entry.get("fieldSpecs") or []]
        for existing_key, existing in self.name_reference:
            if existing_key == key:
                for s in specs:
                    if s not in existing:
                        existing.append(s)
                return
        self.name_reference.append((key, specs))

    def merge(self, other: "TransformerConfig") -> None:
        for name, specs in other.specs.items():
            mine = self.specs.setdefault(name, [])
            if mine is specs or mine == specs:
                continue
            have = set(mine)
            mine.extend(s for s in specs if s not in have)
        mine_refs = dict(self.name_reference)
        for key, specs in other.name_reference:
            target = mine_refs.get(key)
            if target is None:
                target = []
                self.name_reference.append((key, target))
                mine_refs[key] = target
            if target == specs:
                continue
            have = set(target)
            target.extend(s for s in specs if s not in have)

    def load_file(self, text: str, source: str) -> None:
        data = yamlio.load(text, source) or {}
        if not isinstance(data, dict):
            raise KustomizeError(f"{source}: a configurations file must be a mapping")
        for key, value in data.items():
            if key == "nameReference":
                for entry in value or []:
                    self._add_nameref(entry, source)
            elif key in _LISTS:
                mine = self.specs.setdefault(key, [])
                for raw in value or []:
                    s = FieldSpec.parse(raw, source)
                    if s not in mine:
                        mine.append(s)
            else:
                raise KustomizeError(f"{source}: unknown transformer configuration `{key}`")


@functools.lru_cache(maxsize=1)
def _default_config() -> TransformerConfig:
    # Parsed once per process; every kustomization starts from a copy.
    cfg = TransformerConfig({name: fieldspecs.builtin(name) for name in _LISTS})
    for entry in fieldspecs.builtin_namereference():
        cfg._add_nameref(entry, "built-in nameReference")
    return cfg
