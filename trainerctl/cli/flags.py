"""Every flag of the command line, defined once, and the groups commands share.

A command takes a flag by annotating a parameter with one of these types, or a whole group with
`typer_support.uses(<group>_flags)`. Help text: a sentence, defaults in parentheses; every value
flag names its value (METAVAR), so help never shows Python types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Optional

import typer

# Panels keep long help pages readable: what to render, where the cluster is, how to run.
RENDER_PANEL = "Render"
CLUSTER_PANEL = "Cluster"
REGISTRY_PANEL = "Registry"


def _choices(*values: str):
    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


def _contexts(ctx: typer.Context, incomplete: str) -> list[str]:
    """Context names from the kubeconfig(s) being used (merged as kubectl merges them), for shell
    completion; read as every kubeconfig is read (never a FIFO, never more than its limit)."""
    from trainerctl.cluster.client.kubeconfig import load_files
    from trainerctl.errors import TrainerctlError

    try:
        names = list(load_files(ctx.params.get("kubeconfig")).contexts)
    except TrainerctlError:  # completion must never fail loudly
        return []
    return [n for n in names if n.startswith(incomplete)]


def _registry_hosts(ctx: typer.Context, incomplete: str) -> list[str]:
    """Registries the user has credentials for (docker's and podman's files), for completion."""
    from trainerctl.errors import TrainerctlError
    from trainerctl.registry.auth import CredentialStore

    try:
        files = CredentialStore(ctx.params.get("registry_config")).files()
    except TrainerctlError:  # completion must never fail loudly
        return []
    hosts = {key.split("/", 1)[0] for f in files for key in (*f.auths, *f.helpers)}
    return sorted(h for h in hosts if h.startswith(incomplete))


# --- what to render -------------------------------------------------------------------------
Config = Annotated[Optional[str], typer.Option(
    "--config", metavar="FILE", rich_help_panel=RENDER_PANEL,
    help="Settings file (default: ./trainerctl.yaml when present).")]
Source = Annotated[Optional[str], typer.Option(
    "--source", metavar="URL|PATH", rich_help_panel=RENDER_PANEL,
    help="Git URL (https://, ssh://, file://, user@host:path) or a local checkout "
         "(default: the pinned opendatahub-io/trainer).")]
Ref = Annotated[Optional[str], typer.Option(
    "--ref", metavar="REF", rich_help_panel=RENDER_PANEL,
    help="Tag, branch or commit of a git source (default source: its pinned tag).")]
CacheDir = Annotated[Optional[str], typer.Option(
    "--cache-dir", metavar="DIR", rich_help_panel=RENDER_PANEL,
    help="Source cache (default: $TRAINERCTL_CACHE_DIR, else $XDG_CACHE_HOME/trainerctl).")]
Lock = Annotated[Optional[str], typer.Option(
    "--lock", metavar="FILE", rich_help_panel=RENDER_PANEL, help="Lock file (default: ./trainerctl.lock).")]
NoLock = Annotated[bool, typer.Option(
    "--no-lock", rich_help_panel=RENDER_PANEL,
    help="Leave the lock file alone: render does not check against it, fetch does not write it.")]
Overlay = Annotated[Optional[str], typer.Option(
    "--overlay", metavar="DIR", rich_help_panel=RENDER_PANEL,
    help="Upstream overlay under manifests/ (default: rhoai, else overlays/manager).")]
Platform = Annotated[Optional[str], typer.Option(
    "--platform", metavar="PLATFORM", rich_help_panel=RENDER_PANEL,
    autocompletion=_choices("kubernetes", "openshift"),
    help="kubernetes or openshift (render default: kubernetes; install: detected). openshift adds ImageStreams.")]
Image = Annotated[list[str], typer.Option(
    "--image", metavar="KEY=REF", rich_help_panel=RENDER_PANEL,
    help="Image override: a RELATED_IMAGE_* variable, a params.env key or an image name (repeatable).")]
ImagesFrom = Annotated[Optional[str], typer.Option(
    "--images-from", metavar="FILE", rich_help_panel=RENDER_PANEL,
    help="Image overrides from a file (`images --pin-digests --write-overrides` writes one); --image wins over it.")]
RemoteMirror = Annotated[list[str], typer.Option(
    "--remote-mirror", metavar="PREFIX=REPLACEMENT", rich_help_panel=RENDER_PANEL,
    help="Fetch remote kustomize resources under PREFIX from REPLACEMENT instead (repeatable).")]
RequireRegistry = Annotated[Optional[str], typer.Option(
    "--require-registry", metavar="HOST[:PORT][/PATH]", rich_help_panel=RENDER_PANEL,
    help="Fail unless every image is under this registry.")]
RequireDigests = Annotated[bool, typer.Option(
    "--require-digests", rich_help_panel=RENDER_PANEL,
    help="Fail unless every image is given by digest (a tag can move between mirroring and pulling).")]
Offline = Annotated[bool, typer.Option(
    "--offline", rich_help_panel=RENDER_PANEL, help="Never contact the git remote; use the cache.")]
Refresh = Annotated[bool, typer.Option(
    "--refresh", rich_help_panel=RENDER_PANEL, help="Ask the git remote again even when the ref is cached.")]
SetValues = Annotated[list[str], typer.Option(
    "--set", metavar="manager.KEY=VALUE", rich_help_panel=RENDER_PANEL,
    help="Controller option, value in YAML (repeatable): replicas, podDisruptionBudget.*, "
         "topologySpreadConstraints, priorityClassName, affinity, nodeSelector, tolerations, resources.")]
Ha = Annotated[bool, typer.Option(
    "--ha", rich_help_panel=RENDER_PANEL,
    help="Highly available controller: 2 replicas, a PodDisruptionBudget (minAvailable 1), soft anti-affinity.")]
Component = Annotated[list[str], typer.Option(
    "-c", "--component", metavar="SET", rich_help_panel=RENDER_PANEL,
    autocompletion=_choices("manifests", "runtimes", "imagestreams"),
    help="Only these sets: manifests, runtimes, imagestreams (repeatable).")]
OwnerLabel = Annotated[Optional[str], typer.Option(
    "--owner-label", metavar="KEY=VALUE", rich_help_panel=RENDER_PANEL,
    help="Ownership label (default: platform.opendatahub.io/part-of=trainer).")]
Namespace = Annotated[Optional[str], typer.Option(
    "-n", "--namespace", metavar="NAME",
    help="Install namespace (default: trainerctl.yaml's, else opendatahub).")]
Filename = Annotated[Optional[str], typer.Option(
    "-f", "--filename", metavar="FILE|DIR",
    help="Use these rendered objects (a YAML stream, - for stdin, or a folder `render --output-dir` wrote) "
         "instead of rendering.")]

# --- the cluster ----------------------------------------------------------------------------
Kubeconfig = Annotated[Optional[str], typer.Option(
    "--kubeconfig", metavar="FILE", rich_help_panel=CLUSTER_PANEL,
    help="Kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).")]
Context = Annotated[Optional[str], typer.Option(
    "--context", metavar="NAME", rich_help_panel=CLUSTER_PANEL, autocompletion=_contexts,
    help="Kubeconfig context (default: the current one).")]
FieldManager = Annotated[str, typer.Option(
    "--field-manager", metavar="NAME", rich_help_panel=CLUSTER_PANEL, help="Server-side apply field manager.")]
Timeout = Annotated[float, typer.Option(
    "--timeout", metavar="SECONDS", rich_help_panel=CLUSTER_PANEL, help="How long each wait may take.")]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", rich_help_panel=CLUSTER_PANEL, help="Change nothing; say what would be done.")]
Wait = Annotated[bool, typer.Option(
    "--wait/--no-wait", rich_help_panel=CLUSTER_PANEL, help="Wait until the controller and its webhooks are ready.")]
ForceConflicts = Annotated[bool, typer.Option(
    "--force-conflicts", rich_help_panel=CLUSTER_PANEL, help="Take ownership of conflicting fields.")]
NoPrune = Annotated[bool, typer.Option(
    "--no-prune", rich_help_panel=CLUSTER_PANEL, help="Keep objects the previous install had and this one has not.")]
NoRecreate = Annotated[bool, typer.Option(
    "--no-recreate", rich_help_panel=CLUSTER_PANEL, help="Fail instead of recreating on immutable-field changes.")]
SkipPreflight = Annotated[bool, typer.Option(
    "--skip-preflight", rich_help_panel=CLUSTER_PANEL, help="Skip the preflight checks.")]
AllowBreaking = Annotated[bool, typer.Option(
    "--allow-breaking", rich_help_panel=CLUSTER_PANEL,
    help="Apply even if upgrade-check finds a blocking CRD change.")]
DeleteCrds = Annotated[bool, typer.Option(
    "--delete-crds", rich_help_panel=CLUSTER_PANEL, help="Also delete the CRDs, and with them every TrainJob.")]
Yes = Annotated[bool, typer.Option(
    "--yes", rich_help_panel=CLUSTER_PANEL, help="Do not ask before deleting CRDs.")]
TakeOverOperator = Annotated[bool, typer.Option(
    "--take-over-operator", rich_help_panel=CLUSTER_PANEL,
    help="Hand over from the Go trainer-operator first: stop it, release and delete its Trainer CR without its "
         "cleanup (namespace: the CR's spec.appNamespace unless given).")]
TakeOverHelm = Annotated[bool, typer.Option(
    "--take-over-helm", rich_help_panel=CLUSTER_PANEL,
    help="Hand over a Helm release of the kubeflow-trainer chart: adopt what it shares with the render in place, "
         "prune the rest, then delete the release's records (namespace: the release's unless given).")]
LockTimeout = Annotated[float, typer.Option(
    "--lock-timeout", metavar="SECONDS", rich_help_panel=CLUSTER_PANEL,
    help="How long to wait for another run's install lock, 0 to fail at once (default: 600).")]

# --- registries -----------------------------------------------------------------------------
RegistryConfig = Annotated[Optional[str], typer.Option(
    "--registry-config", metavar="FILE", rich_help_panel=REGISTRY_PANEL,
    help="Registry credentials: a docker config.json or containers auth.json (default: $REGISTRY_AUTH_FILE, "
         "else podman's auth.json, then ~/.docker/config.json; credential helpers included).")]
RegistryCa = Annotated[Optional[str], typer.Option(
    "--registry-ca", metavar="FILE", rich_help_panel=REGISTRY_PANEL,
    help="PEM CA bundle trusted for every registry, beside the system's and each registry's certs.d folder.")]
PlainHttp = Annotated[list[str], typer.Option(
    "--plain-http", metavar="HOST[:PORT]", rich_help_panel=REGISTRY_PANEL, autocompletion=_registry_hosts,
    help="Talk to this registry over http:// instead of https:// (repeatable).")]

CheckImages = Annotated[bool, typer.Option(
    "--check-images", rich_help_panel=REGISTRY_PANEL,
    help="Before anything is applied, ask each image's registry whether it exists; refuse (exit 3) naming "
         "those that do not.")]
ImagesCheck = Annotated[bool, typer.Option(
    "--images", rich_help_panel=REGISTRY_PANEL,
    help="Also ask each image's registry whether it exists, and list those that do not.")]

# --- output ---------------------------------------------------------------------------------
def _output_formats(ctx: typer.Context, incomplete: str) -> list[str]:
    formats = ("plain", "json", "oc-mirror") if ctx.info_name == "images" else ("text", "yaml", "json")
    return [f for f in formats if f.startswith(incomplete)]


Output = Annotated[Optional[str], typer.Option(
    "-o", "--output", metavar="FORMAT", autocompletion=_output_formats,
    help="Output format: yaml or json (render's default: yaml; other commands: text); images: plain (default), "
         "json or oc-mirror.")]

OutputFile = Annotated[Optional[str], typer.Option(
    "--output-file", metavar="FILE",
    help="Where to write the archive (default: ./trainerctl-support-NAMESPACE-TIME.tar.gz); never over a file.")]
OutputDir = Annotated[Optional[str], typer.Option(
    "--output-dir", metavar="DIR", help="Write one file per object (plus kustomization.yaml) here instead.")]
Gitops = Annotated[Optional[str], typer.Option(
    "--gitops", metavar="ENGINE", autocompletion=_choices("flux", "argocd"),
    help="With --output-dir: a folder for this GitOps engine (flux or argocd), one folder per install stage "
         "and the engine objects that apply them in trainerctl's order.")]
GitopsRepo = Annotated[Optional[str], typer.Option(
    "--gitops-repo", metavar="URL",
    help="The git repository the folder is committed to (argocd: required; flux: adds a GitRepository, "
         "default: the flux-system one).")]
GitopsBranch = Annotated[Optional[str], typer.Option(
    "--gitops-branch", metavar="BRANCH", help="The branch the engine follows (default: main).")]
GitopsPath = Annotated[Optional[str], typer.Option(
    "--gitops-path", metavar="PATH",
    help="The folder's path in the repository (default: from the git work tree --output-dir is in).")]
PinDigests = Annotated[bool, typer.Option(
    "--pin-digests", help="Ask each image's registry for its digest, and list the images by digest.")]
WriteOverrides = Annotated[Optional[str], typer.Option(
    "--write-overrides", metavar="FILE",
    help="With --pin-digests: write the digests as image overrides, for render and install --images-from FILE.")]
UpdateLock = Annotated[bool, typer.Option(
    "--update-lock", rich_help_panel=RENDER_PANEL, help="Write the rendered source to the lock file.")]

DEFAULT_FIELD_MANAGER = "trainerctl"
DEFAULT_TIMEOUT = 300.0
DEFAULT_LOCK_TIMEOUT = 600.0  # trainerctl.cluster.operations.lock.DEFAULT_WAIT_SECONDS; docs/lock.md says why


# --- groups ---------------------------------------------------------------------------------
# RenderOptions field -> the flag that sets it: errors from the render name the flag.
FIELD_FLAGS = {
    "source_url": "--source", "source_path": "--source", "ref": "--ref", "cache_dir": "--cache-dir",
    "lock_file": "--lock", "config": "--config", "overlay": "--overlay", "namespace": "--namespace",
    "platform": "--platform", "components": "--component", "owner_label": "--owner-label",
    "require_registry": "--require-registry", "require_digests": "--require-digests", "images": "--image",
    "remote_mirrors": "--remote-mirror",
    "manager": "--set",
}
# RenderFlags field -> its flag, for refusing render flags next to -f FILE.
_RENDER_FLAGS = {"overlay": "--overlay", "platform": "--platform", "image": "--image", "images_from": "--images-from",
                 "require_digests": "--require-digests",
                 "remote_mirror": "--remote-mirror", "require_registry": "--require-registry",
                 "offline": "--offline", "refresh": "--refresh", "set_values": "--set", "ha": "--ha"}
_SOURCE_FLAGS = {"source": "--source", "ref": "--ref", "cache_dir": "--cache-dir", "lock": "--lock",
                 "no_lock": "--no-lock"}


@dataclass
class SourceFlags:
    """Where the upstream manifests come from (render, fetch, install, diff, upgrade-check)."""

    config: str | None = None
    source: str | None = None
    ref: str | None = None
    cache_dir: str | None = None
    lock: str | None = None
    no_lock: bool = False


@dataclass
class RenderFlags:
    """How the objects are rendered from the source; None or empty means "not given". The last
    three are render's own flags (install takes -n on its own and renders every set)."""

    overlay: str | None = None
    platform: str | None = None
    image: list[str] = field(default_factory=list)  # KEY=REF
    remote_mirror: list[str] = field(default_factory=list)
    require_registry: str | None = None
    offline: bool = False
    refresh: bool = False
    set_values: list[str] = field(default_factory=list)
    ha: bool = False
    namespace: str | None = None
    component: list[str] = field(default_factory=list)
    owner_label: str | None = None  # KEY=VALUE
    images_from: str | None = None  # FILE
    require_digests: bool = False


def source_flags(config: Config = None, source: Source = None, ref: Ref = None, cache_dir: CacheDir = None,
                 lock: Lock = None, no_lock: NoLock = False) -> SourceFlags:
    return SourceFlags(config, source, ref, cache_dir, lock, no_lock)


def render_flags(overlay: Overlay = None, platform: Platform = None, image: Image = [],  # noqa: B006 (typer)
                 remote_mirror: RemoteMirror = [], require_registry: RequireRegistry = None,  # noqa: B006
                 offline: Offline = False, refresh: Refresh = False, set_values: SetValues = [],  # noqa: B006
                 ha: Ha = False, images_from: ImagesFrom = None, require_digests: RequireDigests = False) -> RenderFlags:
    return RenderFlags(overlay, platform, list(image), list(remote_mirror), require_registry, offline, refresh,
                       list(set_values), ha, images_from=images_from, require_digests=require_digests)


def render_flags_given(source: SourceFlags, render: RenderFlags) -> list[str]:
    """The flags that choose a render, as given on the command line (refused next to -f FILE)."""
    return ([flag for attr, flag in _RENDER_FLAGS.items() if getattr(render, attr)]
            + [flag for attr, flag in _SOURCE_FLAGS.items() if getattr(source, attr)])


@dataclass
class ClusterFlags:
    """Which cluster: kubeconfig and context (every command that talks to a cluster)."""

    kubeconfig: str | None = None
    context: str | None = None


def cluster_flags(kubeconfig: Kubeconfig = None, context: Context = None) -> ClusterFlags:
    return ClusterFlags(kubeconfig, context)


@dataclass
class GitopsFlags:
    """How `render --output-dir` lays the folder out for a GitOps engine."""

    engine: str | None = None
    repo: str | None = None
    branch: str | None = None
    path: str | None = None

    def given(self) -> bool:
        return any(v is not None for v in (self.engine, self.repo, self.branch, self.path))


def gitops_flags(gitops: Gitops = None, gitops_repo: GitopsRepo = None, gitops_branch: GitopsBranch = None,
                 gitops_path: GitopsPath = None) -> GitopsFlags:
    return GitopsFlags(gitops, gitops_repo, gitops_branch, gitops_path)


@dataclass
class RegistryFlags:
    """How to reach container registries (images --pin-digests, check --images, install --check-images)."""

    config: str | None = None
    ca: str | None = None
    plain_http: list[str] = field(default_factory=list)

    def given(self) -> list[str]:
        return [flag for flag, value in (("--registry-config", self.config), ("--registry-ca", self.ca),
                                         ("--plain-http", self.plain_http)) if value]

    def for_step(self, asked: bool, step: str):
        """The settings when `step` (--images, --check-images) was asked for, else None; the
        registry flags alone, which would change nothing, are refused."""
        if not asked:
            if self.given():
                from trainerctl.errors import InputError

                raise InputError(f"{self.given()[0]}: only used with {step} (the registries are not asked otherwise)")
            return None
        return self.settings().checked()

    def settings(self):
        """trainerctl.registry.client.RegistrySettings, every value checked."""
        from trainerctl.errors import InputError
        from trainerctl.registry.client import RegistrySettings
        from trainerctl.render.images import validate_registry

        for flag, value in (("--registry-config", self.config), ("--registry-ca", self.ca)):
            if value is not None and not value.strip():
                raise InputError(f"{flag} '': expected a file")
        for host in self.plain_http:
            if "/" in validate_registry(host, "--plain-http").rstrip("/"):
                raise InputError(f"--plain-http {host!r}: expected a registry host[:port], without a path")
        return RegistrySettings(config_file=self.config, ca_file=self.ca,
                                plain_http=frozenset(h.rstrip("/") for h in self.plain_http))


def registry_flags(registry_config: RegistryConfig = None, registry_ca: RegistryCa = None,
                   plain_http: PlainHttp = []) -> RegistryFlags:  # noqa: B006 (typer reads the default)
    return RegistryFlags(registry_config, registry_ca, list(plain_http))
