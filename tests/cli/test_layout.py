"""The package layout the architecture page draws holds in the code: the client, the resource
manager and the operations know nothing of Trainer and are layered (operations -> manager ->
client), no cluster command imports another, no two packages import each other, and imports are
lazy only in the command dispatch (trainerctl/cli). Every command over a cluster is an action run
over a session, and no command module reads the cluster itself; every report is one protocol
(serialize.Reported), serialized nowhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import trainerctl

PACKAGE = Path(trainerctl.__file__).resolve().parent
# The basics every layer may use: errors and messages, the defaults every command shares, and the
# trust boundaries (what an outside input may be, how much of it is read, and what never reaches
# the terminal).
BASICS = {"trainerctl", "trainerctl.errors", "trainerctl.defaults", "trainerctl.lazy_exports", "trainerctl.ui",
          "trainerctl.owner_label", "trainerctl.own_data", "trainerctl.trust.redact", "trainerctl.trust.safe_text",
          "trainerctl.trust.interrupts",
          # bounded input: files, the limits' table, documents' nesting and aliases, server payloads, a program's output
          "trainerctl.trust.bounded_read", "trainerctl.trust.limits", "trainerctl.trust.document_bounds",
          "trainerctl.trust.server_payloads", "trainerctl.trust.bounded_process",
          # every report and bundle member serialized after redaction (part of the trust layer, as redact)
          "trainerctl.trust.serialize",
          # HTTP to an untrusted server (bounded, with deadlines), shared by the API and registry clients
          "trainerctl.net", "trainerctl.net.transport", "trainerctl.net.proxy"}
# The engine's packages, top to bottom: each may import those after it, never those before it.
ENGINE = ("operations", "manager", "client")


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported trainerctl module, whether the import is inside a function)."""
    tree = ast.parse(path.read_text())
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("trainerctl"):
                for alias in child.names:
                    found.append((f"{child.module}.{alias.name}", inner))
            elif isinstance(child, ast.Import):
                found.extend((a.name, inner) for a in child.names if a.name.startswith("trainerctl"))
            visit(child, inner)

    visit(tree, False)
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str:
    """`from pkg import module_or_name` -> the module it names."""
    while name not in modules:
        name = name.rpartition(".")[0]
    return name


def _graph() -> dict[str, list[tuple[str, bool]]]:
    modules = _modules()
    return {m: [(_resolve(i, modules), nested) for i, nested in _imports(p)] for m, p in modules.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    if parts[1:2] == ["cluster"] and len(parts) > 2 and parts[2] in (*ENGINE, "trainer"):
        return ".".join(parts[:3])
    return ".".join(parts[:2]) if len(parts) > 1 else module


def test_the_engine_knows_nothing_of_trainer():
    """Each engine package imports only itself and the packages below it (ENGINE's order)."""
    for module, imports in _graph().items():
        package = _package(module)
        if package.rpartition(".")[2] in ENGINE:
            allowed = {f"trainerctl.cluster.{p}" for p in ENGINE[ENGINE.index(package.rpartition(".")[2]):]}
            bad = sorted({i for i, _ in imports if _package(i) not in allowed and i not in BASICS})
            assert not bad, f"{module} imports {bad}"
    for name in ENGINE:
        text = "\n".join(p.read_text() for p in (PACKAGE / "cluster" / name).glob("*.py")).lower()
        for word in ("trainer.kubeflow.org", "trainjob", "runtime", "opendatahub", "jobset"):
            assert word not in text, f"cluster/{name} mentions {word!r}"


def test_trainer_policy_builds_only_on_the_engine():
    for module, imports in _graph().items():
        if _package(module) == "trainerctl.cluster.trainer":
            bad = sorted({i for i, _ in imports
                          if _package(i) not in {*(f"trainerctl.cluster.{p}" for p in ENGINE),
                                                 "trainerctl.cluster.trainer"}
                          and i not in BASICS})
            assert not bad, f"{module} imports {bad}"


def test_no_cluster_command_imports_another():
    commands = {m for m in _modules() if _package(m) == "trainerctl.cluster" and m != "trainerctl.cluster"}
    for module, imports in _graph().items():
        if module in commands:
            assert not {i for i, _ in imports} & commands, module


def test_no_two_packages_import_each_other():
    edges = {(_package(m), _package(i)) for m, imports in _graph().items() for i, _ in imports
             if _package(m) != _package(i)}
    cycles = sorted((a, b) for a, b in edges if (b, a) in edges and a < b)
    assert not cycles, cycles


def test_imports_are_lazy_only_in_the_command_dispatch():
    lazy = sorted(m for m, imports in _graph().items() if any(nested for _, nested in imports)
                  and not (m.startswith("trainerctl.cli") or m == "trainerctl.entry"))
    assert not lazy, f"imports inside functions outside trainerctl/cli: {lazy}"


COMMAND_LINES = 250  # a command module is thin: its work lives in the packages below it


def test_no_command_module_is_over_250_lines():
    """Every module of the command line (trainerctl/cli/) and every cluster action
    (trainerctl/cluster/*.py) stays thin; the pipelines and policies they run live in the packages."""
    modules = [*(PACKAGE / "cli").rglob("*.py"), *(PACKAGE / "cluster").glob("*.py")]
    assert len(modules) > 10
    long = {str(p.relative_to(PACKAGE)): n for p in modules if (n := len(p.read_text().splitlines())) > COMMAND_LINES}
    assert not long, f"over {COMMAND_LINES} lines: {long}"


def test_every_name_a_module_exports_is_defined():
    """`__all__` names only what the module has: a name left there after its definition moved
    makes `from module import *` fail (cluster/diff.py listed its removed `diff`)."""
    import importlib

    for module in sorted(m for m in _modules() if not m.endswith(".__main__")):  # that one runs the CLI
        loaded = importlib.import_module(module)
        missing = [name for name in getattr(loaded, "__all__", ()) if not hasattr(loaded, name)]
        assert not missing, f"{module}.__all__ names {missing}, which it does not define"


# The one module that sends a DELETE (every delete is proved on the live object there), and the
# modules that carry a request's method through from their callers (the API client, the
# transport, the registry client) rather than choosing one.
THE_DELETE = "trainerctl.cluster.manager.delete"
CARRIES_A_METHOD = {"trainerctl.cluster.client.client", "trainerctl.net.transport", "trainerctl.registry.client"}
_SENDS = ("request", "call", "_call_once", "putrequest")


def _deletes(source: str, carries_a_method: bool = False) -> list[str]:
    """Where a module's source spells the DELETE method, or (unless it `carries_a_method`) sends a
    request whose method it does not spell out."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.upper() == "DELETE" \
                and node.value != "delete":  # "delete" is the access-review verb and kustomize's $patch
            found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SENDS \
                and not carries_a_method:
            method = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "method"), None)
            if method is not None and not (isinstance(method, ast.Constant) and isinstance(method.value, str)):
                found.append(f"line {node.lineno}: {node.func.attr}({ast.unparse(method)}, ...)")
    return found


def test_only_the_one_delete_sends_a_delete():
    """Every DELETE goes through cluster/manager/delete.py, which proves ownership on the live
    object first: no other module spells the method, or sends a request whose method it does not
    spell (which could be one)."""
    modules = _modules()
    assert "DELETE" in modules[THE_DELETE].read_text()
    for module, path in sorted(modules.items()):
        if module == THE_DELETE:
            continue
        found = _deletes(path.read_text(), module in CARRIES_A_METHOD)
        assert not found, f"{module} sends a DELETE outside {THE_DELETE}: {found}"


def test_the_delete_scan_finds_each_way_to_send_one():
    for source in ('cluster.request("DELETE", path)', 'cluster.call("DELETE", path, body={})',
                   "cluster.request('Delete', path)", 'cluster.request(method="DELETE", path=p)',
                   "verb = 'DELETE'", "cluster.request(verb, path)", "self.transport.request(m, target)"):
        assert _deletes(source), source
    assert _deletes('self.transport.request("DELETE", target)', carries_a_method=True)
    assert not _deletes("self.transport.request(method, target)", carries_a_method=True)
    for source in ('cluster.request("GET", path)', 'Need(Permission("delete", "", "namespaces"))',
                   '{"$patch": "delete"}', "cluster.items(path)"):
        assert not _deletes(source), source


# -- one report protocol -------------------------------------------------------------------------
_DUMPS = {"json.dumps", "json.dump", "yaml.dump", "yaml.safe_dump", "yaml.dump_all", "yaml.safe_dump_all"}
SERIALIZE = "trainerctl.trust.serialize"
# Classes with a text and a mapping that are parts of a report, never printed on their own.
REPORT_PARTS = {"trainerctl.cluster.manager.diagnose.Cause": "a Deployment's cause, inside status and install"}


def _classes():
    for module, path in sorted(_modules().items()):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                yield module, tree, node


def test_no_report_is_serialized_outside_serialize():
    """A report becomes JSON and YAML in one place (serialize.Reported: masked and bounded as values
    first): no module but serialize defines to_json or to_yaml, and none that does calls
    json.dumps or yaml.dump (the rule stays true should one come back)."""
    for module, path in sorted(_modules().items()):
        if module == SERIALIZE:
            continue
        tree = ast.parse(path.read_text())
        defines = sorted({n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                          and n.name in ("to_json", "to_yaml")})
        assert not defines, f"{module} defines {defines}: a report is a serialize.Reported"
        dumps = [f"line {n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and ast.unparse(n.func) in _DUMPS]
        reports = [c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                   and "Reported" in {ast.unparse(b) for b in c.bases}]
        assert not (reports and dumps), f"{module} defines reports {reports} and serializes itself: {dumps}"


def test_every_report_is_one_protocol():
    """A class that has a text and a mapping (to_dict) is a serialize.Reported: one way to become
    text, JSON and YAML; `emit` prints only those."""
    found = []
    for module, _, node in _classes():
        methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
        if {"text", "to_dict"} <= methods and f"{module}.{node.name}" not in {*REPORT_PARTS, f"{SERIALIZE}.Reported"} \
                and "Reported" not in {ast.unparse(b) for b in node.bases}:
            found.append(f"{module}.{node.name}")
    assert not found, f"reports that are not serialize.Reported: {found}"
    import inspect

    from trainerctl.cli import output

    assert "Reported" in str(inspect.signature(output.emit).parameters["report"].annotation)


# -- every command an action over a session ------------------------------------------------------
# What a command module may import of the cluster packages: the actions (one module each under
# trainerctl/cluster/, and Verify's package). The session is built in cli/options.py.
ACTIONS = {"install", "uninstall", "diff", "check", "status", "support_bundle", "history", "rollback", "upgrade_check"}
ACTION_MODULES = {*(f"trainerctl.cluster.{a}" for a in ACTIONS), "trainerctl.cluster.trainer.verify"}
# The client's reads and writes, and what makes a connection or asks discovery.
_CLIENT_METHODS = {"request", "call", "items", "pages", "get_or_none", "watch", "has_group", "refresh"}
_CONNECTS = {"connect", "Discovery", "Cluster"}


def _command_modules() -> dict[str, Path]:
    return {m: p for m, p in _modules().items() if m.startswith("trainerctl.cli.") and m.endswith("_cmd")}


def test_the_actions_are_one_module_each():
    found = {m.rpartition(".")[2] for m in _modules() if _package(m) == "trainerctl.cluster" and m != "trainerctl.cluster"}
    assert found == ACTIONS, found ^ ACTIONS


def test_no_command_module_reads_the_cluster_itself():
    """A command module parses its flags, builds the session (cli/options.py), runs the action and
    prints: it imports only the actions of the cluster packages, and calls no client, connection
    or discovery of its own."""
    modules = _modules()
    for module, path in sorted(_command_modules().items()):
        imported = {_resolve(i, modules) for i, _ in _imports(path)}
        cluster = {i for i in imported if i.startswith("trainerctl.cluster")}
        assert cluster <= ACTION_MODULES, f"{module} imports {sorted(cluster - ACTION_MODULES)}"
        calls = sorted({f"line {n.lineno}: {ast.unparse(n.func)}" for n in ast.walk(ast.parse(path.read_text()))
                        if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) in _CLIENT_METHODS | _CONNECTS
                                                        or getattr(n.func, "id", None) in _CONNECTS)})
        assert not calls, f"{module} talks to the cluster itself: {calls}"


def _commands():
    """(module, command name, function, the settings it takes) of every command of the command line."""
    for module, path in sorted(_command_modules().items()):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = {ast.unparse(d.func): d for d in node.decorator_list if isinstance(d, ast.Call)}
            if "command" in decorators:
                takes = decorators.get("takes")
                settings = {ast.unparse(a) for a in takes.args} if takes is not None else set()
                yield module, decorators["command"].args[0].value, node, settings


def test_every_command_over_a_cluster_is_an_action_over_a_session():
    """Each command that takes a cluster (the kubeconfig flags) builds its session and runs an action
    over it (`session(...)`, `X(...).run(...)`)."""
    over_a_cluster = []
    for module, name, fn, settings in _commands():
        if "*CLUSTER" not in settings:
            continue
        over_a_cluster.append(name)
        names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        runs = [n for n in ast.walk(fn) if isinstance(n, ast.Attribute) and n.attr == "run"]
        assert "session" in names and (runs or "report_install" in names), \
            f"{module}: {name} is not an action run over a session"
    assert set(over_a_cluster) == {"install", "uninstall", "diff", "status", "check", "support-bundle", "history",
                                   "rollback", "verify", "upgrade-check"}, over_a_cluster


# -- module names say what they hold --------------------------------------------------------------
# Base names that more than one package uses for the same thing, each with that thing. Any other
# name is one module's: a second module of that name means something else, and is named for it.
ONE_MEANING = {
    "__init__": "a package",
    "errors": "the errors a package raises, each with its message and exit code",
    "output": "how a package's result is written: to the terminal, as a stream or as files",
    "validate": "the checks of a package's input, one clear line per problem",
    "report": "a package's result as one report (serialize.Reported)",
    "pipeline": "a package's run from its input to its result (render, install, images)",
    "client": "a package's client of its server (the API server, a registry)",
    "admission": "admission webhooks: the view of their configurations, and verify's tier that reaches them",
    "consumers": "what uses Trainer and the version each needs, and verify's tier that reports them",
}


def test_one_base_name_means_one_thing():
    """A module's name says what it holds, so no two modules share a base name unless ONE_MEANING
    says it means one thing in each package (a newcomer reading `lock.py` twice cannot tell the
    pin file from the install Lease, and an import had to rename one of them)."""
    by_name: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        by_name.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    shared = {name: sorted(paths) for name, paths in sorted(by_name.items()) if len(paths) > 1}
    assert not shared.keys() - ONE_MEANING.keys(), \
        f"base names used twice with no entry in ONE_MEANING: { {n: shared[n] for n in shared.keys() - ONE_MEANING.keys()} }"
    assert not ONE_MEANING.keys() - shared.keys(), f"ONE_MEANING names a base name only one module has: " \
                                                    f"{sorted(ONE_MEANING.keys() - shared.keys())}"


def _renamed_modules(source: str, modules: set[str]) -> list[str]:
    """`import trainerctl.a.m as x` and `from trainerctl.a import m as x` where m is a module of
    ours and x is not its own name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: {a.name} as {a.asname}" for a in node.names
                      if a.asname and a.name in modules and a.asname != a.name.rpartition(".")[2]]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("trainerctl"):
            found += [f"line {node.lineno}: {node.module}.{a.name} as {a.asname}" for a in node.names
                      if a.asname and f"{node.module}.{a.name}" in modules and a.asname != a.name]
    return found


def test_no_import_renames_a_module_of_ours():
    """A module is imported under its own name: an alias (`inventory as inv_mod`) hides that its
    name clashes with something the importer holds, and that module is named for what it holds."""
    modules = set(_modules())
    # The tests and scripts read as the package does: a test that renames a module hides the same clash.
    checkout = Path(__file__).resolve().parents[2]  # the tests run from the checkout, the package maybe from a wheel
    files = [*sorted(_modules().values()), *sorted((checkout / "tests").rglob("*.py")),
             *sorted((checkout / "scripts").glob("*.py"))]
    assert len(files) > len(modules) + 100, "the scan found the tests and scripts"
    found = {path.name: hits for path in files
             if "fixtures" not in path.parts and (hits := _renamed_modules(path.read_text(), modules))}
    assert not found, f"imports that rename a module of ours: {found}"


def test_the_rename_scan_finds_each_way_to_rename():
    modules = {"trainerctl.cluster.manager.inventory_configmap", "trainerctl.source", "trainerctl.upgrade"}
    for source in ("from trainerctl.cluster.manager import inventory_configmap as inv_mod",
                   "import trainerctl.cluster.manager.inventory_configmap as inv",
                   "from trainerctl import source as sources",
                   "def f():\n    from trainerctl import redact, source as package"):
        assert _renamed_modules(source, modules), source
    for source in ("from trainerctl.cluster.manager import inventory_configmap",
                   "import trainerctl.upgrade as upgrade",  # its own name
                   "from trainerctl.cluster.manager.inventory_configmap import read as read_inventory",  # a function
                   "import json as _json"):
        assert not _renamed_modules(source, modules), source
# The session's values a function of the engine takes with the client. A ResourceManager is bound
# to one session (cluster/manager/resource_manager.py), so a module function of the manager that
# takes `cluster` with one of these is the engine re-threaded by hand: it is the manager's method.
SESSION_VALUES = {"namespace", "owner_label", "field_manager"}
# The few that read any object by its own namespace, which is no session's.
UNBOUND = {
    "diagnose.deployment": "diagnoses a Deployment in its own namespace (verify's, a support bundle's part client)",
    "diagnose.service": "diagnoses a webhook Service in the namespace its webhook configuration names",
    "diagnose.recent_log": "reads a pod's log in the pod's namespace",
    "diagnose._begin": "the start of diagnose.deployment and diagnose.service, in the object's namespace",
    "wait.deployment_available": "waits for a Deployment in its own namespace (a stage's objects may be anywhere)",
    "wait.service_endpoint_ready": "waits for the Service a webhook calls, in the namespace the webhook names",
    "listing.list_meta": "lists one type in any namespace, or every one (None), by any selector",
}


def _bound_values_taken_by_hand(manager: Path = PACKAGE / "cluster" / "manager") -> list[str]:
    found = []
    for path in sorted(manager.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            if "cluster" in names and names & SESSION_VALUES:
                found.append(f"{path.stem}.{node.name}")
    return found


def test_the_resource_manager_binds_the_session_once():
    """No module function of cluster/manager takes the client with the session's namespace, owner
    label or field manager: those are the ResourceManager's methods (Flux's ssa.ResourceManager),
    but for the few that read an object in its own namespace, each with its reason."""
    found = _bound_values_taken_by_hand()
    assert sorted(set(found) - set(UNBOUND)) == [], "make these methods of the ResourceManager"
    assert sorted(set(UNBOUND) - set(found)) == [], "no longer needed on the allow-list"


def test_the_bound_values_finder_sees_a_function_that_takes_them(tmp_path):
    """A keyword-only value counts; a method (bound already) does not."""
    (tmp_path / "planted.py").write_text("def read(cluster, *, owner_label):\n    pass\n\n"
                                         "def pure(namespace, field_manager):\n    pass\n\n"
                                         "class M:\n    def read(self, cluster, namespace):\n        pass\n")
    assert _bound_values_taken_by_hand(tmp_path) == ["planted.read"]
