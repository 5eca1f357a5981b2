"""The label that marks every object trainerctl installs: prune and uninstall find objects by it."""

from __future__ import annotations

import re
from typing import NamedTuple

from trainerctl.errors import InputError

_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class OwnerLabel(NamedTuple):
    key: str
    value: str

    @property
    def selector(self) -> str:
        return f"{self.key}={self.value}"

    def __str__(self) -> str:
        return self.selector

    @classmethod
    def parse(cls, text: str, where: str = "--owner-label") -> "OwnerLabel":
        """KEY=VALUE, checked as a Kubernetes label."""
        key, sep, value = text.partition("=") if isinstance(text, str) else ("", "", "")
        if not sep or not key:
            raise InputError(f"{where} {text!r}: expected KEY=VALUE")
        return cls(key, value).validated(where)

    def validated(self, where: str = "--owner-label") -> "OwnerLabel":
        key, value = self
        prefix, slash, name = key.rpartition("/")
        if (
            (slash and not prefix)
            or not name or len(name) > 63 or not _LABEL_NAME.match(name)
            or (prefix and (len(prefix) > 253 or not _LABEL_PREFIX.match(prefix)))
        ):
            raise InputError(f"{where} {f'{key}={value}'!r}: {key!r} is not a valid label key")
        if len(value) > 63 or (value and not _LABEL_NAME.match(value)):
            raise InputError(f"{where} {f'{key}={value}'!r}: {value!r} is not a valid label value")
        return self


# The Go operator's label, so that an operator install and ours are found the same way.
DEFAULT_OWNER_LABEL = OwnerLabel("platform.opendatahub.io/part-of", "trainer")
