"""The preflight as one list of named checks, which `install` and `check` both run.

Each check has a name, what it reads and a verdict (a preflight.Finding). `install` stops at the
first refusal (the finding's exit code is the command's); `check` runs them all and lists them.
Because both run this one list over the same reads (Facts), `check` cannot say "install may go
ahead" where `install` would refuse: the refusal-parity test (tests/cluster/test_preflight_parity.py)
drives every refusal through both.

What a check reads is read once per run (Facts memoises the value or the error); `install` reads the
independent first ones together, since they are most of a no-op run's latency. A read the user may
not make (403) is not the check's refusal: the `permissions` check, later in the list, names the
permission that is missing, as an access review says it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from trainerctl.cluster.client.client import ApiError
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.manager.inventory_configmap import Inventory
from trainerctl.cluster.manager.plan import namespace_labels, plan
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import helm_releases, install_lock, lock_lease
from trainerctl.cluster.manager.staged import unchanged_since
from trainerctl.cluster.trainer import consumers, go_operator, helm_handover, operator_inventory, preflight
from trainerctl.cluster.trainer.install_options import InstallOptions
from trainerctl.cluster.trainer.policy import STAGES
from trainerctl.cluster.trainer.preflight import FAIL, OK, WARN, Finding
from trainerctl.errors import EXIT_TIMEOUT, TrainerctlError

_UNSET = object()


@dataclass
class Facts:
    """Everything the checks read about one cluster for one render, each read at most once.

    `thorough` (check): ask the access review for everything an install may do, not only for what
    this run would change. `lock_held` (install): this run holds the install lock, so the lock
    check has nothing to ask. The options' `upgrade_guard(cluster, objects, owner_label=,
    allow_breaking=)` returns an upgrade report or raises a refusal carrying `.report`
    (trainerctl.upgrade.guard)."""

    session: Session  # the cluster, its discovery, the namespace, the ownership label, the field manager
    objects: list[dict]  # with the install namespace (plan.ensure_namespace)
    options: InstallOptions  # prune, dry_run, take_over_*, allow_breaking, upgrade_guard
    target: str | None = None  # the Trainer release the render is (its source's trainer_version)
    thorough: bool = False
    lock_held: bool = False
    created_namespace: bool = False  # this run created the namespace just now, to hold its lock in
    helm_unreadable: list[str] = field(init=False, default_factory=list)
    forbidden: list[ApiError] = field(init=False, default_factory=list)
    _memo: dict[str, tuple[Any, BaseException | None]] = field(init=False, default_factory=dict)
    _locks: dict[str, threading.Lock] = field(init=False, default_factory=dict)
    _guard: threading.Lock = field(init=False, default_factory=threading.Lock)

    # The session's, read where a check names them.
    cluster = property(lambda self: self.session.cluster)
    discovery = property(lambda self: self.session.discovery)
    namespace = property(lambda self: self.session.namespace)
    owner_label = property(lambda self: self.session.owner_label)
    field_manager = property(lambda self: self.session.field_manager)

    # -- reads, each once -----------------------------------------------------------------
    def _once(self, name: str, read: Callable[[], Any]) -> Any:
        if name not in self._memo:
            # One lock per read: read_ahead runs reads in threads, and one may need another (the
            # live objects need discovery), which is then read once, by whichever thread came first.
            with self._guard:
                lock = self._locks.setdefault(name, threading.Lock())
            with lock:
                if name not in self._memo:
                    try:
                        self._memo[name] = (read(), None)
                    except TrainerctlError as exc:
                        self._memo[name] = (None, exc)
        value, error = self._memo[name]
        if error is not None:
            raise error
        return value

    # "live" (the rendered objects' live state) starts with the others and waits only for
    # discovery, so its lists go out while the slower reads (Helm's records) are still answering.
    READS_AHEAD = ("version", "discovered", "inventory", "operator_cr", "operator_deployments", "helm_releases",
                   "consumers", "live")

    def read_ahead(self, names: tuple[str, ...] = READS_AHEAD) -> None:
        """The first reads, together (their errors wait for the check that needs them)."""
        def one(name: str) -> None:
            try:
                getattr(self, name)()
            except TrainerctlError:
                pass

        parallel_map(one, names)

    def version(self) -> tuple[str, tuple[int, int]]:
        return self._once("version", lambda: preflight.server_version(self.cluster))

    def lease(self) -> lock_lease.LeaseState | None:
        return self._once("lease", lambda: lock_lease.read(self.session))

    def discovered(self) -> Discovery:
        def read() -> Discovery:
            self.discovery.refresh()
            self.discovery.add_rendered_crds(self.objects)
            return self.discovery
        return self._once("discovered", read)

    def planned(self) -> list[Planned]:
        """The plan, without live objects: what discovery alone tells."""
        return self._once("planned", lambda: plan(self.objects, self.discovered(), self.namespace,
                                                  self.field_manager, STAGES))

    def live(self) -> list[Planned]:
        """The plan with each object's live state read."""
        def read() -> list[Planned]:
            planned = self.planned()
            self.session.resources.read_live(planned)
            if self.created_namespace:  # by this run, bare, just before, to hold its lock in: ours to create
                for p in planned:
                    if (p.ref.group, p.ref.kind, p.ref.name) == ("", "Namespace", self.namespace):
                        p.live = None
            return planned
        return self._once("live", read)

    def dependencies(self) -> tuple[Finding, Any]:
        openshift = self.discovered().has_group(preflight.OPENSHIFT_GROUP)
        return self._once("dependencies", lambda: preflight.dependencies_found(
            self.cluster, self.discovery, self.objects, openshift))

    def inventory(self) -> Inventory | None:
        return self._once("inventory", self.session.resources.read_inventory)

    def operator_labelled(self) -> list:
        """With no inventory (or handing over the operator's CR), what the operator applied here
        (operator_inventory.py). The search lists every type by label, so it only runs when there is
        a sign of the operator: its CR or Deployment, or its field manager on an object we render."""
        def read() -> list:
            op = self.operator()
            if self.inventory() is not None and not (op.cr is not None and self.options.take_over_operator):
                return []
            if not (op.present or any(operator_inventory.managed_by_operator((p.live or {}).get("metadata"))
                                      for p in self.live())):
                return []
            self.discovered()  # the kinds it lists: discovery read first
            return operator_inventory.labelled_objects(self.session.resources)
        return self._once("operator_labelled", read)

    def release(self) -> helm_handover.ReleaseObjects | None:
        """What the Helm releases of Trainer have (the prune set of a hand-over); None without one."""
        state = self.helm()
        if not state.present:
            return None
        return self._once("release", lambda: helm_handover.release_objects(state, self.discovered(), self.objects))

    def own_previous(self) -> Inventory | None:
        """The install before this one as we (or the Go operator) made it: our inventory, else what
        the Go operator applied here."""
        def read() -> Inventory | None:
            previous = self.inventory()
            labelled = self.operator_labelled()
            if previous is None and labelled:
                previous = operator_inventory.seed(labelled, self.namespace, self.objects)
            return previous
        return self._once("own_previous", read)

    def previous(self) -> Inventory | None:
        """The install before this one: own_previous, plus what a Helm release of Trainer has."""
        def read() -> Inventory | None:
            previous = self.own_previous()
            release = self.release()
            return previous if release is None else helm_handover.with_release(previous, release, self.namespace)
        return self._once("previous", read)

    def will_apply(self, p: Planned) -> bool:
        """Not provably as our last apply left it (staged.unchanged_since): this run writes it."""
        try:
            previous = self.previous()
        except ApiError:  # not readable (its check says why): as good as no record
            return True
        return not unchanged_since(previous, p)

    def trainer_version(self) -> str:
        """The Trainer version the render installs ("" when it does not say)."""
        return self._once("trainer_version", lambda: consumers.render_version(self.target, self.objects))

    def consumers(self) -> consumers.Found:
        return self._once("consumers", lambda: consumers.installed(self.cluster, self.trainer_version()))

    def operator_cr(self) -> dict | None:
        return self._once("operator_cr", lambda: go_operator.read_cr(self.cluster))

    def operator_deployments(self) -> list:
        return self._once("operator_deployments", lambda: go_operator.find_deployments(self.cluster))

    def operator(self) -> go_operator.OperatorState:
        return go_operator.OperatorState(cr=self.operator_cr(), deployments=self.operator_deployments())

    def helm_releases(self) -> list[helm.Release]:
        return self._once("helm_releases", lambda: helm_releases.find_releases(self.cluster, self.namespace,
                                                                      self.helm_unreadable))

    def helm(self) -> helm_handover.HelmState:
        """Releases of the Trainer chart, and those owning a rendered object (by Helm's marks on it)."""
        owners = {owner for p in self.live() if (owner := helm_releases.owner_of((p.live or {}).get("metadata")))}
        return helm_handover.trainer_releases(self.helm_releases(), owners, self.helm_unreadable)

    def upgrade_report(self) -> Any:
        """The upgrade report if the upgrade check ran (never asks)."""
        return self._memo.get("upgrade", (None, None))[0]

    def upgrade(self) -> Any:
        """The CRD compatibility report (None when no guard was given)."""
        return self._once("upgrade", lambda: self.options.upgrade_guard(
            self.cluster, self.objects, owner_label=self.owner_label,
            allow_breaking=self.options.allow_breaking or self.options.dry_run))


# -- the checks, in the order install makes them ---------------------------------------------
def _images(f: Facts) -> Finding:
    problems = f.options.image_check(f.objects)
    if not problems:
        return Finding("images", OK, "every image exists at its registry")
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return Finding("images", FAIL, f"{f.options.image_check.flag}: {len(problems)} image(s) missing or not checkable: "
                   f"{problems[0]}{more}", problems)


def _lock(f: Facts) -> Finding:
    if f.lock_held:
        return Finding("lock", OK, "this run holds the install lock")
    if f.options.dry_run:
        return Finding("lock", OK, "a dry-run takes no lock")
    state = f.lease()
    if state is None or not state.held:
        return Finding("lock", OK, f"no run holds the install lock ({lock_lease.lease_path(f.namespace)})")
    return Finding("lock", FAIL, f"the install lock (Lease {f.namespace}/{lock_lease.NAME}) is held by {state.description} "
                   f"{state.since()}: an install waits for it up to --lock-timeout, then stops with nothing changed",
                   exit_code=EXIT_TIMEOUT)


def _api_server(f: Facts) -> Finding:
    f.version()
    return Finding("api-server", OK, f"{f.cluster.server} answers (context {f.cluster.context})")


def _kubernetes(f: Facts) -> Finding:
    return preflight.kubernetes(f.version(), f.target)


def _kinds(f: Facts) -> Finding:
    return preflight.kinds(f.discovered(), f.objects)


def _dependencies(f: Facts) -> Finding:
    return f.dependencies()[0]


def _jobset(f: Facts) -> Finding:
    return preflight.jobset_version(f.cluster, f.dependencies()[1], f.target)


def _upgrade_path(f: Facts) -> Finding:
    inventory = f.inventory()
    return preflight.upgrade_path(inventory.source.get("trainer_version") if inventory else None, f.target)


def _consumers(f: Facts) -> Finding:
    return consumers.verdict(f.consumers(), f.trainer_version(), f.options.allow_breaking)


def _go_operator(f: Facts) -> Finding:
    op = f.operator()
    if op.cr is not None and f.options.take_over_operator:
        go_operator.check_namespace(op, f.namespace)
    if not op.can_write:
        return Finding("go-operator", OK, "the Go trainer-operator is not in charge here")
    if f.options.take_over_operator:
        go_operator.check_hand_over(op)
        return Finding("go-operator", OK, f"the Go trainer-operator is handed over ({op.why()})")
    return Finding("go-operator", FAIL, op.refusal())


def _helm(f: Facts) -> Finding:
    state = f.helm()
    if not state.present:
        return Finding("helm", OK, "no Helm release owns Trainer here")
    if f.options.take_over_helm:
        state.check_namespace(f.namespace)
        return Finding("helm", OK, f"handed over from Helm ({state.describe()})")
    return Finding("helm", FAIL, state.refusal())


def _permissions(f: Facts) -> Finding:
    """Only what this run will write is asked (a no-op install asks nothing), unless a read was
    forbidden or `check` asks for everything an install may do."""
    needs = []
    if f.thorough or f.forbidden:
        needs += preflight.access_needs(f.planned(), f.namespace)
        if not f.lock_held:
            needs += install_lock.access_needs(f.namespace)
    try:
        planned = f.live()
    except ApiError as exc:  # unreadable: every object counts as missing, so create is asked too
        if exc.status != 403:
            raise
        planned = f.planned()
    try:
        previous = f.previous()
    except ApiError as exc:
        if exc.status != 403:
            raise
        previous = None  # the review asks for the inventory's permissions above
    needs += preflight.change_needs(planned, f.namespace, previous, f.options.prune, will_apply=f.will_apply)
    return preflight.permissions(f.cluster, needs)


def _istio(f: Facts) -> Finding:
    return preflight.istio(f.namespace, namespace_labels(f.live(), f.namespace), f.objects)


def _upgrade(f: Facts) -> Finding:
    """Skipped when no CRD is installed yet, or every CRD is provably as we left it."""
    crds = [p for p in f.live() if p.ref.kind == "CustomResourceDefinition"]
    if f.options.upgrade_guard is None or not crds or all(p.live is None for p in crds) or \
            not any(f.will_apply(p) for p in crds):
        return Finding("upgrade", OK, "no installed CRD changes")
    f.upgrade()
    return Finding("upgrade", OK, "upgrade-check finds nothing blocking")


@dataclass(frozen=True)
class Check:
    name: str
    reads: str  # what it asks the cluster, as `check` says when it cannot
    verdict: Callable[[Facts], Finding]
    # A guard, not advice: run even with --skip-preflight (another installer's fight; a CRD change
    # that would break what the cluster stores, or a Trainer too old for what runs on it, which
    # only --allow-breaking lets through).
    always: bool = False
    essential: bool = False  # a failure leaves nothing else to ask
    deferred_in_dry_run: bool = False  # a dry-run still shows its plan, then ends with this refusal
    # It reads nothing of the cluster: install asks it before it takes the lock, so neither a held
    # lock nor an unreachable cluster hides it (and check lists it first for the same reason).
    offline: bool = False
    asked: Callable[[InstallOptions], bool] = lambda options: True  # made only when the options ask for it


CHECKS: tuple[Check, ...] = (
    Check("images", "each image's registry", _images, always=True, offline=True,
          asked=lambda options: options.image_check is not None),
    Check("lock", "the install lock's Lease", _lock),
    Check("api-server", "the API server's /version", _api_server, essential=True),
    Check("kubernetes", "the API server's /version", _kubernetes),
    # JobSet's absence first: it explains the missing kinds it would have served.
    Check("dependencies", "JobSet's CRD (and on OpenShift its operator)", _dependencies),
    Check("kinds", "API discovery", _kinds, essential=True),
    Check("jobset", "JobSet's controller Deployment", _jobset),
    Check("upgrade-path", "the inventory ConfigMap", _upgrade_path),
    Check("consumers", "Kueue's controller Deployment (in any namespace)", _consumers, always=True,
          deferred_in_dry_run=True),
    Check("go-operator", "the Go operator's Trainer CR and Deployment", _go_operator, always=True,
          deferred_in_dry_run=True),
    Check("helm", "Helm's release records and the rendered objects' live state", _helm, always=True,
          deferred_in_dry_run=True),
    Check("permissions", "access reviews (SelfSubjectAccessReview)", _permissions),
    Check("istio", "the install namespace's labels", _istio),
    Check("upgrade", "the installed CRDs and the custom resources they store", _upgrade, always=True),
)


def judge(check: Check, facts: Facts) -> Finding:
    """The check's verdict; a read that failed is its finding (with the error, for install to raise)."""
    try:
        return check.verdict(facts)
    except ApiError as exc:
        if exc.status == 403:
            facts.forbidden.append(exc)
            return Finding(check.name, WARN, f"cannot read {check.reads}: {exc} (see the permissions check)",
                           error=exc)
        return Finding(check.name, FAIL, f"cannot read {check.reads}: {exc}", exit_code=exc.exit_code, error=exc)
    except TrainerctlError as exc:
        return Finding(check.name, FAIL, str(exc), exit_code=exc.exit_code, error=exc)


def run(facts: Facts, *, skip_preflight: bool = False, offline: bool | None = None) -> Iterator[tuple[Check, Finding]]:
    """Each check asked for with its finding, in order; after an essential check fails nothing else
    is asked. `offline`: only the checks that read no cluster (True), or only the others (False)."""
    for check in CHECKS:
        if (skip_preflight and not check.always) or not check.asked(facts.options) \
                or (offline is not None and check.offline != offline):
            continue
        finding = judge(check, facts)
        yield check, finding
        if finding.failed and check.essential:
            return


def access_refusal(facts: Facts) -> Finding:
    """The lock itself was forbidden: only discovery and access reviews are asked (nothing
    installed is read without the lock), in apply order, the lock's permissions last."""
    return preflight.permissions(facts.cluster, [*preflight.access_needs(facts.planned(), facts.namespace),
                                                 *install_lock.access_needs(facts.namespace)])


def by_name(name: str) -> Check:
    return next(c for c in CHECKS if c.name == name)
