"""The tests' waiting helpers (tests/support/waiting.py, tests/support/clock.py): a wait ends when
its condition holds or exactly at its deadline, never sooner and never a pause later, and says
what it waited for; a bounded run returns what its work returns or raises what it raises."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.support import waiting
from tests.support.clock import FakeClock
from tests.support.waiting import Not, finishes_within, wait_until

EXAMPLES = int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "200"))
PROPERTY = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(waiting, "time", fake)
    return fake


@PROPERTY
@given(timeout=st.floats(0, 60), interval=st.floats(0.2, 30), true_after=st.none() | st.floats(0, 90))
def test_a_wait_ends_when_its_condition_holds_or_at_its_deadline(timeout, interval, true_after):
    assume(true_after is None or abs(true_after - timeout) > 1e-6)  # not a tie at the deadline
    clock = FakeClock(start=0.0)
    original, waiting.time = waiting.time, clock
    try:
        start, calls = clock.now, []

        def condition():
            calls.append(clock.now - start)
            return true_after is not None and clock.now - start >= true_after and "done"

        if true_after is not None and true_after < timeout:
            assert wait_until(condition, timeout, "the state", interval) == "done"
            # Seen within one pause of holding, and the pauses never exceed `interval`.
            assert calls[-1] - true_after <= interval + 1e-9
        else:
            with pytest.raises(AssertionError, match=rf"timed out after {timeout:g}s waiting for the state"):
                wait_until(condition, timeout, "the state", interval)
            assert calls[-1] == pytest.approx(timeout, abs=1e-6)  # the last look is at the deadline
        pauses = [b - a for a, b in zip(calls, calls[1:])]
        assert all(p <= interval + 1e-9 for p in pauses), pauses
    finally:
        waiting.time = original


def test_a_timed_out_wait_names_what_it_waited_for_and_the_last_answer(clock):
    with pytest.raises(AssertionError) as failed:
        wait_until(lambda: Not("409 Conflict"), 5, "the Lease to be free")
    assert str(failed.value) == "timed out after 5s waiting for the Lease to be free (last: 409 Conflict)"


def test_an_error_in_the_condition_is_not_waited_out(clock):
    def condition():
        raise ValueError("not a state")

    with pytest.raises(ValueError, match="not a state"):
        wait_until(condition, 60, "anything")
    assert clock.now == 1000.0


def test_a_bounded_run_returns_raises_or_says_it_hung():
    assert finishes_within(30, "a quick one", lambda: 42) == 42
    with pytest.raises(KeyError):
        finishes_within(30, "a failing one", lambda: {}["missing"])
    never = threading.Event()
    with pytest.raises(AssertionError, match=r"a hung one was still running after 0.2s"):
        finishes_within(0.2, "a hung one", never.wait)
    never.set()
