"""Inline completion's pure parts: request parsing, the prompt, cleaning the suggestion as it
grows; and the loopback server's /v1/completions (fill-in-the-middle)."""

from __future__ import annotations

import json

import openai
import pytest

from chapyter_ext.complete.cleaner import SuggestionCleaner
from chapyter_ext.complete.service import (
    CURSOR,
    CompletionError,
    CompletionRequest,
    build_prompt,
    cells_block,
    names_block,
)
from chapyter_ext.redact import Redactor
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply


def clean(deltas: list[str], prefix: str = "", suffix: str = "", *, chat: bool = True) -> str:
    """Feed deltas one by one; check the shown text only grows; return the whole suggestion."""
    cleaner = SuggestionCleaner(prefix, suffix, chat=chat)
    shown = ""
    for delta in deltas:
        shown += cleaner.push(delta)
        assert cleaner.text == shown
    shown += cleaner.finish()
    assert cleaner.text == shown
    return shown


def every_split(text: str) -> list[list[str]]:
    return [[text[:i], text[i:]] for i in range(len(text) + 1)] + [list(text)]


@pytest.mark.parametrize(
    ("raw", "prefix", "suffix", "expected"),
    [
        ("upby('city').mean()", "df.gro", "", "upby('city').mean()"),
        # An echo of the line being typed is dropped.
        ("df.groupby('city')", "x = 1\ndf.gro", "", "upby('city')"),
        # Fences around the answer are dropped.
        ("```python\nprint(df.shape)\n```\nSome prose", "", "", "print(df.shape)"),
        # What duplicates the text after the cursor is dropped.
        ("df['a'])", "print(", ")", "df['a']"),
        ("a, b)\n", "f(", ")\nnext_line()", "a, b"),
        # ... but a bracket the suggestion needs is kept.
        ("[x for x in xs])", "print(sorted(", ")", "[x for x in xs])"),
        ("[x for x in xs]))", "print(sorted(", ")", "[x for x in xs])"),
        # The model rewrote the line after the cursor: cut there.
        ("x = 1\ny = 2\nprint(total)\nmore", "", "\nprint(total)\n", "x = 1\ny = 2"),
        # No double space after "x = ".
        (" 42", "x = ", "", "42"),
        ("", "x", "", ""),
    ],
)
def test_cleaner(raw: str, prefix: str, suffix: str, expected: str) -> None:
    for deltas in every_split(raw):
        assert clean(deltas, prefix, suffix) == expected, deltas


def test_cleaner_stops_at_max_lines_and_says_done() -> None:
    cleaner = SuggestionCleaner("", "", chat=False, max_lines=2)
    shown = cleaner.push("a = 1\nb = 2\nc = 3\n")
    assert cleaner.done
    assert shown + cleaner.finish() == "a = 1\nb = 2"


def test_cleaner_fim_keeps_text_that_looks_like_an_echo() -> None:
    # A FIM model continues exactly: "df" after "df" is meant.
    assert clean(["df.head()"], "x = df", "", chat=False) == "df.head()"


def test_cleaner_streams_before_the_end() -> None:
    cleaner = SuggestionCleaner("df.", "", chat=True)
    assert cleaner.push("groupby(") == "groupby("
    assert cleaner.push("'a')") == "'a')"


def test_parse_bounds_and_validates() -> None:
    body = {
        "prefix": "x" * 10_000,
        "suffix": "y" * 5000,
        "cells_above": [f"c{i}" for i in range(50)],
        "variables": [{"name": "df", "type": "DataFrame", "summary": "a, b"}],
        "editor": "e" * 500,
    }
    request = CompletionRequest.parse(body)
    assert len(request.prefix) == 6000 and len(request.suffix) == 2000
    assert request.cells_above[-1] == "c49" and len(request.cells_above) == 20
    assert len(request.editor) == 200
    for bad in (
        {},
        {"prefix": 1},
        {"prefix": "", "cells_above": [1]},
        {"prefix": "", "variables": 3},
    ):
        with pytest.raises(CompletionError):
            CompletionRequest.parse(bad)


def test_names_and_cells_stay_in_budget() -> None:
    variables = [{"name": f"v{i}", "type": "int", "summary": str(i)} for i in range(100)]
    block = names_block(variables, 100)
    assert len(block) <= 100 and block.startswith("v0: int = 0")
    cells = ["import pandas as pd", "df = pd.read_csv('a.csv')", "x" * 5000]
    assert cells_block(cells, 100).endswith("x" * 50)  # the nearest cell's end, at least
    assert cells_block(cells[:2], 100) == "import pandas as pd\n\ndf = pd.read_csv('a.csv')"


def test_prompt_has_cursor_context_and_names_redacted() -> None:
    secret = "sk-live-0123456789abcdefSECRET"
    request = CompletionRequest.parse(
        {
            "prefix": f"key = '{secret}'\ndf.",
            "suffix": "\nprint(df)",
            "cells_above": ["import pandas as pd"],
            "variables": [{"name": "df", "type": "DataFrame", "summary": "columns: city, temp"}],
        }
    )
    chat = build_prompt(request, fim=False, local=False, budget=2000, redactor=Redactor([secret]))
    text = json.dumps(chat.messages)
    assert f"df.{CURSOR}\\nprint(df)" in text
    assert "columns: city, temp" in text and "import pandas as pd" in text
    assert secret not in text
    fim = build_prompt(request, fim=True, local=False, budget=2000, redactor=Redactor([secret]))
    assert fim.prompt.endswith("df.") and fim.suffix == "\nprint(df)"
    assert "# df: DataFrame = columns: city, temp" in fim.prompt and secret not in fim.prompt


def test_loopback_serves_fim_streamed_and_whole() -> None:
    with FakeOpenAIServer() as server:
        server.route("def add", Reply(content="a + b", chunk_size=2))
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        stream = client.completions.create(
            model="fake-model", prompt="def add(a, b):\n    return ", suffix="\n", stream=True
        )
        assert "".join(chunk.choices[0].text for chunk in stream) == "a + b"
        whole = client.completions.create(model="fake-model", prompt="def add(", suffix=")")
        assert whole.choices[0].text == "a + b"
        assert [r.path for r in server.requests] == ["/v1/completions"] * 2
        assert server.requests[0].body["suffix"] == "\n"
        # Chat completions answer as before.
        chat = client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "hi"}]
        )
        assert chat.choices[0].message.content.startswith("```python")


def test_kernel_names_list_columns_keys_and_signatures() -> None:
    import pandas as pd

    from chapyter_ext.context import completion_names
    from chapyter_ext.context.kernel_state import COMPLETION_NAMES

    def scale(values, factor=2):
        return values

    secret = "sk-live-COMPLETION0123456789abcdef"
    namespace = {
        "pd": pd,
        "weather": pd.DataFrame({"city": ["Oslo"], "temp_c": [3]}),
        "config": {"threshold": 1},
        "scale": scale,
        "_hidden": 1,
        "In": [],
        # IPython's own helpers and a secret: the chat's filter and redaction apply.
        "get_ipython": lambda: None,
        "exit": object(),
        "API_KEY": secret,
        "settings": {secret: 1},
        "shown": "hidden value",
    }
    names = {n["name"]: n for n in completion_names(namespace, {"shown": "hidden value"})}
    assert set(names) == {"weather", "config", "scale", "API_KEY", "settings"}
    assert names["weather"]["summary"] == "1 rows; columns: city, temp_c"
    assert names["config"]["summary"] == "1 keys: 'threshold'"
    assert names["scale"]["summary"] == "scale(values, factor=2)"
    assert names["API_KEY"]["summary"] == "<redacted>"
    assert (
        secret not in names["settings"]["summary"] and "<redacted>" in names["settings"]["summary"]
    )
    many = {f"v{i}": i for i in range(500)}
    listed = completion_names(many)
    assert len(listed) == COMPLETION_NAMES and listed[0]["name"] == "v499"  # newest first


def test_suggestion_redactor_streams_code_but_never_half_a_secret() -> None:
    from chapyter_ext.server.complete_handlers import SuggestionRedactor

    secret = "sk-live-0123456789abcdefSECRET"
    redactor = SuggestionRedactor(Redactor([secret]))
    # Code flows without waiting for a space...
    assert redactor.push("upby('city').mean()") == "upby('city').mean()"
    # ...but an open string literal waits until it closes,
    assert redactor.push("\nkey = 'sk-live-0123") == "\nkey = "
    assert redactor.push("456789abcdefSEC") == ""
    # and what comes out is redacted whole.
    out = redactor.push("RET'\nprint(key)") + redactor.flush()
    assert secret not in out and "sk-live" not in out
    assert out.startswith("'<redacted>'") and out.endswith("print(key)")
