"""Fixtures every e2e module shares."""

from __future__ import annotations

import pytest

from tests.support import e2e as h


@pytest.fixture
def clean_slate(tctl, api):
    """No Trainer before the test (whatever an earlier failure left) and none after it."""
    h.cleanup_trainer(tctl, api)
    yield
    h.cleanup_trainer(tctl, api)
