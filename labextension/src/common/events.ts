/**
 * The chat's wire format, read: server-sent events of `POST chapyter-ext/chat` (and of agent
 * turns, `POST chapyter-ext/agent`: `step`, `step_done`) decoded into typed {@link ChatEvent}s, so the model and the views never parse the wire. The server side
 * is `chapyter_ext/chat/events.py`; `sse.ts` is the generic event-stream parser below both.
 * Both are tested against `tests/vectors/contract.json` (`events`), documented in `docs/protocol.md`.
 */

import { INumberVerdict, numberVerdicts } from './numberVerdicts';
import {
  IPlanEvent,
  IPlanStep,
  IPlanStepEvent,
  planEvent,
  planSteps,
  planStepEvent
} from './planEvents';
import { IServerSentEvent, readEvents } from './sse';
import {
  IStepDoneEvent,
  IStepEvent,
  IStepRecord,
  stepDoneEvent,
  stepEvent,
  stepRecords
} from './stepEvents';
import { IUsage, parseUsage } from './usage';

export type {
  IStepDoneEvent,
  IStepEvent,
  IStepRecord,
  StepOp
} from './stepEvents';
export type { INumberSource, INumberVerdict } from './numberVerdicts';
export { stepRecords } from './stepEvents';
export type {
  IPlanEvent,
  IPlanStep,
  IPlanStepEvent,
  PlanStatus
} from './planEvents';

/** The reply began: the ids needed to stop it and to continue the chat. */
export interface IStartEvent {
  /** Discriminant. */
  type: 'start';
  /** The chat the reply belongs to. */
  chatId: string;
  /** The reply's id (what `chat/stop` takes). */
  messageId: string;
  /** Name of the model answering. */
  model: string;
  /** Agent turns only: the approval policy ("ask", "risky" or "never"). */
  policy?: string;
  /** Agent turns only: whether the model gets OpenAI tools (else fenced code blocks). */
  tools?: boolean;
  /** Agent turns only: whether the model sees figures as images (else as text digests). */
  images?: boolean;
}

/** Something the user should be told once, e.g. that part of the history was damaged. */
export interface INoticeEvent {
  /** Discriminant. */
  type: 'notice';
  /** One line. */
  message: string;
}

/** More text of the reply. */
export interface ITokenEvent {
  /** Discriminant. */
  type: 'token';
  /** The new text. */
  text: string;
}

/** What an answer carries besides its text. */
export interface IAnswerParts {
  /** Agent turns only: what ran, as the server recorded it. */
  steps?: IStepRecord[];
  /** Agent turns only: the one line saying which cap stopped the turn. */
  halt?: string;
  /** The tokens (and cost) the reply used, when the endpoint reported them. */
  usage?: IUsage;
  /** The server's verdicts on the answer's code blocks (absent: it has none). */
  checks?: ICodeCheck[];
  /** Agent answers: each number, found or not in what the turn saw (absent: none). */
  numbers?: INumberVerdict[];
  /** A plan's steps: a `/plan` answer's, or the plan an agent turn followed (absent: none). */
  plan?: IPlanStep[];
}

/** The reply ended (with what the answer carries besides its text). */
export interface IDoneEvent extends IAnswerParts {
  /** Discriminant. */
  type: 'done';
  /** The reply's id. */
  messageId: string;
  /** All of the reply (redacted as a whole): replaces what the tokens built. */
  text: string;
  /** Whether it ended by itself or was stopped. */
  status: 'complete' | 'stopped';
}

/**
 * The server's verdict on one code block of an answer: whether it may be offered to run
 * (`chapyter_ext.guards`), and why not.
 */
export interface ICodeCheck {
  /** `codeBlockKey` of the block's source. */
  block_id: string;
  /** Whether it passed: the browser offers to run only such a block. */
  runnable: boolean;
  /** Why it did not (a few words), or "". */
  problem: string;
}

/** The reply failed, or the stream could not be read (`kind` "bad_response"). */
export interface IErrorEvent {
  /** Discriminant. */
  type: 'error';
  /** What failed: the server's error kind (auth, timeout, ...) or "bad_response". */
  kind: string;
  /** One line. */
  message: string;
}

/** One event of a streamed reply. */
export type ChatEvent =
  | IStartEvent
  | INoticeEvent
  | ITokenEvent
  | IDoneEvent
  | IErrorEvent
  | IStepEvent
  | IStepDoneEvent
  | IPlanEvent
  | IPlanStepEvent;

/** The event types read here: the contract's (`tests/vectors/contract.json`, `events`). */
export const EVENT_NAMES: readonly string[] = [
  'start',
  'notice',
  'token',
  'done',
  'error',
  'step',
  'step_done',
  'plan',
  'plan_step'
];

/** The kind of an error event made here, when the stream itself is unreadable. */
export const BAD_RESPONSE = 'bad_response';

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The code-block verdicts of a `done` event or a stored message; malformed ones dropped. */
export function codeChecks(value: unknown): ICodeCheck[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter(
      v =>
        v &&
        typeof v === 'object' &&
        typeof v.block_id === 'string' &&
        typeof v.runnable === 'boolean'
    )
    .map(v => ({
      block_id: v.block_id as string,
      runnable: v.runnable as boolean,
      problem: str(v.problem)
    }));
}

/**
 * What a `done` event or a stored message carries besides the text, read the same way for
 * both: malformed parts dropped, no steps nor halt when there are none.
 */
export function answerParts(d: { [key: string]: unknown }): IAnswerParts {
  const parts: IAnswerParts = {};
  if (Array.isArray(d.steps) && d.steps.length) {
    parts.steps = stepRecords(d.steps);
  }
  if (typeof d.halt === 'string' && d.halt) {
    parts.halt = d.halt;
  }
  const usage = parseUsage(d.usage);
  if (usage) {
    parts.usage = usage;
  }
  if (Array.isArray(d.checks)) {
    parts.checks = codeChecks(d.checks);
  }
  const plan = planSteps(d.plan);
  if (plan.length) {
    parts.plan = plan;
  }
  if (Array.isArray(d.numbers)) {
    parts.numbers = numberVerdicts(d.numbers);
  }
  return parts;
}

function badResponse(what: string): IErrorEvent {
  return {
    type: 'error',
    kind: BAD_RESPONSE,
    message: `The server sent ${what} that could not be read.`
  };
}

/**
 * The typed event of one server-sent event: null for events this version does not know
 * (a newer server may add some), an error event for a known one whose data is unreadable.
 */
export function decodeEvent(event: IServerSentEvent): ChatEvent | null {
  if (!EVENT_NAMES.includes(event.event)) {
    return null;
  }
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return badResponse(`a "${event.event}" event`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return badResponse(`a "${event.event}" event`);
  }
  const d = data as { [key: string]: unknown };
  switch (event.event) {
    case 'start': {
      const start: IStartEvent = {
        type: 'start',
        chatId: str(d.chat_id),
        messageId: str(d.message_id),
        model: str(d.model)
      };
      if (typeof d.policy === 'string') {
        start.policy = d.policy;
      }
      if (typeof d.tools === 'boolean') {
        start.tools = d.tools;
      }
      if (typeof d.images === 'boolean') {
        start.images = d.images;
      }
      return start;
    }
    case 'step':
      return stepEvent(d) ?? badResponse('a "step" event');
    case 'step_done':
      return stepDoneEvent(d) ?? badResponse('a "step_done" event');
    case 'plan':
      return planEvent(d) ?? badResponse('a "plan" event');
    case 'plan_step':
      return planStepEvent(d) ?? badResponse('a "plan_step" event');
    case 'notice':
      return { type: 'notice', message: str(d.message) };
    case 'token':
      return typeof d.text === 'string'
        ? { type: 'token', text: d.text }
        : badResponse('a "token" event');
    case 'done': {
      if (typeof d.text !== 'string') {
        return badResponse('a "done" event');
      }
      const done: IDoneEvent = {
        type: 'done',
        messageId: str(d.message_id),
        text: d.text,
        status: d.status === 'stopped' ? 'stopped' : 'complete'
      };
      return { ...done, ...answerParts(d) };
    }
    default:
      return {
        type: 'error',
        kind: str(d.kind) || 'error',
        message: str(d.message)
      };
  }
}

/** The typed events of a stream of text chunks (cut anywhere), in order. */
export async function* readChatEvents(
  chunks: AsyncIterable<string>
): AsyncGenerator<ChatEvent> {
  for await (const event of readEvents(chunks)) {
    const typed = decodeEvent(event);
    if (typed) {
      yield typed;
    }
  }
}
