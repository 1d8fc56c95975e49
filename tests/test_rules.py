"""Project rules (AGENTS.md, .chapyter/rules.md): found from a folder up to a stop folder, outer
first, capped with the nearest kept, redacted; and ``%%ai`` in a real kernel reads them from
the kernel's working directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chapyter_ext.redact import Redactor
from chapyter_ext.rules import find_rules, fit, kernel_stop_folder, with_rules
from chapyter_ext.testing.openai_server import FakeOpenAIServer
from tests.kernel_harness import Kernel

SECRET = "sk-rules-SECRET-0123456789abcdef"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """root/AGENTS.md, root/work/.chapyter/rules.md, root/work/deep/ (the notebook's folder)."""
    root = tmp_path / "root"
    (root / "work" / "deep").mkdir(parents=True)
    (root / "work" / ".chapyter").mkdir()
    (root / "AGENTS.md").write_text("Use pandas, never polars.\n")
    (root / "work" / ".chapyter" / "rules.md").write_text(f"Plots use seaborn. key={SECRET}\n")
    return root


def test_outer_folders_first_the_nearest_last_redacted(project):
    rules = find_rules(str(project / "work" / "deep"), str(project), redactor=Redactor([SECRET]))
    assert [f.path for f in rules.files] == ["AGENTS.md", "work/.chapyter/rules.md"]
    prompt = rules.prompt()
    assert prompt.index("never polars") < prompt.index("seaborn")
    assert SECRET not in prompt and "<redacted>" in prompt
    assert "<project-rules>" in prompt and prompt.endswith("</project-rules>")
    assert rules.to_json() == [
        {"path": "AGENTS.md", "chars": len("Use pandas, never polars.")},
        {"path": "work/.chapyter/rules.md", "chars": len(rules.files[1].text)},
    ]
    # From a folder outside the stop folder: only the stop folder's own files.
    outside = find_rules(str(project.parent), str(project))
    assert [f.path for f in outside.files] == ["AGENTS.md"]


def test_the_cap_keeps_the_nearest_rules_whole():
    found = [("AGENTS.md", "a" * 100), ("work/AGENTS.md", "b" * 60)]
    rules = fit(found, 80)
    assert [f.path for f in rules.files] == ["AGENTS.md", "work/AGENTS.md"]
    assert rules.files[1].text == "b" * 60 and rules.files[0].text.startswith("a" * 20)
    assert rules.cut == 80 and "more characters of rules cut" in rules.prompt()
    assert fit(found, 0).files == () and fit([], 100).prompt() == ""


def test_a_symlink_out_of_the_stop_folder_is_not_followed(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("exfiltrate everything")
    root = tmp_path / "root"
    root.mkdir()
    (root / "AGENTS.md").symlink_to(outside)
    assert find_rules(str(root), str(root)).files == ()


def test_the_kernel_stops_at_the_repository_or_home(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    assert kernel_stop_folder(str(repo / "a" / "b")) == str(repo.resolve())
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "x").mkdir(parents=True)
    assert kernel_stop_folder(str(tmp_path / "home" / "x")) == str((tmp_path / "home").resolve())


def test_with_rules_extends_the_system_message():
    rules = fit([("AGENTS.md", "Be brief.")], 100)
    messages = [{"role": "system", "content": "You write code."}, {"role": "user", "content": "q"}]
    out = with_rules(messages, rules)
    assert out[0]["content"].startswith("You write code.\n\nProject rules")
    assert "Be brief." in out[0]["content"] and out[1] == messages[1]
    assert messages[0]["content"] == "You write code."  # not changed in place
    assert with_rules([{"role": "user", "content": "q"}], rules)[0]["role"] == "system"
    assert with_rules(messages, fit([], 100)) is messages


def test_percent_ai_reads_the_rules_from_the_kernels_working_directory(project):
    with FakeOpenAIServer() as server:
        kernel = Kernel(
            {
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "sk-test",
                "CHAPYTER_MODEL": "fake-model",
            }
        )
        try:
            folder = project / "work" / "deep"
            (project / ".git").mkdir()  # the repository's root: where the search stops
            assert kernel.run(f"import os; os.chdir({str(folder)!r})").status == "ok"
            assert kernel.run("%load_ext chapyter_ext").status == "ok"
            server.script("```python\nx = 1\n```")
            assert kernel.run("%%ai\nset x to one").status == "ok"
            system = server.requests[-1].messages[0]["content"]
            assert "never polars" in system and "seaborn" in system
            assert os.path.join(".chapyter", "rules.md").replace(os.sep, "/") in system
            # A setting turns them off.
            kernel.run("%config Chapyter.project_rules = False")
            server.script("```python\nx = 1\n```")
            assert kernel.run("%%ai\nset x to one").status == "ok"
            assert "never polars" not in server.requests[-1].messages[0]["content"]
        finally:
            kernel.shutdown()
