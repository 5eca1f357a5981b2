"""The command line as users get it: one typer app, one definition per flag, one help style, shell
completion, --version, one-line usage errors, start-up that imports nothing heavy, and no
credential left on disk, Ctrl-C included.

Most tests run the real entry point (`trainerctl`, else `python -m trainerctl`) in a subprocess,
from outside the checkout, so under .ci/run they exercise the installed wheel.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import trainerctl
from trainerctl.cli import full_app, main
from trainerctl.source.pins import channels

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["kustomize", "render", "fetch", "install", "uninstall", "diff", "status", "upgrade-check", "check",
            "support-bundle", "completion", "images", "history", "rollback",
            "verify", "channels"]


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def run(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    return subprocess.run([*_entry(), *args], capture_output=True, text=True, env=full_env, cwd=cwd or "/",
                          timeout=timeout)


# --- the first five minutes -------------------------------------------------------------------
def test_version_is_one_line_exit_0():
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout == f"trainerctl {trainerctl.__version__}\n" and proc.stderr == ""


@pytest.mark.parametrize("args, says", [
    (["install", "--bogus-flag"], "No such option: --bogus-flag"),
    (["nosuchcommand"], "No such command 'nosuchcommand'"),
    (["install", "--timeout", "abc"], "--timeout"),
    (["install", "--timeout", "nan"], "--timeout"),
    (["render", "--source"], "--source"),
])
def test_usage_errors_are_one_line_exit_2(args, says):
    proc = run(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and says in proc.stderr


_LEAVE = """
import atexit, sys, threading, time
from trainerctl.entry import main
out = sys.argv[1]
atexit.register(lambda: open(out + ".atexit", "w").write("ran"))
import os
class Torn:  # freed only by the interpreter's teardown (which has taken `open` away by then)
    def __del__(self, write=os.write, fd=os.open(out + ".teardown", os.O_WRONLY | os.O_CREAT)):
        write(fd, b"ran")
torn = Torn()
if sys.argv[2] == "thread":  # still running when the command ends: it must be joined
    threading.Thread(target=lambda: (time.sleep(0.5), open(out + ".thread", "w").write("done"))).start()
if sys.argv[2] == "daemon":  # a daemon (the requests' deadline watchdog, idle): never joined, not waited for
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
sys.argv = ["trainerctl", "--version"]
main()
"""


@pytest.mark.parametrize("thread", ["", "thread", "daemon"])
def test_the_process_ends_after_atexit_handlers_and_its_threads(tmp_path, thread):
    """The entry point leaves without the interpreter's teardown, but never before the atexit
    handlers ran, the output was flushed, and (if any) the threads still running were joined. A
    daemon thread still alive (an install's idle deadline watchdog) keeps no teardown: Python
    would not join it either (it kept every cluster command on the slow way out)."""
    out = tmp_path / "mark"
    proc = subprocess.run([sys.executable, "-c", _LEAVE, str(out), thread], capture_output=True, text=True,
                          timeout=60, cwd="/")
    assert proc.returncode == 0 and proc.stdout == f"trainerctl {trainerctl.__version__}\n", proc.stderr
    assert (tmp_path / "mark.atexit").read_text() == "ran"
    assert (tmp_path / "mark.thread").exists() == (thread == "thread")
    assert (tmp_path / "mark.teardown").read_text() == ("ran" if thread == "thread" else "")


def test_bare_command_prints_help_exit_0():
    proc = run()
    assert proc.returncode == 0 and "Usage: trainerctl" in proc.stdout
    assert all(cmd in proc.stdout for cmd in COMMANDS)


def test_render_from_the_entry_point(shared_dir, tmp_path):
    proc = run("render", "--source", str(shared_dir / "upstream/opendatahub-trainer/odh-3.5.0"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "kind: ClusterTrainingRuntime" in proc.stdout and "kind: Deployment" in proc.stdout


# --- one CLI, one definition per flag, one help style ---------------------------------------------
def _click_commands():
    import typer.main

    group = typer.main.get_command(full_app())
    return {name: group.commands[name] for name in COMMANDS}


def test_every_command_is_on_the_one_typer_app():
    assert sorted(_click_commands()) == sorted(COMMANDS)


def test_each_flag_has_one_definition():
    """The same flag on several commands is made from one setting: same names and metavar, and the
    help that setting gives that command (its own text where it differs, else the shared one)."""
    from trainerctl.settings import setting_of

    seen: dict[str, tuple] = {}
    for name, cmd in _click_commands().items():
        for param in cmd.params:
            how = setting_of(param.name)
            if how is not None:
                assert param.help == how.help_for(name), f"{param.opts} on {name}: not its setting's help"
            for opt in [*param.opts, *param.secondary_opts]:
                shape = (tuple(param.opts), tuple(param.secondary_opts), param.metavar)
                assert seen.setdefault(opt, shape) == shape, f"{opt} on {name} differs from its other definition"
    assert len(seen) > 30


def test_a_flags_own_help_is_for_a_command_that_takes_it():
    """A setting's per-command help names commands that offer its flag, and says something the
    shared help does not (else it is the shared help, written twice)."""
    from trainerctl.settings import Settings
    from trainerctl.settings.spec import specs

    offered = {(p.name, name) for name, cmd in _click_commands().items() for p in cmd.params}
    for field, how in specs(Settings):
        for command, text in (how.help_in or {}).items():
            assert (field, command) in offered, f"{how.flag}: help for {command}, which has no {how.flag}"
            assert text != how.help and text.rstrip().endswith("."), f"{how.flag} on {command}: {text!r}"


FORMAT_NAMES = re.compile(r"\b(text|yaml|json|plain|oc-mirror)\b")


def test_each_commands_output_help_names_the_formats_it_takes(capsys, tmp_path, monkeypatch):
    """-o's help on each command names the formats that command accepts (what it says when given
    another), its default first."""
    monkeypatch.chdir(tmp_path)  # no trainerctl.yaml around
    commands = [(name, p) for name, cmd in _click_commands().items() for p in cmd.params if p.name == "output"]
    assert len(commands) > 8
    for name, param in commands:
        assert main([name, "-o", "bogus"]) == 2, name
        said = capsys.readouterr().err
        accepted = said.partition("expected one of ")[2].strip().split(", ")
        named = FORMAT_NAMES.findall(param.help)
        assert sorted(set(named)) == sorted(accepted), f"{name}: -o help {param.help!r}, accepts {accepted}"
        assert f"(default: {accepted[0]})" in param.help, f"{name}: -o help does not name {accepted[0]} the default"


def test_the_command_list_shows_one_line_per_command():
    """`trainerctl --help` at 80 columns: each command's summary fits on its own line; its full
    description is in its own --help."""
    proc = run("--help", env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
    listed = [row.split()[1] for row in rows if row.split()[1] in COMMANDS]
    assert sorted(listed) == sorted(COMMANDS), proc.stdout
    panel = proc.stdout[proc.stdout.index("Commands"):]
    continued = [line for line in panel.splitlines()[1:] if line.startswith("│ ") and line.split()[1] not in COMMANDS]
    assert continued == [], f"a summary wraps: {continued}"
    for name, cmd in _click_commands().items():
        summary = (cmd.help or "").split("\n\n")[0]
        assert "\n" not in summary.strip() and len(summary) <= 60, f"{name}: summary {summary!r}"
        assert summary in run(name, "--help").stdout, name  # first, then the rest


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_type_tags_and_every_flag_is_explained(command):
    proc = run(command, "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    assert not re.search(r"<(str|bool|int|float|list\[str\]|path)>", proc.stdout), proc.stdout
    assert "Usage: trainerctl " + command in proc.stdout
    for param in _click_commands()[command].params:
        assert param.help and param.help.rstrip().endswith("."), f"{command} {param.opts}: help {param.help!r}"


def test_no_module_imports_click():
    """typer 0.26+ vendors click and does not install it: importing it would break in a fresh venv."""
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "trainerctl").rglob("*.py")
                 if re.search(r"^\s*(import click|from click)", p.read_text(), re.M)]
    assert offenders == []


# --- shell completion ---------------------------------------------------------------------
def _complete(words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    proc = run(env={"_TRAINERCTL_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


# A line only that shell's script has: the script is the named shell's, whatever shell (if any)
# runs trainerctl (a Dockerfile RUN or a CI step has none to detect).
SHELL_MARKS = {"bash": "complete -o default -F _trainerctl_completion trainerctl", "zsh": "#compdef trainerctl",
               "fish": "complete --command trainerctl", "powershell": "Register-ArgumentCompleter"}


@pytest.mark.parametrize("shell", sorted(SHELL_MARKS))
def test_completion_script_is_the_named_shells(shell):
    proc = run("completion", shell, env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1", "SHELL": "/bin/false"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "_TRAINERCTL_COMPLETE" in proc.stdout and SHELL_MARKS[shell] in proc.stdout, proc.stdout[:300]
    others = [s for s in SHELL_MARKS if s != shell and SHELL_MARKS[s] in proc.stdout]
    assert others == [], others


def test_completion_of_an_unknown_shell_is_one_line_exit_2():
    proc = run("completion", "tcsh")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert "tcsh" in proc.stderr and "bash" in proc.stderr, proc.stderr


def test_completion_covers_every_command_and_flag():
    assert sorted(c for c in _complete("trainerctl ") if not c.startswith("-")) == sorted(COMMANDS)
    for name, cmd in _click_commands().items():
        offered = set(_complete(f"trainerctl {name} --"))
        wanted = {o for p in cmd.params for o in [*p.opts, *p.secondary_opts] if o.startswith("--")}
        assert wanted <= offered, f"{name}: not completed: {sorted(wanted - offered)}"


def test_completion_of_values():
    assert _complete("trainerctl render --platform ") == ["kubernetes", "openshift"]
    assert _complete("trainerctl install -o j") == ["json"]
    assert set(_complete("trainerctl render -c ")) == {"manifests", "runtimes", "imagestreams"}
    assert _complete("trainerctl install --channel ") == list(channels())
    assert _complete("trainerctl render --channel v2.2") == ["v2.2.1", "v2.2.0"]


def test_completion_of_images_values(tmp_path):
    assert _complete("trainerctl images -o o") == ["oc-mirror"]
    config = tmp_path / "auth.json"
    config.write_text(json.dumps({"auths": {"quay.io": {}, "https://registry.example.com:5000/v2/": {}},
                                  "credHelpers": {"quay.example.org": "ecr-login"}}))
    assert _complete(f"trainerctl images --registry-config {config} --plain-http ") == \
        ["quay.example.org", "quay.io", "registry.example.com:5000"]
    assert _complete(f"trainerctl images --registry-config {tmp_path / 'absent'} --plain-http ") == []


def test_completion_of_kubeconfig_contexts(tmp_path):
    kc = tmp_path / "kc"
    kc.write_text(json.dumps({"contexts": [{"name": "prod", "context": {}}, {"name": "staging", "context": {}}]}))
    assert _complete(f"trainerctl status --kubeconfig {kc} --context p") == ["prod"]


# --- start-up: typer is the only fixed cost -----------------------------------------------
HEAVY = ("pydantic", "rich", "kubernetes", "git", "click", "urllib3", "trainerctl.kustomize", "trainerctl.render")


def _imported_after(args: list[str]) -> set[str]:
    code = ("import sys, io, contextlib\nfrom trainerctl.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): rc = main(sys.argv[1:])\n"
            f"import json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_parsing_imports_nothing_heavy():
    assert _imported_after(["install", "--bogus"]) == set()
    assert _imported_after(["--version"]) == set()


def test_render_and_kustomize_import_only_what_they_use(shared_dir):
    rhoai = str(shared_dir / "upstream/opendatahub-trainer/odh-3.5.0/manifests/rhoai")
    assert _imported_after(["kustomize", rhoai]) == {"trainerctl.kustomize"}
    # pydantic (typer 0.29's converter), rich, kubernetes and git stay out of a local render
    assert _imported_after(["render", "--source", str(Path(rhoai).parents[1])]) == {"trainerctl.kustomize",
                                                                                     "trainerctl.render"}


ENGINES = ("trainerctl.kustomize.top", "trainerctl.render.pipeline", "trainerctl.source.cache", "trainerctl.source.gitrepo",
           # install takes the upgrade guard; the check behind it loads only when it runs
           "trainerctl.upgrade.compatibility", "trainerctl.upgrade.schema.validate")


def test_install_f_loads_no_build_engine(tmp_path):
    """`install -f` reads its file with kustomize's YAML reader and render's image rules, and
    builds nothing: the package __init__s name their APIs lazily (trainerctl/lazy_exports.py), so
    those light modules do not load the engines behind them (a no-op re-install's start-up)."""
    kc = _unreachable_kubeconfig(tmp_path / "kc")
    one = tmp_path / "one.yaml"
    one.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code = ("import sys, io, contextlib\nfrom trainerctl.cli import main\n"
            "with contextlib.redirect_stderr(io.StringIO()): rc = main(sys.argv[1:])\n"
            "assert 'trainerctl.cluster.install' in sys.modules and 'trainerctl.kustomize.yamlread' in sys.modules\n"
            f"import json; print(json.dumps([rc, [m for m in {ENGINES!r} if m in sys.modules]]))")
    proc = subprocess.run([sys.executable, "-c", code, "install", "-f", str(one), "--kubeconfig", str(kc)],
                          capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [3, []]


@pytest.mark.parametrize("package", ["trainerctl.kustomize", "trainerctl.render", "trainerctl.source", "trainerctl.upgrade"])
def test_a_lazy_package_loads_none_of_its_modules(package):
    """Importing the package (as importing any one of its modules does) runs only its __init__."""
    code = (f"import sys, json, {package}\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m.startswith('{package}.'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_lazy_package_names_are_the_modules_own():
    import trainerctl.kustomize as kustomize
    import trainerctl.render as render
    from trainerctl.kustomize.top import build
    from trainerctl.render.pipeline import render as render_fn

    assert kustomize.build is build and render.render is render_fn
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        kustomize.nothing  # noqa: B018


# --- exit codes -----------------------------------------------------------------------------
def _unreachable_kubeconfig(path: Path) -> Path:
    path.write_text(json.dumps({
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "current-context": "c"}))
    return path


def test_failed_install_f_says_nothing_about_nothing_to_do(tmp_path, capsys):
    kc = _unreachable_kubeconfig(tmp_path / "kc")
    one = tmp_path / "one.yaml"
    one.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["install", "-f", str(one), "--kubeconfig", str(kc)]) == 3
    out, err = capsys.readouterr()
    assert out == "" and "nothing to do" not in err and err.startswith("error: cannot reach the API server")
    assert main(["install", "-f", str(one), "--kubeconfig", str(kc), "-o", "json"]) == 3
    out, _ = capsys.readouterr()
    summary = json.loads(out)
    assert summary["error"].startswith("cannot reach") and summary["summary"] == {"changed": 0}


def test_docs_document_the_exit_codes_of_every_command():
    table = (ROOT / "docs" / "exit-codes.md").read_text()
    for command in COMMANDS:
        assert f"`{command}`" in table, f"docs/exit-codes.md does not mention {command}"


# --- packaging ----------------------------------------------------------------------------
def test_oldest_constraints_are_the_lower_bounds():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lower = {re.split(r"[<>=]", d)[0].lower(): re.search(r">=([^,]+)", d).group(1) for d in deps}
    pinned = dict(line.lower().split("==") for line in (ROOT / ".ci/oldest-constraints.txt").read_text().splitlines()
                  if line and not line.startswith("#"))
    assert pinned == lower
    assert all("<" in d for d in deps), "every dependency has a tested upper bound"


def test_installed_package_is_what_is_tested():
    """Under .ci/run the suite imports the wheel, and so does `python -m` from the checkout."""
    if os.environ.get("TRAINERCTL_TEST_INSTALLED") != "1":
        pytest.skip("only meaningful under .ci/run (TRAINERCTL_TEST_INSTALLED=1)")
    assert not Path(trainerctl.__file__).resolve().is_relative_to(ROOT)
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "--version"], cwd=ROOT, capture_output=True, text=True)
    where = subprocess.run([sys.executable, "-c", "import trainerctl; print(trainerctl.__file__)"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    assert proc.returncode == 0 and not Path(where).resolve().is_relative_to(ROOT), where


def test_every_module_is_packaged():
    """setup.py finds packages by their __init__.py: a folder without one is left out of the wheel
    (an editable install, or a build dir left from one, hides it). Under .ci/run the installed
    package must hold every module of the checkout."""
    modules = sorted(p.relative_to(ROOT) for p in (ROOT / "trainerctl").rglob("*.py") if "__pycache__" not in p.parts)
    folders = sorted({m.parent for m in modules})
    assert [f for f in folders if not (ROOT / f / "__init__.py").is_file()] == []
    if os.environ.get("TRAINERCTL_TEST_INSTALLED") == "1":
        installed = Path(trainerctl.__file__).resolve().parent
        assert [m for m in modules if not (installed / m.relative_to("trainerctl")).is_file()] == []


def test_the_package_finds_its_assets():
    from trainerctl.render.assets import ASSET_DIRS, asset_dir

    for name in ASSET_DIRS:
        where = asset_dir(name)
        assert (where / "kustomization.yaml").is_file() or (where / "overlay").is_dir()
        if os.environ.get("TRAINERCTL_TEST_INSTALLED") == "1":  # the wheel's copy, not the checkout's
            assert not where.resolve().is_relative_to(ROOT), where


# --- credentials ----------------------------------------------------------------------------
def _client_cert() -> tuple[bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "trainerctl-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


class _SilentServer:
    """Accepts TCP connections and never answers: a request to it hangs until interrupted.
    `abandoned` is set once a client closed its connection (it gave up on the request)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.connected = threading.Event()
        self.abandoned = threading.Event()
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.connected.set()
            threading.Thread(target=self._until_closed, args=(conn,), daemon=True).start()

    def _until_closed(self, conn: socket.socket) -> None:
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass
        self.abandoned.set()

    def close(self):
        self.sock.close()
        for conn in self.conns:
            conn.close()


def _credential_kubeconfig(path: Path, server: str) -> Path:
    cert, key = _client_cert()
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    path.write_text(json.dumps({
        "clusters": [{"name": "k", "cluster": {"server": server, "certificate-authority-data": b64(cert)}}],
        "users": [{"name": "u", "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "current-context": "c"}))
    return path


def test_a_second_ctrl_c_leaves_at_once_without_credentials(tmp_path):
    """Against a server that never answers, Ctrl-C (and a second one at once) ends the command
    quickly (exit 130, one line) and leaves no decoded credential behind."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    server = _SilentServer()
    try:
        kc = _credential_kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{server.port}")
        env = {**os.environ, "TMPDIR": str(tmp)}
        proc = subprocess.Popen([*_entry(), "status", "--kubeconfig", str(kc)], env=env, cwd="/",
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert server.connected.wait(60), "the command never reached the server"
        proc.send_signal(signal.SIGINT)
        # The first one was taken: it aborted the request in flight (the server sees it closed).
        assert server.abandoned.wait(60), "the first Ctrl-C did not abort the request in flight"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # the server never answers: only the signals end it
    finally:
        server.close()
    assert proc.returncode == 130 and err == "error: interrupted\n", err
    assert _leftovers(tmp) == []


_SAY_THEN_SIGNAL = """
import os, signal, sys
from trainerctl.trust import interrupts, stdio
stdio.install(); interrupts.arm_hard_exit(); interrupts.install()
order = sys.argv[1]
if order == "said-first":
    interrupts.say_interrupted(stdio.error)
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    pass
if order == "between":
    interrupts.say_interrupted(stdio.error)
os.kill(os.getpid(), signal.SIGINT)  # the second one: the hard exit
"""


@pytest.mark.parametrize("order", ["said-first", "between", "hard-exit-only"])
def test_the_interrupted_line_is_said_once_whichever_path_ends_the_command(order):
    """The command's own `error: interrupted` and the hard exit's on a second signal: whichever
    comes first says it, the other stays quiet (the second Ctrl-C used to say it again)."""
    proc = subprocess.run([sys.executable, "-c", _SAY_THEN_SIGNAL, order], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "NO_COLOR": "1"})
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")


def _leftovers(tmp: Path) -> list[str]:
    return [p.name for p in tmp.iterdir() if p.name.startswith("trainerctl-kubeconfig-")]


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, None])
def test_no_credential_file_outlives_the_command(tmp_path, how):
    """A kubeconfig with CA, client certificate and key data; the command is interrupted while its
    first request hangs (or runs to its error); nothing decoded is left in the temp dir."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    server = _SilentServer()
    try:
        kc = _credential_kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{server.port}" if how else
                                    "https://127.0.0.1:1")
        env = {**os.environ, "TMPDIR": str(tmp)}
        proc = subprocess.Popen([*_entry(), "status", "--kubeconfig", str(kc)], env=env, cwd="/",
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if how is not None:
            assert server.connected.wait(60), "the command never reached the server"
            assert _leftovers(tmp) == [], "a credential file was written"
            proc.send_signal(how)
        out, err = proc.communicate(timeout=60)
        if how is not None:  # the request in flight is aborted: no waiting for the silent server
            # Waited on, not checked at once: the server's thread sees the close only when it is
            # next scheduled, which on a loaded machine can be after communicate() returned.
            assert server.abandoned.wait(60), "the command ended without closing its request"
    finally:
        server.close()
    assert proc.returncode == (130 if how else 3), err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert _leftovers(tmp) == [] and not list(tmp.iterdir())


def test_invalid_base64_leaves_nothing(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    kc = tmp_path / "kc"
    kc.write_text(json.dumps({
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1", "certificate-authority-data": "@@@"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "current-context": "c"}))
    proc = run("status", "--kubeconfig", str(kc), env={"TMPDIR": str(tmp)})
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert not list(tmp.iterdir())


def test_in_process_runs_leave_no_credential_files(tmp_path, monkeypatch, capsys):
    """Tests and library users call main() in-process: nothing decoded is left when it returns."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    kc = _credential_kubeconfig(tmp_path / "kc", "https://127.0.0.1:1")
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # a fake clock: what would it have waited?
    for _ in range(2):  # the second run must not trip over the first one's cleaned-up files
        assert main(["status", "--kubeconfig", str(kc)]) == 3
        assert "cannot reach" in capsys.readouterr().err
        assert _leftovers(tmp_path) == []
    assert sum(slept) < 60, slept  # a refused connection is not waited out with long back-offs
