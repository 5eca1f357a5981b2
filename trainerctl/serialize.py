"""Reports and files as JSON or YAML text, redacted as values first (redact.scrub).

Every report trainerctl prints with `-o json` / `-o yaml` (status, check, install, uninstall,
diff, upgrade-check) and every JSON or YAML member of a support bundle is serialized here, so
no credential can slip through in a form the serializer gives it (`\\u00e4`, `\\"`, a folded YAML
line): values are blanked in the object, then it is written out.
"""

from __future__ import annotations

import json
from typing import Any

from trainerctl.redact import scrub


def json_text(data: Any, **options: Any) -> str:
    """`data` redacted, as indented JSON ending in a newline (`options` go to json.dumps)."""
    return json.dumps(scrub(data), indent=2, **options) + "\n"


def yaml_text(data: Any, **options: Any) -> str:
    """`data` redacted, as block YAML in the order of its keys (`options` go to yaml.safe_dump)."""
    import yaml

    return yaml.safe_dump(scrub(data), sort_keys=False, **options)
