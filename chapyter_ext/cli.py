"""The ``chapyter-ext`` command: ``check`` for git workflows, ``regenerate`` for batch runs,
``agent`` for a headless agent turn, ``serve-local`` to run the bundled local model by hand,
``mcp`` to relay a stdio MCP client to a running Jupyter server."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import __version__

if TYPE_CHECKING:
    from .redact import Redactor


def _check(args: argparse.Namespace) -> int:
    from .notebook_check import check_paths, summary_line

    what = {"secrets": not args.no_secrets, "links": not args.secrets_only}
    findings, read = check_paths(args.notebooks, strict=args.strict, orphans=args.orphans, **what)
    for finding in findings:
        print(finding)
    print(summary_line(findings, read, **what))
    return 1 if any(f.severity == "error" for f in findings) else 0


def _kernel_redactor() -> Redactor:
    """The keys and header values of the settings the notebook's kernel reads (environment,
    IPython profile): no output a command writes may show them."""
    from .agent.headless import load_settings
    from .endpoints import kernel_registry
    from .redact import Redactor

    settings = load_settings()
    found = [*kernel_registry(settings).secrets(), settings.api_key]
    return Redactor([*found, *settings.extra_headers.values()])


def _regenerate(args: argparse.Namespace) -> int:
    from traitlets import TraitError

    from .agent.headless import AgentRunError
    from .endpoints import EndpointConfigError
    from .magic.replay import RegenerateError, regenerate_file

    try:
        redactor = _kernel_redactor()
        report = regenerate_file(
            args.notebook,
            args.output,
            redactor=redactor,
            timeout=args.timeout,
            kernel_name=args.kernel,
        )
    except (RegenerateError, AgentRunError, EndpointConfigError, TraitError) as err:
        print(f"chapyter-ext regenerate: {err}", file=sys.stderr)
        return 1
    for line in report.lines():
        print(line)
    return 0


def _agent(args: argparse.Namespace) -> int:
    from .agent.headless import AgentRunError, run_agent_file

    try:
        run = run_agent_file(
            args.notebook,
            args.question,
            output=args.output,
            yes=args.yes,
            max_steps=args.max_steps,
            model=args.model,
            policy=args.policy,
            timeout=args.timeout,
            on_line=lambda line: print(line, flush=True),
            stop_signals=(signal.SIGINT, signal.SIGTERM),
            keep_state=args.keep_state,
        )
    except AgentRunError as err:
        print(f"chapyter-ext agent: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # before the run began (reading the notebook and the settings)
        print("chapyter-ext agent: interrupted (SIGINT); the file is unchanged.", file=sys.stderr)
        return 128 + signal.SIGINT
    # The steps were printed as they happened.
    if run.redacted:
        print(f"chapyter-ext agent: {run.redacted}")
    if run.interrupted:
        # The shell's convention for a process ended by a signal: 128 + its number.
        where = f"Wrote {run.written}." if run.written else "The file is unchanged."
        print(f"chapyter-ext agent: {run.interrupted} {where}", file=sys.stderr)
        return 128 + (run.signal or signal.SIGINT)
    if run.answer is not None:
        print(run.answer)
    if run.stopped:
        print(f"chapyter-ext agent: {run.stopped}", file=sys.stderr)
    if run.written:
        print(f"chapyter-ext agent: wrote {run.written}")
    return 0 if run.answer is not None else 1


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _serve_local(args: argparse.Namespace) -> int:
    from .local_model import (
        INSTALL_HINT,
        LOCAL_MODEL_NAME,
        LocalModelError,
        LocalModelServer,
        find_model_path,
        port_open,
        server_installed,
    )

    model_path = args.model or find_model_path()
    if model_path is None or not server_installed():
        print(f"chapyter-ext serve-local: the local model is not installed: {INSTALL_HINT}")
        return 1
    server = LocalModelServer(model_path)
    running = server.running()
    if running is not None:
        print(
            f"chapyter-ext serve-local: already running at {running.base_url} "
            f"(pid {running.pid}); JupyterLab and kernels use it. Its API key is in "
            f"{server.state_file} (readable by you only)."
        )
        return 1
    if args.port and port_open(args.port):
        print(f"chapyter-ext serve-local: port {args.port} is in use; choose another.")
        return 1
    # `kill` / a service manager's stop: clean up as for Ctrl+C (stop it, forget its state).
    signal.signal(signal.SIGTERM, _interrupt)
    state = server.start(args.port, foreground=True)
    print(f"chapyter-ext serve-local: loading {LOCAL_MODEL_NAME} from {model_path}", flush=True)
    try:
        server.wait_ready(state)
        print(
            f"chapyter-ext serve-local: {LOCAL_MODEL_NAME} at {state.base_url}; JupyterLab "
            "and kernels without a configured endpoint use it. Ctrl+C stops it.\n"
            f"chapyter-ext serve-local: other clients send the API key {state.api_key} "
            "(Authorization: Bearer); it changes at every start.",
            flush=True,
        )
        code = server.wait()
    except LocalModelError as err:
        print(f"chapyter-ext serve-local: {err}")
        return 1
    except KeyboardInterrupt:
        code = 0
    finally:
        server.stop()
    return 0 if code in (0, None) else 1


def _mcp(args: argparse.Namespace) -> int:
    import os

    from .outside.stdio import ENV_TOKEN, ENV_URL, RelayConfig, RelayError, endpoint_url, serve

    url = args.url or os.environ.get(ENV_URL, "")
    try:
        if not url:
            raise RelayError(f"no server URL: pass --url or set {ENV_URL}")
        serve(RelayConfig(endpoint_url(url), os.environ.get(ENV_TOKEN, ""), args.name))
    except RelayError as err:
        print(f"chapyter-ext mcp: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the docs and the tests)."""
    parser = argparse.ArgumentParser(
        prog="chapyter-ext",
        description="Tools for notebooks with %%ai cells.",
    )
    parser.add_argument("--version", action="version", version=f"chapyter-ext {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="check that every %%ai prompt has its generated cell, up to date, and that no "
        "output holds a secret",
        description="List AI cells that are out of step with their prompts, and secrets the "
        "notebooks hold, as 'path:cell N (id): severity: message' lines and a summary. Exits 1 "
        "on any error. Errors: a prompt without a generated cell; a generated cell whose "
        "prompt changed (request or model); a secret in an output, an attachment or a source "
        "(API keys such as sk-..., ghp_..., xoxb-..., AWS access key ids, JWTs, private key "
        "blocks, key-like values given to names such as token or password), named by its kind "
        "and length, never shown. Warnings (errors with --strict): generated code edited by "
        "hand; a copied generated cell; with --orphans, a generated cell whose prompt is gone; "
        "an agent's answer whose numbers, found in the outputs above it when it was written, "
        "are found there no more (after a replay on changed data).",
    )
    check.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help=".ipynb files")
    check.add_argument(
        "--strict", action="store_true", help="treat warnings (hand edits, copies) as errors"
    )
    check.add_argument(
        "--orphans",
        action="store_true",
        help="also report generated cells whose %%ai prompt was deleted",
    )
    only = check.add_mutually_exclusive_group()
    only.add_argument(
        "--secrets-only", action="store_true", help="look for secrets only, not at AI cells"
    )
    only.add_argument("--no-secrets", action="store_true", help="do not look for secrets")
    check.set_defaults(run=_check)

    regenerate = commands.add_parser(
        "regenerate",
        help="run a notebook, asking the model again for every %%ai cell (not reproducible)",
        description="Execute NOTEBOOK top to bottom with every %%ai cell asking the model "
        "again (CHAPYTER_REGENERATE=1 in the kernel); each answer replaces its generated cell "
        "(or is inserted below the prompt), with provenance, and runs. Hand-edited generated "
        "cells are kept. Needs the endpoint and key, like JupyterLab. An output showing a "
        "configured key or header value is written as <redacted>.",
    )
    regenerate.add_argument("notebook", metavar="NOTEBOOK")
    regenerate.add_argument(
        "-o", "--output", metavar="PATH", help="where to write the result (default: in place)"
    )
    regenerate.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per cell (default 600)"
    )
    regenerate.add_argument(
        "--kernel", default=None, help="kernel name (default: the notebook's own)"
    )
    regenerate.set_defaults(run=_regenerate)

    agent = commands.add_parser(
        "agent",
        help="answer a question about a notebook by running code in it (headless agent)",
        description="Start NOTEBOOK's kernel, run its code cells once to rebuild its state, "
        "then let the model answer QUESTION by running code: each step is a new code cell "
        "appended to the notebook (with chapyter provenance, source 'agent') and run; the "
        "answer is appended as a markdown cell and the notebook written. No one can approve a "
        "step here: without --yes, a step the approval policy (--policy, Chapyter.agent_policy) "
        "would ask about is refused and the file is left unchanged. Settings come from the "
        "environment and the default IPython profile, as in the kernel. Exits 1 when the turn "
        "ends without an answer (a cap, an error); the cells that ran are still written. "
        "Ctrl-C or SIGTERM stops the turn: a running cell is interrupted, the cells that ran "
        "are written with a note saying what was interrupted (none ran: nothing is written), "
        "and it exits 130 (SIGINT) or 143 (SIGTERM). The notebook must not be a symbolic "
        "link: the file is replaced atomically, never written through a link. An output "
        "showing a configured key or header value is written as <redacted>. A turn that "
        "ends without an answer after a failing step puts the kernel's variables back as it "
        "found them (Undo, docs/undo.md) and says so in one line; --keep-state does not.",
    )
    agent.add_argument("notebook", metavar="NOTEBOOK")
    agent.add_argument("question", metavar="QUESTION")
    agent.add_argument(
        "--yes", action="store_true", help="run every step without asking (no approval here)"
    )
    agent.add_argument(
        "--max-steps",
        type=_positive_int,
        default=None,
        metavar="N",
        help="the step cap (default Chapyter.agent_max_steps, 10)",
    )
    agent.add_argument(
        "--model", metavar="NAME", default=None, help="ask this model (default Chapyter.model)"
    )
    agent.add_argument(
        "--policy",
        choices=("ask", "risky", "never"),
        default=None,
        help="when a step needs approval (default Chapyter.agent_policy, 'ask'): every run, "
        "risky code only (files, deletes, installs, network, shell), or never",
    )
    agent.add_argument(
        "-o", "--output", metavar="PATH", help="where to write the result (default: in place)"
    )
    agent.add_argument(
        "--timeout",
        type=_positive_float,
        default=600.0,
        metavar="S",
        help="seconds per cell (default 600); the turn's own cap is Chapyter.agent_time_limit",
    )
    agent.add_argument(
        "--keep-state",
        action="store_true",
        help="when the turn fails, leave the kernel's variables as its steps left them "
        "(default: put them back as they were before the turn)",
    )
    agent.set_defaults(run=_agent)

    serve_local = commands.add_parser(
        "serve-local",
        help="run the bundled local model's OpenAI-compatible server in the foreground",
        description="Serve SmolLM2-135M-Instruct (from chapyter-ext[local]) with "
        "llama-cpp-python on 127.0.0.1 until Ctrl+C. JupyterLab and kernels with no endpoint "
        "configured use it instead of starting their own; any OpenAI client can use it at "
        "the printed base URL.",
    )
    serve_local.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    serve_local.add_argument(
        "--model", metavar="GGUF", default=None, help="another GGUF file to serve"
    )
    serve_local.set_defaults(run=_serve_local)

    mcp = commands.add_parser(
        "mcp",
        help="a stdio MCP server relaying to a running Jupyter server's chapyter-ext/mcp",
        description="For MCP clients that speak only stdio: serve MCP on stdin/stdout and relay "
        "every tool listing and call to the chapyter-ext/mcp endpoint of a running Jupyter "
        "server, which asks the user in JupyterLab as for any outside agent. The token is read "
        "from CHAPYTER_MCP_TOKEN only (an outside-agent token from the AI Chat, or the Jupyter "
        "server's token), never from the command line. Exits 1 with one line on stderr when "
        "the server does not answer, refuses the token or has the endpoint switched off. "
        "See docs/outside-agents.md.",
    )
    mcp.add_argument(
        "--url",
        default=None,
        help="the Jupyter server's URL with its base_url, e.g. http://127.0.0.1:8888/ "
        "(default: CHAPYTER_MCP_URL)",
    )
    mcp.add_argument(
        "--name",
        default=None,
        help="the name JupyterLab shows for this agent in approvals (default: the client's own)",
    )
    mcp.set_defaults(run=_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``chapyter-ext`` console script."""
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
