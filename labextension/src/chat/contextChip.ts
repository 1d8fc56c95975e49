/**
 * The context chip above the input: what goes to the model with the next message (the
 * server's summary, the project rules, what a mode adds), openable to read it all, and the
 * toggle that sends it or not.
 */

import { element } from '../common/dom';
import type { ChatModel } from './model';
import type { IChatMode } from './tokens';

/** The chip and its toggle, drawn from the model (and the mode, while it is enabled). */
export class ContextChip {
  /** Build the chip over `model`. */
  constructor(private _model: ChatModel) {
    this.node = element('div', 'jp-Chapyter-chatContext');
    this._chip = element('details', 'jp-Chapyter-chatChip');
    this._summary = element('summary', 'jp-Chapyter-chatChipSummary', {
      title: 'What goes to the model with your message; open to read it all'
    });
    this._text = element('pre', 'jp-Chapyter-chatContextText', {
      'aria-label': 'Context that will be sent'
    });
    this._chip.append(this._summary, this._text);
    const toggleLabel = element('label', 'jp-Chapyter-chatContextToggle', {
      title: 'Send the notebook context with the next message'
    });
    this._toggle = element('input', '', {
      type: 'checkbox',
      'aria-label': 'Include notebook context'
    });
    this._toggle.addEventListener('change', () => {
      this._model.contextEnabled = this._toggle.checked;
    });
    toggleLabel.append(this._toggle, document.createTextNode(' Context'));
    this.node.append(this._chip, toggleLabel);
  }

  /** The chip and its toggle. */
  readonly node: HTMLElement;

  /** Draw what the next message would send; `mode` is the enabled mode, if any. */
  update(mode: IChatMode | null): void {
    const model = this._model;
    const context = model.context;
    this._toggle.checked = model.contextEnabled;
    this._toggle.disabled = !model.notebook;
    this._chip.classList.toggle('jp-mod-off', !model.contextEnabled);
    let summary: string;
    if (!model.notebook) {
      summary = 'No notebook';
    } else if (!model.contextEnabled) {
      summary = 'No context with the next message';
    } else {
      summary = context?.summary ?? 'Reading the notebook…';
    }
    const rules = model.contextEnabled ? (context?.rules ?? []) : [];
    if (rules.length && model.notebook) {
      // The project's rules are in force: say so where the user looks before sending.
      summary += ` · Rules: ${rules.map(r => r.path).join(', ')}`;
    }
    const note = mode && model.notebook ? mode.chipNote() : '';
    if (note) {
      summary += ` · ${note}`;
    }
    this._summary.textContent = summary;
    const ruleLines = rules.length
      ? 'Project rules in the system prompt: ' +
        rules.map(r => `${r.path} (${r.chars} characters)`).join(', ') +
        '\n\n'
      : '';
    const details = mode?.chipDetails() ?? '';
    this._text.textContent = model.contextEnabled
      ? (details ? details + '\n\n' : '') +
        ruleLines +
        (context?.text || 'Nothing to send.')
      : 'The next message goes without the notebook context.';
  }

  private _chip: HTMLDetailsElement;
  private _summary: HTMLElement;
  private _text: HTMLElement;
  private _toggle: HTMLInputElement;
}
