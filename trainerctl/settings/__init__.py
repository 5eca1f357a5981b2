"""One request: every setting a command takes, each defined once, in one frozen `Settings`.

Each field carries how it is given (spec.py): its flag and help, its trainerctl.yaml key, its
environment variable, its default and its check. A command's Settings is built once (build.py)
from its flags, trainerctl.yaml and the environment, in that order of precedence, with the
origin of every value kept for messages (`--timeout`, `trainerctl.yaml: timeout:`,
`TRAINERCTL_CACHE_DIR`). Nothing changes it afterwards: a value derived from others is derived
while building, and what a command learns later (a platform detected on the cluster) goes into
the options it makes from it, not back into it.

An action takes its options from it by name (`Settings.options_for`): RenderOptions,
InstallOptions and UninstallOptions name their fields as Settings does.

The defaults every command shares are written once, in trainerctl/defaults.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, TypeVar

from trainerctl.defaults import FIELD_MANAGER, HISTORY_MAX, LOCK_TIMEOUT, NAMESPACE, TIMEOUT
from trainerctl.owner_label import DEFAULT_OWNER_LABEL, OwnerLabel
from trainerctl.settings import checks
from trainerctl.settings.checks import COMPONENTS, PLATFORMS, Source
from trainerctl.settings.spec import (CHANNELS, CLUSTER_PANEL, KUBECONFIG_CONTEXTS, OUTPUT_FORMATS, REGISTRY_HOSTS,
                                      REGISTRY_PANEL, RENDER_PANEL, Setting, setting, specs)

CONFIG_FILE = "trainerctl.yaml"  # read from the working directory when present

T = TypeVar("T")
# The step that asks the registries, in each command that offers the registry flags.
_REGISTRY_STEP = {"install": "--check-images", "check": "--images", "images": "--pin-digests"}
_NO_ENTRIES: Mapping[str, str] = MappingProxyType({})


# One per command run, compared by identity. Its __init__ and __repr__ are written once below, and
# it has a docstring: dataclasses would otherwise compile a 47-argument __init__ and write a
# docstring from it at every start-up (a millisecond of each `trainerctl render`).
@dataclass(frozen=True, eq=False, init=False, repr=False)
class Settings:
    """Every setting of one command run, each field defined once with how it is given."""

    # -- where the manifests come from ----------------------------------------------------------
    config: str | None = setting(  # after the build: the settings file read, if any
        flags=("--config",), metavar="FILE", panel=RENDER_PANEL, check=checks.text,
        help="Settings file (default: ./trainerctl.yaml when present).")
    channel: str | None = setting(
        flags=("--channel",), metavar="NAME", panel=RENDER_PANEL, complete=CHANNELS, key="channel",
        check=checks.channel, renders=True,
        help="A release channel: a named, pinned Trainer release, listed by `trainerctl channels` (default: stable, "
             "what the OpenDataHub operator installs).",
        help_in={"rollback": "Render the revision from this channel's repository and ref instead of the source it "
                             "records (for a source trainerctl does not pin); the tree must have the recorded digest."})
    source: Source | None = setting(
        flags=("--source",), metavar="URL|PATH", panel=RENDER_PANEL, key="source", file_type=dict,
        check=Source.check, renders=True,
        help="Git URL (https://, ssh://, file://, user@host:path) or a local checkout instead of a channel.",
        help_in={"rollback": "Render the revision from this git URL or local checkout instead of the source it "
                             "records (for a source trainerctl does not pin); the tree must have the recorded digest."})
    ref: str | None = setting(
        flags=("--ref",), metavar="REF", panel=RENDER_PANEL, key="source.ref", check=checks.text, renders=True,
        help="Tag, branch or commit of a git source (without --source: of the default channel's repository).",
        help_in={"rollback": "Tag, branch or commit of --source's git URL (default: the ref the revision records)."})
    cache_dir: str | None = setting(
        flags=("--cache-dir",), metavar="DIR", panel=RENDER_PANEL, key="cacheDir", env="TRAINERCTL_CACHE_DIR",
        check=checks.directory, renders=True,
        help="Where every cache goes: fetched sources, parses, remote bases (default: $TRAINERCTL_CACHE_DIR, else "
             "$XDG_CACHE_HOME/trainerctl, else ~/.cache/trainerctl).")
    lock_file: str | None = setting(
        flags=("--lock",), metavar="FILE", panel=RENDER_PANEL, check=checks.text, renders=True,
        help="The lock file the render is checked against (default: ./trainerctl.lock).",
        help_in={"render": "The lock file the render is checked against, and --update-lock writes "
                           "(default: ./trainerctl.lock).",
                 "fetch": "The lock file fetch writes (default: ./trainerctl.lock)."})
    use_lock: bool = setting(
        True, flags=("--no-lock",), takes=bool, negate=True, panel=RENDER_PANEL, renders=True,
        help="Do not check the render against the lock file.",
        help_in={"fetch": "Do not write the lock file."})
    update_lock: bool = setting(
        False, flags=("--update-lock",), takes=bool, panel=RENDER_PANEL,
        help="Write the rendered source to the lock file.")
    offline: bool = setting(
        False, flags=("--offline",), takes=bool, panel=RENDER_PANEL, renders=True,
        help="Never contact the git remote; use the cache.")
    refresh: bool = setting(
        False, flags=("--refresh",), takes=bool, panel=RENDER_PANEL, renders=True,
        help="Ask the git remote again even when the ref is cached.")
    # -- what is rendered from it -----------------------------------------------------------------
    overlay: str | None = setting(
        flags=("--overlay",), metavar="DIR", panel=RENDER_PANEL, key="overlay", check=checks.text, renders=True,
        help="Upstream overlay under manifests/ (default: rhoai, else overlays/manager).")
    platform: str | None = setting(  # None: kubernetes for render; install detects it
        flags=("--platform",), metavar="PLATFORM", panel=RENDER_PANEL, complete=tuple(sorted(PLATFORMS)),
        key="platform", check=checks.platform, renders=True,
        help="kubernetes or openshift (default: detected on the cluster); openshift adds ImageStreams.",
        help_in={"render": "kubernetes or openshift; openshift adds ImageStreams (default: kubernetes).",
                 "images": "kubernetes or openshift; openshift adds ImageStreams (default: kubernetes)."})
    components: frozenset[str] | None = setting(  # None: every set the platform has
        flags=("-c", "--component"), metavar="SET", takes=list, panel=RENDER_PANEL, complete=COMPONENTS,
        key="components", file_type=list[str], check=checks.components,
        help="Only these sets: manifests, runtimes, imagestreams (repeatable).")
    images: Mapping[str, str] = setting(  # env var, params key or image name -> reference
        _NO_ENTRIES, flags=("--image",), metavar="KEY=REF", takes=list, panel=RENDER_PANEL, key="images",
        file_type=dict[str, str], check=checks.pairs, merge=True, renders=True,
        help="Image override: a RELATED_IMAGE_* variable, a params.env key or an image name (repeatable).")
    images_from: str | None = setting(  # read by the render's options: its entries go under --image's
        flags=("--images-from",), metavar="FILE", panel=RENDER_PANEL, check=checks.file, renders=True,
        help="Image overrides from a file (`images --pin-digests --write-overrides` writes one); --image wins over it.")
    require_digests: bool = setting(
        False, flags=("--require-digests",), takes=bool, panel=RENDER_PANEL, key="requireDigests", file_type=bool,
        renders=True, help="Fail unless every image is given by digest (a tag can move between mirroring and pulling).")
    remote_mirrors: tuple[str, ...] = setting(
        (), flags=("--remote-mirror",), metavar="PREFIX=REPLACEMENT", takes=list, panel=RENDER_PANEL,
        key="remoteMirrors", file_type=list[str], check=checks.mirrors, renders=True,
        help="Fetch remote kustomize resources under PREFIX from REPLACEMENT instead (repeatable; "
             "$TRAINERCTL_REMOTE_MIRRORS adds more, comma-separated).",
        help_in={"rollback": "Fetch remote kustomize resources under PREFIX from REPLACEMENT instead (repeatable; "
                             "$TRAINERCTL_REMOTE_MIRRORS adds more); a revision rendered through a mirror is rendered "
                             "again only through one given here."})
    require_registry: str | None = setting(  # checked by the render's options (render/image_refs.py)
        flags=("--require-registry",), metavar="HOST[:PORT][/PATH]", panel=RENDER_PANEL, key="requireRegistry",
        renders=True, help="Fail unless every image is under this registry.")
    manager: Mapping[str, Any] | None = setting(  # the file's `manager:` block, as written
        key="manager", file_type=dict)
    set_values: tuple[str, ...] = setting(  # manager.KEY=VALUE, over the file's `manager:` block
        (), flags=("--set",), metavar="manager.KEY=VALUE", takes=list, panel=RENDER_PANEL, renders=True,
        help="Controller option, value in YAML, over trainerctl.yaml's `manager:` (repeatable): replicas, "
             "podDisruptionBudget.*, topologySpreadConstraints, priorityClassName, affinity, nodeSelector, "
             "tolerations, resources.")
    ha: bool = setting(
        False, flags=("--ha",), takes=bool, panel=RENDER_PANEL, renders=True,
        help="Highly available controller: 2 replicas, a PodDisruptionBudget (minAvailable 1), soft anti-affinity.")
    owner_label: OwnerLabel = setting(
        DEFAULT_OWNER_LABEL, flags=("--owner-label",), metavar="KEY=VALUE", panel=RENDER_PANEL, key="ownerLabel",
        check=checks.owner_label,
        help="The ownership label that marks trainerctl's objects (default: platform.opendatahub.io/part-of=trainer).",
        help_in={"render": "The ownership label put on every object (default: platform.opendatahub.io/part-of=trainer).",
                 "uninstall": "Delete the objects that carry this ownership label "
                              "(default: platform.opendatahub.io/part-of=trainer).",
                 "rollback": "The ownership label the revision was installed with, which decides what the rollback "
                             "prunes; another is refused (default: platform.opendatahub.io/part-of=trainer)."})
    namespace: str = setting(
        NAMESPACE, flags=("-n", "--namespace"), metavar="NAME", key="namespace", check=checks.namespace,
        help="The namespace Trainer is installed in (default: trainerctl.yaml's, else opendatahub).",
        help_in={"render": "The namespace to render Trainer into (default: trainerctl.yaml's, else opendatahub).",
                 "images": "The namespace to render Trainer into (default: trainerctl.yaml's, else opendatahub).",
                 "install": "The namespace to install into (default: trainerctl.yaml's, else opendatahub; with "
                            "--take-over-*, the one found)."})
    filename: str | None = setting(
        flags=("-f", "--filename"), metavar="FILE|DIR",
        help="Use these rendered objects (a YAML stream, - for stdin, or a folder `render --output-dir` wrote) "
             "instead of rendering.",
        help_in={"status": "Compare the cluster with these rendered objects (a YAML stream, - for stdin, or a folder "
                           "`render --output-dir` wrote) instead of the install's inventory."})
    # -- output -------------------------------------------------------------------------------
    output: str | None = setting(  # each command knows its formats and default (cli/output.py)
        flags=("-o", "--output"), metavar="FORMAT", complete=OUTPUT_FORMATS,
        help="Output format: text, yaml or json (default: text).",
        help_in={"render": "Output format: yaml, or json for one List (default: yaml).",
                 "images": "Output format: plain, one image a line; json, with where each runs and what sets it; or "
                           "oc-mirror, an ImageSetConfiguration (default: plain).",
                 "install": "Output format: text, yaml or json; yaml and json list each object and what was done to "
                            "it (default: text).",
                 "rollback": "Output format: text, yaml or json; yaml and json list each object and what was done to "
                             "it (default: text)."})
    verbose: bool = setting(
        False, flags=("-v", "--verbose"), takes=bool,
        help="List every object as it is applied or deleted (on a terminal: one line per stage otherwise).")
    output_file: str | None = setting(
        flags=("--output-file",), metavar="FILE",
        help="Where to write the archive (default: ./trainerctl-support-NAMESPACE-TIME.tar.gz); never over a file.")
    output_dir: str | None = setting(
        flags=("--output-dir",), metavar="DIR",
        help="Write one file per object (plus kustomization.yaml) here instead.")
    pin_digests: bool = setting(
        False, flags=("--pin-digests",), takes=bool,
        help="Ask each image's registry for its digest, and list the images by digest.")
    write_overrides: str | None = setting(  # checked with the images command's other choices (images/pipeline.py)
        flags=("--write-overrides",), metavar="FILE",
        help="With --pin-digests: write the digests as image overrides, for render and install --images-from FILE.")
    write_migrated: str | None = setting(  # checked before the cluster is asked (upgrade/migrated_dir.py)
        flags=("--write-migrated",), metavar="DIR",
        help="Write each TrainJob that blocks the upgrade, converted to the target's API, to DIR/NAMESPACE/NAME.yaml, "
             "to re-create after the upgrade.")
    gitops: str | None = setting(
        flags=("--gitops",), metavar="ENGINE", complete=("flux", "argocd"),
        help="With --output-dir: a folder for this GitOps engine (flux or argocd), one folder per install stage "
             "and the engine objects that apply them in trainerctl's order.")
    gitops_repo: str | None = setting(
        flags=("--gitops-repo",), metavar="URL",
        help="The git repository the folder is committed to: required for argocd; for flux, a GitRepository is "
             "added for it (default: the flux-system one).")
    gitops_branch: str | None = setting(
        flags=("--gitops-branch",), metavar="BRANCH", help="The branch the engine follows (default: main).")
    gitops_path: str | None = setting(
        flags=("--gitops-path",), metavar="PATH",
        help="The folder's path in the repository (default: from the git work tree --output-dir is in).")
    # -- the cluster ----------------------------------------------------------------------------
    kubeconfig: str | None = setting(
        flags=("--kubeconfig",), metavar="FILE", panel=CLUSTER_PANEL,
        help="Kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).")
    context: str | None = setting(
        flags=("--context",), metavar="NAME", panel=CLUSTER_PANEL, complete=KUBECONFIG_CONTEXTS,
        help="Kubeconfig context (default: the current one).")
    dry_run: bool = setting(
        False, flags=("--dry-run",), takes=bool, panel=CLUSTER_PANEL, help="Change nothing; say what would be done.",
        help_in={"uninstall": "Change nothing; list what would be deleted.",
                 "rollback": "Change nothing; show the diff and the plan."})
    wait: bool = setting(
        True, flags=("--wait/--no-wait",), takes=bool, panel=CLUSTER_PANEL,
        help="Wait until the controller and its webhooks are ready.",
        help_in={"status": "Wait until Trainer is Ready, up to --timeout (exit 4 if it is not)."})
    timeout: float = setting(
        TIMEOUT, flags=("--timeout",), metavar="SECONDS", takes=float, panel=CLUSTER_PANEL, key="timeout",
        file_type=float, check=checks.seconds, help="How long each wait may take.",
        help_in={"status": "How long --wait waits for Ready.",
                 "uninstall": "How long to wait for the deleted objects to be gone.",
                 "verify": "How long each tier may wait: the reconcile tier for its JobSet, --run for its TrainJob."})
    force_conflicts: bool = setting(
        False, flags=("--force-conflicts",), takes=bool, panel=CLUSTER_PANEL,
        help="Take ownership of conflicting fields.")
    prune: bool = setting(
        True, flags=("--no-prune",), takes=bool, negate=True, panel=CLUSTER_PANEL,
        help="Keep objects the previous install had and this one has not.",
        help_in={"check": "Check for an install that keeps what the previous install had and this one has not "
                          "(install --no-prune): no permission to delete is needed."})
    recreate: bool = setting(
        True, flags=("--no-recreate",), takes=bool, negate=True, panel=CLUSTER_PANEL,
        help="Fail instead of recreating on immutable-field changes.")
    skip_preflight: bool = setting(
        False, flags=("--skip-preflight",), takes=bool, panel=CLUSTER_PANEL, help="Skip the advisory preflight checks (the guards still run: another installer in charge, a "
             "blocking CRD change, a consumer that needs a newer Trainer; see --allow-breaking).")
    allow_breaking: bool = setting(
        False, flags=("--allow-breaking",), takes=bool, panel=CLUSTER_PANEL,
        help="Apply even if upgrade-check finds a blocking CRD change, or an installed consumer (Kueue) needs a "
             "newer Trainer.",
        help_in={"rollback": "Roll back even if it would drop a CRD version objects are stored in, or upgrade-check "
                             "finds a blocking CRD change, or an installed consumer (Kueue) needs a newer Trainer.",
                 "check": "Check for install --allow-breaking: a blocking CRD change or a consumer (Kueue) that needs a "
                          "newer Trainer is listed, not failed."})
    field_manager: str = setting(
        FIELD_MANAGER, flags=("--field-manager",), metavar="NAME", panel=CLUSTER_PANEL, key="fieldManager",
        check=checks.text, help="Server-side apply field manager.")
    take_over_operator: bool = setting(
        False, flags=("--take-over-operator",), takes=bool, panel=CLUSTER_PANEL,
        help="Hand over from the Go trainer-operator first: stop it, release and delete its Trainer CR without its "
             "cleanup (namespace: the CR's spec.appNamespace unless given).")
    take_over_helm: bool = setting(
        False, flags=("--take-over-helm",), takes=bool, panel=CLUSTER_PANEL,
        help="Hand over a Helm release of the kubeflow-trainer chart: adopt what it shares with the render in place, "
             "prune the rest, then delete the release's records (namespace: the release's unless given).")
    lock_timeout: float = setting(
        LOCK_TIMEOUT, flags=("--lock-timeout",), metavar="SECONDS", takes=float, panel=CLUSTER_PANEL,
        key="lockTimeout", file_type=float, check=checks.seconds_or_zero,
        help=f"How long to wait for another run's install lock, 0 to fail at once (default: {LOCK_TIMEOUT:g}).")
    history_max: int = setting(
        HISTORY_MAX, flags=("--history-max",), metavar="N", takes=float, panel=CLUSTER_PANEL, key="historyMax",
        file_type=float, check=checks.count,
        help=f"Keep this many install-history revisions on the cluster, 0 for all (default: {HISTORY_MAX}).")
    keep_history: bool = setting(
        False, flags=("--keep-history",), takes=bool, panel=CLUSTER_PANEL,
        help="Keep the install history (`trainerctl history`) instead of deleting it with the rest.")
    delete_crds: bool = setting(
        False, flags=("--delete-crds",), takes=bool, panel=CLUSTER_PANEL,
        help="Also delete the CRDs, and with them every TrainJob.")
    yes: bool = setting(
        False, flags=("--yes",), takes=bool, panel=CLUSTER_PANEL, help="Do not ask before deleting CRDs.")
    # -- verify ----------------------------------------------------------------------------------
    job_namespace: str | None = setting(
        flags=("--job-namespace",), metavar="NAME", panel=CLUSTER_PANEL, check=checks.namespace,
        help="The users' namespace to verify in: its TrainingRuntimes too, and verify's TrainJobs go there "
             "(default: a namespace verify creates and deletes).",
        help_in={"check": "Also check whether this users' namespace admits each runtime's pods (Pod Security, "
                          "ResourceQuota, LimitRange, policy webhooks), as verify's namespace tier does."})
    runtime: str | None = setting(
        flags=("--runtime",), metavar="NAME", panel=CLUSTER_PANEL, check=checks.text,
        help="The runtime verify's TrainJobs use (default: the first torch runtime, a CPU one if any).")
    run: bool = setting(
        False, flags=("--run",), takes=bool, panel=CLUSTER_PANEL,
        help="Also run a tiny CPU TrainJob to completion, each phase timed.")
    run_image: str | None = setting(
        flags=("--run-image",), metavar="REF", panel=CLUSTER_PANEL, check=checks.text,
        help="The image of --run's TrainJob (default: the runtime's; a mirror's for an air-gapped cluster).")
    verify: bool = setting(
        False, flags=("--verify/--no-verify",), takes=bool, panel=CLUSTER_PANEL,
        help="After a successful install, run verify's default tiers (admission, reconcile), with verify's exit "
             "codes.",
        help_in={"rollback": "After a successful rollback, run verify's default tiers (admission, reconcile), with "
                             "verify's exit codes."})
    # -- the registries ---------------------------------------------------------------------------
    registry_config: str | None = setting(
        flags=("--registry-config",), metavar="FILE", panel=REGISTRY_PANEL, check=checks.file,
        help="Registry credentials: a docker config.json or containers auth.json (default: $REGISTRY_AUTH_FILE, "
             "else podman's auth.json, then ~/.docker/config.json; credential helpers included).",
        help_in={cmd: f"With {step}: registry credentials, a docker config.json or containers auth.json (default: "
                      "$REGISTRY_AUTH_FILE, else podman's auth.json, then ~/.docker/config.json; credential helpers "
                      "included)." for cmd, step in _REGISTRY_STEP.items()})
    registry_ca: str | None = setting(
        flags=("--registry-ca",), metavar="FILE", panel=REGISTRY_PANEL, check=checks.file,
        help="PEM CA bundle trusted for every registry, beside the system's and each registry's certs.d folder.",
        help_in={cmd: f"With {step}: a PEM CA bundle trusted for every registry, beside the system's and each "
                      "registry's certs.d folder." for cmd, step in _REGISTRY_STEP.items()})
    plain_http: tuple[str, ...] = setting(  # each a registry host: checked as the registry settings are made
        (), flags=("--plain-http",), metavar="HOST[:PORT]", takes=list, panel=REGISTRY_PANEL, complete=REGISTRY_HOSTS,
        help="Talk to this registry over http:// instead of https:// (repeatable).",
        help_in={cmd: f"With {step}: talk to this registry over http:// instead of https:// (repeatable)."
                 for cmd, step in _REGISTRY_STEP.items()})
    check_images: bool = setting(  # the checklist's `images` check (cluster/trainer/checklist.py)
        False, flags=("--check-images",), flags_in={"check": ("--images",)}, takes=bool, panel=REGISTRY_PANEL,
        help="Before anything is applied, ask each image's registry whether it exists; refuse (exit 3) naming "
             "those that do not.",
        help_in={"check": "Also ask each image's registry whether it exists, and list those that do not."})
    # -- where each value came from -----------------------------------------------------------
    # field (or `images.KEY`) -> how messages name it; only values given, not defaults
    origins: Mapping[str, str] = field(default_factory=lambda: _NO_ENTRIES, repr=False)
    # the fields set by flags, and a mapping's entries a flag set (`images.KEY`)
    command_line: frozenset[str] = field(default=frozenset(), repr=False)

    def __init__(self, **values: Any) -> None:
        for f in dataclasses.fields(self):
            if f.name in values:
                value = values.pop(f.name)
            else:
                value = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            object.__setattr__(self, f.name, value)
        if values:
            raise TypeError(f"Settings has no setting {', '.join(sorted(values))}")

    def __repr__(self) -> str:
        """The settings that were given, not the defaults."""
        given = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.origins if "." not in name)
        return f"Settings({given})"

    @property
    def source_url(self) -> str | None:
        return self.source.url if self.source else None

    @property
    def source_path(self) -> str | None:
        return self.source.path if self.source else None

    def where(self, name: str) -> str:
        """How a message names a setting: where its value came from, else its flag, else its name."""
        if name in self.origins:
            return self.origins[name]
        how = setting_of(name)
        return how.flag or name if how else name

    def is_set(self, name: str) -> bool:
        """Given by a flag, the settings file or the environment (not a default)."""
        return name in self.origins

    def render_flags_given(self) -> list[str]:
        """The flags given on the command line that choose a render (refused next to -f FILE)."""
        return [self.origins[name] for name, how in specs(Settings) if how.renders and name in self.command_line]

    def options_for(self, kind: type[T], **extra: Any) -> T:
        """`kind` (an action's options dataclass) made of the settings of the same names, and
        `extra` for what is not a setting (a step, a value found on the cluster)."""
        names = [f.name for f in dataclasses.fields(kind) if f.init]
        return kind(**{n: getattr(self, n) for n in names if n not in extra and hasattr(self, n)}, **extra)


def setting_of(name: str) -> Setting | None:
    return _BY_NAME.get(name)


_BY_NAME = dict(specs(Settings))

__all__ = ["CONFIG_FILE", "FIELD_MANAGER", "HISTORY_MAX", "LOCK_TIMEOUT", "NAMESPACE", "TIMEOUT", "COMPONENTS", "PLATFORMS",
           "Setting", "Settings", "Source", "setting_of"]
