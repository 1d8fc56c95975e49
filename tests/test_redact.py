"""chapyter_ext.redact: what looks like a secret never leaves, and text without one is cheap."""

from __future__ import annotations

import random
import re

import pytest

import chapyter_ext.context
from chapyter_ext.redact import (
    REDACTED,
    Redactor,
    TokenRedactor,
    env_secrets,
    is_secret_name,
    redact,
)
from chapyter_ext.redact.patterns import (
    _ENV_FIRST,
    _NAME_FIRST,
    _patterns,
    _redact_env_assignment,
    _redact_quoted,
    _sub_assignments,
)

OPENAI_KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
GITHUB_TOKEN = "ghp_" + "Zx9" * 12
ENV_SECRET = "env-only-secret-value-8d1e"  # matches no key pattern: only the env var gives it away


def test_context_reexports_redaction():
    # chapyter_ext.server and other modules call chapyter_ext.context.redact.
    assert chapyter_ext.context.redact is redact
    assert chapyter_ext.context.REDACTED == REDACTED == "<redacted>"


# ---------------------------------------------------------------------------------------------
# Names and patterns


@pytest.mark.parametrize(
    "name",
    ["api_key", "OPENAI_API_KEY", "token", "passwd", "secret", "auth", "credentials", "apiKey",
     "githubToken", "db_password", "AWS_SECRET_ACCESS_KEY", "hf_token", "openai_key",
     "SECRET_KEY", "client_secret", "slack_webhook_url", "pwd"],
)  # fmt: skip
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["author", "tokens", "max_tokens", "tokenizer", "key", "keys", "sort_key", "df", "x"]
)
def test_names_that_are_not_secret(name):
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "secret",
    [
        OPENAI_KEY,
        "sk-" + "a1B2" * 10,
        "AKIAIOSFODNN7EXAMPLE",
        GITHUB_TOKEN,
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "xoxb-123456789012-abcdefghijkl",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz",
        "sk_live_" + "a1B2c3D4e5F6",  # Stripe
        "rk_test_" + "Zz9" * 4,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "aZ3kP9qL2mN8xR4tV7wY1bC6dF0gH5jKs2Lp",  # random base64, no known prefix
        "d41d8cd98f00b204e9800998ecf8427e",  # hex
    ],
)
def test_key_shaped_strings_are_redacted(secret):
    out = redact(f"before {secret} after")
    assert secret not in out
    assert out == f"before {REDACTED} after"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def-123_xyz", f"Authorization: Bearer {REDACTED}"),
        ("postgres://bob:s3cr3t@db:5432/x", f"postgres://bob:{REDACTED}@db:5432/x"),
        ("https://h/api?token=abc123&page=2", f"https://h/api?token={REDACTED}&page=2"),
        ('password = "hunter22"', f'password = "{REDACTED}"'),
        ("cfg = {'api_key': 'abc'}", f"cfg = {{'api_key': '{REDACTED}'}}"),
        ('os.environ["MY_TOKEN"] = "v"', f'os.environ["MY_TOKEN"] = "{REDACTED}"'),
        ("OPENAI_API_KEY=abcdef", f"OPENAI_API_KEY={REDACTED}"),
        ("%env HF_TOKEN abcdef", f"%env HF_TOKEN {REDACTED}"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", REDACTED),
    ],
)
def test_secrets_recognised_by_their_surroundings(text, expected):
    assert redact(text) == expected


def test_secrets_side_by_side_are_all_redacted():
    # Each pattern runs over the whole text on its own: one key's match cannot hide another's.
    pem = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"
    text = f"glpat-abcdefghij0123456789{pem} {OPENAI_KEY}-{GITHUB_TOKEN}"
    assert redact(text) == f"{REDACTED}{REDACTED} {REDACTED}"


def test_things_that_are_not_secrets_survive():
    text = (
        "author = 'Jane Austen'; max_tokens = 2048; token_count; "
        "550e8400-e29b-41d4-a716-446655440000 /Users/JohnSmith/Projects/Data2024/RawFiles "
        "CustomerLifetimeValue2023AdjustedTotal very_long_column_name_with_numbers_2024_q4 "
        "print('token:', x) sk-learn-compatible-estimators"
    )
    assert redact(text) == text


def test_explicit_and_environment_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    monkeypatch.setenv("SOME_SERVICE_CREDENTIAL_BLOB", "Qm9yaW5nLW5vdC1hLXBhdHRlcm4")
    monkeypatch.setenv("NOT_NAMED_SECRET", "plainbutlongvalue_1234567")  # 17+ characters
    monkeypatch.setenv("PROJECT_DIR", "/home/me/some/long/project/dir")
    text = (
        f"{ENV_SECRET} Qm9yaW5nLW5vdC1hLXBhdHRlcm4 plainbutlongvalue_1234567 "
        "/home/me/some/long/project/dir mykey99"
    )
    out = redact(text, secrets=["mykey99"])
    assert out == f"{REDACTED} {REDACTED} {REDACTED} /home/me/some/long/project/dir {REDACTED}"


# ---------------------------------------------------------------------------------------------
# The environment


def test_environment_value_changed_in_place_is_seen(monkeypatch):
    """Same names, same sizes, another value: a cache keyed on less than the values leaks."""
    monkeypatch.setenv("CHAPYTER_TEST_TOKEN", "first-value-of-the-token")
    assert redact("x first-value-of-the-token y") == f"x {REDACTED} y"  # the cache is warm now
    monkeypatch.setenv("CHAPYTER_TEST_TOKEN", "other-value-of-the-token")
    assert redact("x other-value-of-the-token y") == f"x {REDACTED} y"
    assert "other-value-of-the-token" in env_secrets()
    assert "first-value-of-the-token" not in env_secrets()


def test_environment_variable_removed_is_no_longer_a_secret(monkeypatch):
    monkeypatch.setenv("CHAPYTER_TEST_PASSWORD", ENV_SECRET)
    assert redact(ENV_SECRET) == REDACTED
    monkeypatch.delenv("CHAPYTER_TEST_PASSWORD")
    assert redact(ENV_SECRET) == ENV_SECRET


# ---------------------------------------------------------------------------------------------
# The backwards search for assignments


# The forward regexes the backwards search stands for: they try every word of a text, which is
# what made redaction slow.
FORWARD_QUOTED = re.compile(
    r"\b([A-Za-z_][A-Za-z0-9_.\-]*)([\"']?\]?\s*(?:==|=|:)\s*[rRbBuU]{0,2})([\"'])"
    r"([^\"'\n\s,][^\"'\n]*)\3"
)
FORWARD_ENV = re.compile(r"\b([A-Z][A-Z0-9_]*)=([^\s\"']+)")
PIECES = [
    "api_key", "token", "x", "a.b.api_key", "9api_key", "-api_key", "pass_word", "é_token",
    "_token", "MY_TOKEN", "myTOKEN", "9_TOKEN", "X_KEY", "PATH", "author", "os.environ[", "'",
    '"', "]", " ", "\n", "=", "==", ":", ",", "r", "b", "'abc'", '"v"', "value", "<redacted>",
    "é", "×", "(", ")",
]  # fmt: skip


def forward_quoted(m: re.Match[str]) -> str:
    if not is_secret_name(m.group(1).rsplit(".", 1)[-1]):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}{m.group(3)}"


def forward_env(m: re.Match[str]) -> str:
    if not is_secret_name(m.group(1)) or m.group(2).startswith(REDACTED):
        return m.group(0)
    return f"{m.group(1)}={REDACTED}"


def test_assignments_found_backwards_are_those_of_the_forward_regex():
    p = _patterns()
    rng = random.Random(7)
    texts = [
        "x = 'a'=':Total=secret_key==r'abc' ",
        "ENV_TOKEN=x\n='token'] = \"w\"",
        "a.b.api_key: \"zz\" -api_key='x' 9api_key='x' token '] = 'w'",
    ]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14))) for _ in range(5000)]
    for text in texts:
        quoted = _sub_assignments(text, p.quoted, p.quoted_name, _NAME_FIRST, _redact_quoted)
        assert quoted == FORWARD_QUOTED.sub(forward_quoted, text), text
        env = _sub_assignments(text, p.env, p.env_name, _ENV_FIRST, _redact_env_assignment)
        assert env == FORWARD_ENV.sub(forward_env, text), text


def test_one_line_redacts_before_it_clips():
    from chapyter_ext.redact import Redactor, one_line

    redactor = Redactor(["sk-verbatim-SECRET-0001"])
    text = "x" * 490 + " key sk-verbatim-SECRET-0001\nnext line"
    line = one_line(text, redactor)
    assert "\n" not in line and len(line) == 500
    assert "sk-verb" not in line  # cut after redaction: no half key either
    assert one_line("  \n ", redactor) == "Unknown error."


def test_redact_traceback_keeps_the_trace_and_drops_the_secret():
    from chapyter_ext.redact import Redactor, redact_traceback

    redactor = Redactor(["sk-verbatim-SECRET-0002"])
    try:
        raise RuntimeError("failed with sk-verbatim-SECRET-0002")
    except RuntimeError as err:
        text = redact_traceback(err, redactor)
    assert "Traceback" in text and "RuntimeError: failed with <redacted>" in text
    assert "sk-verbatim-SECRET-0002" not in text


# ---------------------------------------------------------------------------------------------
# Known keys, also in part

KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"  # the configured key
HEADER = "hdr-SECRET-MARKER-456"  # an extra header value


def key_parts(secret: str, n: int = 8) -> list[str]:
    """The runs of ``n`` characters of ``secret`` past its "sk-proj-"-like prefix that hold a
    digit or both cases: none of them may show."""
    core = secret.split("-", 2)[-1] if secret.startswith("sk-proj-") else secret.split("-", 1)[1]
    runs = [core[i : i + n] for i in range(len(core) - n + 1)]
    return [r for r in runs if any(c.isdigit() for c in r) or not (r.isupper() or r.islower())]


@pytest.mark.parametrize(
    "shown",
    [
        KEY[len("sk-proj-") :],  # without its prefix
        KEY[-8:],  # "your key ending in …"
        KEY[-12:],
        KEY[14:24],  # a middle chunk
        KEY[:20],  # its start, prefix and all
        KEY[8:16],  # exactly 8
    ],
)
def test_a_part_of_a_known_key_is_redacted(shown):
    r = Redactor([KEY])
    out = r(f"the key ends with {shown}, see?")
    assert out == f"the key ends with {REDACTED}, see?"
    assert not any(part in out for part in key_parts(KEY))


def test_parts_inside_other_text_and_of_several_keys():
    r = Redactor([KEY, HEADER])
    text = f"x{KEY[10:30]}y and 'MARKER-456' and {HEADER[4:]}."
    out = r(text)
    assert out == f"x{REDACTED}y and '{REDACTED}' and {REDACTED}."


def test_what_is_no_part_of_a_key_stays():
    r = Redactor([KEY, HEADER, "acme-production-7f3a9c2e1b5d"])
    text = (
        f"{KEY[8:15]} (7 characters) sk-proj- keys; hdr-SECRET- words: SECRET-MARKER, "
        "production-ready, /home/me/production-v, sk-proj-xyz"
    )
    assert r(text) == text


def test_values_that_are_not_keys_are_only_redacted_whole():
    # A header value with spaces, a URL, a path: redacted whole, never in part.
    title, referer = "my notebook about sales 2024", "https://example.com/app/2024"
    r = Redactor([title, referer, "/home/me/secret/dir"])
    assert r(f"{title} and {referer}") == f"{REDACTED} and {REDACTED}"
    text = "notebook about sales 2024, example.com/app/2024, /home/me/secret"
    assert r(text) == text


def test_a_long_key_is_redacted_from_an_eighth_of_it():
    # sk-proj- keys run to 164 characters: runs of 19+ are redacted (the rest stays hidden).
    rng = random.Random(20)
    core = "".join(
        rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        for _ in range(156)
    )
    r = Redactor(["sk-proj-" + core])
    assert r(f"[{core[40:59]}]") == f"[{REDACTED}]"
    assert r(f"[{core[-19:]}]") == f"[{REDACTED}]"
    assert r(f"[{core[40:58]}]") == f"[{core[40:58]}]"


def test_a_part_split_over_two_tokens_never_shows():
    r = Redactor([KEY])
    text = f"Your key ends in …{KEY[-10:]}.\nUse `{KEY[8:]}` here, or {KEY[12:21]} there.\n"
    for cut in range(1, len(text)):
        for parts in ([text[:cut], text[cut:]], [text[:cut], text[cut : cut + 3], text[cut + 3 :]]):
            tokens = TokenRedactor(r)
            out = "".join(tokens.push(p) for p in parts) + tokens.flush()
            assert not any(part in out for part in key_parts(KEY)), (cut, out)
            assert out == r(text)


def test_the_marker_passes_unchanged():
    r = Redactor([KEY, HEADER])
    code = f'```python\nclient = OpenAI(api_key="{REDACTED}")\ntoken = {REDACTED}\n```\n'
    assert r(code) == code
    tokens = TokenRedactor(r)
    assert "".join(tokens.push(c) for c in code) + tokens.flush() == code


# ---------------------------------------------------------------------------------------------
# Paths are not secrets


def test_paths_are_not_secrets_but_passwords_are(monkeypatch, tmp_path):
    # PWD holds the secret part "pwd": its value used to turn every path into <redacted>/x.
    work = tmp_path / "project" / "work"
    (work / "keys").mkdir(parents=True)
    (work / "keys" / "sa.json").write_text("{}")
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    monkeypatch.setenv("OLDPWD", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "project"))
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "project" / ".venv"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "project" / "runtime"))
    monkeypatch.setenv("SECRETS_DIR", "/run/secrets/app")  # a secret name, a path value
    monkeypatch.setenv("AUTH_TOKEN_FILE", "keys/sa.json")  # relative, and it exists
    monkeypatch.setenv("MY_PWD", "S3cret-Passw0rd")  # "pwd" part, and not a path
    monkeypatch.setenv("DB_PASSWORD", "/hunter2x")  # a leading "/" does not make a path
    text = (
        f"FileNotFoundError: {work}/data.csv; cd {tmp_path}; "
        f"{tmp_path}/project/.venv/bin/python; see /run/secrets/app and keys/sa.json"
    )
    assert redact(text) == text
    assert redact("login S3cret-Passw0rd or /hunter2x") == f"login {REDACTED} or {REDACTED}"
    assert str(work) not in env_secrets() and "S3cret-Passw0rd" in env_secrets()


def test_variables_holding_paths_do_not_spread():
    from chapyter_ext.redact import secret_values

    variables = [("pwd", "/home/me/project"), ("password", "hunter2"), ("key_file", "~/k.json")]
    assert secret_values(variables) == ["hunter2"]
