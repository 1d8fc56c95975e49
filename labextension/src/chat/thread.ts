/**
 * One notebook's chat thread and what a streamed event does to it: pure functions, no
 * signals, so `model.ts` keeps only the state machine and its notifications.
 */

import { answerParts, BAD_RESPONSE, ChatEvent } from '../common/events';
import { applyPlanEvent } from '../common/planEvents';
import { mentionsFromServer } from './mentions';
import { notesFromServer } from './attachmentRules';
import { isImported } from './origin';
import { IChatMessage, IHistoryView, MessageStatus } from './tokens';
import { addUsage, IUsage, parseUsage } from '../common/usage';

/** What a thread is doing. */
export type ChatState = 'idle' | 'loading' | 'streaming';

/** One notebook's chat: its id, messages and streaming state. */
export interface IThread {
  /** The notebook's path. */
  notebook: string;
  /** The current chat's id, once known. */
  chatId: string | null;
  /** Messages, oldest first. */
  messages: IChatMessage[];
  /** What the thread is doing. */
  state: ChatState;
  /** The last error, one line. */
  error: string | null;
  /** Something the server asked to tell the user once (e.g. damaged history), until dismissed. */
  notice: string | null;
  /** Aborts the streaming request. */
  controller: AbortController | null;
  /** Server id of the reply streaming now, once the `start` event named it. */
  messageId: string | null;
  /** Whether Stop was asked for. */
  stopping: boolean;
  /** Cuts the connection when the server does not end a stopped stream in time. */
  stopTimer: ReturnType<typeof setTimeout> | null;
  /** Counts history loads, so a late answer to an older one is ignored. */
  loads: number;
  /** The notebook was renamed or moved while a reply streamed: read the history once it ends. */
  moved: boolean;
  /** What every chat of the notebook used (from the history, plus the replies since). */
  usage: IUsage | null;
}

/** A fresh, idle thread for a notebook. */
export function newThread(notebook: string): IThread {
  return {
    notebook,
    chatId: null,
    messages: [],
    state: 'idle',
    error: null,
    notice: null,
    controller: null,
    messageId: null,
    stopping: false,
    stopTimer: null,
    loads: 0,
    moved: false,
    usage: null
  };
}

const STATUSES: MessageStatus[] = ['complete', 'stopped', 'error', 'streaming'];

/** A message from the history endpoint, with defaults for anything missing. */
export function messageFromServer(data: Partial<IChatMessage>): IChatMessage {
  const status = STATUSES.includes(data.status as MessageStatus)
    ? (data.status as MessageStatus)
    : 'complete';
  const message: IChatMessage = {
    id: String(data.id ?? ''),
    role: data.role === 'user' ? 'user' : 'assistant',
    content: String(data.content ?? ''),
    model: String(data.model ?? ''),
    created: String(data.created ?? ''),
    // A stored reply is never still streaming in this tab.
    status: status === 'streaming' ? 'stopped' : status
  };
  if (message.status === 'error') {
    message.error = data.error ?? 'This reply failed.';
  }
  const mentions = mentionsFromServer(data.mentions);
  if (mentions) {
    message.mentions = mentions;
  }
  const attachments = notesFromServer(data.attachments);
  if (attachments) {
    message.attachments = attachments;
  }
  if (isImported(data)) {
    // The server's mark: it came with the notebook's file (never the file's own word).
    message.imported = true;
  }
  return { ...message, ...answerParts(data as { [key: string]: unknown }) };
}

/** The message of an error, as one line. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split(/\s+/).join(' ').trim() || 'Unknown error.';
}

let localIds = 0;

/** A local id for a message the server has not named yet. */
export function localId(): string {
  localIds += 1;
  return `local-${Date.now().toString(36)}-${localIds}`;
}

/** What an event asks the model to do after {@link applyEvent} updated the thread. */
export type EventOutcome =
  | { do: 'redraw' }
  | { do: 'notice' }
  | { do: 'end'; status: MessageStatus }
  | { do: 'fail'; message: string };

/** Apply one typed event to the thread and its streaming reply. */
export function applyEvent(
  thread: IThread,
  reply: IChatMessage,
  event: ChatEvent
): EventOutcome {
  switch (event.type) {
    case 'start':
      if (event.chatId) {
        thread.chatId = event.chatId;
      }
      if (event.messageId) {
        thread.messageId = event.messageId;
        reply.id = event.messageId;
      }
      if (event.model) {
        reply.model = event.model;
      }
      return { do: 'redraw' };
    case 'notice':
      thread.notice = event.message || null;
      return { do: 'notice' };
    case 'token':
      reply.content += event.text;
      return { do: 'redraw' };
    case 'step':
    case 'step_done':
      // The agent's runner (agent/) keeps the live steps; the reply is only redrawn.
      return { do: 'redraw' };
    case 'plan':
    case 'plan_step':
      applyPlanEvent(reply, event);
      return { do: 'redraw' };
    case 'done':
      reply.content = event.text;
      if (event.steps) {
        reply.steps = event.steps;
      }
      if (event.halt) {
        reply.halt = event.halt;
      }
      if (event.checks) {
        reply.checks = event.checks;
      }
      if (event.numbers) {
        reply.numbers = event.numbers;
      }
      if (event.messageId) {
        reply.id = event.messageId;
      }
      if (event.usage) {
        reply.usage = event.usage;
        thread.usage = addUsage(thread.usage, event.usage);
      }
      return { do: 'end', status: event.status };
    case 'error': {
      const message = event.message.trim()
        ? errorMessage(event.message)
        : 'The model failed without saying why.';
      // Our own failures (an unreadable stream, an internal error) are not the model's.
      const ours = event.kind === BAD_RESPONSE || event.kind === 'internal';
      return {
        do: 'fail',
        message: ours ? message : `The model failed: ${message}`
      };
    }
  }
}

/**
 * Load a thread's history with `fetch` (the thread is 'loading' until it settles); false when
 * a later load superseded this one, whose answer is then ignored.
 */
export async function loadThread(
  thread: IThread,
  fetch: () => Promise<IHistoryView>
): Promise<boolean> {
  const load = ++thread.loads;
  thread.state = 'loading';
  thread.error = null;
  try {
    const view = await fetch();
    if (load !== thread.loads) {
      return false;
    }
    applyView(thread, view);
  } catch (error) {
    if (load !== thread.loads) {
      return false;
    }
    thread.error = `Could not load the chat history: ${errorMessage(error)}`;
  }
  thread.state = 'idle';
  return true;
}

/**
 * The server's messages, keeping each message object already shown where the server has the
 * same one (same id, or the same role and text for a message still under its local id), so
 * a refresh that finds nothing new redraws nothing.
 */
export function mergeMessages(
  shown: readonly IChatMessage[],
  served: readonly Partial<IChatMessage>[]
): IChatMessage[] {
  return served.map((data, index) => {
    const fresh = messageFromServer(data);
    const old = shown[index];
    if (
      old &&
      old.status !== 'streaming' &&
      old.role === fresh.role &&
      (old.id === fresh.id ||
        (old.id.startsWith('local-') && old.content === fresh.content))
    ) {
      // The server's record wins; what only this tab knew (the cap that stopped a turn) stays.
      return Object.assign(old, fresh);
    }
    return fresh;
  });
}

/** Show a history view in the thread: its chat, its messages, its notice. */
export function applyView(thread: IThread, view: IHistoryView | null): void {
  thread.chatId = view?.chat_id ?? null;
  thread.messages = mergeMessages(thread.messages, view?.messages ?? []);
  thread.usage = parseUsage(view?.usage) ?? null;
  if (view?.notice) {
    thread.notice = view.notice;
  }
}

/** Add the user's message and an empty reply, which streams; returns the reply. */
export function beginReply(
  thread: IThread,
  text: string,
  model: string | null,
  controller: AbortController
): IChatMessage {
  const reply: IChatMessage = {
    id: localId(),
    role: 'assistant',
    content: '',
    model: model ?? '',
    created: '',
    status: 'streaming'
  };
  thread.messages.push(
    {
      id: localId(),
      role: 'user',
      content: text,
      model: model ?? '',
      created: new Date().toISOString(),
      status: 'complete'
    },
    reply
  );
  thread.controller = controller;
  thread.state = 'streaming';
  thread.error = null;
  thread.stopping = false;
  thread.messageId = null;
  return reply;
}

/** The reply streamed with `controller` has ended, however it ended: back to idle. */
export function endReply(thread: IThread, controller: AbortController): void {
  if (thread.stopTimer !== null) {
    clearTimeout(thread.stopTimer);
    thread.stopTimer = null;
  }
  if (thread.controller === controller) {
    thread.controller = null;
  }
  thread.state = 'idle';
  thread.stopping = false;
  thread.messageId = null;
}
