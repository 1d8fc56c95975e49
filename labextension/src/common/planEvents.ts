/**
 * Plan first on the wire: a plan's steps (`plan` event, and a stored message's `plan`), and
 * a step an agent turn marked (`plan_step`), read from untrusted JSON: malformed steps are
 * dropped, every text is kept as text. Held to `tests/vectors/contract.json` like the rest.
 */

/** Where a plan's step stands: proposed (editable), then pending, done, failed, skipped. */
export type PlanStatus = 'proposed' | 'pending' | 'done' | 'failed' | 'skipped';

/** One step of a plan. */
export interface IPlanStep {
  /** The step, one line. */
  text: string;
  /** Where it stands. */
  status: PlanStatus;
  /** One line the model gave when it marked the step ('' when none). */
  note: string;
}

/** `plan`: a `/plan` answer's steps (before `done`), or the plan an agent turn follows. */
export interface IPlanEvent {
  type: 'plan';
  messageId: string;
  steps: IPlanStep[];
}

/** `plan_step`: the agent turn marked step `step` (from 1). */
export interface IPlanStepEvent {
  type: 'plan_step';
  step: number;
  status: PlanStatus;
  note: string;
}

const STATUSES: readonly string[] = [
  'proposed',
  'pending',
  'done',
  'failed',
  'skipped'
];

/** The readable steps of `value` (a list from the server), at most 30. */
export function planSteps(value: unknown): IPlanStep[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter(
      v =>
        v &&
        typeof v === 'object' &&
        typeof v.text === 'string' &&
        v.text.trim() &&
        STATUSES.includes(v.status)
    )
    .slice(0, 30)
    .map(v => ({
      text: v.text as string,
      status: v.status as PlanStatus,
      note: typeof v.note === 'string' ? v.note : ''
    }));
}

/** A `plan` event's data, or null when it cannot be read. */
export function planEvent(d: { [key: string]: unknown }): IPlanEvent | null {
  if (!Array.isArray(d.steps)) {
    return null;
  }
  const messageId = typeof d.message_id === 'string' ? d.message_id : '';
  return { type: 'plan', messageId, steps: planSteps(d.steps) };
}

/** A `plan_step` event's data, or null when it cannot be read. */
export function planStepEvent(d: {
  [key: string]: unknown;
}): IPlanStepEvent | null {
  const { step, status, note } = d;
  if (
    typeof step !== 'number' ||
    !Number.isInteger(step) ||
    step < 1 ||
    !['done', 'failed', 'skipped'].includes(status as string)
  ) {
    return null;
  }
  return {
    type: 'plan_step',
    step,
    status: status as PlanStatus,
    note: typeof note === 'string' ? note : ''
  };
}

/** Apply a plan event to the message it belongs to (its `plan`); whether it changed. */
export function applyPlanEvent(
  message: { plan?: IPlanStep[] },
  event: IPlanEvent | IPlanStepEvent
): boolean {
  if (event.type === 'plan') {
    message.plan = event.steps;
    return true;
  }
  const step = message.plan?.[event.step - 1];
  if (!step) {
    return false;
  }
  step.status = event.status;
  step.note = event.note;
  return true;
}
