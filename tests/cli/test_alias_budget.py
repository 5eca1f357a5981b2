"""An alias budget for every YAML input trainerctl reads outside kustomize: a kilobyte "billion
laughs" in a kubeconfig, trainerctl.yaml (`--config`), a lock file, an image overrides file or a
`--set` value is one line, exit 2, at once (document_bounds.load_yaml: the same budget as server
data, counted on the parser's events before anything is built). kustomize's own inputs keep
kustomize's bounds (tests/kustomize/test_kustomize_aliases.py).

Generated bombs (levels x aliases per level, always far past the budget) on each input kind.
Fixed seed; TRAINERCTL_HYPOTHESIS_EXAMPLES/10 bombs per kind (default 20, what CI runs)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.properties import EXAMPLES, PROPERTY
from trainerctl.cli import main
from trainerctl.trust.document_bounds import ALIAS_SLACK

BOMB_SAYS = f"aliases expand to more than {ALIAS_SLACK:,} nodes"


@st.composite
def bombs(draw) -> str:
    """A flow-style bomb, one value: `levels` anchors, each `width` aliases of the one before."""
    width = draw(st.integers(3, 12))
    levels = draw(st.integers(2, 12))
    while width ** levels <= 10 * ALIAS_SLACK:
        levels += 1
    scalar = draw(st.sampled_from(["x", "'lol'", "1", "true", "{a: b}"]))
    parts = [f"&a0 [{', '.join([scalar] * width)}]"]
    for i in range(1, levels):
        parts.append(f"&a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "[" + ", ".join(parts) + "]"


def _kubeconfig(bomb: str) -> str:
    return ("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
            "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
            f"preferences: {{laughs: {bomb}}}\n")


# input kind -> (file text from a bomb, command line given the file's path)
KINDS = {
    "kubeconfig": (_kubeconfig, lambda path: ["status", "--kubeconfig", path]),
    "trainerctl.yaml": (lambda bomb: f"namespace: kubeflow\nlaughs: {bomb}\n",
                        lambda path: ["install", "--config", path]),
    "lock": (lambda bomb: f"source: {bomb}\n", lambda path: ["render", "--lock", path, "--offline"]),
    "images-from": (lambda bomb: f"laughs: {bomb}\n", lambda path: ["render", "--images-from", path]),
}


def _one_line_exit_2(capsys, argv: list[str], bomb: str) -> str:
    built = _watch_builders(bomb)
    try:
        code = main(argv)
    finally:
        built.undo()
    err = capsys.readouterr().err
    assert code == 2, (argv[0], code, err)
    assert err.count("\n") == 1 and err.startswith("error: ") and BOMB_SAYS in err, err
    assert built.calls == [], f"{argv[0]}: refused only after {built.calls} was given the bomb"
    return err


class _watch_builders:
    """Records each PyYAML entry point that builds objects (load, compose) called on the bomb's text:
    refused before anything is expanded means none is (work counted, not timed)."""

    NAMES = ("load", "load_all", "safe_load", "safe_load_all", "full_load", "unsafe_load", "compose",
             "compose_all")

    def __init__(self, bomb: str):
        import yaml

        self.calls: list[str] = []
        self._saved = {name: getattr(yaml, name) for name in self.NAMES}
        for name, original in self._saved.items():
            setattr(yaml, name, self._watching(name, original, bomb))

    def _watching(self, name, original, bomb):
        def call(stream, *args, **kwargs):
            text = stream if isinstance(stream, str) else stream.decode() if isinstance(stream, bytes) else ""
            if bomb in text:  # stop here: expanding it would take the machine's memory
                self.calls.append(name)
                raise AssertionError(f"yaml.{name} was given the bomb")
            return original(stream, *args, **kwargs)

        return call

    def undo(self) -> None:
        import yaml

        for name, original in self._saved.items():
            setattr(yaml, name, original)


BOMB_PROPERTY = settings(PROPERTY, max_examples=max(10, EXAMPLES // 10))


@BOMB_PROPERTY
@given(kind=st.sampled_from(sorted(KINDS)), bomb=bombs())
def test_an_alias_bomb_in_any_yaml_input_is_one_line(tmp_path_factory, capsys, kind, bomb):
    text, argv = KINDS[kind]
    path = tmp_path_factory.mktemp("bomb") / "input.yaml"
    path.write_text(text(bomb))
    err = _one_line_exit_2(capsys, argv(str(path)), bomb)
    assert str(path) in err  # names the file


@BOMB_PROPERTY
@given(bomb=bombs())
def test_an_alias_bomb_in_a_set_value_is_one_line(capsys, bomb):
    err = _one_line_exit_2(capsys, ["render", "--set", f"manager.tolerations={bomb}"], bomb)
    assert "--set manager.tolerations" in err


def test_aliases_within_the_budget_are_read(tmp_path, capsys):
    """Anchors and aliases as people use them in a kubeconfig are fine."""
    path = tmp_path / "kc"
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                    "clusters: [{name: k, cluster: &cl {server: 'https://127.0.0.1:1'}}, {name: k2, cluster: *cl}]\n"
                    "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n")
    assert main(["status", "--kubeconfig", str(path)]) == 3  # read, then the server is unreachable
    assert BOMB_SAYS not in capsys.readouterr().err
