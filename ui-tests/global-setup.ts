/**
 * The suite's servers (harness/servers.ts): the loopback model and one JupyterLab for the
 * whole run, with what the specs need of its settings and config.
 */

import { python, startRun } from './harness/servers';

export default async function globalSetup(): Promise<void> {
  await startRun({
    settings: {
      // Inline completion asks the model while a test types: only on demand here, so that
      // the other specs' model requests stay theirs. inline-completion.spec.ts turns it to
      // automatic.
      '@jupyterlab/completer-extension:inline-completer': {
        providers: {
          '@chapyter-ext/inline-completion': { trigger: 'onDemand' }
        }
      }
    },
    config: {
      // The agent's MCP servers, as a user configures them (Jupyter's config path): a real
      // one from PyPI, started by the server on the first agent turn (agent-tools.spec.ts).
      'chapyter_ext_mcp.json': {
        mcpServers: {
          time: {
            command: python(),
            args: ['-m', 'mcp_server_time', '--local-timezone', 'UTC']
          }
        }
      }
    }
  });
}
