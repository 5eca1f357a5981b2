"""Reports and files as JSON or YAML text, masked and bounded as values first.

Every report is a `Reported`: one mapping (`to_dict`, or `shown` where -o shows it otherwise), its
JSON and YAML made here from it, and its own text (`text`); trainerctl.cli.output.emit prints one
in the format asked for, and nothing else serializes a report (tests/cli/test_layout.py).

Every report trainerctl prints with `-o json` / `-o yaml` (status, check, install, uninstall,
diff, upgrade-check, history, verify, images) and every JSON or YAML member of a support bundle is
serialized here, and nowhere else (tests/cli/test_masking.py), so no credential can slip through
in a form the serializer gives it (`\\u00e4`, `\\"`, a folded YAML line): values are masked in the
object (redact.scrub), then every string is cut at safe_text.MESSAGE_LIMIT (safe_text.bounded),
then it is written out. `whole=True` keeps strings uncut, for the objects a support bundle copies
as the cluster holds them (bounded by the API answer's own limit); they are masked all the same.
"""

from __future__ import annotations

import json
from typing import Any

from trainerctl.trust.redact import mask, scrub
from trainerctl.trust.safe_text import bounded


def safe(data: Any, *, whole: bool = False, secrets: bool = True) -> Any:
    """`data` as a report may show it: credentials masked, each string cut at MESSAGE_LIMIT unless
    `whole`. `secrets=False` leaves Secret-shaped values to the caller, who masked them already
    (`diff`, as kubectl diff does); registered credentials are masked all the same."""
    data = scrub(data) if secrets else mask(data)
    return data if whole else bounded(data)


def json_text(data: Any, *, whole: bool = False, **options: Any) -> str:
    """`data` made safe, as indented JSON ending in a newline (`options` go to json.dumps)."""
    return json.dumps(safe(data, whole=whole), indent=2, **options) + "\n"


def yaml_text(data: Any, *, whole: bool = False, secrets: bool = True, **options: Any) -> str:
    """`data` made safe, as block YAML, by default in the order of its keys (`options` go to
    yaml.safe_dump)."""
    import yaml

    options.setdefault("sort_keys", False)
    return yaml.safe_dump(safe(data, whole=whole, secrets=secrets), **options)


class Reported:
    """A report: `to_dict()` (what it holds), `shown()` (what -o json and -o yaml show: to_dict
    unless the report leaves something out), `text()`; its JSON and YAML are made here, once."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    def shown(self) -> Any:
        return self.to_dict()

    def to_json(self) -> str:
        return json_text(self.shown())

    def to_yaml(self) -> str:
        return yaml_text(self.shown())

    def text(self) -> str:
        raise NotImplementedError
