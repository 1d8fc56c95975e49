/**
 * {@link IChatExtension} over the chat's model: what other plugins read of the chat, and
 * what they plug into it (a mode, message parts, code block actions), kept here for the
 * panel to draw. The chat imports none of those plugins: they come to it through the token.
 */

import { ISignal, Signal } from '@lumino/signaling';

import type { INotebookSnapshot } from '../common/snapshot';
import { cellCode } from '../contract';
import type { MenuSource } from './inputMenu';
import type { ChatModel } from './model';
import { SlashCommandRegistry } from './slashCommands';
import {
  CodeBlockAction,
  IChatCard,
  IChatConfig,
  IChatExtension,
  IChatMessage,
  IChatMode,
  IChatRequest,
  ICodeBlockOffer,
  ICodeBlockOrigin,
  IMessagePart,
  IModelInfo,
  ISlashCommand,
  MessagePartFactory
} from './tokens';

/** Options of {@link ChatExtension}. */
export interface IChatExtensionOptions {
  /** The chat's state. */
  model: ChatModel;
  /** `GET config`. */
  config: () => Promise<IChatConfig>;
  /** The snapshot a message sends (whatever the context toggle says). */
  snapshot: () => Promise<INotebookSnapshot | null>;
  /** Bring the chat's panel to the front. */
  show: () => void;
}

/** The chat as other plugins see it, and what they added to it. */
export class ChatExtension implements IChatExtension {
  /** Expose `options.model`. */
  constructor(private _options: IChatExtensionOptions) {}

  /** A plugin added something the panel draws. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The mode set, or null. */
  get mode(): IChatMode | null {
    return this._mode;
  }

  /** Path of the notebook the chat is about, or null. */
  get notebook(): string | null {
    return this._options.model.notebook;
  }

  /** The server's description of the model `name` (the selected one when absent). */
  modelInfo(name?: string | null): IModelInfo | null {
    return name === undefined
      ? this._options.model.modelInfo()
      : this._options.model.modelInfo(name);
  }

  /** `GET config`. */
  config(): Promise<IChatConfig> {
    return this._options.config();
  }

  /** Show the chat and send `text`; rejects while it is busy (about the notebook now: not queued). */
  async ask(text: string): Promise<void> {
    this._options.show();
    const model = this._options.model;
    if (model.state === 'streaming' || !(await model.send(text))) {
      throw new Error('the chat is busy with another reply');
    }
  }

  /** Show the chat and send `text` with `fields` in its body (as an agent turn when `agent`). */
  async send(
    text: string,
    fields: Partial<IChatRequest>,
    agent?: boolean
  ): Promise<void> {
    this._options.show();
    const model = this._options.model;
    // Never queued: a queued message keeps only its text, and these fields must go with it.
    const sent =
      model.state !== 'streaming' &&
      (await model.send(text, [], undefined, [], { fields, agent }));
    if (!sent) {
      throw new Error('the chat is busy with another reply');
    }
  }

  /** The snapshot a message sends; null when the context is off by default. */
  snapshot(): Promise<INotebookSnapshot | null> {
    return this._options.model.contextDefault
      ? this._options.snapshot()
      : Promise.resolve(null);
  }

  /** Let `mode` take the messages while it is enabled. */
  setMode(mode: IChatMode): void {
    this._mode = mode;
    this._options.model.agent = mode;
    this._changed.emit();
  }

  /** Draw a part of every message. */
  addMessagePart(factory: MessagePartFactory): void {
    this._parts.push(factory);
    this._changed.emit();
  }

  /** Offer an action under code blocks. */
  addCodeAction(action: CodeBlockAction): void {
    this._actions.push(action);
    this._changed.emit();
  }

  /** Show `card` while the chat is about its notebook, and bring the chat to the front. */
  showCard(card: IChatCard): { dispose(): void } {
    this.cards.push(card);
    this._options.show();
    this._changed.emit();
    return {
      dispose: () => {
        const at = this.cards.indexOf(card);
        if (at >= 0) {
          this.cards.splice(at, 1);
          card.node.remove();
          this._changed.emit();
        }
      }
    };
  }

  /** The cards shown, oldest first (`chat/cards.ts` draws them). */
  readonly cards: IChatCard[] = [];

  /** The slash commands of the chat input (the built-ins and what plugins added). */
  readonly slashCommands = new SlashCommandRegistry();

  /** What `@` lists in the chat input (set by the plugin; none: nothing). */
  mentionSource: MenuSource | null = null;

  /** Add a slash command to the chat input. */
  addSlashCommand(command: ISlashCommand): void {
    this.slashCommands.add(command);
  }

  /** The parts the plugins draw in `message`. */
  messageParts(message: IChatMessage): IMessagePart[] {
    return this._parts
      .map(factory => factory(message))
      .filter((part): part is IMessagePart => part !== null);
  }

  /**
   * The first action offered for a code block whose source (from the Markdown lexer, as
   * shown) is `code`, passed on as a cell would hold it ({@link cellCode}), as "Insert below"
   * inserts it: the diff shown and the code applied are that one string.
   */
  codeOffer(code: string, origin: ICodeBlockOrigin): ICodeBlockOffer | null {
    const source = cellCode(code);
    for (const action of this._actions) {
      const offer = action(source, origin);
      if (offer) {
        return offer;
      }
    }
    return null;
  }

  private _mode: IChatMode | null = null;
  private _parts: MessagePartFactory[] = [];
  private _actions: CodeBlockAction[] = [];
  private _changed = new Signal<this, void>(this);
}
