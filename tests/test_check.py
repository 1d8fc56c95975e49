"""``chapyter-ext check``: findings on crafted notebooks, exit codes, and the pre-commit hook."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
import yaml

from chapyter_ext.cli import main
from chapyter_ext.contract import (
    accepted_change,
    code_sha256,
    find_generated_index,
    generated_metadata,
    link_generated,
    parse_prompt,
    prompt_metadata,
    request_sha256,
)
from chapyter_ext.notebook_check import check_notebook

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ipynb"))
CHAPYTER_EXT = shutil.which("chapyter-ext", path=os.path.dirname(sys.executable))


def cell(kind: str, source: str, cell_id: str, chapyter: dict | None = None):
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    c = new(source)
    c["id"] = cell_id
    if chapyter is not None:
        c["metadata"]["chapyter"] = chapyter
    return c


def linked_pair(prompt_id: str, request: str, code: str, *, model: str = "gpt-4o-mini", line=""):
    """A prompt and its generated cell, with exactly the metadata the frontend writes."""
    provenance = generated_metadata(
        prompt_sha256=request_sha256(request),
        model=model,
        endpoint="api.openai.com",
        parameters={"temperature": 0.2, "max_tokens": 2048},
        context_chars=120,
        attempts=1,
        code=code,
        created="2025-01-01T00:00:00Z",
    )
    generated_id = f"{prompt_id}-code"
    prompt = cell("code", f"%%ai{line}\n{request}", prompt_id, prompt_metadata(generated_id))
    generated = cell("code", code, generated_id, link_generated(provenance, prompt_id))
    return prompt, generated


def notebook(*cells) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=list(cells))


def clean() -> nbformat.NotebookNode:
    p1, g1 = linked_pair("ask-sum", "sum the revenue", "print(sales.revenue.sum())")
    p2, g2 = linked_pair("ask-plot", "plot it", "sales.plot()", model="qwen", line=" -m qwen")
    return notebook(
        cell("markdown", "# Title", "title"), cell("code", "x = 1", "setup"), p1, g1, p2, g2
    )


def messages(nb, **options) -> list[str]:
    return [str(f) for f in check_notebook(nb, "nb.ipynb", **options)]


# -- link rules: the same as links.ts ----------------------------------------------------


def test_metadata_mirrors_the_frontend():
    prompt, generated = linked_pair("p", "plot x", "plt.plot(x)")
    assert prompt.metadata.chapyter == {"schema": 1, "role": "prompt", "generated_cell": "p-code"}
    assert list(generated.metadata.chapyter) == [
        "schema",
        "role",
        "source",
        "generated_from",
        "prompt_sha256",
        "model",
        "endpoint",
        "parameters",
        "created",
        "context_chars",
        "attempts",
        "code_sha256",
        "edited",
    ]
    assert generated.metadata.chapyter["code_sha256"] == code_sha256("plt.plot(x)")


def test_parse_prompt_like_prompt_ts():
    parsed = parse_prompt("\n%%ai --no-run -m small\r\nplot x\r\n")
    assert parsed.model == "small" and parsed.options.no_run and not parsed.options.run
    assert parsed.request == "plot x\n"
    assert parse_prompt("%%ai --model=big\nq").model == "big"
    assert parse_prompt("%%air\nq") is None
    assert parse_prompt("  %%ai\nq") is None  # the magic must start its line, as in prompt.ts
    assert parse_prompt("# %%ai\nq") is None


def test_a_copied_prompt_does_not_take_over_the_generated_cell():
    prompt, generated = linked_pair("p", "plot x", "plt.plot(x)")
    copy = cell("code", prompt.source, "p-copy", dict(prompt.metadata.chapyter))
    cells = [prompt, generated, copy]
    assert find_generated_index(cells, 0) == 1
    assert find_generated_index(cells, 2) == -1


def test_a_stale_link_falls_back_to_the_back_link():
    prompt, generated = linked_pair("p", "plot x", "plt.plot(x)")
    prompt.metadata.chapyter["generated_cell"] = "gone"
    assert find_generated_index([prompt, cell("code", "y", "other"), generated], 0) == 2


# -- findings ------------------------------------------------------------------------------


def test_clean_notebook_has_no_findings():
    assert messages(clean()) == []


def test_prompt_without_generated_cell():
    nb = clean()
    nb.cells.insert(2, cell("code", "%%ai\nload the data", "ask-load"))
    assert messages(nb) == [
        "nb.ipynb:cell 3 (ask-load): error: %%ai prompt without a generated cell: "
        "run it to generate one"
    ]


def test_changed_request_is_an_error():
    nb = clean()
    nb.cells[2].source = "%%ai\nsum the revenue per region"
    (line,) = messages(nb)
    assert line.startswith("nb.ipynb:cell 4 (ask-sum-code): error: prompt (cell 3) changed")


def test_request_hash_ignores_what_the_frontend_ignores():
    nb = clean()
    nb.cells[2].source = "%%ai\r\n\nsum the revenue   \n\n"
    assert messages(nb) == []


def test_other_model_is_an_error():
    nb = clean()
    nb.cells[4].source = "%%ai -m llama\nplot it"
    (line,) = messages(nb)
    assert "cell 6 (ask-plot-code): error:" in line
    assert "'llama'" in line and "'qwen'" in line


def test_hand_edit_is_a_warning_or_with_strict_an_error():
    nb = clean()
    nb.cells[3].source += "\nprint('checked')"
    (line,) = messages(nb)
    assert line.startswith("nb.ipynb:cell 4 (ask-sum-code): warning: code edited by hand")
    (strict,) = messages(nb, strict=True)
    assert ": error: code edited by hand" in strict


def test_orphan_only_when_asked():
    nb = clean()
    del nb.cells[2]  # the prompt of ask-sum-code
    assert messages(nb) == []
    assert messages(nb, orphans=True) == [
        "nb.ipynb:cell 3 (ask-sum-code): warning: generated cell whose %%ai prompt is gone"
    ]


def test_copied_generated_cell_would_run_twice():
    nb = clean()
    copy = nbformat.from_dict(dict(nb.cells[3]))
    copy["id"] = "pasted"
    nb.cells.append(copy)
    (line,) = messages(nb)
    assert line.startswith("nb.ipynb:cell 7 (pasted): warning: copy of a generated cell")


def test_unreadable_magic_line_is_an_error_not_a_crash():
    prompt, generated = linked_pair("p", "plot x", "x = 1", line=" --regen")
    assert messages(notebook(prompt, generated)) == [
        "nb.ipynb:cell 1 (p): error: Cannot read the %%ai line: unknown option '--regen'. "
        "Valid options: --model NAME (or -m NAME), --run, --no-run, --no-context, --regenerate."
    ]


def test_code_that_failed_the_syntax_check_is_an_error_until_fixed():
    prompt, generated = linked_pair("p", "plot x", "x = (")
    generated.metadata.chapyter["check"] = "syntax-error"
    generated.metadata.chapyter["check_error"] = "The generated code has a syntax error"
    assert messages(notebook(prompt, generated)) == [
        "nb.ipynb:cell 2 (p-code): error: code from cell 1 failed the syntax check when "
        "generated (The generated code has a syntax error): fix it by hand or run the prompt "
        "again"
    ]
    generated.source = "x = (1)"  # fixed by hand: now an edit like any other
    assert messages(notebook(prompt, generated)) == [
        "nb.ipynb:cell 2 (p-code): warning: code edited by hand since it was generated from "
        "cell 1 (regenerating would replace the edits)"
    ]


@pytest.mark.parametrize("kind", ["fix", "edit", "retry"])
def test_an_accepted_change_is_up_to_date_and_no_hand_edit(kind):
    prompt, generated = linked_pair("p", "plot x", "x = (")
    generated.metadata.chapyter["check"] = "syntax-error"
    generated.metadata.chapyter["check_error"] = "'(' was never closed"
    generated.source = "x = (1)"
    generated.metadata.chapyter = accepted_change(
        generated.metadata.chapyter,
        kind=kind,
        model="other-model",
        code=generated.source,
        request_sha256=request_sha256("SyntaxError: '(' was never closed"),
    )
    nb = notebook(prompt, generated)
    assert messages(nb, strict=True, orphans=True) == []
    assert generated.metadata.chapyter["generated_from"] == "p"
    generated.source += "\nprint(x)"  # a hand edit after the accepted change still counts
    assert messages(nb) == [
        f"nb.ipynb:cell 2 (p-code): warning: code edited by hand since its accepted {kind} "
        "(generated from cell 1) (regenerating would replace the edits)"
    ]


def test_a_hand_written_cell_changed_by_a_fix_is_no_finding():
    metadata = accepted_change(None, kind="fix", model="m", code="y = 2", request_sha256="0" * 64)
    nb = notebook(cell("code", "y = 2", "hand", metadata))
    assert messages(nb, strict=True, orphans=True) == []


def test_chat_cells_have_no_prompt_and_are_fine():
    provenance = generated_metadata(
        prompt_sha256="",
        model="m",
        endpoint="h",
        parameters={"temperature": 0.2, "max_tokens": 10},
        context_chars=0,
        attempts=1,
        code="x = 2",
        source="chat",
    )
    nb = notebook(cell("code", "x = 2", "from-chat", provenance))
    assert messages(nb, orphans=True, strict=True) == []


# -- the command ---------------------------------------------------------------------------


def write(nb, path: Path) -> str:
    nbformat.write(nb, path)
    return str(path)


def test_cli_exit_codes_and_summary(tmp_path, capsys):
    good = write(clean(), tmp_path / "good.ipynb")
    edited = clean()
    edited.cells[3].source = "print('mine')"
    edited_path = write(edited, tmp_path / "edited.ipynb")
    missing = clean()
    missing.cells.append(cell("code", "%%ai\nmore", "ask-more"))
    missing_path = write(missing, tmp_path / "missing.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")

    assert main(["check", good]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "chapyter-ext check: 1 notebook, AI cells up to date, no secrets found."
    ]
    assert main(["check", good, edited_path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{edited_path}:cell 4 (ask-sum-code): warning:")
    assert out[-1] == "chapyter-ext check: 2 notebooks, 0 errors, 1 warning."
    assert main(["check", "--strict", edited_path]) == 1
    capsys.readouterr()
    assert main(["check", missing_path, str(tmp_path / "broken.ipynb")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"{missing_path}:cell 7 (ask-more): error: %%ai prompt without a generated cell: "
        "run it to generate one"
    )
    assert out[1].startswith(f"{tmp_path / 'broken.ipynb'}: error: not a readable notebook")
    assert out[-1] == "chapyter-ext check: 1 notebook, 2 errors, 0 warnings."


def test_console_script(tmp_path):
    bad = clean()
    bad.cells[2].source = "%%ai\nsomething else"
    path = write(bad, tmp_path / "bad.ipynb")
    run = subprocess.run([CHAPYTER_EXT, "check", path], capture_output=True, text=True)
    assert run.returncode == 1
    assert "error: prompt (cell 3) changed" in run.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_committed_examples_are_up_to_date(example, capsys):
    assert main(["check", "--strict", "--orphans", str(example)]) == 0, capsys.readouterr().out


# -- as a pre-commit hook -------------------------------------------------------------------


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=check,
    )


def hook_repo(
    tmp_path: Path, hook: dict
) -> tuple[Path, Callable[[str], subprocess.CompletedProcess]]:
    """A git repository with ``hook`` installed as a project that has chapyter-ext installed
    would use it (a local hook, same fields), and ``commit(message)`` of everything in it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    local = {**hook, "language": "system"}
    (repo / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]})
    )
    bin_dir = os.path.dirname(sys.executable)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run([os.path.join(bin_dir, "pre-commit"), "install"], cwd=repo, env=env, check=True)

    def commit(message: str) -> subprocess.CompletedProcess:
        git(repo, "add", "-A")
        return subprocess.run(
            ["git", "-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-m", message],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        )

    return repo, commit


def test_pre_commit_hook_blocks_a_stale_notebook(tmp_path):
    hook, secrets_hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "chapyter-ext-check"
    assert hook["entry"] == "chapyter-ext check"
    assert secrets_hook["id"] == "chapyter-ext-secrets"
    assert secrets_hook["entry"] == "chapyter-ext check --secrets-only"
    for each in (hook, secrets_hook):
        assert each["types"] == ["jupyter"] and each["language"] == "python"
    repo, commit = hook_repo(tmp_path, hook)

    stale = clean()
    stale.cells[2].source = "%%ai\nsum the revenue per month"
    write(stale, repo / "analysis.ipynb")
    blocked = commit("stale")
    assert blocked.returncode != 0
    assert "chapyter-ext" in blocked.stdout + blocked.stderr
    assert "analysis.ipynb:cell 4 (ask-sum-code): error: prompt (cell 3) changed" in (
        blocked.stdout + blocked.stderr
    )
    assert git(repo, "rev-parse", "--verify", "HEAD", check=False).returncode != 0

    write(clean(), repo / "analysis.ipynb")
    passed = commit("up to date")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert git(repo, "log", "--oneline").stdout.count("\n") == 1


# -- with nbstripout (docs/reproducibility.md) ---------------------------------------------------


def test_nbstripout_needs_keep_id_to_keep_the_links():
    from nbstripout import strip_output

    example = ROOT / "examples" / "sales_analysis.ipynb"

    def stripped(**keep) -> nbformat.NotebookNode:
        nb = nbformat.read(example, as_version=4)
        options = {"keep_output": False, "keep_count": False, "keep_id": False, **keep}
        return strip_output(nb, extra_keys=NBSTRIPOUT_DEFAULT_KEYS, **options)

    # By default nbstripout renumbers cell ids: every link breaks.
    broken = messages(stripped())
    assert broken and all("without a generated cell" in line for line in broken)
    # --keep-id: the chapyter metadata is kept as it is, outputs go.
    kept = stripped(keep_id=True)
    assert messages(kept) == []
    assert all(not c.get("outputs") for c in kept.cells if c.cell_type == "code")
    # --keep-id --keep-output, for committed examples: nothing but volatile keys goes.
    assert messages(stripped(keep_id=True, keep_output=True)) == []


# nbstripout's own defaults (its --extra-keys adds to these): none is chapyter's.
NBSTRIPOUT_DEFAULT_KEYS = [
    "metadata.signature",
    "metadata.widgets",
    "cell.metadata.collapsed",
    "cell.metadata.ExecuteTime",
    "cell.metadata.execution",
    "cell.metadata.heading_collapsed",
    "cell.metadata.hidden",
    "cell.metadata.scrolled",
]


# -- the notebook's own metadata: its chat id and the chat saved in it --------------------------


def stored_chat(**changes) -> dict:
    message = {"id": "m1", "role": "user", "content": "q", "model": "m", "status": "complete"}
    chat = {"schema": 1, "saved": "2025-01-01T00:00:00.000Z", "current": "c1", "truncated": False}
    chat["chats"] = [{"id": "c1", "created": "", "messages": [message]}]
    return {**chat, **changes}


def test_a_valid_stored_chat_and_id_are_no_finding():
    nb = clean()
    nb.metadata["chapyter"] = {"notebook_id": "ab" * 16, "chat": stored_chat()}
    assert messages(nb, strict=True) == []


def test_a_stored_chat_that_breaks_the_schema_is_an_error():
    nb = clean()
    broken = stored_chat()
    broken["chats"][0]["messages"] += [
        {"id": "m2", "role": "system", "content": "x"},
        {"id": "m3", "role": "user", "content": 5},
        {"role": "user", "content": "no id"},
        {"id": "m5", "role": "user", "content": "x", "status": "thinking"},
    ]
    nb.metadata["chapyter"] = {"chat": broken, "notebook_id": "not-an-id"}
    assert messages(nb) == [
        "nb.ipynb: warning: notebook metadata chapyter.notebook_id is not 32 to 64 lower-case "
        "hex digits: the chat cannot find this notebook after a move",
        "nb.ipynb: error: chat saved in the notebook metadata: stored chat 1, message 2 has a "
        "role other than user or assistant",
        "nb.ipynb: error: chat saved in the notebook metadata: stored chat 1, message 3 has no "
        "text content",
        "nb.ipynb: error: chat saved in the notebook metadata: stored chat 1, message 4 has no id",
        "nb.ipynb: error: chat saved in the notebook metadata: 1 more problems",
    ]
    nb.metadata["chapyter"] = {"chat": stored_chat(schema=2)}
    assert messages(nb) == [
        "nb.ipynb: error: chat saved in the notebook metadata: the stored chat has schema 2; "
        "this version reads 1"
    ]
    nb.metadata["chapyter"] = {"chat": "text"}
    assert messages(nb) == [
        "nb.ipynb: error: chat saved in the notebook metadata: the stored chat is not an object"
    ]


def test_nbstripout_drops_the_stored_chat_with_one_extra_key():
    from nbstripout import strip_output

    nb = clean()
    nb.metadata["chapyter"] = {"notebook_id": "ab" * 16, "chat": stored_chat()}
    keys = [*NBSTRIPOUT_DEFAULT_KEYS, "metadata.chapyter.chat"]
    stripped = strip_output(nb, keep_output=False, keep_count=False, keep_id=True, extra_keys=keys)
    # The chat goes, the id stays (so the chat on the server still finds the notebook).
    assert stripped.metadata["chapyter"] == {"notebook_id": "ab" * 16}
    assert messages(stripped) == []
