/**
 * What the chat input adds to the textarea: the popup of slash commands and
 * @-mentions ({@link InputMenu}), the chips of what is mentioned, one status line, and the
 * slash command run instead of a message being sent. It listens on the input row in the
 * capture phase, so the panel's own keys (Enter sends) see only what it leaves.
 */

import type { CommandRegistry } from '@lumino/commands';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';

import { cellNameIn } from '../cellNames';
import { element } from '../common/dom';
import type { ChatExtension } from './extension';
import { InputMenu } from './inputMenu';
import type { IMenuItem } from './inputMenuLogic';
import { MentionChips } from './mentionChips';
import { notebookMentionDetails } from './mentionDetails';
import {
  IMentionItem,
  NotebookMentions,
  VariableReader
} from './mentionSources';
import type { ChatModel } from './model';
import { builtinCommands, IBuiltinTarget, parseSlash } from './slashCommands';
import { ChatCommandIDs } from './tokens';

/** The chat input's menu, chips and slash commands, over the panel's textarea. */
export class ChatInput {
  /** Attach to `input` (already in its row) of the panel over `model`. */
  constructor(
    private _input: HTMLTextAreaElement,
    model: ChatModel,
    private _extension: ChatExtension
  ) {
    this.chips = new MentionChips(() => _input.focus());
    this.menu = new InputMenu(
      _input,
      trigger =>
        trigger.char === '/'
          ? _extension.slashCommands.menuItems(trigger.query)
          : (_extension.mentionSource?.(trigger) ?? []),
      item => this._picked(item)
    );
    this._status = element('div', 'jp-Chapyter-chatInputStatus', {
      role: 'status'
    });
    this._status.hidden = true;
    this.node = element('div', 'jp-Chapyter-chatInputExtras');
    this.node.append(this.chips.node, this._status, this.menu.node);
    // The chips go with the message typed here (not with Explain's, say).
    model.mentionsFor = text =>
      text === this._sending ? this.chips.take() : [];
    _input.addEventListener('input', () => {
      this._say('');
      void this.menu.update();
    });
    const row = _input.parentElement ?? _input;
    row.addEventListener('keydown', event => this._onKeydown(event), true);
    row.addEventListener('click', event => this._onClick(event), true);
  }

  /** Chips, status line and menu: placed right above the input row. */
  readonly node: HTMLElement;
  /** The popup. */
  readonly menu: InputMenu;
  /** The mentions the next message sends. */
  readonly chips: MentionChips;

  /** Run `text` if it is a slash command; true when it was one (nothing is sent then). */
  async runSlash(text: string): Promise<boolean> {
    if (!parseSlash(text)) {
      return false;
    }
    this._input.value = '';
    this._input.dispatchEvent(new Event('input', { bubbles: true }));
    this._say((await this._extension.slashCommands.run(text)) ?? '');
    return true;
  }

  private _onKeydown(event: KeyboardEvent): void {
    if (event.target !== this._input) {
      return;
    }
    if (this._typedInFull(event)) {
      this.menu.close(); // and Enter goes on: the command runs
    } else if (this.menu.keydown(event)) {
      return;
    }
    const input = this._input;
    if (event.key === 'Backspace' && !input.value && this.chips.removeLast()) {
      event.preventDefault();
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      this._sendKey(event);
    }
  }

  /** Enter on the slash command typed in full runs it (picking it would change nothing). */
  private _typedInFull(event: KeyboardEvent): boolean {
    const item = this.menu.items[this.menu.active];
    return (
      event.key === 'Enter' &&
      !event.shiftKey &&
      !!item?.id.startsWith('slash-') &&
      item.insert.trim() === this._input.value.trim()
    );
  }

  private _onClick(event: MouseEvent): void {
    const target = event.target as HTMLElement | null;
    if (target?.closest?.('.jp-Chapyter-chatSend')) {
      this._sendKey(event);
    }
  }

  /** Enter or Send: a slash command runs here; a message goes on with its chips. */
  private _sendKey(event: Event): void {
    const text = this._input.value;
    if (parseSlash(text)) {
      event.preventDefault();
      event.stopPropagation();
      void this.runSlash(text);
      return;
    }
    this._sending = text;
  }

  private _picked(item: IMenuItem): void {
    const mention = (item as IMentionItem).mention;
    if (mention) {
      this.chips.add(mention);
    }
    if (item.keepOpen) {
      void this.menu.update();
    }
  }

  private _say(line: string): void {
    this._status.textContent = line;
    this._status.hidden = !line;
  }

  private _status: HTMLElement;
  private _sending: string | null = null;
}

/** The nbformat outputs of a cell model, if it has any. */
function hasError(model: { toJSON(): unknown }): boolean {
  const outputs = (model.toJSON() as { outputs?: { output_type?: string }[] })
    .outputs;
  return !!outputs?.some(output => output.output_type === 'error');
}

/** Fix's commands, by id (the chat does not import another feature). */
const FIX_CELL = 'chapyter-ext:fix-cell';
const EXPLAIN_ERROR = 'chapyter-ext:explain-error';

/** What the built-in slash commands act on, over JupyterLab. */
export function builtinTarget(
  commands: CommandRegistry,
  tracker: INotebookTracker,
  model: ChatModel,
  extension: ChatExtension
): IBuiltinTarget {
  return {
    newChat: () => model.newChat(),
    exportChat: async () => {
      if (!model.chatId || !model.messages.length) {
        return 'Nothing to export yet.';
      }
      await commands.execute(ChatCommandIDs.exportChat);
    },
    models: () => model.models,
    selectModel: name => {
      model.selectedModel = name;
    },
    fixLastError: async () => {
      const cells = tracker.currentWidget?.content.widgets ?? [];
      const failing = [...cells]
        .reverse()
        .find(cell => cell.model.type === 'code' && hasError(cell.model));
      if (!failing) {
        return false;
      }
      if (!commands.hasCommand(FIX_CELL)) {
        throw new Error('Fix is not installed');
      }
      await commands.execute(FIX_CELL, { cellId: failing.model.id });
      return true;
    },
    explainActiveCell: async () => {
      const notebook = tracker.currentWidget?.content;
      const cell = notebook?.activeCell;
      if (!notebook || !cell) {
        return false;
      }
      if (hasError(cell.model) && commands.hasCommand(EXPLAIN_ERROR)) {
        await commands.execute(EXPLAIN_ERROR, { cellId: cell.model.id });
        return true;
      }
      const cells = notebook.widgets.map(widget => widget.model);
      const name = cellNameIn(cells, notebook.activeCellIndex);
      await extension.ask(`Explain what ${name} does.`);
      return true;
    }
  };
}

/**
 * Give the chat input of `extension` what `@` lists (the active notebook, its kernel's
 * variables read by `variables`, the server's files) and the built-in slash commands.
 */
export function setUpChatInput(
  app: {
    commands: CommandRegistry;
    serviceManager: { contents: Contents.IManager };
  },
  tracker: INotebookTracker,
  model: ChatModel,
  extension: ChatExtension,
  variables: VariableReader
): void {
  const mentions = new NotebookMentions(
    tracker,
    variables,
    app.serviceManager.contents
  );
  extension.mentionSource = trigger => mentions.items(trigger);
  model.mentionDetails = notebookMentionDetails(tracker);
  const target = builtinTarget(app.commands, tracker, model, extension);
  for (const command of builtinCommands(target)) {
    extension.addSlashCommand(command);
  }
}
