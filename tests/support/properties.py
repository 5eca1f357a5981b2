"""The hypothesis settings of the property tests: a fixed seed (derandomize), no deadline, and
TRAINERCTL_HYPOTHESIS_EXAMPLES examples each (default 200, what CI runs), as in
tests/cli/test_properties.py."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "200"))
PROPERTY = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
