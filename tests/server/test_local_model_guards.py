"""The guard rails with the real bundled model (SmolLM2-135M through llama-cpp-python), through
a real Jupyter server with nothing configured, as a newcomer meets them: Fix offers a fix that
passes the checks (waiting for review) or one honest line; chat answers never echo their
context and carry their code blocks' verdicts; completion suggests code or nothing; the agent
says what to expect, asks before every step, takes few steps and never repeats one."""

from __future__ import annotations

import ast
import builtins
import json
from typing import Any

import pandas as pd
import pytest

from chapyter_ext.chat import parse_context
from chapyter_ext.complete.suggestions import _status, reads_as_prose
from chapyter_ext.context import describe_variables
from chapyter_ext.contract import code_block_key
from chapyter_ext.guards import REVIEW_NOTE, SnapshotNames, check_code
from chapyter_ext.local_model import LOCAL_MODEL_NAME
from chapyter_ext.parsing.fences import fence_spans
from tests.test_local_model import needs_local_model

from .agent_browser import Browser, agent_body, stdout

# Nothing configured: the bundled model answers. Greedy, so a run is repeatable; a long
# prompt on two busy cores may take a while before its first token.
NO_ENDPOINT = {"Chapyter": {"base_url": "", "api_key": "", "temperature": 0.0, "timeout": 120.0}}

pytestmark = [needs_local_model, pytest.mark.chapyter_config(NO_ENDPOINT)]

NAMESPACE: dict[str, Any] = {
    "total": 6,
    "nums": [1, 2, 3],
    "sales": pd.DataFrame({"city": ["Oslo", "Lima"], "price": [10.0, 20.0]}),
}


def snapshot(active: str = "") -> dict[str, Any]:
    """The chat's snapshot of a notebook holding NAMESPACE, as the browser sends it."""
    snap: dict[str, Any] = {
        "path": "guards.ipynb",
        "cell_count": 3,
        "variables": describe_variables(dict(NAMESPACE)),
    }
    if active:
        snap["active"] = {"index": 2, "type": "code", "source": active}
    return snap


def names() -> SnapshotNames:
    return SnapshotNames(parse_context(snapshot()).variables)


def error(ename: str, evalue: str, line: int = 1) -> dict[str, Any]:
    return {
        "ename": ename,
        "evalue": evalue,
        "traceback": [f"Cell In[4], line {line}\n----> {line} ...", f"{ename}: {evalue}"],
    }


async def fix(get_json, source: str, err: dict[str, Any]) -> dict[str, Any]:
    body = {
        "notebook": "guards.ipynb",
        "mode": "fix",
        "cell": {"id": "cell-c", "index": 2, "source": source},
        "error": err,
        "context": snapshot(source),
    }
    status, answer = await get_json(
        "chapyter-ext", "fix", method="POST", body=body, request_timeout=300
    )
    assert status == 200, answer
    return answer


async def test_fix_offers_a_checked_fix_for_review_or_one_honest_line(get_json):
    typo = await fix(get_json, "prnt(total)", error("NameError", "name 'prnt' is not defined"))
    assert typo["runnable"] is True and typo["code"] == "print(total)"
    assert typo["hold"] == REVIEW_NOTE  # review first: Accept only, never Accept and run
    assert "prnt" in typo["explanation"] and "print" in typo["explanation"]

    # What no cheap repair fixes goes to the model; whatever it writes, nothing that fails
    # the checks is offered: a fix that passes them, or the one line.
    for source, err in [
        ("x = int('abc')", error("ValueError", "invalid literal for int() with base 10: 'abc'")),
        (
            "half = nums / 2",
            error("TypeError", "unsupported operand type(s) for /: 'list' and 'int'"),
        ),
    ]:
        answer = await fix(get_json, source, err)
        print(f"{source!r}: {json.dumps(answer)}")
        if answer["runnable"]:
            verdict = check_code(answer["code"], names(), small=True, original=source, error=err)
            assert verdict.runnable, verdict.problem
            assert answer["hold"] == REVIEW_NOTE and answer["model"] == LOCAL_MODEL_NAME
        else:
            assert answer["code"] == ""
            assert answer["explanation"].startswith(
                "the small local model could not write a fix for this"
            )
            assert "\n" not in answer["explanation"]
            assert "configure an endpoint" in answer["explanation"]


@pytest.mark.parametrize(
    "question",
    [
        "Explain why the 3rd cell failed and how to fix it.",
        "Summarise the DataFrames in memory",
        "What is total?",
    ],
)
async def test_chat_answers_never_echo_the_context(post_chat, question):
    body = {
        "notebook": "guards.ipynb",
        "message": question,
        "context": {
            **snapshot("prnt(total)"),
            "last_error": {
                "cell_index": 2,
                "ename": "NameError",
                "evalue": "name 'prnt' is not defined",
                "traceback": ["NameError: name 'prnt' is not defined"],
            },
        },
    }
    response, reader = await post_chat(body, request_timeout=300)
    assert response.code == 200 and reader.names[-1] == "done", reader.events
    done = reader.first("done")
    text = done["text"]
    print(f"{question!r}: {text!r}")
    assert text.strip()
    for scaffold in ("<kernel-state>", "</kernel-state>", "The current state of the notebook"):
        assert scaffold not in text
    assert all(span.closed for span in fence_spans(text.split("\n")))
    # Every Python block carries the server's verdict, and what passed parses and reads
    # only names the kernel has.
    blocks = [
        "\n".join(text.split("\n")[span.start + 1 : span.end])
        for span in fence_spans(text.split("\n"))
        if span.lang in ("", "python", "py")
    ]
    blocks = [b for b in blocks if b.strip()]
    checks = {c["block_id"]: c for c in done.get("checks", [])}
    assert len(checks) == len({code_block_key(b) for b in blocks})
    for block in blocks:
        check = checks[code_block_key(block)]
        assert check["runnable"] == check_code(block, names(), small=True).runnable


PREFIXES = [
    ("total = sum(", ")"),
    ("for n in nums:\n    ", ""),
    ("def add(a, b):\n    ", ""),
    ("avg = sales['price'].", ""),
    ("x = 1\nprint(x)\n", ""),
]


@pytest.mark.parametrize(("prefix", "suffix"), PREFIXES)
async def test_completion_suggests_code_or_nothing(post_complete, ext_app, prefix, suffix):
    plan = await ext_app.completions.plan()  # starts the local model
    assert plan.local and plan.fim and plan.max_lines == 1
    variables = [
        {"name": v["name"], "type": v["type"], "summary": ""}
        for v in describe_variables(dict(NAMESPACE))
    ]
    body = {"prefix": prefix, "suffix": suffix, "editor": "e1", "variables": variables}
    response, reader = await post_complete(body, request_timeout=120)
    assert response.code == 200 and reader.names[-1] == "done", reader.events
    text = reader.first("done")["text"]
    print(f"{prefix!r} -> {text!r}")
    assert "".join(reader.tokens()) == text
    if not text:
        return  # nothing is an answer: no prose, no broken code
    assert "\n" not in text.strip("\n")
    assert not reads_as_prose(text) and not text.lstrip().startswith("#")
    assert _status(prefix + text) != "invalid"
    whole = prefix + text + suffix
    if _status(whole) == "complete":
        read = {n.id for n in ast.walk(ast.parse(whole)) if isinstance(n, ast.Name)}
        bound = {
            n.id
            for n in ast.walk(ast.parse(whole))
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        } | {a.arg for a in ast.walk(ast.parse(whole)) if isinstance(a, ast.arg)}
        known = set(NAMESPACE) | bound | set(dir(builtins))
        assert read <= known, read - known


async def test_the_agent_says_what_to_expect_asks_first_and_never_repeats(jp_fetch, get_json):
    browser = Browser(jp_fetch, get_json)
    reader = await browser.run(
        agent_body("What is the mean price in sales?", context=snapshot()),
        lambda step: stdout(""),  # each step ran, showed nothing
        timeout=600,
    )
    start = reader.first("start")
    assert start["model"] == LOCAL_MODEL_NAME and start["policy"] == "ask"
    notices = [data["message"] for name, data, _ in reader.events if name == "notice"]
    assert any("tiny bundled model" in n and "at most 3 simple steps" in n for n in notices)
    steps = browser.steps()
    print("steps:", [s.get("code") for s in steps], reader.first("done"))
    assert len(steps) <= 3
    assert all(s["needs_approval"] for s in steps if s["kind"] == "run_code")
    codes = [s.get("code", "").strip() for s in steps]
    assert all(a != b for a, b in zip(codes, codes[1:]))
    done = reader.first("done")
    assert "<kernel-state>" not in done["text"]
