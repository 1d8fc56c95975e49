"""Reading a secret asks: a secret-named environment variable, the whole environment
or a credentials file is a ``KNOWN`` reason under ``risky``, one line naming the code; reading
other variables and files stays quiet. What a secret is comes from the redactor's one rule
(``is_secret_env_name``, ``is_secret_file``), with the caller's extra names."""

from __future__ import annotations

import pytest

from chapyter_ext.policy import KNOWN, SECRETS, analyse, approval, hold_reason
from chapyter_ext.policy.consent import ASK, TRIAL, plan
from chapyter_ext.redact import env_secrets, is_secret_env_name, is_secret_file

#: (code, the reason's text): each reads a secret.
READS = [
    ("import os\nos.environ['OPENAI_API_KEY']", "reads a secret: os.environ['OPENAI_API_KEY']"),
    ('import os\ntoken = os.getenv("GITHUB_TOKEN")', 'reads a secret: os.getenv("GITHUB_TOKEN")'),
    ("import os\nos.environ.get('DB_PASSWORD')", "reads a secret: os.environ.get('DB_PASSWORD')"),
    ("import os\nos.environ.get('AWS_SECRET_ACCESS_KEY', '')", None),
    ("import os\nos.environ.pop('HF_TOKEN', None)", None),
    ("import os\nos.getenvb(b'STRIPE_API_KEY')", None),
    ("from os import environ\nenviron['ANTHROPIC_API_KEY']", None),
    ("from os import getenv\nkey = getenv('OPENAI_API_KEY')", None),
    ("import os as o\no.environ['SLACK_BOT_TOKEN']", None),
    ("import os\nos.environ['OPENAI_API_KEY'].strip()", None),
    ("import os\nprefix = 'OPENAI'\nos.getenv(prefix + '_API_KEY')", None),
    ("import os\nfor v in ['HOME', 'HF_TOKEN']:\n    print(os.environ[v])", None),
    # The whole environment, or a variable by a name only a run tells.
    ("import os\ndict(os.environ)", "reads a secret: os.environ"),
    ("import os\nprint(os.environ)", "reads a secret: os.environ"),
    ("import os\nos.environ", "reads a secret: os.environ"),
    ("import os\nfor k, v in os.environ.items():\n    print(k, v)", None),
    ("import os\nlist(os.environ.values())", None),
    ("import os\nenv = os.environ.copy()", None),
    ("import os\nfor name in os.environ:\n    print(name)", None),
    ("import os\nimport pandas as pd\npd.Series(os.environ)", None),
    ("import os\n{**os.environ}", None),
    ("import os\nenv = os.environ\nprint(env)", "reads a secret: env"),
    ("import os\ndef read(name):\n    return os.getenv(name)", None),
    ("import os\nlist(map(os.getenv, names))", None),
    # IPython: magics and the shell.
    ("%env", "reads a secret: %env"),
    ("%env OPENAI_API_KEY", "reads a secret: %env OPENAI_API_KEY"),
    ("!env", "reads a secret: !env"),
    ("!printenv", "reads a secret: !printenv"),
    ("!printenv HOME", None),
    ("!env | grep KEY", None),
    ("!export -p", None),
    ("!echo $OPENAI_API_KEY", "reads a secret: !echo $OPENAI_API_KEY"),
    ('!curl -H "Authorization: Bearer ${GITHUB_TOKEN}" localhost', None),
    ("!cat ~/.aws/credentials", None),
    ("!cat .env", None),
    ("%%bash\nenv | sort", "reads a secret: %%bash: env | sort"),
    ("%sx printenv", None),
    ("%timeit os.getenv('OPENAI_API_KEY')", None),
    # Files that hold credentials.
    ("import pandas as pd\npd.read_csv('.env')", "reads a secret: '.env'"),
    ("open('.env.local').read()", None),
    ("import os\nopen(os.path.expanduser('~/.aws/credentials'))", None),
    ("from pathlib import Path\n(Path.home() / '.ssh' / 'id_rsa').read_text()", None),
    ("from pathlib import Path\nPath('~/.ssh/id_ed25519').expanduser().read_bytes()", None),
    ("import netrc\nnetrc.netrc()", None),
    ("open('/home/me/.netrc').read()", None),
    ("from pathlib import Path\nPath.home() / '.config' / 'gcloud'", None),
    ("import os\nos.path.join(os.path.expanduser('~'), '.config', 'gcloud')", None),
    ("from pathlib import Path\nPath.home().joinpath('.config', 'gcloud')", None),
    ("import yaml\nyaml.safe_load(open('/home/me/.kube/config'))", None),
    ("import json\njson.load(open('/home/me/.docker/config.json'))", None),
    ("open(f'{home}/.git-credentials').read()", None),
    ("import configparser\nconfigparser.ConfigParser().read('/home/me/.pypirc')", None),
    ("import json\njson.load(open('credentials.json'))", None),
    ("import json\njson.load(open('client_secret_1234.apps.googleusercontent.com.json'))", None),
    ("open('/run/secrets/db_password').read()", None),
    # Secret stores.
    ("from dotenv import load_dotenv\nload_dotenv()", None),
    ("import dotenv\ndotenv.dotenv_values()", None),
    ("import keyring\nkeyring.get_password('svc', 'me')", None),
    ("from google.colab import userdata\nuserdata.get('OPENAI_API_KEY')", None),
    ("from kaggle_secrets import UserSecretsClient\nUserSecretsClient().get_secret('k')", None),
]

#: Reading what is no secret: no reason of this category (most: no reason at all).
QUIET = [
    "import os\nos.environ.get('HOME')",
    "import os\nos.getenv('PATH')",
    "import os\nos.environ['CUDA_VISIBLE_DEVICES']",
    "import os\nos.environ.get('CUDA_VISIBLE_DEVICES', '0')",
    "import os\nos.environ['PWD'], os.getenv('SECRETS_DIR'), os.getenv('TOKENIZERS_PARALLELISM')",
    "import os\nos.getenv('MAX_TOKENS'), os.getenv('AUTHOR'), os.environ.get('KEYBOARD')",
    "import os\n'OPENAI_API_KEY' in os.environ",
    "import os\nif 'HF_TOKEN' not in os.environ:\n    print('set HF_TOKEN')",
    "import os\nlen(os.environ), sorted(os.environ.keys())",
    "from os import environ\nenviron.get('HOME')",
    "import os\nenv = os.environ\nenv.get('LANG')",
    "import os\nfor v in ['HOME', 'PATH']:\n    print(os.environ[v])",
    "%env HOME",
    "!echo $HOME",
    "!set -e; ls",
    "import pandas as pd\npd.read_csv('.env.example')",
    "print('Put your key in .env, never in the notebook')",
    "import pandas as pd\npd.read_csv('passwords.csv')",
    "import pandas as pd\npd.read_csv('data/sales_2023.csv')",
    "import json\njson.load(open('tokenizer.json'))",
    "import json\njson.load(open('config.json'))",
    "from pathlib import Path\n(Path('data') / 'raw' / 'sales.csv').read_text()",
    "from pathlib import Path\nPath.home() / '.config' / 'matplotlib'",
    "import os\nos.path.join('data', 'env', 'x.csv')",
    "print('~/.aws/credentials')",
    "if name == '.env':\n    print('a dotenv file')",
]


def secret_reasons(code: str, **kwargs) -> list:
    return [r for r in analyse(code, **kwargs) if r.category == SECRETS]


@pytest.mark.parametrize(("code", "says"), READS, ids=[code for code, _ in READS])
def test_reading_a_secret_asks_naming_it(code, says):
    (reason,) = secret_reasons(code)
    assert reason.level == KNOWN
    assert reason.text.startswith("reads a secret: ")
    assert "\n" not in reason.text and len(reason.text) < 140
    if says is not None:
        assert reason.text == says
    needs, reasons = approval("risky", code)
    assert needs and reason.text in reasons


@pytest.mark.parametrize("code", QUIET)
def test_reading_what_is_no_secret_stays_quiet(code):
    assert secret_reasons(code) == []


def test_everyday_environment_reads_run_unasked():
    for code in [
        "import os\nos.environ.get('HOME')",
        "import os\nos.getenv('PATH')",
        "import os\nos.environ['CUDA_VISIBLE_DEVICES']",
        "import os\n'HOME' in os.environ",
    ]:
        assert analyse(code) == [], code
        assert approval("risky", code) == (False, [])


def test_a_secret_read_always_asks_even_with_a_trial():
    """A trial cannot see a read: the plan is a trial for the preview, but it is KNOWN."""
    chosen = plan("risky", "import os\nos.environ['OPENAI_API_KEY']")
    assert chosen.action == TRIAL and chosen.known
    assert plan("risky", "import os\nos.environ['OPENAI_API_KEY']", trials=False).action == ASK
    assert hold_reason("risky", "%env") == "reads a secret: %env"


def test_the_shell_reason_follows_the_secret():
    reasons = [r.text for r in analyse("!env")]
    assert reasons == ["reads a secret: !env", "runs shell commands: !env"]
    assert [r.text for r in analyse("!echo $HOME")] == ["runs shell commands: !echo $HOME"]


def test_configured_secret_names_are_secrets_too():
    code = "import os\nos.environ['MYCORP_SERVICE']"
    assert secret_reasons(code) == []
    for names in (["MYCORP_SERVICE"], ["MYCORP_*"]):
        (reason,) = secret_reasons(code, secret_names=names)
        assert reason.text == "reads a secret: os.environ['MYCORP_SERVICE']"
        assert plan("risky", code, secret_names=names).known
        assert approval("risky", code, secret_names=names)[0]
        assert hold_reason("risky", code, secret_names=names) == reason.text
    # Also in the Python of a magic, a pandas expression and the shell.
    assert secret_reasons("%timeit os.getenv('MYCORP_SERVICE')", secret_names=["MYCORP_*"])
    assert secret_reasons("!echo $MYCORP_SERVICE", secret_names=["MYCORP_*"])
    assert secret_reasons("%env MYCORP_SERVICE", secret_names=["MYCORP_SERVICE"])
    # A configured name never makes a place a secret.
    assert secret_reasons("import os\nos.getenv('HOME')", secret_names=["HOME"]) == []


def test_the_environment_from_an_earlier_cell():
    types = {"env": "os._Environ"}
    assert [r.text for r in secret_reasons("env['HF_TOKEN']", known_types=types)] == [
        "reads a secret: env['HF_TOKEN']"
    ]
    assert secret_reasons("print(env)", known_types=types)
    assert secret_reasons("env.get('HOME')", known_types=types) == []


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN",
     "PGPASSWORD", "SECRET_KEY", "HOME", "PATH", "PWD", "CUDA_VISIBLE_DEVICES", "MAX_TOKENS",
     "TOKENIZERS_PARALLELISM", "SECRETS_DIR", "AUTHOR", "KEYBOARD"],
)  # fmt: skip
def test_one_rule_for_the_redactor_and_the_analysis(name, monkeypatch):
    """The analysis asks for exactly the variables whose values the redactor hides."""
    value = "Zq8vT3mN6pW2rY9s"  # long enough, and no path: only the name decides
    monkeypatch.setenv(name, value)
    hidden = value in env_secrets()
    asks = bool(secret_reasons(f"import os\nos.environ[{name!r}]"))
    assert hidden == asks == is_secret_env_name(name)


@pytest.mark.parametrize(
    ("path", "secret"),
    [(".env", True), (".env.production", True), ("prod.env", True), (".envrc", True),
     (".env.example", False), (".env.sample", False), (".environment", False),
     ("~/.aws/credentials", True), ("~/.ssh/id_rsa", True), ("id_ed25519", True),
     ("id_rsa.pub", False), ("~/.netrc", True), ("_netrc", True), ("~/.config/gcloud", True),
     ("~/.config/matplotlib", False), ("~/.kube/config", True), ("~/.docker/config.json", True),
     ("~/.git-credentials", True), ("~/.pypirc", True), ("~/.pgpass", True),
     ("credentials.json", True), ("token.pickle", True), ("secrets.toml", True),
     ("service_account.json", True), ("server.key", True), ("cert.p12", True),
     ("/run/secrets/db", True), ("C:\\Users\\me\\.aws\\config", True),
     ("passwords.csv", False), ("data.csv", False), ("tokenizer.json", False),
     ("config.json", False), ("auth.log", False), ("put it in .env", False), ("", False)],
)  # fmt: skip
def test_credentials_files(path, secret):
    assert is_secret_file(path) is secret


def test_the_agent_loop_asks_for_a_configured_secret_variable():
    """``Chapyter.secret_names`` reaches the agent's decision (``AgentLoop(secret_names=)``):
    a step reading such a variable waits for approval under ``risky``, naming it."""
    from chapyter_ext.agent.limits import AgentLimits
    from chapyter_ext.agent.loop import AgentLoop, ToolStep
    from chapyter_ext.agent.tools.messages import ToolCall

    step = ToolCall(id="c1", name="run_code", arguments={"code": "import os\nos.getenv('DSN_A')"})

    def loop(**kw):
        return AgentLoop(question="q", context="", history=[], tools=True, images=False,
                         policy="risky", limits=AgentLimits(), **kw)  # fmt: skip

    assert not loop().on_reply("", [step]).needs_approval
    action = loop(secret_names=("DSN_*",)).on_reply("", [step])
    assert isinstance(action, ToolStep) and action.needs_approval
    assert "reads a secret: os.getenv('DSN_A')" in " ".join(action.reasons)


def test_secret_variables_are_the_listed_names_and_those_holding_a_configured_secret(
    monkeypatch,
):
    from chapyter_ext.config import Chapyter

    monkeypatch.setenv("PLAIN_SETTING_B", "x-sk-configured-0123456789-y")
    monkeypatch.setenv("OTHER_SETTING_C", "nothing to see")
    settings = Chapyter(api_key="sk-configured-0123456789", secret_names=["MYCORP_*"])
    assert settings.secret_variables() == ("MYCORP_*", "PLAIN_SETTING_B")
