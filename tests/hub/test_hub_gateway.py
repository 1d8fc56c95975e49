"""The same deployment with every user's kernels on a Kernel Gateway behind their servers
(``--gateway-url``), keys from ``Spawner.environment`` and forwarded with each kernel start:
the same checks, and the key never in a log line (jupyter_server logs a gateway kernel's
environment at INFO)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .deploy_doc import snippet
from .harness import running, start_hub, start_kernel_gateway, user_env_from_doc
from .scenario import keys_for, run_deployment

pytestmark = pytest.mark.hub


def test_three_users_with_kernels_on_a_gateway(tmp_path: Path, fake_gateway) -> None:
    started = time.monotonic()
    env = user_env_from_doc(tmp_path / "opt-jupyter")
    gateway, port = start_kernel_gateway(tmp_path, env, snippet("gateway-run", prefix=str(env)))
    keys = keys_for("gateway")
    keys_file = tmp_path / "hub" / "llm-keys.json"
    config = "\n".join(
        [
            snippet("hub-spawner", prefix=str(env), gateway_url=fake_gateway.base_url),
            snippet(
                "hub-keys-environment",
                keys_file=str(keys_file),
                gateway_url=fake_gateway.base_url,
            ),
            snippet("gateway-hub", kg_port=str(port)),
        ]
    )
    with running(gateway):
        hub = start_hub(
            tmp_path / "hub",
            env,
            keys=keys,
            snippets=config,
            keyed_authenticator=False,
            extra_logs=[gateway.log],
        )
        with running(hub.process):
            logs = run_deployment(hub, fake_gateway, keys, proxied=False)
        # The kernels ran on the gateway, and the server's INFO line about each kernel start
        # (which carries the kernel's environment) has the key redacted.
        started_lines = [
            line for line in logs.splitlines() if "GatewayKernelManager started kernel" in line
        ]
        assert len(started_lines) == 3
        assert all("<redacted>" in line for line in started_lines)
    print(f"\n[hub] three users, kernels on a Kernel Gateway: {time.monotonic() - started:.1f} s")
