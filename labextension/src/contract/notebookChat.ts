/**
 * The notebook-level contract, the same as `chapyter_ext/contract/chat.py`: the stable id by
 * which the server finds a notebook's chats after a move it did not see, and the chat a
 * notebook may carry in its metadata, both under the notebook's `chapyter` metadata key.
 */

/** Key (under the notebook's `chapyter` metadata) of its stable chat id. */
export const NOTEBOOK_ID_KEY = 'notebook_id';

/** Key (under the notebook's `chapyter` metadata) of the chats saved with it. */
export const STORED_CHAT_KEY = 'chat';

/** Version of the stored chat's schema. */
export const STORED_CHAT_SCHEMA = 1;

const NOTEBOOK_ID = /^[0-9a-f]{32,64}$/;

/** Whether `value` is a well-formed notebook id (32 to 64 lower-case hex digits). */
export function isNotebookId(value: unknown): value is string {
  return typeof value === 'string' && NOTEBOOK_ID.test(value);
}

/** What a notebook's metadata says about its chat. */
export interface INotebookChatInfo {
  /** The notebook's id, or null when absent or malformed. */
  notebook_id: string | null;
  /** Whether a chat is saved in it (an object with a list of `chats`). */
  stored_chat: boolean;
}

function chapyterOf(metadata: unknown): { [key: string]: unknown } {
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) {
    return {};
  }
  const value = (metadata as { [key: string]: unknown }).chapyter;
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as { [key: string]: unknown })
    : {};
}

/** What a notebook's metadata (the whole `metadata` object) says about its chat. */
export function notebookChatInfo(metadata: unknown): INotebookChatInfo {
  const meta = chapyterOf(metadata);
  const found = meta[NOTEBOOK_ID_KEY];
  const stored = meta[STORED_CHAT_KEY] as { chats?: unknown } | undefined;
  return {
    notebook_id: isNotebookId(found) ? found : null,
    stored_chat:
      !!stored &&
      typeof stored === 'object' &&
      !Array.isArray(stored) &&
      Array.isArray(stored.chats)
  };
}

/** The notebook's `chapyter` metadata object with its id set; other fields are kept. */
export function withNotebookId(
  chapyter: unknown,
  notebookId: string
): { [key: string]: unknown } {
  if (!isNotebookId(notebookId)) {
    throw new Error(`not a notebook id: ${JSON.stringify(notebookId)}`);
  }
  const kept =
    chapyter && typeof chapyter === 'object' && !Array.isArray(chapyter)
      ? { ...(chapyter as { [key: string]: unknown }) }
      : {};
  kept[NOTEBOOK_ID_KEY] = notebookId;
  return kept;
}

/** A fresh notebook id (a random UUID as 32 hex digits, as the server's own ids). */
export function newNotebookId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
}
