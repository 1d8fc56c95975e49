/**
 * Agent mode as the chat's {@link IChatMode}: the turns go to the {@link AgentController},
 * the panel shows its toggle and policy, the chip says the policy and the tools offered.
 */

import type { IChatMode } from '../chat/tokens';
import { agentControls, policyLabel } from './controls';
import type { AgentController } from './controller';

/** The chat mode of `agent`. */
export function agentMode(agent: AgentController): IChatMode {
  return {
    get enabled() {
      return agent.enabled && agent.available;
    },
    changed: agent.changed,
    open: (request, reply, signal, redraw) =>
      agent.open(request, reply, signal, redraw),
    stop: reply => agent.stop(reply),
    controls: () => agentControls(agent),
    placeholder: 'Ask; the agent may run code in this notebook',
    chipNote: () => `Agent: ${policyLabel(agent.policy).toLowerCase()}`,
    chipDetails: () => {
      const tools = agent.tools;
      if (!tools.labels.length) {
        return '';
      }
      const servers = tools.servers.length
        ? `; MCP servers: ${tools.servers.join(', ')} (their tools are offered once started)`
        : '';
      return `Agent tools: ${tools.labels.join(', ')}${servers}`;
    }
  };
}
