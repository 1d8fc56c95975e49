"""The agent's settings, capabilities per model, and the fenced protocol's parser."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from chapyter_ext.agent.capabilities import Capabilities, capabilities, takes_images
from chapyter_ext.agent.limits import AgentLimits
from chapyter_ext.agent.tools import fenced_step
from chapyter_ext.config import Chapyter, check_setting


def test_defaults_and_limits():
    c = Chapyter()
    assert (c.agent_max_steps, c.agent_time_limit, c.agent_policy) == (10, 300.0, "ask")
    assert (c.agent_result_chars, c.tool_calling, c.image_input) == (4000, "auto", "auto")
    assert AgentLimits.from_settings(c) == AgentLimits(10, 300.0, 4000)
    c.agent_policy = "RISKY"
    assert c.agent_policy == "risky"


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        (
            "agent_max_steps",
            0,
            "Chapyter.agent_max_steps must be a whole number from 1 to 100, not 0.",
        ),
        ("agent_max_steps", 101, "from 1 to 100"),
        ("agent_time_limit", 0.0, "Chapyter.agent_time_limit must be a number of seconds above 0"),
        ("agent_time_limit", float("nan"), "above 0"),
        ("agent_result_chars", 10, "must be a whole number of 200 or more, not 10."),
        ("agent_policy", "sometimes", "Chapyter.agent_policy must be one of ask, risky, never"),
        ("tool_calling", "yes", "Chapyter.tool_calling must be one of auto, on, off"),
        ("image_input", "maybe", "Chapyter.image_input must be one of auto, on, off"),
    ],
)
def test_bad_values_are_refused_in_one_line(name, value, says):
    c = Chapyter()
    before = getattr(c, name)
    with pytest.raises(TraitError) as err:
        setattr(c, name, value)
    assert says in str(err.value) and "\n" not in str(err.value)
    assert getattr(c, name) == before


def test_check_setting_serves_request_values_too():
    # The server checks a request's policy with the same function.
    assert check_setting("agent_policy", "never") is None
    assert check_setting("agent_policy", 3) == "must be one of ask, risky, never, not 3"
    assert check_setting("agent_max_steps", float("inf")) is not None
    assert check_setting("agent_max_steps", 2.5) is not None


@pytest.mark.parametrize(
    ("model", "images"),
    [
        ("gpt-4o-mini", True),
        ("gpt-4.1", True),
        ("openai/gpt-5", True),
        ("o3-mini", True),
        ("claude-3-5-sonnet", True),
        ("gemini-1.5-pro", True),
        ("llava:13b", True),
        ("qwen2.5-vl-7b", True),
        ("pixtral-12b", True),
        ("gpt-3.5-turbo", False),
        ("qwen2.5-coder:7b", False),
        ("llama3.1:8b", False),
        ("smollm2-135m-instruct", False),
        ("solo3", False),
    ],
)
def test_takes_images(model, images):
    assert takes_images(model) is images


def test_capabilities_auto_on_off():
    c = Chapyter()
    assert capabilities(c, "gpt-4o", local=False) == Capabilities(tools=True, images=True)
    assert capabilities(c, "qwen2.5-coder:7b", local=False) == Capabilities(True, False)
    assert capabilities(c, "gpt-4o", local=True) == Capabilities(False, False)
    c.tool_calling, c.image_input = "off", "on"
    assert capabilities(c, "qwen2.5-coder:7b", local=False) == Capabilities(False, True)
    c.tool_calling, c.image_input = "on", "off"
    assert capabilities(c, "gpt-4o", local=True) == Capabilities(True, False)


@pytest.mark.parametrize(
    ("reply", "prose", "code"),
    [
        ("Plot it:\n```python\nplt.plot(x)\n```", "Plot it:", "plt.plot(x)"),
        ("```py\n>>> 1 + 1\n2\n```", "", "1 + 1"),
        ("<think>hmm ```python\nbad()\n```</think>The answer is 4.", "The answer is 4.", None),
        ("The answer is 4.", "The answer is 4.", None),
        ("Shell:\n```bash\nls\n```", "Shell:\n```bash\nls\n```", None),
        ("x\n```json\n{}\n```\n```python\ny = 1\n```", "x", "y = 1"),
        ("```python\n\n```", "```python\n\n```", None),
    ],
)
def test_fenced_step(reply, prose, code):
    step = fenced_step(reply)
    assert (step.prose, step.code) == (prose, code)


def test_importing_the_agent_stays_light():
    import subprocess
    import sys

    code = (
        "import sys, chapyter_ext.agent, chapyter_ext.context.figures\n"
        "print(sorted(m for m in ('IPython', 'openai', 'matplotlib', 'numpy', 'tornado') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
