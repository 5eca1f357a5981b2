"""Masking before layout, and one bound on server text, whatever the command, the output format and
the terminal's width.

A credential of the run (here: the tokens and passwords of a kubeconfig, all registered when it
is read) is planted inside long messages that a talkative API server (tests/support/hostile_api.py,
mode `talkative`) puts everywhere a command reads text: conditions, container states, events,
logs, the recorded source, the install history, a webhook's denial, an apply's 422, a DELETE's 500.
Every command that prints server text runs with `-o text`, `json` and `yaml`, and the secret must
not appear in any form: as it is, JSON-escaped, with its whitespace collapsed, split across a
folded YAML line or a line wrapped at the terminal's width, or in any string of the document once
parsed. The commands run in-process without the stream's line-by-line mask (trainerctl.trust.stdio), so
it is the value-level masking that is proved; a real process on a pseudo-terminal, where rich
draws the progress at the terminal's width, runs at 20, 80 and 200 columns.

And the layout rules that keep it so: reports and files are serialized only through
trainerctl.trust.serialize, and only the output modules write to the terminal.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import trainerctl
from tests.support.hostile_api import OBJECTS, HostileServer, strings
from tests.support.properties import PROPERTY
from trainerctl.trust import redact, safe_text

PACKAGE = Path(trainerctl.__file__).resolve().parent

# -- the layout rules ----------------------------------------------------------------------------
_DUMPS = {("json", "dumps"), ("json", "dump"), ("yaml", "dump"), ("yaml", "safe_dump"), ("yaml", "dump_all"),
          ("yaml", "safe_dump_all"), ("yaml", "emit"), ("yaml", "serialize")}
# Modules that serialize what is no report and holds no server text, each with what it writes.
_SERIALIZE_ALLOWED = {
    "trainerctl.trust.serialize": "the one place reports and bundle members are serialized",
    "trainerctl.trust.redact": "the JSON-escaped forms a credential can take, to find them",
    "trainerctl.kustomize.yamlemit": "a kustomize build's output, as kustomize writes it",
    "trainerctl.render.output": "a render's -o json (the user's manifests)",
    "trainerctl.render.overlay": "the overlay a render generates",
    "trainerctl.render.controller.controller_patches": "the patch a render generates",
    "trainerctl.render.overrides_file": "an image overrides file (--write-overrides)",
    "trainerctl.source.lock_file": "trainerctl.lock",
    "trainerctl.source.cache": "the source cache's index",
    "trainerctl.source.embedding": "the wheel build's record of the embedded source",
    "trainerctl.parsed_cache": "the cache of parses (Storable values only)",
    "trainerctl.cluster.client.client": "request bodies sent to the API server",
    "trainerctl.cluster.client.credentials": "the ExecCredential an exec plugin reads",
    "trainerctl.cluster.manager.objects": "a body's digest",
    "trainerctl.cluster.manager.inventory_configmap": "the inventory written to the server, and a digest",
    "trainerctl.cluster.operations.install_history": "a history record written to the server",
    "trainerctl.cluster.operations.lock_holder": "the lock holder written to the server",
    "trainerctl.upgrade.schema.validate": "a value quoted in a validation message as the API server quotes it "
                                          "(Go's JSON); the message is masked like any other",
    "trainerctl.cluster.trainer.controller_log": "a value a controller's log names, quoted in the cause line as "
                                                 "JSON shows it; the line is masked like any other",
}
# The modules that write to the terminal: what they print passed safe_text or serialize.
_WRITERS = {"trainerctl.trust.stdio", "trainerctl.ui", "trainerctl.cli.output"}
_WRITE_CALLS = ("print", "sys.stdout.write", "sys.stderr.write", "sys.stdout.writelines", "sys.stderr.writelines",
                "sys.__stdout__.write", "sys.__stderr__.write", "typer.echo", "typer.secho", "click.echo",
                "click.secho")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"), \
            ast.parse(path.read_text(encoding="utf-8"))


def _calls(tree: ast.AST):
    """(call, its parent node) for every call in `tree`."""
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Call):
                yield child, parent


def test_reports_and_files_are_serialized_only_through_serialize():
    """No json.dumps / yaml.dump outside trainerctl.trust.serialize, but for what is no report and holds
    no server text (_SERIALIZE_ALLOWED) and a deep copy (json.loads(json.dumps(x)))."""
    found, used = [], set()
    for module, tree in _modules():
        for call, parent in _calls(tree):
            func = call.func
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and (func.value.id, func.attr) in _DUMPS):
                continue
            copy = isinstance(parent, ast.Call) and ast.unparse(parent.func) == "json.loads"
            if copy:
                continue
            if module in _SERIALIZE_ALLOWED:
                used.add(module)
            else:
                found.append(f"{module}:{call.lineno}: {ast.unparse(func)}")
    assert not found, "serialize reports through trainerctl.trust.serialize (json_text, yaml_text):\n" + "\n".join(found)
    assert used == set(_SERIALIZE_ALLOWED), f"allowed but no longer serializing: {set(_SERIALIZE_ALLOWED) - used}"


def test_only_the_output_modules_write_to_the_terminal():
    """print, sys.stdout/stderr writes, typer/click echo, a rich Console and os.write to 1 or 2
    only in trainerctl.trust.stdio, trainerctl.ui and trainerctl.cli.output (and the fixed line of the
    hard exit after an interrupt)."""
    found = []
    for module, tree in _modules():
        if module in _WRITERS:
            continue
        for call, _ in _calls(tree):
            name = ast.unparse(call.func)
            terminal_fd = name == "os.write" and call.args and isinstance(call.args[0], ast.Constant) \
                and call.args[0].value in (1, 2) and not (module == "trainerctl.trust.interrupts"
                                                          and isinstance(call.args[1], ast.Constant))
            if name in _WRITE_CALLS or name.endswith(("Console", "console.print", "console.log")) or terminal_fd:
                found.append(f"{module}:{call.lineno}: {name}")
    assert not found, "write through trainerctl.cli.output (emit, show, verbatim) or trainerctl.ui:\n" + "\n".join(found)


# -- finding a secret in any form ----------------------------------------------------------------
def _flat(text: str) -> str:
    return "".join(text.split())


def _leaks(secret: str, text: str) -> list[str]:
    """The forms of `secret` found in `text`: as is, stripped, each line, collapsed, JSON-escaped,
    and with every whitespace gone on both sides (a fold or a wrap at any space or anywhere)."""
    core = secret.strip()
    forms = {core, re.sub(r"\s+", " ", core), json.dumps(core)[1:-1], json.dumps(core, ensure_ascii=False)[1:-1]}
    forms |= {line.strip() for line in core.splitlines() if len(line.strip()) >= redact.MIN_LENGTH}
    found = [f"{form!r}" for form in forms if form and form in text]
    flat = _flat(core)
    if len(flat) >= 4 and flat in _flat(text):
        found.append(f"{flat!r} across whitespace")
    return found


def _leaks_in_documents(secret: str, text: str, output: str) -> list[str]:
    """The secret in any string of the JSON or YAML documents printed (escapes and folds undone)."""
    if output not in ("json", "yaml") or not text.strip():
        return []
    docs = [json.loads(text)] if output == "json" else list(yaml.safe_load_all(text))
    return [f"{found} in a parsed string" for doc in docs for s in strings(doc) for found in _leaks(secret, s)]


# -- the talkative server and the commands -------------------------------------------------------
# Every command that prints server text, with the flags that make it reach the server quickly;
# WITHOUT_OUTPUT: those without -o.
COMMANDS = {
    "status": ["status"],
    "history": ["history"],
    "verify": ["verify", "--timeout", "1"],
    "install": ["install", "-f", "{objects}", "--no-wait", "--timeout", "2"],
    "uninstall": ["uninstall", "--yes", "--timeout", "2"],
    "check": ["check", "-f", "{objects}"],
    "upgrade-check": ["upgrade-check", "-f", "{objects}"],
    "diff": ["diff", "-f", "{objects}"],
    "support-bundle": ["support-bundle", "--output-file", "{bundle}"],
}
WITHOUT_OUTPUT = ("diff", "support-bundle")
FORMATS = ("text", "json", "yaml")
FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
# The talkative world answers at once: the time limits only end a run that went wrong.
ENV = {"TRAINERCTL_COMMAND_TIMEOUT": "120", "CI": "true", "NO_COLOR": "1"}


def message(secret: str, *at: int, length: int = 3000) -> str:
    """A long server message, `length` characters of filler and `secret` starting at each of the
    positions `at` (a later one moved past the secret before it)."""
    filler = (FILLER * (length // len(FILLER) + 2))[:length]
    text, used = "", 0
    for position in sorted(at):
        take = max(0, position - len(text))
        text += filler[used:used + take] + secret
        used += take
    return text + filler[used:]


@pytest.fixture(scope="module")
def talkative(tmp_path_factory):
    root = tmp_path_factory.mktemp("talkative")
    (root / "objects.yaml").write_text(OBJECTS)
    with HostileServer("talkative", tls=True) as server:
        yield server, root


def _kubeconfig(server: HostileServer, path: Path, secrets: list[str]) -> Path:
    """A kubeconfig whose context uses a plain token; the secrets are other users' credentials,
    registered all the same when it is read."""
    server.kubeconfig(path, user={"token": "ordinary-token-0123456789"})
    doc = json.loads(path.read_text())
    for i, secret in enumerate(secrets):
        doc["users"].append({"name": f"other-{i}", "user": {"token": secret}})
        doc["users"].append({"name": f"basic-{i}", "user": {"username": "admin", "password": secret}})
    path.write_text(json.dumps(doc))
    return path


def run(name: str, output: str | None, root: Path, kubeconfig: Path, env: dict | None = None,
        commands: dict[str, list[str]] = COMMANDS) -> tuple[int, str, str]:
    """One command in this process, its streams captured as they are written (no line mask)."""
    from trainerctl.cli import main

    bundle = root / f"bundle-{os.urandom(4).hex()}.tar.gz"
    args = [a.format(objects=root / "objects.yaml", bundle=bundle, secret_objects=root / "with-secret.yaml")
            for a in commands[name]]
    args += ["-o", output] if output and name not in WITHOUT_OUTPUT else []
    out, err = io.StringIO(), io.StringIO()
    redact.forget_all()  # as a fresh process knows no credential
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {**ENV, **(env or {}), "KUBECONFIG": str(kubeconfig), "HOME": str(root),
                           "TRAINERCTL_CACHE_DIR": str(root / "cache")}.items():
            mp.setenv(key, value)
        mp.chdir(root)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(args)
    files = ""
    if bundle.exists():
        with tarfile.open(bundle) as tar:
            files = "\n".join(tar.extractfile(m).read().decode("utf-8", "replace") for m in tar.getmembers())
        bundle.unlink()
    return rc, out.getvalue() + files, err.getvalue()


def _problems(secret: str, name: str, output: str, rc: int, out: str, err: str) -> list[str]:
    where = f"{name} -o {output} (exit {rc})"
    problems = [f"{where}: {f} in the output" for f in _leaks(secret, out + "\n" + err)]
    if name not in WITHOUT_OUTPUT:
        problems += [f"{where}: {f}" for f in _leaks_in_documents(secret, out, output)]
    if rc not in (0, 1, 2, 3, 4):
        problems.append(f"{where}: exit {rc}: {err[-300:]!r}")
    if "Traceback" in err or "internal error" in err:
        problems.append(f"{where}: {err[-300:]!r}")
    return problems


HARD = 'tok en  with\tspaces, "quotes", \\ backslash, ünïcödé 日本 0123'


def test_every_command_and_format_masks_a_secret_in_long_server_messages(talkative):
    """The matrix: every command, every format, a secret with spaces, a tab, quotes, a backslash
    and non-ASCII letters at the places a YAML fold (80 columns), a cut (1,000 characters) and a
    line (4,000) would split it."""
    server, root = talkative
    server.planted = (message(HARD, 70, 1000 - len(HARD) // 2, 4000 - len(HARD) // 2, length=4200),)
    kubeconfig = _kubeconfig(server, root / "kubeconfig-matrix", [HARD])
    problems, quiet, masked = [], [], set()
    for name in COMMANDS:
        for output in (FORMATS if name not in WITHOUT_OUTPUT else ("text",)):
            rc, out, err = run(name, output, root, kubeconfig)
            problems += _problems(HARD, name, output, rc, out, err)
            if FILLER[:30] not in out + err:
                quiet.append(f"{name} -o {output}")
            if "REDACTED" in out + err:
                masked.add(name)
    assert not problems, "\n".join(problems)
    # check and upgrade-check read no message this server writes (access is granted, CRDs match)
    assert {q.split()[0] for q in quiet} <= {"check", "upgrade-check"}, f"printed none of the server's messages: {quiet}"
    assert masked == set(COMMANDS) - {"check", "upgrade-check"}, masked


# Every command that prints a report with -o json or -o yaml, and how it reaches the server (or
# reads -f) quickly; images takes -o json (its other formats are plain and oc-mirror).
STRUCTURED = {
    **{name: [a.replace("{objects}", "{secret_objects}") for a in args]
       for name, args in COMMANDS.items() if name not in WITHOUT_OUTPUT},
    "status": ["status", "-f", "{secret_objects}"],
    "rollback": ["rollback", "--timeout", "2", "--no-verify"],
    "channels": ["channels"],
    "images": ["images", "-f", "{secret_objects}"],
}
STRUCTURED_FORMATS = {"images": ("json",)}
# render's -o json and -o yaml are the manifests the user asked for, as kubectl kustomize prints
# them: it reads no cluster, no kubeconfig and no -f.
NOT_REPORTS = {"render"}


def test_every_command_with_o_json_or_yaml_is_walked():
    import typer.main

    from trainerctl.cli import full_app

    commands = typer.main.get_command(full_app()).commands
    structured = {name for name, c in commands.items() if any(p.name == "output" for p in c.params)}
    assert structured - NOT_REPORTS == set(STRUCTURED), structured ^ set(STRUCTURED)


def test_every_command_keeps_planted_secret_values_out_of_json_and_yaml(talkative):
    """A Secret's values in the -f input (data, as base64 and decoded, and stringData), a token in
    the kubeconfig, and each of them inside the server's messages (conditions, events, logs, the
    history, a webhook's denial, an apply's 422, a DELETE's 500): every command's -o json and
    -o yaml, and what it says on stderr, holds none of them in any form. (A Secret's values are
    credentials to a command that reads the file; one that does not cannot know them.)"""
    server, root = talkative
    from_file, string_data, token = "f-secret data Ж 0123456789", "f-secret string §data 98765", "kube token ä' 4242"
    (root / "with-secret.yaml").write_text(OBJECTS + "---\n" + yaml.safe_dump({
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1", "namespace": "opendatahub"},
        "data": {"k": base64.b64encode(from_file.encode()).decode()}, "stringData": {"t": string_data}}))
    kubeconfig = _kubeconfig(server, root / "kubeconfig-structured", [token])
    problems, walked, masked = [], [], set()
    for name in STRUCTURED:
        planted = (from_file, string_data, token) if "{secret_objects}" in STRUCTURED[name] else (token,)
        server.planted = tuple(message(secret, 70, 900, length=1200) for secret in planted)
        for output in STRUCTURED_FORMATS.get(name, ("json", "yaml")):
            rc, out, err = run(name, output, root, kubeconfig, commands=STRUCTURED)
            walked.append(f"{name} -o {output}: exit {rc}")
            if "REDACTED" in out + err:
                masked.add(name)
            for secret in planted:
                problems += _problems(secret, name, output, rc, out, err)
    assert not problems, "\n".join(problems)
    assert len(walked) == 2 * len(STRUCTURED) - 1, walked
    # the planted values reached these reports (and were masked there): the walk proves something
    assert {"install", "status", "history", "uninstall", "verify"} <= masked, (masked, walked)


_LETTERS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
_SPACES = st.sampled_from([" ", "  ", "\t", " \n ", "\u00a0"])
# A rare mark in every secret: the filler never holds it, so finding a secret is never chance.
_MARKS = st.sampled_from(["§", "Ж", '"q', "\\z", "~7", "日", "ä'"])


@st.composite
def secrets(draw) -> str:
    words = draw(st.lists(st.text(_LETTERS, min_size=1, max_size=12), min_size=1, max_size=6))
    joined = "".join(w + draw(_SPACES) for w in words[:-1]) + words[-1]
    secret = draw(_MARKS) + joined
    if draw(st.booleans()):  # a long one too
        secret = (secret + " ") * draw(st.integers(2, 60))
    return secret


@PROPERTY
@given(secret=secrets(), at=st.integers(0, 4200), name=st.sampled_from(sorted(COMMANDS)),
       output=st.sampled_from(FORMATS), columns=st.sampled_from(["20", "80", "200"]))
def test_a_planted_secret_never_reaches_the_output(talkative, secret, at, name, output, columns):
    """Any secret (spaces, tabs, line breaks, quotes, backslashes, any letters; about the 8-character
    minimum up to a few thousand characters) anywhere in a long message, in any command's output."""
    from hypothesis import assume

    assume(len(secret.strip()) >= redact.MIN_LENGTH and len(_flat(secret)) >= 4)
    server, root = talkative
    server.planted = (message(secret, at, length=4400), message(secret, 0, length=200))
    kubeconfig = _kubeconfig(server, root / "kubeconfig-property", [secret])
    rc, out, err = run(name, output, root, kubeconfig, {"COLUMNS": columns})
    problems = _problems(secret, name, output, rc, out, err)
    assert not problems, "\n".join(problems)


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Z0-9]|\r")


def on_a_terminal(args: list[str], columns: int, env: dict, cwd: Path) -> tuple[int, str]:
    """A real trainerctl with stdout and stderr on a pseudo-terminal `columns` wide (rich draws its
    progress there); what the terminal received, its escape sequences taken out."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([*_entry(), *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=cwd,
                            env=env, close_fds=True)
    os.close(slave)
    received = bytearray()
    while True:  # until the child's end closes the terminal (EIO on Linux)
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    return proc.wait(timeout=120), _ESCAPES.sub("", received.decode("utf-8", "replace"))


@pytest.mark.parametrize("columns", [20, 80, 200])
def test_on_a_terminal_of_any_width(talkative, columns):
    """What users run: a real process on a terminal (rich's progress, the stream's own mask), an
    exec plugin's token with spaces inside the server's messages, under -o yaml too."""
    server, root = talkative
    token = "exec plugin token with spaces 0123456789"
    server.planted = (message(token, 10, 75, 500, length=1500),)
    plugin = root / "plugin.sh"
    plugin.write_text("#!/bin/sh\n" f"echo '{json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential', 'status': {'token': token}})}'\n")
    plugin.chmod(0o755)
    kubeconfig = server.kubeconfig(root / f"kubeconfig-tty-{columns}", user={"exec": {
        "command": str(plugin), "apiVersion": "client.authentication.k8s.io/v1", "interactiveMode": "Never"}})
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "KUBECONFIG")}
    env.update({**ENV, "COLUMNS": str(columns), "TERM": "xterm-256color", "KUBECONFIG": str(kubeconfig),
                "HOME": str(root), "TRAINERCTL_CACHE_DIR": str(root / "cache")})
    del env["CI"], env["NO_COLOR"]
    # uninstall: rich's progress shows each failed DELETE's message, wrapped at the width
    commands = [["uninstall", "--yes", "--timeout", "2"], ["history", "-o", "yaml"]]
    if columns == 80:  # nothing wraps these: one width is enough
        commands += [["install", "-f", str(root / "objects.yaml"), "--no-wait", "--timeout", "2"], ["status"],
                     ["verify", "--timeout", "1", "-o", "yaml"]]
    problems, shown = [], 0
    for args in commands:
        rc, text = on_a_terminal(args, columns, env, root)
        problems += [f"{args[0]} at {columns} columns (exit {rc}): {found}" for found in _leaks(token, text)]
        shown += "REDACTED" in text
        assert rc in (1, 0) and "Traceback" not in text, (args, rc, text[-500:])
    assert shown == len(commands) and not problems, "\n".join(problems)


# -- the layers one by one -----------------------------------------------------------------------
@pytest.fixture()
def registered():
    redact.forget_all()
    redact.register(HARD)
    yield HARD
    redact.forget_all()


def test_yaml_and_json_mask_before_they_fold_or_escape(registered):
    from trainerctl.trust.serialize import json_text, yaml_text

    report = {"message": message(registered, 60, length=400), registered: [message(registered, 0, length=90)]}
    for text, output in ((yaml_text(report), "yaml"), (json_text(report), "json")):
        assert not _leaks(registered, text) and not _leaks_in_documents(registered, text, output), text
        assert "REDACTED" in text


def test_a_message_is_masked_before_it_is_collapsed_or_cut(registered):
    for at in (0, 500, 995, 1000 - len(registered) // 2):
        line = safe_text.clean(message(registered, at, length=2000))
        assert not _leaks(registered, line), line
        assert len(line) <= safe_text.MESSAGE_LIMIT + len(safe_text.CUT)


def test_a_value_registered_after_its_message_was_collapsed_is_still_found():
    """A support bundle reads a Secret last: text made one line before still loses the value."""
    redact.forget_all()
    try:
        line = safe_text.clean(message(HARD, 100, length=600), 5000)  # nothing registered yet: collapsed as is
        redact.register(HARD)
        assert not _leaks(HARD, redact.redact(line))
    finally:
        redact.forget_all()


def test_report_values_are_bounded_and_masked(registered):
    from trainerctl.trust.serialize import safe

    report = {"ref": "x" * 1_000_000, "message": message(registered, 990, length=5000), "n": 5, "ok": True}
    shown = safe(report)
    assert len(shown["ref"]) == safe_text.MESSAGE_LIMIT + len(safe_text.CUT) and shown["ref"].endswith("…(cut)")
    assert not _leaks(registered, shown["message"]) and shown["n"] == 5 and shown["ok"] is True
    assert safe(report, whole=True)["ref"] == report["ref"]  # a bundle's objects: whole, masked all the same


@pytest.mark.parametrize("columns", [20, 80, 200])
def test_progress_is_masked_before_rich_wraps_it(registered, monkeypatch, columns):
    """The rich display (a terminal outside CI) wraps at the terminal's width: masked first."""
    from trainerctl import ui

    stream = io.StringIO()
    monkeypatch.setattr(ui, "plain_output", lambda: False)
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr("sys.stderr", stream)
    progress = ui.Progress(1)
    try:
        progress.message(message(registered, 15, length=600))
        progress.object_done("ConfigMap ns/c1", "failed", message(registered, 3, length=300))
        progress.waiting(message(registered, 40, length=200), 3)
    finally:
        progress.close()
    text = stream.getvalue()
    assert "REDACTED" in text and not _leaks(registered, text), text


def test_a_base64_secret_value_blanks_its_decoded_form_without_the_read_limits():
    """redact decodes a Secret's data itself (it imports nothing of trainerctl: safe_text masks
    through it)."""
    redact.forget_all()
    try:
        value = "decoded-secret-value-0123"
        out = redact.scrub({"kind": "Secret", "data": {"k": base64.b64encode(value.encode()).decode(), "bad": "%%%"}})
        assert out["data"] == {"k": f"REDACTED ({len(value)} bytes)", "bad": "REDACTED (3 bytes)"}
        assert redact.redact(f"log: {value}") == "log: REDACTED"
    finally:
        redact.forget_all()
