/**
 * Ids and shapes of the chat sidebar, and {@link IChatExtension}: the token through which
 * other plugins (agent mode, Fix, ...) plug into the chat. The one file of `chat/` that other
 * feature folders may import. Pure declarations: the chat model and its tests import this
 * without pulling in any JupyterLab runtime code.
 */

import { Token } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';

import type { ChatEvent, IAnswerParts } from '../common/events';
import type {
  IChatContext,
  IContextPreview,
  INotebookSnapshot
} from '../common/snapshot';
import type { IChatExport, IExportSaved } from '../common/exportBodies';

export type { IChatContext, IContextPreview };

/** Plugin ids of the chat. */
export namespace ChatPluginIDs {
  /** The sidebar, its commands and settings (schema/chat.json). */
  export const chat = 'chapyter-ext:chat';
}

/** Command ids of the chat. */
export namespace ChatCommandIDs {
  /** Show the chat sidebar and put the cursor in its input. */
  export const open = 'chapyter-ext:open-chat';
  /** Start a new chat for the active notebook (earlier chats stay on the server). */
  export const newChat = 'chapyter-ext:new-chat';
  /** Show the chat and send `text` with the notebook's context (Explain uses it). */
  export const ask = 'chapyter-ext:ask-chat';
  /** Write the current chat as Markdown next to its notebook (`<name>.chat.md`) and open it. */
  export const exportChat = 'chapyter-ext:export-chat';
  /** Download the current chat as a Markdown file. */
  export const downloadChat = 'chapyter-ext:download-chat';
  /** The active notebook's context snapshot, as a chat message sends it (null: none). */
  export const snapshot = 'chapyter-ext:chat-snapshot';
}

/** A model the server offers (`GET chapyter-ext/config`). */
export interface IModelInfo {
  /** Name the user picks; what `POST chat` takes as `model`. */
  name: string;
  /** Model id sent to the endpoint. */
  model: string;
  /** Host of the endpoint (no key, no full URL). */
  host: string;
  /** Whether this is the bundled local model (tiny, offline). */
  local?: boolean;
  /** One line to show the user about this model, e.g. how to configure a better one. */
  notice?: string;
  /** Review first (`Chapyter.local_review`): its code is inserted in the chat, never run. */
  review_first?: boolean;
  /** Agent turns: whether the model gets OpenAI tools (else fenced code blocks). */
  tools?: boolean;
  /** Agent turns: whether the model sees figures as images. */
  images?: boolean;
}

/** The body of `GET chapyter-ext/config`. */
export interface IChatConfig {
  /** Models in configuration order. */
  models: IModelInfo[];
  /** Name of the model used unless the user picks another. */
  default: string;
  /** Version of the server extension. */
  version: string;
  /** Characters of context per request (`Chapyter.context_budget`): the one budget. */
  context_budget?: number;
  /** Agent turns: the server's default policy and caps, its tools and MCP servers. */
  agent?: {
    policy?: string;
    max_steps?: number;
    time_limit?: number;
    /** The tool records the browser may show (the installed ones, the MCP tools known). */
    tools?: { name: string; label: string; server?: string }[];
    /** The configured MCP servers (never a command, URL or key). */
    mcp_servers?: { name: string; running?: boolean }[];
    /** The loosest policy the administrator allows (Chapyter.locked), if locked. */
    policy_floor?: string;
  };
  /** Whether saving a notebook stores its chats in its metadata (`Chapyter.save_chat_in_notebook`). */
  save_chat_in_notebook?: boolean;
  /** Whether inline completion is on for this server (Chapyter.inline_completion). */
  inline_completion?: boolean;
  /** The features on for everyone using this server (`Chapyter.chat`, `agent`, ...). */
  features?: IServerFeatures;
  /** One line per setting a lock or a value that could not be used replaced. */
  notices?: string[];
}

/** `GET config`'s `features`: whether each is on (absent: on). */
export interface IServerFeatures {
  /** The AI Chat (`Chapyter.chat`). */
  chat?: boolean;
  /** Agent mode (`Chapyter.agent`; off when the chat is). */
  agent?: boolean;
  /** Inline completion (`Chapyter.inline_completion`). */
  inline_completion?: boolean;
  /** The agent's MCP tools (`Chapyter.mcp`). */
  mcp?: boolean;
}

/** What the chat says where the server turned it off (the server's own refusal line). */
export const CHAT_OFF =
  'The AI Chat is turned off on this server (Chapyter.chat).';

/** Where a message stands. */
export type MessageStatus = 'complete' | 'stopped' | 'error' | 'streaming';

/**
 * One message of a chat, as the history endpoint serves it (plus local state); an answer's
 * parts (steps, halt, usage, code-block checks, checked numbers) as `done` carries them.
 */
export interface IChatMessage extends IAnswerParts {
  /** Message id (a local id until the server names it). */
  id: string;
  /** Who wrote it. */
  role: 'user' | 'assistant';
  /** Its text: Markdown for the assistant. */
  content: string;
  /** Name of the model that answered (or was asked). */
  model: string;
  /** When it was written (ISO 8601), empty while streaming. */
  created: string;
  /** complete, stopped, error, or streaming while tokens arrive. */
  status: MessageStatus;
  /** Why it failed, one line (status "error" only). */
  error?: string;
  /**
   * Came with the notebook's file (`metadata.chapyter.chat`), as the server marked it when
   * it took the chat: shown read-only, the cells and approvals its steps name never used.
   */
  imported?: boolean;
  /** User messages: what the user @-mentioned (shown as chips; absent: none). */
  mentions?: IChatMention[];
  /** User messages: the files that went with it, without their data (absent: none). */
  attachments?: IAttachmentNote[];
}

/** What an @-mention names; sent with its message (`mentions`) and kept with it. */
export interface IChatMention {
  /** A kernel variable, a notebook cell, or a file under the server root. */
  kind: 'variable' | 'cell' | 'file';
  /** The variable's name (kind "variable"). */
  name?: string;
  /** The cell's id (kind "cell"). */
  cellId?: string;
  /** The file's contents path (kind "file"). */
  path?: string;
  /** What its chip says, e.g. "df", "cell [4]", "data/sales.csv". */
  label: string;
}

/** A command typed as `/name args` in the chat input; see `chat/slashCommands.ts`. */
export interface ISlashCommand {
  /** Its name, without the slash: `[a-z][a-z0-9-]*`. */
  name: string;
  /** One line listed beside it when `/` is typed. */
  description: string;
  /** What follows the name, as listed (e.g. "NAME"); none: it takes nothing. */
  args?: string;
  /** Completions of its argument (e.g. model names) for what is typed so far. */
  complete?(args: string): string[];
  /** Run it with what followed its name; a one line to show the user, or nothing. */
  run(args: string): Promise<string | void> | string | void;
}

/** What a stored message keeps of a file that went with it (no data): name, MIME type, bytes. */
export interface IAttachmentNote {
  name: string;
  type: string;
  size: number;
}

/** A file as `POST chat` and `POST agent` take it (`chat/attachmentRules.ts`): data in base64. */
export interface IAttachment extends IAttachmentNote {
  data: string;
}

/** The body of `GET chapyter-ext/history` (and of the other history calls). */
export interface IHistoryView {
  /** The current chat of the notebook. */
  chat_id: string;
  /** Its messages, oldest first. */
  messages: IChatMessage[];
  /** Ids of every chat of the notebook. */
  chats: string[];
  /** The notebook path as the server normalised it. */
  notebook?: string;
  /** The notebook's stable id on the server ('' until it has a history): its metadata's. */
  notebook_id?: string;
  /** Something to tell the user once, e.g. that part of the history was damaged. */
  notice?: string;
  /** What every chat of the notebook used together. */
  usage?: unknown;
}

export type { IChatExport, IExportSaved };

/** What an open notebook's metadata says of its chat (`contract/notebookChat.ts`). */
export interface INotebookChatMetadata {
  /** Its stable id, or null. */
  notebookId: string | null;
  /** The chat saved in it (`metadata.chapyter.chat`, as it is), or null. */
  storedChat: unknown;
}

/**
 * The open notebooks' own metadata, as the chat needs it: the plugin passes one over the
 * notebook tracker (`chat/identity.ts`); tests pass a fake.
 */
export interface INotebookIdentity {
  /** The metadata of the notebook open at `path`, once its content is loaded; null if it is not open. */
  read(path: string): Promise<INotebookChatMetadata | null>;
  /** Set the notebook's id in its metadata (the notebook becomes unsaved); false if it is not open. */
  write(path: string, notebookId: string): boolean;
}

/** The body of `POST chapyter-ext/chat`. */
export interface IChatRequest {
  /** Contents path of the notebook the chat belongs to. */
  notebook: string;
  /** The chat to continue (the current one when absent). */
  chat_id?: string;
  /** What the user asked. */
  message: string;
  /** What the notebook and its kernel show; the server assembles it into text. */
  context?: INotebookSnapshot;
  /** Name of the model to ask (the default when absent). */
  model?: string;
  /** The stable id in the notebook's metadata, by which the server finds its chats after a move. */
  notebook_id?: string;
  /** Agent turns: the approval policy ("ask", "risky", "never"; the server's default when absent). */
  policy?: string;
  /** A server slash command applied to the message (`GET commands`). */
  command?: string;
  /** What the user @-mentioned (only when there is something: `mentionsField`). */
  mentions?: IChatMention[];
  /** Files dropped, pasted or picked (only when there are some: `attachmentsField`). */
  attachments?: IAttachment[];
  /** Answer with a plan's numbered steps only (`/plan`; nothing runs). */
  plan?: boolean;
  /** Agent turns: the plan to follow, as the user edited it (Run plan). */
  plan_steps?: string[];
}

/**
 * Runs a message as an agent turn instead of a plain reply (`agent/`): the chat model asks
 * it before each message, so the agent's code stays out of the chat's state machine.
 */
export interface IChatTurnHook {
  /** Whether the next message goes as an agent turn. */
  readonly enabled: boolean;
  /**
   * Start the turn of `request` whose answer is `reply`: the typed events to apply, while
   * the hook runs the steps (`redraw` says the reply's steps changed).
   */
  open(
    request: IChatRequest,
    reply: IChatMessage,
    signal: AbortSignal,
    redraw: () => void
  ): Promise<AsyncIterable<ChatEvent>>;
  /** Stop was pressed for `reply`: end the steps (interrupt a running cell). */
  stop(reply: IChatMessage): void;
}

/** A failed call to the server: `kind` as in `{"error": {"kind", "message"}}`. */
export class ChatRequestError extends Error {
  /** Build one; `message` is shown to the user as it is. */
  constructor(
    readonly kind: string,
    message: string,
    readonly status: number | null = null
  ) {
    super(message);
    this.name = 'ChatRequestError';
  }
}

/**
 * The server calls the chat model makes. The plugin passes the real one (`chat/client.ts`);
 * tests pass a fake, so the model is tested without a server or a browser.
 */
export interface IChatClient {
  /** `GET config`. */
  config(): Promise<IChatConfig>;
  /**
   * `POST chat`: the reply's typed events (`common/events.ts`). Rejects with a
   * {@link ChatRequestError} when the server refuses the request; aborting `signal` ends the
   * stream (and the server stops the model).
   */
  chat(
    request: IChatRequest,
    signal: AbortSignal
  ): Promise<AsyncIterable<ChatEvent>>;
  /**
   * `POST context`: the text and chip `message` (the draft; what it names comes first)
   * would send now for `snapshot`.
   */
  context(
    snapshot: INotebookSnapshot,
    message?: string
  ): Promise<IContextPreview>;
  /** `POST chat/stop`: whether a reply was still streaming. */
  stop(messageId: string): Promise<boolean>;
  /** `GET history?notebook=[&notebook_id=]`. */
  history(notebook: string, notebookId?: string | null): Promise<IHistoryView>;
  /** `POST history/new`. */
  newChat(notebook: string, notebookId?: string | null): Promise<IHistoryView>;
  /** `DELETE history?notebook=`. */
  clearHistory(
    notebook: string,
    notebookId?: string | null
  ): Promise<IHistoryView>;
  /** `POST history/import`: the chat a notebook carries, where the server has none for it. */
  importChat(
    notebook: string,
    notebookId: string | null,
    chat: unknown
  ): Promise<IHistoryView>;
  /** `GET history/export`: the current chat (or `chatId`) as Markdown. */
  exportChat(
    notebook: string,
    notebookId?: string | null,
    chatId?: string | null
  ): Promise<IChatExport>;
  /**
   * `POST history/export`: the current chat (or `chatId`) written next to the notebook by
   * the server; a file already there is replaced only when `replace` is its path.
   */
  saveExport(
    notebook: string,
    notebookId: string | null,
    chatId: string | null,
    replace: string | null
  ): Promise<IExportSaved>;
}

/** User settings of the chat (schema/chat.json). */
export interface IChatSettings {
  /** Side area the panel lives in. */
  side: 'left' | 'right';
  /** Whether the context toggle starts on. */
  sendContext: boolean;
  /** Cells above and below the active cell that go with it. */
  neighbourCells: number;
  /** Whether the kernel's variables go with the context. */
  includeVariables: boolean;
  /** Name of the model picked last ('' for the server's default). */
  model: string;
  /** Whether messages go as agent turns (the model runs code in the notebook). */
  agentMode: boolean;
  /** When agent turns ask before running code: "ask", "risky", "never" ('' for the server's default). */
  agentPolicy: '' | 'ask' | 'risky' | 'never';
}

/** Defaults of {@link IChatSettings}, as in the schema. */
export const DEFAULT_CHAT_SETTINGS: IChatSettings = {
  side: 'right',
  sendContext: true,
  neighbourCells: 1,
  includeVariables: true,
  model: '',
  agentMode: false,
  agentPolicy: ''
};

/** A part of a message drawn by another plugin, e.g. the steps of an agent turn. */
export interface IMessagePart {
  /** Drawn between the message's header and its text. */
  readonly node: HTMLElement;
  /** Drawn after the text, so streaming never hides it (what waits for the user), or null. */
  readonly pending: HTMLElement | null;
  /** Whether it waits for the user (the message then shows no "Thinking…"). */
  readonly waiting: boolean;
  /** Draw the message's current state. */
  update(): void;
  /** Stop listening; the node leaves with the message's. */
  dispose(): void;
}

/** Builds the part of `message` a plugin draws, or null when it draws none there. */
export type MessagePartFactory = (message: IChatMessage) => IMessagePart | null;

/** Where a code block of an answer comes from. */
export interface ICodeBlockOrigin {
  /** The model that wrote it. */
  model: string;
  /** Why it must not be offered to run at once (review first), or null. */
  hold?: string | null;
}

/** An action offered under a code block: the button's text and what it does. */
export interface ICodeBlockOffer {
  /** e.g. "Apply to cell 3". */
  label: string;
  /** Do it. */
  apply(): void;
}

/**
 * Offers an action for a code block whose source is `code` (as a cell would hold it:
 * `cellCode`), or null when it has none for it.
 */
export type CodeBlockAction = (
  code: string,
  origin: ICodeBlockOrigin
) => ICodeBlockOffer | null;

/** The controls a mode puts beside the chat's input. */
export interface IChatModeControls {
  /** Their node. */
  readonly node: HTMLElement;
  /** Draw the mode's state (and whether a notebook is open). */
  update(hasNotebook: boolean): void;
}

/**
 * A way messages go other than as a plain reply (agent mode): while it is enabled, the chat
 * hands each message to it ({@link IChatTurnHook}), and the panel shows what it says.
 */
export interface IChatMode extends IChatTurnHook {
  /** Its state changed (enabled, or what it shows). */
  readonly changed: ISignal<unknown, void>;
  /** Its controls beside the input. */
  controls(): IChatModeControls;
  /** The input's placeholder while it is enabled. */
  readonly placeholder: string;
  /** Said after the context chip's summary while it is enabled, e.g. "Agent: ask for risky code". */
  chipNote(): string;
  /** Said at the top of the context chip's text while it is enabled ('' for nothing). */
  chipDetails(): string;
}

/** A card the chat shows above its input while it is about `notebook` (an outside agent's call). */
export interface IChatCard {
  readonly notebook: string;
  readonly node: HTMLElement;
}

/**
 * The AI Chat as other plugins see it: what it is about, and where they plug in. The chat
 * plugin provides it; agent mode and Fix require it (or take it as optional).
 */
export interface IChatExtension {
  /** Path of the notebook the chat is about, or null. */
  readonly notebook: string | null;
  /** The server's description of the model `name` (the selected one when absent), or null. */
  modelInfo(name?: string | null): IModelInfo | null;
  /** `GET config`: the server's configuration. */
  config(): Promise<IChatConfig>;
  /** Show the chat and send `text` with the notebook's context; rejects while it is busy. */
  ask(text: string): Promise<void>;
  /** The active notebook's context snapshot as a message sends it; null when context is off. */
  snapshot(): Promise<INotebookSnapshot | null>;
  /** Let `mode` take the messages while it is enabled (one mode: the last set). */
  setMode(mode: IChatMode): void;
  /** Draw a part of every message (agent steps). */
  addMessagePart(factory: MessagePartFactory): void;
  /** Offer an action under the code blocks of answers (Apply to cell N). */
  addCodeAction(action: CodeBlockAction): void;
  /** Show `card` (and the chat) until the returned `dispose` is called. */
  showCard(card: IChatCard): { dispose(): void };
  /** Add a slash command to the chat input (a later one of the same name replaces it). */
  addSlashCommand(command: ISlashCommand): void;
  /**
   * Show the chat and send `text` with `fields` added to its body, as an agent turn when
   * `agent` (a plain reply when false; the mode decides when absent); rejects while busy.
   */
  send(
    text: string,
    fields: Partial<IChatRequest>,
    agent?: boolean
  ): Promise<void>;
}

/** The token of {@link IChatExtension}. */
export const IChatExtension = new Token<IChatExtension>(
  'chapyter-ext:IChatExtension',
  'The AI Chat, for plugins that add a mode, message parts or code block actions.'
);
