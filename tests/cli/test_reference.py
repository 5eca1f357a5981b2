"""The command reference (docs/reference/) is what scripts/gen_reference.py makes of the command
line as it is now: a flag, a help text, a default or a command changed without regenerating it
fails here, naming the page and the command."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator():
    return _generator()


def test_the_reference_is_current(generator):
    problems = generator.stale(REFERENCE)
    assert problems == [], "\n".join(f"{line}: run `python scripts/gen_reference.py`" for line in problems)


def test_stale_names_the_command_to_regenerate(generator, tmp_path):
    pages = generator.pages()
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
    assert generator.stale(tmp_path) == []
    (tmp_path / "status.md").write_text(pages["status.md"].replace("--no-wait", "--wait"))
    (tmp_path / "verify.md").unlink()
    (tmp_path / "gone.md").write_text("")
    assert generator.stale(tmp_path) == ["docs/reference/status.md (trainerctl status) is out of date",
                                         "docs/reference/verify.md (trainerctl verify) is missing",
                                         "docs/reference/gone.md documents no command"]


def test_every_command_and_flag_is_in_the_reference(generator):
    import typer.main

    from trainerctl.cli import full_app
    from trainerctl.settings import setting_of

    pages = generator.pages()
    for name, command in typer.main.get_command(full_app()).commands.items():
        page = pages[f"{name}.md"]
        assert f"[{name}]({name}.md)" in pages["README.md"]
        for param in command.params:
            shown = (param.metavar or "") if param.param_type_name == "argument" else param.opts[-1]
            assert f"`{shown}`" in page, f"{name}: {shown} not in its page"
            how = setting_of(param.name)
            if how is not None and how.key and name != "kustomize":  # kustomize reads no trainerctl.yaml
                assert f"`{how.key}`" in page, f"{name}: {shown}'s trainerctl.yaml key not in its page"
            if how is not None and how.env and name != "kustomize":
                assert f"`{how.env}`" in page, f"{name}: {shown}'s environment variable not in its page"


def test_the_defaults_column(generator):
    status, install = generator.pages()["status.md"], generator.pages()["install.md"]
    assert re.search(r"\| `--wait`, `--no-wait` \| .* \| `--no-wait` \|", status)
    assert re.search(r"\| `--wait`, `--no-wait` \| .* \| `--wait` \|", install)
    assert re.search(r"\| `--output`, `-o` `FORMAT` \| .* \| text \|", status)
    assert re.search(r"\| `--timeout` `SECONDS` \| .* \| `300` \| `timeout` \| — \|", status)
    assert generator.said_default("x (default: a (b) c).") == "a (b) c"
    assert generator.said_default("no default here.") is None


def test_every_link_in_the_reference_resolves():
    pages = sorted(REFERENCE.glob("*.md"))
    assert len(pages) > 10
    for page in pages:
        for target in LINK.findall(page.read_text()):
            assert (page.parent / target.partition("#")[0]).exists(), f"{page.name} links to {target}"
