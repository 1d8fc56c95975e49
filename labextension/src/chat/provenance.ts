/**
 * Provenance of a cell inserted from the chat: the same `metadata.chapyter` schema `%%ai`
 * writes, so the notebook's decorations show it as a generated cell. Pure, for the tests.
 */

import { sha256Hex } from '../notebook/sha256';
import { IGeneratedMetadata, SCHEMA_VERSION } from '../tokens';

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
  // The field order of the documented schema, so a notebook's diff stays small.
  return {
    schema: SCHEMA_VERSION,
    role: 'generated',
    source: 'chat',
    model: origin.model,
    ...(origin.endpoint ? { endpoint: origin.endpoint } : {}),
    created,
    code_sha256: sha256Hex(code),
    edited: false,
    chat_id: origin.chatId ?? '',
    message_id: origin.messageId
  };
}
