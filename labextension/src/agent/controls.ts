/**
 * The chat panel's agent controls beside the input: the "Agent" toggle (a labelled checkbox)
 * and the approval policy select, kept in step with the {@link AgentController}.
 */

import { element } from '../common/dom';
import { AgentController } from './controller';
import {
  AGENT_POLICIES,
  AgentPolicy,
  isAgentPolicy,
  looserThan
} from './tokens';

/** The controls' node and how to redraw them. */
export interface IAgentControls {
  /** A row holding the toggle and the select. */
  node: HTMLElement;
  /** Draw the controller's state (and whether a notebook is open). */
  update(hasNotebook: boolean): void;
}

/** What the toggle's label says of agent mode. */
const ABOUT =
  'Agent: the model may run code in new cells of this notebook and answer from the results';
/** What it says where the server turned agent mode off (the server's own refusal line). */
export const AGENT_OFF =
  'Agent mode is turned off on this server (Chapyter.agent).';

/** The label of a policy, e.g. "Ask before every run". */
export function policyLabel(policy: AgentPolicy): string {
  return AGENT_POLICIES.find(p => p.value === policy)?.label ?? policy;
}

/** Build the agent controls over `agent`. */
export function agentControls(agent: AgentController): IAgentControls {
  const node = element('div', 'jp-Chapyter-agentControls');
  const label = element('label', 'jp-Chapyter-agentToggle', { title: ABOUT });
  const toggle = element('input', '', {
    type: 'checkbox',
    'aria-label': 'Agent mode'
  });
  toggle.addEventListener('change', () => {
    agent.enabled = toggle.checked;
  });
  label.append(toggle, document.createTextNode(' Agent'));
  const select = element('select', 'jp-Chapyter-agentPolicy', {
    'aria-label': 'Approval policy',
    title: 'When the agent asks before running code'
  });
  for (const policy of AGENT_POLICIES) {
    select.appendChild(
      element('option', '', { value: policy.value }, policy.label)
    );
  }
  select.addEventListener('change', () => {
    if (isAgentPolicy(select.value)) {
      agent.policy = select.value;
    }
  });
  node.append(label, select);
  return {
    node,
    update(hasNotebook: boolean) {
      const on = agent.enabled && agent.available;
      toggle.checked = on;
      toggle.disabled = !hasNotebook || !agent.available;
      label.title = agent.available ? ABOUT : AGENT_OFF;
      label.classList.toggle('jp-mod-off', !agent.available);
      const floor = agent.policyFloor;
      for (const option of Array.from(select.options)) {
        const locked =
          !!floor &&
          isAgentPolicy(option.value) &&
          looserThan(option.value, floor);
        option.disabled = locked;
        option.title = locked ? 'Not allowed by your administrator' : '';
      }
      select.value = agent.policy;
      select.hidden = !on;
      node.classList.toggle('jp-mod-active', on);
    }
  };
}
