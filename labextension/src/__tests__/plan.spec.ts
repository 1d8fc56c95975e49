/**
 * Plan first without a browser: the plan's edits and what Run plan sends (`plan/logic.ts`),
 * and the `plan` and `plan_step` events read from the wire and applied to their message.
 */

import { decodeEvent, IPlanStep } from '../common/events';
import { applyPlanEvent, planSteps } from '../common/planEvents';
import {
  addStep,
  isProposed,
  moveStep,
  removeStep,
  runMessage,
  stepsToRun
} from '../plan/logic';

function plan(...texts: string[]): IPlanStep[] {
  return texts.map(text => ({ text, status: 'proposed', note: '' }));
}

describe('a proposed plan', () => {
  it('is edited, reordered, shortened and grown', () => {
    const steps = plan('load', 'sum', 'plot');
    expect(isProposed(steps)).toBe(true);
    expect(moveStep(steps, 0, -1)).toBe(false);
    expect(moveStep(steps, 2, -1)).toBe(true);
    expect(steps.map(s => s.text)).toEqual(['load', 'plot', 'sum']);
    expect(removeStep(steps, 0)).toBe(true);
    expect(addStep(steps)).toBe(2);
    steps[2].text = '  report\n the totals ';
    expect(stepsToRun(steps)).toEqual(['plot', 'sum', 'report the totals']);
    expect(runMessage(['a', 'b'])).toBe('Run this plan:\n1. a\n2. b');
  });

  it('sends at most 30 steps of at most 1000 characters, none empty', () => {
    const long = plan(...Array.from({ length: 40 }, () => 'x'.repeat(2000)));
    long[0].text = '   ';
    const run = stepsToRun(long);
    expect(run).toHaveLength(30);
    expect(run.every(s => s.length === 1000)).toBe(true);
    const full = plan(...Array.from({ length: 30 }, () => 's'));
    expect(addStep(full)).toBe(-1);
  });

  it('is not editable once it is an agent turn’s', () => {
    expect(isProposed([{ text: 'a', status: 'pending', note: '' }])).toBe(
      false
    );
    expect(isProposed([])).toBe(false);
  });
});

describe('the plan events', () => {
  it('are read from the wire and marked on their message', () => {
    const event = decodeEvent({
      event: 'plan',
      data: JSON.stringify({
        message_id: 'm',
        steps: [
          { text: 'load', status: 'pending', note: '' },
          { text: '<b>sum</b>', status: 'pending', note: '' },
          { text: '', status: 'pending' },
          { text: 'x', status: 'finished' }
        ]
      })
    });
    expect(event).toEqual({
      type: 'plan',
      messageId: 'm',
      steps: [
        { text: 'load', status: 'pending', note: '' },
        { text: '<b>sum</b>', status: 'pending', note: '' }
      ]
    });
    const message: { plan?: IPlanStep[] } = {};
    applyPlanEvent(message, event as any);
    const mark = decodeEvent({
      event: 'plan_step',
      data: JSON.stringify({ step: 2, status: 'failed', note: 'no column' })
    });
    expect(applyPlanEvent(message, mark as any)).toBe(true);
    expect(message.plan![1]).toEqual({
      text: '<b>sum</b>',
      status: 'failed',
      note: 'no column'
    });
    const outside = decodeEvent({
      event: 'plan_step',
      data: JSON.stringify({ step: 9, status: 'done', note: '' })
    });
    expect(applyPlanEvent(message, outside as any)).toBe(false);
  });

  it('unreadable ones are one error line', () => {
    for (const data of [
      { step: 0, status: 'done' },
      { step: 1, status: 'x' }
    ]) {
      const event = decodeEvent({
        event: 'plan_step',
        data: JSON.stringify(data)
      });
      expect(event?.type).toBe('error');
    }
    expect(planSteps('nope')).toEqual([]);
  });
});
