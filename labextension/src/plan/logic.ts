/**
 * A plan in the chat, without DOM: whether it may still be edited, the edits (a step's text,
 * up, down, delete, add), the steps Run plan sends (bounded as the server takes them) and
 * how each status is said.
 */

import type { IPlanStep, PlanStatus } from '../common/events';

/** Steps of one plan and characters of one step, as the server takes them. */
export const MAX_PLAN_STEPS = 30;
export const MAX_PLAN_STEP_CHARS = 1000;

/** Whether `plan` is a `/plan` answer's (editable), not one an agent turn followed. */
export function isProposed(plan: readonly IPlanStep[] | undefined): boolean {
  return !!plan?.length && plan.every(step => step.status === 'proposed');
}

/** Move step `index` by `delta` (-1 up, +1 down); whether it moved. */
export function moveStep(
  plan: IPlanStep[],
  index: number,
  delta: number
): boolean {
  const to = index + delta;
  if (index < 0 || index >= plan.length || to < 0 || to >= plan.length) {
    return false;
  }
  const [step] = plan.splice(index, 1);
  plan.splice(to, 0, step);
  return true;
}

/** Delete step `index`; whether there was one. */
export function removeStep(plan: IPlanStep[], index: number): boolean {
  return plan.splice(index, 1).length > 0;
}

/** Add an empty step at the end (not past {@link MAX_PLAN_STEPS}); its index, or -1. */
export function addStep(plan: IPlanStep[]): number {
  if (plan.length >= MAX_PLAN_STEPS) {
    return -1;
  }
  plan.push({ text: '', status: 'proposed', note: '' });
  return plan.length - 1;
}

/** The steps Run plan sends: each on one line, empty ones left out, bounded. */
export function stepsToRun(plan: readonly IPlanStep[]): string[] {
  return plan
    .map(step => step.text.split(/\s+/).join(' ').trim())
    .filter(text => text)
    .slice(0, MAX_PLAN_STEPS)
    .map(text => text.slice(0, MAX_PLAN_STEP_CHARS));
}

/** The message of the agent turn that runs `steps` (what the chat shows and keeps). */
export function runMessage(steps: readonly string[]): string {
  return ['Run this plan:', ...steps.map((s, i) => `${i + 1}. ${s}`)].join(
    '\n'
  );
}

/** How a status is shown: a mark and the words a screen reader says. */
export function statusMark(status: PlanStatus): {
  mark: string;
  label: string;
} {
  switch (status) {
    case 'done':
      return { mark: '\u2713', label: 'done' };
    case 'failed':
      return { mark: '\u2717', label: 'failed' };
    case 'skipped':
      return { mark: '\u2013', label: 'skipped' };
    case 'pending':
      return { mark: '\u25cb', label: 'not done yet' };
    default:
      return { mark: '', label: 'proposed' };
  }
}
