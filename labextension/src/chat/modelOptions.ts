/**
 * What a {@link ChatModel} is built from ({@link IChatModelOptions}) and the hooks set on it
 * later, kept apart from the model's state machine.
 */

import type { INotebookSnapshot } from '../common/snapshot';
import type {
  IChatClient,
  IChatContext,
  IChatMention,
  INotebookIdentity
} from './tokens';

/** Options of {@link ChatModel}. */
export interface IChatModelOptions {
  /** The server. */
  client: IChatClient;
  /**
   * Collects what the notebook and its kernel know, for a draft message (what it names is
   * picked first); null sends no context.
   */
  context?: ((message: string) => Promise<IChatContext | null>) | null;
  /**
   * Takes the snapshot a message sends, without the server's preview of it (a round trip
   * the send need not wait for); without it, the snapshot of `context` is sent.
   */
  snapshot?: (() => Promise<INotebookSnapshot | null>) | null;
  /** Whether the context toggle starts on (and comes back on after each message). */
  sendContext?: boolean;
  /** How long Stop waits for the server to end the stream before cutting it, in ms. */
  stopGraceMs?: number;
  /** The open notebooks' metadata (their chat ids, the chats they carry); none: paths only. */
  identity?: INotebookIdentity | null;
}

/**
 * Adds to a message's mentions what they send besides their names (a cell's text, the summary
 * of a variable the snapshot lacks), given the snapshot the message sends (null: none).
 */
export type MentionDetails = (
  mentions: IChatMention[],
  snapshot: INotebookSnapshot | null
) => Promise<IChatMention[]>;
