"""One kustomization's build (kustomize's KustTarget): resources → configurations and crds →
generators → components → transformers → vars.

Every kustomization field that generates or transforms becomes the config of a builtin plugin,
exactly as kustomize's configurators build them, and runs through the same `configure` a
`generators:` / `transformers:` config file uses (plugins.py). Hashes, name references, vars
and local-config pruning happen once, at the top (`__init__.build_resources`).
"""

from __future__ import annotations

import posixpath

from trainerctl.kustomize import crds, kustfile, openapi, origin, plugins, remote, yamlread
from trainerctl.kustomize.aliases import ExcessiveAliasing
from trainerctl.kustomize.cachedread import SmallParses
from trainerctl.kustomize.config import TransformerConfig, merge_one
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.fieldspecs import FieldSpec
from trainerctl.kustomize.generators import kv
from trainerctl.kustomize.loader import Loader, find_kustomization
from trainerctl.kustomize.loadres import resources_from
from trainerctl.kustomize.resmap import ResMap
from trainerctl.kustomize.transformers import refvar
from trainerctl.parsed_cache import ParsedCache


class Accumulated:
    """kustomize's ResAccumulator."""

    __slots__ = ("resmap", "config", "variables", "kustomization")

    def __init__(self, resmap: ResMap | None = None):
        self.resmap = resmap if resmap is not None else ResMap()
        self.config = TransformerConfig()
        self.variables: dict[str, dict] = {}
        self.kustomization: dict = {}

    @property
    def resources(self):
        return self.resmap.items

    def merge(self, other: "Accumulated", where: str) -> None:
        self.resmap.append_all(other.resmap.items, where)
        self.config.merge(other.config, where)
        refvar.merge(self.variables, list(other.variables.values()), where)


class Target:
    """One kustomization being built: its loader, file and origin (for buildMetadata)."""

    __slots__ = ("loader", "k", "kname", "kfile", "origin")

    def __init__(self, loader: Loader, k: dict, kname: str, kfile: str,
                 origin: origin.Origin | None):
        self.loader, self.k, self.kname, self.kfile, self.origin = loader, k, kname, kfile, origin


class Builder:
    """Builds kustomization directories; shares the remote fetcher across the whole build."""

    def __init__(self, fetcher: remote.Fetcher, parsed: ParsedCache | None = None,
                 small: SmallParses | None = None):
        self.fetcher = fetcher
        self.parsed = parsed  # where resource files' parses are kept between builds, if anywhere
        self.small = small  # and those of small files (kustomizations among them)

    # --- entry points

    def load(self, loader: Loader, build_metadata: list | None = None,
             track: origin.Origin | None = None) -> Target:
        kfile = find_kustomization(loader)
        kname = loader.name(kfile)
        k = kustfile.parse(loader.read_text(kfile), kname, self.parsed, self.small)
        if build_metadata is not None:
            # kustomize gives every kustomization of a build the top one's buildMetadata.
            k["buildMetadata"] = build_metadata
        return Target(loader, k, kname, kfile, track)

    def build_top(self, loader: Loader) -> Accumulated:
        kt = self.load(loader)
        openapi.current().set_from(kt.k.get("openapi") or {}, kt.loader, kt.kname, top=True)
        track = origin.Origin() if kt.k.get("buildMetadata") else None
        kt.origin = track
        acc = Accumulated()
        self.accumulate_target(kt, acc)
        acc.kustomization = kt.k
        return acc

    # --- kustomize's accumulateTarget

    def accumulate_target(self, kt: Target, acc: Accumulated) -> Accumulated:
        k, loader, kname = kt.k, kt.loader, kt.kname
        self.accumulate_resources(kt, acc, k.get("resources") or [], kname)
        acc.config.merge(TransformerConfig.for_kustomization(loader, k.get("configurations") or [], self.small),
                         kname)
        for path in k.get("crds") or []:
            acc.config.merge(crds.config_from(loader.read(path), loader.name(path)),
                             loader.name(path))
        self.run_generators(kt, acc)
        for path in k.get("components") or []:
            self.accumulate_component(kt, acc, path)
        self.run_transformers(kt, acc)
        self.run_validators(kt, acc)
        refvar.mark(acc.resources, k.get("vars") or [], kname)
        refvar.merge(acc.variables, k.get("vars") or [], kname)
        return acc

    def accumulate_resources(self, kt: Target, acc: Accumulated, paths: list[str], where: str,
                             resmap: ResMap | None = None) -> None:
        resmap = resmap if resmap is not None else acc.resmap
        loader = kt.loader
        for path in paths:
            if not path:
                raise KustomizeError(f"{where}: an entry of `resources` is empty")
            if remote.is_remote(path):
                if self.fetcher.looks_like_git(path):
                    sub = self.base(kt, path, where)
                    self._merge_base(acc, sub, resmap, where)
                else:
                    data = self.fetcher.get_file(path, where)
                    found = resources_from(data.decode("utf-8", "replace"), remote.redact(path), self.parsed,
                                           self.small)
                    self.fetcher.keep(path)
                    self._add_files(kt, resmap, found, path, where)
                continue
            if loader.directory(path) is not None:
                sub = self.base(kt, path, where)
                self._merge_base(acc, sub, resmap, where)
                continue
            text = loader.read_text(path)
            self._add_files(kt, resmap, resources_from(text, loader.name(path), self.parsed, self.small), path, where)

    def _add_files(self, kt: Target, resmap: ResMap, found, path: str, where: str) -> None:
        if kt.origin is not None:
            o = kt.origin.append(path)
            for r in found:
                r.origin = o.as_dict()
        resmap.append_all(found, where)

    @staticmethod
    def _merge_base(acc: Accumulated, sub: Accumulated, resmap: ResMap, where: str) -> None:
        if resmap is acc.resmap:
            acc.merge(sub, where)
        else:
            resmap.append_all(sub.resmap.items, where)

    def _loader_for(self, kt: Target, path: str, where: str) -> Loader:
        loader = kt.loader
        if remote.is_remote(path):
            if loader.repo_top is not None and remote.is_local_url(path):
                # A fetched repository is untrusted: it may not pull in this machine's files.
                raise KustomizeError(f"{where}: {path!r}: a kustomization in a fetched repository "
                                     f"may not use a local (file://) repository")
            top, directory = self.fetcher.clone(path, where)
            # A fresh clone root, as kustomize clones each remote base anew: no local cycle.
            return Loader(str(directory.resolve()), loader.fs, loader.chain + (loader.root,),
                          str(top.resolve()), self.fetcher, remote.redact(path))
        if posixpath.isabs(path):
            raise KustomizeError(f"{where}: new root '{path}' cannot be absolute")
        display = f"{loader.display}/{path}" if loader.display else posixpath.join(loader.root, path)
        directory = loader.base_directory(path, display)
        if directory is None:
            raise KustomizeError(f"{where}: {path!r}: no such file or directory")
        return loader.child(directory, display)

    def base(self, kt: Target, path: str, where: str) -> Accumulated:
        """A resource that is a kustomization: built on its own, then merged."""
        sub = self.load(self._loader_for(kt, path, where), kt.k.get("buildMetadata"),
                        kt.origin.append(path) if kt.origin is not None else None)
        openapi.current().set_from(sub.k.get("openapi") or {}, sub.loader, sub.kname, top=False)
        if sub.k["kind"] == "Component":
            raise KustomizeError(f"{sub.kname}: expected kind != 'Component' for a resource "
                                 f"(list it under `components`)")
        return self.accumulate_target(sub, Accumulated())

    def accumulate_component(self, kt: Target, acc: Accumulated, path: str) -> None:
        sub = self.load(self._loader_for(kt, path, kt.kname), kt.k.get("buildMetadata"),
                        kt.origin.append(path) if kt.origin is not None else None)
        openapi.current().set_from(sub.k.get("openapi") or {}, sub.loader, sub.kname, top=False)
        if sub.k["kind"] != "Component":
            raise KustomizeError(f"{sub.kname}: expected kind 'Component' for a `components` "
                                 f"entry, got {sub.k['kind']!r}")
        self.accumulate_target(sub, acc)

    # --- generators

    def run_generators(self, kt: Target, acc: Accumulated) -> None:
        k, kname = kt.k, kt.kname
        defaults = k.get("generatorOptions")
        made = []
        for key, kind in (("configMapGenerator", "ConfigMapGenerator"),
                          ("secretGenerator", "SecretGenerator")):
            for i, args in enumerate(k.get(key) or []):
                args = dict(args)
                args["options"] = kv.merged_options(args.get("options"), defaults)
                ctx = plugins.Context(kt.loader, f"{kname}: {key}[{i}]", self.small)
                made.append((plugins.configure(kind, args, ctx), self._builtin_origin(kt, kind)))
        for res in self._plugin_configs(kt, acc, k.get("generators") or [], "generators"):
            made.append((plugins.from_config(res, "generator", kt.loader),
                         origin.of_plugin(res)))
        for generate, gen_origin in made:
            for r in generate():
                if kt.origin is not None and r.origin is None and gen_origin is not None:
                    r.origin = gen_origin
                acc.resmap.absorb(r, kname)

    def _builtin_origin(self, kt: Target, kind: str) -> dict | None:
        if kt.origin is None:
            return None
        return kt.origin.configured(kt.kfile, kind)

    def _plugin_configs(self, kt: Target, acc: Accumulated, entries: list[str], field_name: str):
        """`generators:` / `transformers:` entries: inline YAML objects, files or directories."""
        configs = ResMap()
        paths = []
        for i, entry in enumerate(entries):
            inline = _inline_objects(entry, f"{kt.kname}: {field_name}[{i}]")
            if inline is None:
                paths.append(entry)
                continue
            for r in inline:
                if kt.origin is not None:
                    r.origin = kt.origin.append(kt.kfile).as_dict()
            configs.append_all(inline, kt.kname)
        self.accumulate_resources(kt, Accumulated(resmap=configs), paths,
                                  f"{kt.kname}: {field_name}", resmap=configs)
        return configs.items

    # --- transformers

    def run_transformers(self, kt: Target, acc: Accumulated) -> None:
        k, kname, cfg = kt.k, kt.kname, acc.config
        steps = []

        def builtin(kind: str, config: dict, where: str) -> None:
            fn = plugins.configure(kind, config, plugins.Context(kt.loader, where, self.small))
            steps.append((fn, self._builtin_origin(kt, kind)))

        specs = _SpecConfigs(cfg)
        if k.get("patchesStrategicMerge"):
            builtin("PatchStrategicMergeTransformer", {"paths": k["patchesStrategicMerge"]},
                    f"{kname}: patchesStrategicMerge")
        for i, p in enumerate(k.get("patches") or []):
            builtin("PatchTransformer", p, f"{kname}: patches[{i}]")
        if k.get("namespace"):
            builtin("NamespaceTransformer", {"metadata": {"namespace": k["namespace"]},
                                             "fieldSpecs": specs["namespace"]},
                    f"{kname}: namespace")
        if k.get("namePrefix"):
            builtin("PrefixTransformer", {"prefix": k["namePrefix"],
                                          "fieldSpecs": specs["namePrefix"]}, f"{kname}: namePrefix")
        if k.get("nameSuffix"):
            builtin("SuffixTransformer", {"suffix": k["nameSuffix"],
                                          "fieldSpecs": specs["nameSuffix"]}, f"{kname}: nameSuffix")
        if k.get("labels") or k.get("commonLabels"):
            for i, label in enumerate(k.get("labels") or []):
                where = f"{kname}: labels[{i}]"
                fss = _merge_specs(list(label.get("fields") or []), specs["labels"], where)
                if label.get("includeSelectors"):
                    fss = _merge_specs(fss, specs["commonLabels"], where)
                else:
                    if label.get("includeTemplates"):
                        fss = _merge_specs(fss, specs["templateLabels"], where)
                    fss = _merge_specs(fss, [{"path": "metadata/labels", "create": True}], where)
                builtin("LabelTransformer", {"labels": label.get("pairs") or {},
                                             "fieldSpecs": fss}, where)
            builtin("LabelTransformer", {"labels": k.get("commonLabels") or {},
                                         "fieldSpecs": specs["commonLabels"]},
                    f"{kname}: commonLabels")
        if k.get("commonAnnotations"):
            builtin("AnnotationsTransformer", {"annotations": k["commonAnnotations"],
                                               "fieldSpecs": specs["commonAnnotations"]},
                    f"{kname}: commonAnnotations")
        for i, p in enumerate(k.get("patchesJson6902") or []):
            builtin("PatchJson6902Transformer", {"target": p.get("target"), "path": p.get("path"),
                                                 "jsonOp": p.get("patch")},
                    f"{kname}: patchesJson6902[{i}]")
        for i, r in enumerate(k.get("replicas") or []):
            builtin("ReplicaCountTransformer", {"replica": r, "fieldSpecs": specs["replicas"]},
                    f"{kname}: replicas[{i}]")
        for i, image in enumerate(k.get("images") or []):
            builtin("ImageTagTransformer", {"imageTag": image, "fieldSpecs": specs["images"]},
                    f"{kname}: images[{i}]")
        if k.get("replacements"):
            builtin("ReplacementTransformer", {"replacements": k["replacements"]},
                    f"{kname}: replacements")
        for res in self._plugin_configs(kt, acc, k.get("transformers") or [], "transformers"):
            steps.append((plugins.from_config(res, "transformer", kt.loader),
                          origin.of_plugin(res)))
        for transform, t_origin in steps:
            transform(acc.resmap)
            if t_origin is not None:
                for r in acc.resmap.items:
                    if r.origin is None:
                        r.origin = t_origin
                    else:
                        r.transformations = (r.transformations or []) + [t_origin]
            acc.resmap.drop_empties()


    def run_validators(self, kt: Target, acc: Accumulated) -> None:
        """`validators:`: (builtin) plugins that must leave the resources as they are, apart
        from a `validated-by` label (kustomize's runValidators)."""
        import copy

        for res in self._plugin_configs(kt, acc, kt.k.get("validators") or [], "validators"):
            validate = plugins.from_config(res, "transformer", kt.loader)
            before = [copy.deepcopy(r.obj) for r in acc.resmap.items]
            trial = ResMap([copy.copy(r) for r in acc.resmap.items])
            for r, obj in zip(trial.items, before):
                r.obj = copy.deepcopy(obj)
            validate(trial)
            after = []
            for r in trial.items:
                labels = r.obj.get("metadata", {}).get("labels")
                if isinstance(labels, dict):
                    labels.pop("validated-by", None)
                after.append(r.obj)
            if sorted(map(repr, after)) != sorted(map(repr, before)):
                raise KustomizeError(f"{res.source}: validator {res.kind} {res.name!r} "
                                     f"shouldn't modify the resource map")


class _SpecConfigs(dict):
    """The field specs of one transformer kind as plugin configs, made when first asked for (most
    kustomizations use one or two kinds of the config's ten)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self._cfg = cfg

    def __missing__(self, name: str) -> list[dict]:
        made = self[name] = [s.as_config() for s in self._cfg.specs.get(name, [])]
        return made


def _merge_specs(specs: list[dict], more: list[dict], where: str) -> list[dict]:
    parsed = [FieldSpec.from_config(s, where) for s in specs]
    for s in more:
        merge_one(parsed, FieldSpec.from_config(s, where), where)
    return [s.as_config() for s in parsed]


def _inline_objects(entry: str, where: str):
    """An entry of `generators:`/`transformers:` that is YAML objects itself, or None for a
    path (kustomize tries the entry as resource YAML first)."""
    if "\n" not in entry and ":" not in entry:
        return None
    try:
        docs = yamlread.load_all(entry, where)
    except ExcessiveAliasing:
        raise
    except KustomizeError:
        return None
    if not docs or not all(isinstance(d, dict) for d in docs):
        return None
    return resources_from(entry, where)
