"""The redaction layer, the text cleaner and the output streams (trainerctl.trust.redact, safe_text, stdio)."""

from __future__ import annotations

import base64
import io
import json

import pytest

from trainerctl.trust import redact
from trainerctl.trust.safe_text import clean, field_name
from trainerctl.trust.stdio import OutputError, RedactingWriter


@pytest.fixture(autouse=True)
def fresh_registry():
    redact.forget_all()
    yield
    redact.forget_all()


def test_a_registered_value_is_masked_in_every_form_it_can_take():
    token = "tok-3f9a8b7c6d5e4f3a2b1c\nsecond-line-0123456789"
    redact.register(token)
    for text in (token, repr(token), json.dumps(token), repr(token.encode()),
                 base64.b64encode(token.encode()).decode(), f"Bearer {token.splitlines()[0]}",
                 f"header b'Bearer {token}'"):
        assert "3f9a8b7c6d5e4f3a2b1c" not in redact.redact(text) and "0123456789" not in redact.redact(text), text


def test_short_values_are_not_registered():
    redact.register("true")
    assert redact.redact("true and 1234") == "true and 1234"
    assert not redact.registered()


@pytest.mark.parametrize("url, shown", [
    ("https://user:pa55w0rd@host/x", "https://user:xxxxx@host/x"),
    ("https://user:p@ss@host/x", "https://user:xxxxx@host/x"),  # the last '@' ends the user info, as in Go
    ("https://ghp_tokenAsUserName@github.com/o/r", "https://xxxxx@github.com/o/r"),
    ("ssh://git@github.com/o/r", "ssh://git@github.com/o/r"),
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ("see http://a:b@h1 and https://c:d@h2/p", "see http://a:xxxxx@h1 and https://c:xxxxx@h2/p"),
])
def test_urls_are_shown_as_kubectl_shows_them(url, shown):
    assert redact.redact_url(url) == shown
    assert redact.redact(url) == shown


@pytest.mark.parametrize("url, stored", [
    ("https://user:pw@host/x.git", "https://host/x.git"),
    ("https://token@host/x", "https://host/x"),
    ("ssh://git:pw@host/x", "ssh://git@host/x"),
    ("ssh://git@host/x", "ssh://git@host/x"),
    ("https://host/x", "https://host/x"),
])
def test_what_is_written_to_disk_has_no_user_info(url, stored):
    assert redact.strip_userinfo(url) == stored


def test_register_url_masks_the_password_elsewhere_too():
    redact.register_url("https://u:longpassword99@host/r")
    assert redact.redact("fatal: auth failed for longpassword99", urls=False) == "fatal: auth failed for REDACTED"


def test_clean_makes_one_printable_bounded_line():
    hostile = "\x1b[31mred\x1b[0m\nerror: forged\r\u202eevil\x07" + "x" * 5000
    line = clean(hostile, 200)
    assert "\x1b" not in line and "\n" not in line and "\r" not in line and "\u202e" not in line
    assert "U+001B" in line and len(line) < 220 and line.endswith("…(cut)")


@pytest.mark.parametrize("key, shown", [("namespace", "namespace"), ("spec.x-y_z/1", "spec.x-y_z/1"),
                                        ("root:*:20228:0:99999:7:::", "(a key that is not a field name)"),
                                        ("$6$salt$hash", "(a key that is not a field name)"),
                                        (42, "(a key that is not a field name)")])
def test_only_field_names_are_echoed(key, shown):
    assert field_name(key) == shown


def test_the_writer_sees_a_credential_split_across_writes():
    redact.register("split-secret-0123456789")
    raw = io.StringIO()
    w = RedactingWriter(raw, urls=True, is_stdout=False)
    w.write("a split-sec")
    w.write("ret-0123456789 b\n")
    w.write("https://u:pw@h/ tail")
    w.flush()
    assert raw.getvalue() == "a REDACTED b\nhttps://u:xxxxx@h/ tail"


def test_stdout_keeps_urls_byte_for_byte():
    raw = io.StringIO()
    w = RedactingWriter(raw, urls=False, is_stdout=True)
    w.write("value: postgres://user:pw@db/x\n")
    w.flush()
    assert raw.getvalue() == "value: postgres://user:pw@db/x\n"


def test_a_failing_stdout_is_one_error_then_silence():
    class Full(io.StringIO):
        def write(self, text):
            raise OSError(28, "No space left on device")

        def fileno(self):
            raise io.UnsupportedOperation

    w = RedactingWriter(Full(), urls=False, is_stdout=True)
    with pytest.raises(OutputError, match="no space left on device"):
        w.write("x\n")
    w.write("more\n")  # nothing more is tried
    w.flush()
