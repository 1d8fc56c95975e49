/**
 * A plan drawn in its chat message: a `/plan` answer's steps as an editable list (each
 * step's text in a labelled field; Up, Down and Delete buttons, Alt+Arrow keys to move; Add
 * step; Run plan), or, in the agent turn that follows a plan, each step with its status
 * (done, failed, skipped, not done yet), marked live as the turn goes.
 *
 * The steps are untrusted text (the model's): they are shown as text and field values only.
 */

import type { IPlanStep } from '../common/events';
import { button, element } from '../common/dom';
import type { IChatMessage, IMessagePart } from '../chat/tokens';
import {
  addStep,
  isProposed,
  moveStep,
  removeStep,
  statusMark,
  stepsToRun
} from './logic';

/** What the plan view needs of the chat. */
export interface IPlanViewHost {
  /** Run `steps` as an agent turn (rejects with one line when it cannot start). */
  run(steps: string[]): Promise<void>;
}

/** The plan part of one message (nothing when the message has no plan). */
export class PlanView implements IMessagePart {
  /** Draw `message`'s plan, if it has or gets one. */
  constructor(
    readonly message: IChatMessage,
    private _host: IPlanViewHost
  ) {
    this.node = element('div', 'jp-Chapyter-plan jp-Chapyter-planProgress');
    this.pending = element('div', 'jp-Chapyter-plan jp-Chapyter-planDraft');
    this.node.hidden = true;
    this.pending.hidden = true;
    this.update();
  }

  /** The plan an agent turn follows, above its text. */
  readonly node: HTMLElement;
  /** A proposed plan, editable, after the answer's text. */
  readonly pending: HTMLElement;
  /** A plan never keeps the answer waiting. */
  readonly waiting = false;

  /** Draw the plan as it is now (once per change: typing in a step is not redrawn). */
  update(): void {
    const plan = this.message.plan;
    const key = JSON.stringify(plan ?? null) + this._note;
    if (key === this._drawn) {
      return;
    }
    this._drawn = key;
    const proposed = isProposed(plan) || (this._editing && !!plan);
    this.node.hidden = !plan?.length || proposed;
    this.pending.hidden = !proposed;
    if (proposed && plan) {
      this._editing = true;
      this._drawDraft(plan);
    } else if (plan?.length) {
      this._drawProgress(plan);
    }
  }

  /** Nothing to let go of: the nodes leave with the message's. */
  dispose(): void {
    this._drawn = '';
  }

  private _drawProgress(plan: IPlanStep[]): void {
    const list = element('ol', 'jp-Chapyter-planSteps', {
      'aria-label': 'Plan followed'
    });
    for (const step of plan) {
      const { mark, label } = statusMark(step.status);
      const item = element('li', `jp-Chapyter-planStep jp-mod-${step.status}`);
      item.append(
        element(
          'span',
          'jp-Chapyter-planMark',
          { 'aria-hidden': 'true' },
          mark
        ),
        element('span', 'jp-Chapyter-planText', {}, step.text),
        element('span', 'jp-Chapyter-planStatus', {}, ` (${label})`)
      );
      if (step.note) {
        item.append(element('span', 'jp-Chapyter-planNote', {}, step.note));
      }
      list.append(item);
    }
    this.node.replaceChildren(
      element('div', 'jp-Chapyter-planTitle', {}, 'Plan'),
      list
    );
  }

  private _drawDraft(plan: IPlanStep[]): void {
    const list = element('ol', 'jp-Chapyter-planSteps', {
      'aria-label': 'Plan: edit, reorder or delete steps, then run it'
    });
    plan.forEach((step, index) => {
      const n = index + 1;
      const item = element('li', 'jp-Chapyter-planStep jp-mod-proposed');
      const field = element('input', 'jp-Chapyter-planInput', {
        type: 'text',
        'aria-label': `Step ${n}`,
        maxlength: '1000'
      });
      field.value = step.text;
      field.addEventListener('input', () => {
        step.text = field.value;
        this._drawn = JSON.stringify(plan) + this._note; // no redraw while typing
      });
      field.addEventListener('keydown', event => {
        if (
          event.altKey &&
          (event.key === 'ArrowUp' || event.key === 'ArrowDown')
        ) {
          event.preventDefault();
          this._change(
            () => moveStep(plan, index, event.key === 'ArrowUp' ? -1 : 1),
            index + (event.key === 'ArrowUp' ? -1 : 1),
            'input'
          );
        }
      });
      const up = button(
        'jp-Chapyter-planUp',
        `Move step ${n} up`,
        '\u2191',
        null
      );
      up.disabled = index === 0;
      up.addEventListener('click', () =>
        this._change(() => moveStep(plan, index, -1), index - 1, 'up')
      );
      const down = button(
        'jp-Chapyter-planDown',
        `Move step ${n} down`,
        '\u2193',
        null
      );
      down.disabled = index === plan.length - 1;
      down.addEventListener('click', () =>
        this._change(() => moveStep(plan, index, 1), index + 1, 'down')
      );
      const remove = button(
        'jp-Chapyter-planDelete',
        `Delete step ${n}`,
        '\u2715',
        null
      );
      remove.addEventListener('click', () =>
        this._change(
          () => removeStep(plan, index),
          Math.min(index, plan.length - 2),
          'input'
        )
      );
      const number = element(
        'span',
        'jp-Chapyter-planNumber',
        { 'aria-hidden': 'true' },
        `${n}.`
      );
      item.append(number, field, up, down, remove);
      list.append(item);
    });
    const add = button('jp-Chapyter-planAdd', 'Add a step', 'Add step', null);
    add.addEventListener('click', () =>
      this._change(() => addStep(plan) >= 0, plan.length, 'input')
    );
    const run = button(
      'jp-Chapyter-planRun',
      'Run plan as an agent turn',
      'Run plan',
      null
    );
    run.classList.add('jp-mod-accept');
    run.disabled = this._running || stepsToRun(plan).length === 0;
    run.addEventListener('click', () => void this._run(plan));
    const status = element(
      'div',
      'jp-Chapyter-planNote',
      { role: 'status' },
      this._note
    );
    const actions = element('div', 'jp-Chapyter-planActions');
    actions.append(add, run);
    this.pending.replaceChildren(
      element(
        'div',
        'jp-Chapyter-planTitle',
        {},
        'Plan (edit it, then run it)'
      ),
      list,
      actions,
      status
    );
  }

  /** Apply an edit, redraw, and put the focus back on step `focus`'s control `kind`. */
  private _change(
    edit: () => boolean,
    focus: number,
    kind: 'input' | 'up' | 'down'
  ): void {
    if (!edit()) {
      return;
    }
    this._drawn = '';
    this.update();
    const items = this.pending.querySelectorAll('.jp-Chapyter-planStep');
    const item = items[Math.max(0, Math.min(focus, items.length - 1))];
    const selector = {
      input: 'input',
      up: '.jp-Chapyter-planUp',
      down: '.jp-Chapyter-planDown'
    }[kind];
    let target = item?.querySelector<HTMLElement>(selector);
    if (target && (target as HTMLButtonElement).disabled) {
      target = item?.querySelector<HTMLElement>('input');
    }
    (
      target ?? this.pending.querySelector<HTMLElement>('.jp-Chapyter-planAdd')
    )?.focus();
  }

  private async _run(plan: IPlanStep[]): Promise<void> {
    const steps = stepsToRun(plan);
    if (!steps.length || this._running) {
      return;
    }
    this._running = true;
    this._note = 'Running as an agent turn below…';
    this._drawn = '';
    this.update();
    try {
      await this._host.run(steps);
      this._note = '';
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      this._note = `Could not run the plan: ${text.split(/\s+/).join(' ')}`;
    } finally {
      this._running = false;
      this._drawn = '';
      this.update();
    }
  }

  private _drawn = '';
  private _editing = false;
  private _running = false;
  private _note = '';
}
