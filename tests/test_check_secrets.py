"""``chapyter-ext check`` finds secrets a notebook holds: each key shape in each place
a committed notebook shows text (stream, every textual output value, error, attachment,
source), named by file, cell, kind and length, never its value; hashes, UUIDs and images are no
secrets; the pre-commit hook blocks such a commit."""

from __future__ import annotations

import nbformat
import pytest
import yaml

from chapyter_ext.cli import main
from chapyter_ext.notebook_check import MAX_SECRETS_PER_CELL, check_notebook, check_secrets
from tests.test_check import ROOT, cell, clean, git, hook_repo, notebook, write

# Built from pieces: this file holds no key, only what looks like one once joined.
SHAPES = {
    "API key": ("sk-", "proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zB9cD1fG"),
    "GitHub token": ("ghp_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    "Slack token": ("xoxb-", "1234567890-0987654321-AbCdEfGhIjKlMnOp"),
    "AWS access key id": ("AKIA", "Z7Q2M4X9K3B8N5T1"),
    "JWT": ("eyJ", "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3"),
    "private key block": (
        "-----BEGIN RSA PRIVATE KEY-----",
        "\nMIIEowIBAAKCAQEA7bq98JsLk2v8cQ0a9F3xY\n-----END RSA PRIVATE KEY-----",
    ),
    "key-like value": ("", "q7Rm2XvL9tBw4KpZ8sDn"),
}


def secret(kind: str) -> str:
    return "".join(SHAPES[kind])


def shown_line(kind: str) -> str:
    """What a report says of the text, as a name = value line where a name is needed."""
    return f'api_key = "{secret(kind)}"' if kind == "key-like value" else secret(kind)


def places(text: str) -> dict[str, nbformat.NotebookNode]:
    """One cell per place a notebook shows ``text``, keyed by what the report calls it."""
    out = nbformat.v4.new_output
    ansi = "\x1b[0;31m"
    cells = {
        "source": nbformat.v4.new_code_cell(f"print(1)\n{text}\n"),
        "output 1 (stdout)": nbformat.v4.new_code_cell(
            outputs=[out("stream", name="stdout", text=f"loading\n{text}\ndone\n")]
        ),
        "output 1 (text/plain)": nbformat.v4.new_code_cell(
            outputs=[out("execute_result", data={"text/plain": text}, execution_count=1)]
        ),
        "output 1 (text/html)": nbformat.v4.new_code_cell(
            outputs=[out("display_data", data={"text/html": f"<pre>{text}</pre>"})]
        ),
        "output 1 (application/json)": nbformat.v4.new_code_cell(
            outputs=[out("display_data", data={"application/json": {"env": [{"line": text}]}})]
        ),
        "output 1 (error)": nbformat.v4.new_code_cell(
            outputs=[
                out(
                    "error",
                    ename="KeyError",
                    evalue="'x'",
                    traceback=[f"{ansi}KeyError\x1b[0m", f"{ansi}---> 1\x1b[0m {text}"],
                )
            ]
        ),
        "attachment notes.txt (text/plain)": nbformat.v4.new_markdown_cell(
            "![notes](attachment:notes.txt)",
            attachments={"notes.txt": {"text/plain": text}},
        ),
    }
    for i, c in enumerate(cells.values()):
        c["id"] = f"c{i}"
    return cells


ADVICE = {"source": "read it from the environment instead", "output": "clear the output"}
ADVICE["attachment"] = "remove the attachment"


def leaks(text: str, kind: str) -> bool:
    """Whether ``text`` shows any 8 characters of the secret past its public prefix (of a
    private key block: of its key, between the public header and footer)."""
    material = SHAPES[kind][1]
    if kind == "private key block":
        material = material.split("\n")[1]
    return any(material[i : i + 8] in text for i in range(len(material) - 7))


@pytest.mark.parametrize("where", list(places("x")))
@pytest.mark.parametrize("kind", list(SHAPES))
def test_every_shape_is_found_in_every_place(kind, where):
    nb = notebook(cell("code", "x = 1", "setup"), places(shown_line(kind))[where])
    cell_id = nb.cells[1]["id"]
    (finding,) = check_notebook(nb, "nb.ipynb")
    line = str(finding)
    prefix = f"nb.ipynb:cell 2 ({cell_id}): error: {where} holds a secret ({kind}: "
    assert line.startswith(prefix), line
    assert line.endswith(f"chars)): {ADVICE[where.split()[0]]}")
    assert f"({len(secret(kind))} chars)" in line
    assert not leaks(line, kind)


def test_the_report_names_file_cell_and_kind_and_never_the_value(tmp_path, capsys):
    nb = clean()
    for i, kind in enumerate(SHAPES):
        c = cell("code", "print(key)", f"leak-{i}")
        c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=shown_line(kind))]
        nb.cells.append(c)
    path = write(nb, tmp_path / "leaky.ipynb")
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == len(SHAPES) + 1
    for i, (line, kind) in enumerate(zip(lines, SHAPES)):
        assert line.startswith(f"{path}:cell {7 + i} (leak-{i}): error: output 1 (stdout) ")
        assert f"({kind}: " in line
    assert lines[-1] == f"chapyter-ext check: 1 notebook, {len(SHAPES)} errors, 0 warnings."
    assert not any(leaks(out, kind) for kind in SHAPES)
    assert "sk-…(" in out and "ghp_…(" in out and "AKIA…(" in out and "api_key = …(" in out


#: Text real outputs hold that is not a secret: no finding.
HARMLESS = [
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad\nmd5 5d41402abc4b2a76b9719d911017c592",
    "run id 7c9e6679-7425-40de-944b-e07fc1f90ae7, token = 7c9e6679-7425-40de-944b-e07fc1f90ae7",
    "scikit-learn==1.4.2\nsk-learn 1.4.2\ntask-1234567890abcdefghijkl done",
    '{"pad_token": "</s>", "eos_token": "</s>", "model_max_length": 1000000000000000}',
    "max_tokens: 4096\nprompt_tokens=1234567890123456789\npassword = 'hunter2'",
    "api_key = <redacted>\nAuthorization: Bearer <redacted>\nOPENAI_API_KEY=<redacted>",
    "token: my_secret_password_is_long\nsecret = production_database_primary",
    "100%|██████████| 1000/1000 [00:01<00:00, 912.35it/s]",
    "hf_hub_download('gpt2', 'config.json'); ASIA_PACIFIC_REGION_2023; key: 9f86d081884c7d659a2f",
    "s3://my-bucket/data/2023/01/part-00000-c000.snappy.parquet",
]


@pytest.mark.parametrize("text", HARMLESS)
def test_what_is_no_secret_is_not_reported(text):
    assert check_secrets(notebook(*places(text).values()), "nb.ipynb") == []


def test_images_and_inlined_images_are_not_read():
    # A key shape inside base64 data would be chance: binary values are never read, and an
    # image inlined in HTML (a data: URI) is skipped.
    planted = "iVBORw0KGgo+" + secret("AWS access key id") + "+AIza" + "Sy" * 18 + "+AAAA"
    out = nbformat.v4.new_output
    c = nbformat.v4.new_code_cell(
        outputs=[
            out("display_data", data={"image/png": planted, "text/plain": "<Figure>"}),
            out("display_data", data={"text/html": f'<img src="data:image/png;base64,{planted}">'}),
            out("display_data", data={"application/pdf": planted}),
        ]
    )
    assert check_secrets(notebook(c)) == []
    # The same text where a reader sees it is found.
    c.outputs.append(out("stream", name="stdout", text=planted))
    assert len(check_secrets(notebook(c))) == 2


def test_each_secret_once_per_cell_and_at_most_a_few():
    key = secret("GitHub token")
    out = nbformat.v4.new_output
    c = cell("code", f"token = {key!r}", "twice")
    c.outputs = [
        out("stream", name="stdout", text=key),
        out("execute_result", data={"text/plain": repr(key)}, execution_count=1),
    ]
    (finding,) = check_secrets(notebook(c), "nb.ipynb")
    assert "source holds a secret (GitHub token" in str(finding)
    many = cell("code", "!env", "env")
    env = [f"{name}_TOKEN=ghp_{i}{SHAPES['GitHub token'][1]}" for i, name in enumerate("ABCDE")]
    many.outputs = [out("stream", name="stdout", text="\n".join(env))]
    found = [str(f) for f in check_secrets(notebook(many), "nb.ipynb")]
    assert len(found) == MAX_SECRETS_PER_CELL + 1
    assert found[-1] == "nb.ipynb:cell 1 (env): error: 2 more secrets in this cell"


def test_secrets_only_and_no_secrets(tmp_path, capsys):
    stale = clean()
    stale.cells[2].source = "%%ai\nsum the revenue per month"
    leak = cell("code", "print(key)", "leak")
    leak.outputs = [nbformat.v4.new_output("stream", name="stdout", text=secret("API key"))]
    stale.cells.append(leak)
    path = write(stale, tmp_path / "nb.ipynb")
    assert main(["check", path]) == 1
    both = capsys.readouterr().out
    assert "prompt (cell 3) changed" in both and "holds a secret (API key" in both
    assert main(["check", "--secrets-only", path]) == 1
    only = capsys.readouterr().out
    assert "holds a secret" in only and "prompt" not in only
    assert main(["check", "--no-secrets", path]) == 1
    links = capsys.readouterr().out
    assert "prompt (cell 3) changed" in links and "holds a secret" not in links
    assert main(["check", "--secrets-only", write(clean(), tmp_path / "ok.ipynb")]) == 0
    assert capsys.readouterr().out == "chapyter-ext check: 1 notebook, no secrets found.\n"
    with pytest.raises(SystemExit):
        main(["check", "--secrets-only", "--no-secrets", path])


def test_the_projects_own_notebooks_hold_no_secret(capsys):
    files = git(ROOT, "ls-files", "*.ipynb").stdout.split()
    assert files and all(f.endswith(".ipynb") for f in files)
    assert main(["check", "--secrets-only", *(str(ROOT / f) for f in files)]) == 0, (
        capsys.readouterr().out
    )


def test_pre_commit_secrets_hook_blocks_a_key_in_an_output(tmp_path):
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "chapyter-ext-secrets"]
    repo, commit = hook_repo(tmp_path, hook)

    nb = clean()
    nb.cells[3].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=f"key {secret('API key')}\n")
    ]
    write(nb, repo / "analysis.ipynb")
    blocked = commit("key")
    said = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0
    assert "analysis.ipynb:cell 4 (ask-sum-code): error: output 1 (stdout) holds a secret" in said
    assert not leaks(said, "API key")
    nb.cells[3].outputs = []
    write(nb, repo / "analysis.ipynb")
    passed = commit("cleared")
    assert passed.returncode == 0, passed.stdout + passed.stderr
