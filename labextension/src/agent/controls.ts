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

/** The label of a policy, e.g. "Ask before every run". */
export function policyLabel(policy: AgentPolicy): string {
  return AGENT_POLICIES.find(p => p.value === policy)?.label ?? policy;
}

/** Build the agent controls over `agent`. */
export function agentControls(agent: AgentController): IAgentControls {
  const node = element('div', 'jp-Chapyter-agentControls');
  const label = element('label', 'jp-Chapyter-agentToggle', {
    title:
      'Agent: the model may run code in new cells of this notebook and answer from the results'
  });
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
      toggle.checked = agent.enabled;
      toggle.disabled = !hasNotebook;
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
      select.hidden = !agent.enabled;
      node.classList.toggle('jp-mod-active', agent.enabled);
    }
  };
}
