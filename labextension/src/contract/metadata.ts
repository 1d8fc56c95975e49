/**
 * The provenance under `metadata.chapyter`, the same as `chapyter_ext.contract`'s: one
 * builder for generated cells (from `%%ai` or the chat), the prompt's link, and the
 * `set_next_input` payload by which the kernel hands generated code over.
 */

import { CHECK_SYNTAX_ERROR, METADATA_KEY, SCHEMA_VERSION } from './constants';
import { codeSha256 } from './hashes';

/** Provenance of a generated cell, under `metadata.chapyter`. */
export interface IGeneratedMetadata {
  /** Provenance schema version. */
  schema: number;
  /** Always "generated". */
  role: 'generated';
  /** What made it: "magic" (%%ai), "chat", "agent", or "fix"/"edit" (an accepted change to a cell without provenance). */
  source: string;
  /** Id of the prompt cell it was generated from (absent for chat cells). */
  generated_from?: string;
  /** sha256 of the normalised request, to tell whether the prompt changed since. */
  prompt_sha256?: string;
  /** Model that answered. */
  model: string;
  /** Host of the endpoint (never the key or the full URL). */
  endpoint?: string;
  /** Sampling parameters. */
  parameters?: { [key: string]: unknown };
  /** When it was generated (ISO 8601, UTC). */
  created: string;
  /** Characters of kernel context sent. */
  context_chars?: number;
  /** Attempts the model call took. */
  attempts?: number;
  /** sha256 of the code as generated, to tell whether a person edited it. */
  code_sha256: string;
  /** Whether the code was edited by hand after generation. */
  edited: boolean;
  /** "syntax-error" when the code failed the syntax check when generated. */
  check?: string;
  /** The one-line reason of a failed check. */
  check_error?: string;
  /** Accepted changes to its code (Fix, Edit with AI, the %%ai retry), oldest first. */
  changes?: IAcceptedChange[];
  /** Further fields written by newer versions are kept as they are. */
  [key: string]: unknown;
}

/** What a prompt cell records, under `metadata.chapyter`. */
export interface IPromptMetadata {
  /** Provenance schema version. */
  schema: number;
  /** Always "prompt". */
  role: 'prompt';
  /** Id of the cell generated from it. */
  generated_cell: string;
}

/** The fields of {@link generatedMetadata}; those left out are left out of the result. */
export interface IGeneratedFields {
  /** The code as generated (hashed into `code_sha256`). */
  code: string;
  /** Model that answered. */
  model: string;
  /** "magic" (default) or "chat". */
  source?: string;
  /** Id of the prompt cell. */
  generated_from?: string | null;
  /** sha256 of the normalised request. */
  prompt_sha256?: string | null;
  /** Host of the endpoint. */
  endpoint?: string | null;
  /** Sampling parameters. */
  parameters?: { [key: string]: unknown } | null;
  /** ISO 8601 time (default: now). */
  created?: string | null;
  /** Characters of kernel context sent. */
  context_chars?: number | null;
  /** Attempts the model call took. */
  attempts?: number | null;
  /** "syntax-error" when the code failed the check. */
  check?: string | null;
  /** The one-line reason of a failed check. */
  check_error?: string | null;
  /** The chat a chat cell came from. */
  chat_id?: string | null;
  /** The assistant message a chat cell came from (an agent turn's id). */
  message_id?: string | null;
  /** The agent step an agent cell ran. */
  step_id?: string | null;
}

/** The current time as ISO 8601 in UTC, to the second. */
export function utcNowIso(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The metadata of a generated cell, in the documented field order. */
export function generatedMetadata(
  fields: IGeneratedFields
): IGeneratedMetadata {
  const ordered: [string, unknown][] = [
    ['schema', SCHEMA_VERSION],
    ['role', 'generated'],
    ['source', fields.source ?? 'magic'],
    ['generated_from', fields.generated_from],
    ['prompt_sha256', fields.prompt_sha256],
    ['model', fields.model],
    ['endpoint', fields.endpoint],
    ['parameters', fields.parameters],
    ['created', fields.created ?? utcNowIso()],
    ['context_chars', fields.context_chars],
    ['attempts', fields.attempts],
    ['code_sha256', codeSha256(fields.code)],
    ['edited', false],
    ['check', fields.check],
    ['check_error', fields.check_error],
    ['chat_id', fields.chat_id],
    ['message_id', fields.message_id],
    ['step_id', fields.step_id]
  ];
  const result: { [key: string]: unknown } = {};
  for (const [key, value] of ordered) {
    if (value !== null && value !== undefined) {
      result[key] = value;
    }
  }
  return result as IGeneratedMetadata;
}

/** The kernel's provenance linked to its prompt cell, in schema order. */
export function linkGenerated(
  provenance: Partial<IGeneratedMetadata>,
  promptId: string
): IGeneratedMetadata {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { schema, role, source, generated_from, ...rest } = provenance;
  return {
    schema: schema ?? SCHEMA_VERSION,
    role: role ?? 'generated',
    source: source ?? 'magic',
    generated_from: promptId,
    ...rest
  } as IGeneratedMetadata;
}

/** The metadata a prompt cell gets once linked. */
export function promptMetadata(generatedId: string): IPromptMetadata {
  return {
    schema: SCHEMA_VERSION,
    role: 'prompt',
    generated_cell: generatedId
  };
}

/** The one-line reason a generated cell's code failed the check when generated, or null. */
export function failedCheck(metadata: unknown): string | null {
  const meta = metadata as { [key: string]: unknown } | null | undefined;
  if (!meta || typeof meta !== 'object' || meta.check !== CHECK_SYNTAX_ERROR) {
    return null;
  }
  return typeof meta.check_error === 'string' && meta.check_error
    ? meta.check_error
    : 'syntax error';
}

/** The `chapyter` entry of the set_next_input payload that `%%ai` sends. */
export interface IGenerationPayload {
  /** Provenance computed by the kernel. */
  metadata: IGeneratedMetadata;
  /** Whether the user wants the code run (false after `--no-run` or a failed check). */
  run: boolean;
  /** How many more times the code may be corrected when it raises (`RETRY_MARKER`). */
  retriesLeft?: number;
}

/** A generation handed over by the kernel: the code, its provenance, whether to run it. */
export interface IGeneration extends IGenerationPayload {
  /** The generated code. */
  code: string;
}

/** The set_next_input payload item of a generation (as the kernel writes it). */
export function generationPayloadItem(
  code: string,
  metadata: IGeneratedMetadata,
  run: boolean
): { [key: string]: unknown } {
  return {
    source: 'set_next_input',
    text: code,
    replace: false,
    [METADATA_KEY]: { metadata, run }
  };
}

/** The generation in an execute reply's content (or the reply), if `%%ai` sent one. */
export function readGenerationPayload(reply: unknown): IGeneration | null {
  if (!reply || typeof reply !== 'object') {
    return null;
  }
  const outer = reply as { [key: string]: any };
  const content =
    outer.content && typeof outer.content === 'object' ? outer.content : outer;
  const payload = Array.isArray(content.payload) ? content.payload : [];
  for (const item of payload) {
    if (!item || typeof item !== 'object' || item.source !== 'set_next_input') {
      continue;
    }
    const entry = item[METADATA_KEY];
    if (entry && typeof entry === 'object') {
      const metadata =
        entry.metadata && typeof entry.metadata === 'object'
          ? { ...entry.metadata }
          : {};
      return {
        code: String(item.text ?? ''),
        metadata: metadata as IGeneratedMetadata,
        run: entry.run === true,
        ...(Number.isInteger(entry.retries_left) && entry.retries_left > 0
          ? { retriesLeft: entry.retries_left as number }
          : {})
      };
    }
  }
  return null;
}

/** Where a block of code in the chat came from. */
export interface IChatCodeOrigin {
  /** Model id that wrote it (e.g. "gpt-4o-mini"). */
  model: string;
  /** Host of the endpoint, if known. */
  endpoint?: string;
  /** The chat it was written in. */
  chatId: string | null;
  /** The assistant message that holds it. */
  messageId: string;
  /** When the message was written (ISO 8601); now when unknown. */
  created?: string;
}

/** Where an agent step's code came from. */
export interface IAgentCodeOrigin {
  /** Model id that wrote it. */
  model: string;
  /** Host of the endpoint, if known. */
  endpoint?: string;
  /** The chat. */
  chatId: string;
  /** The turn (the reply's message id). */
  messageId: string;
  /** The step. */
  stepId: string;
}

/** The `metadata.chapyter` of a cell an agent turn inserted and ran. */
export function agentCellMetadata(
  code: string,
  origin: IAgentCodeOrigin
): IGeneratedMetadata {
  return generatedMetadata({
    code,
    source: 'agent',
    model: origin.model,
    endpoint: origin.endpoint || null,
    chat_id: origin.chatId,
    message_id: origin.messageId,
    step_id: origin.stepId
  });
}

/** A fenced block's code as a cell holds it: no trailing newline. */
export function cellCode(code: string): string {
  return code.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
}

/** The `metadata.chapyter` of a cell inserted from the chat. */
export function chatCellMetadata(
  code: string,
  origin: IChatCodeOrigin
): IGeneratedMetadata {
  const created =
    origin.created && !Number.isNaN(Date.parse(origin.created))
      ? new Date(origin.created).toISOString()
      : new Date().toISOString();
  return generatedMetadata({
    code,
    source: 'chat',
    model: origin.model,
    endpoint: origin.endpoint || null,
    created,
    chat_id: origin.chatId ?? '',
    message_id: origin.messageId
  });
}

/** What made an accepted change to a cell's code: Fix, Edit with AI, or the %%ai retry. */
export type ChangeKind = 'fix' | 'edit' | 'retry';

/** The kinds of {@link ChangeKind}, in the order the error message lists them. */
export const CHANGE_KINDS: readonly ChangeKind[] = ['fix', 'edit', 'retry'];

/** One accepted change, as appended to `metadata.chapyter.changes`. */
export interface IAcceptedChange {
  /** "fix", "edit" or "retry". */
  kind: ChangeKind;
  /** Model that proposed it. */
  model: string;
  /** sha256 of the instruction or the error line the change answered. */
  request_sha256: string;
  /** When it was accepted (ISO 8601, UTC). */
  created: string;
  /** sha256 of the code it replaced, when known. */
  previous_code_sha256?: string;
}

/** The fields of {@link acceptedChange}. */
export interface IAcceptedChangeFields {
  /** "fix", "edit" or "retry". */
  kind: ChangeKind;
  /** Model that proposed the change. */
  model: string;
  /** The cell's new code (hashed into `code_sha256`). */
  code: string;
  /** sha256 of the instruction or error line (the fix route's `request_sha256`). */
  request_sha256: string;
  /** ISO 8601 time (default: now). */
  created?: string | null;
  /** The code the change replaces (hashed into `previous_code_sha256`; default: the recorded `code_sha256`). */
  previous_code?: string | null;
}

/**
 * The `metadata.chapyter` of a cell once a proposed change to its code is accepted.
 *
 * A generated cell keeps its fields and links, gets `code_sha256` of the new code,
 * `edited: false` and a `changes` entry appended (a failed syntax check described the old
 * code and is dropped); a prompt cell keeps its metadata and gets the entry; any other
 * cell becomes a generated one whose `source` is the kind.
 * `metadata` is not changed. The same as `contract.accepted_change`.
 */
export function acceptedChange(
  metadata: unknown,
  fields: IAcceptedChangeFields
): IGeneratedMetadata {
  const { kind, model, code } = fields;
  if (!CHANGE_KINDS.includes(kind)) {
    throw new Error(
      `unknown change kind '${kind}': expected one of ${CHANGE_KINDS.join(', ')}`
    );
  }
  const created = fields.created || utcNowIso();
  const meta = metadata as { [key: string]: unknown } | null | undefined;
  const base =
    meta && typeof meta === 'object' && meta.role === 'generated' ? meta : null;
  let previous: string | null = null;
  if (fields.previous_code !== null && fields.previous_code !== undefined) {
    previous = codeSha256(fields.previous_code);
  } else if (base && typeof base.code_sha256 === 'string') {
    previous = base.code_sha256;
  }
  const change: IAcceptedChange = {
    kind,
    model,
    request_sha256: fields.request_sha256,
    created
  };
  if (previous !== null) {
    change.previous_code_sha256 = previous;
  }
  if (meta && typeof meta === 'object' && meta.role === 'prompt') {
    // A %%ai cell stays a prompt with its link; only the change is recorded.
    const earlier = Array.isArray(meta.changes) ? meta.changes : [];
    return { ...meta, changes: [...earlier, change] } as IGeneratedMetadata;
  }
  if (!base) {
    return {
      schema: SCHEMA_VERSION,
      role: 'generated',
      source: kind,
      model,
      created,
      code_sha256: codeSha256(code),
      edited: false,
      changes: [change]
    };
  }
  const result: { [key: string]: unknown } = {};
  for (const [key, value] of Object.entries(base)) {
    if (key !== 'check' && key !== 'check_error') {
      result[key] = value;
    }
  }
  result.code_sha256 = codeSha256(code);
  result.edited = false;
  result.changes = [
    ...(Array.isArray(base.changes) ? base.changes : []),
    change
  ];
  return result as IGeneratedMetadata;
}

/** The last accepted change recorded in a cell's `metadata.chapyter`, or null. */
export function lastChange(metadata: unknown): IAcceptedChange | null {
  const meta = metadata as { [key: string]: unknown } | null | undefined;
  const changes = meta && typeof meta === 'object' ? meta.changes : null;
  const last =
    Array.isArray(changes) && changes.length
      ? changes[changes.length - 1]
      : null;
  return last && typeof last === 'object' ? (last as IAcceptedChange) : null;
}
