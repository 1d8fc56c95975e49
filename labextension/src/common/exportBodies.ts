/**
 * The bodies of the export calls (Export chat): the chat as Markdown, and the file written
 * next to its notebook. Shared wire shapes; `chat/tokens.ts` hands them out.
 */

/** The body of `GET chapyter-ext/history/export`: one chat as Markdown. */
export interface IChatExport {
  /** The file name it is saved under, e.g. `analysis.chat.md`. */
  filename: string;
  /** The exported chat's id. */
  chat_id: string;
  /** The chat as a Markdown document (redacted by the server). */
  markdown: string;
}

/** The body of `POST chapyter-ext/history/export`: the chat written next to its notebook. */
export interface IExportSaved {
  /** The file's path for the contents API, e.g. `work/analysis.chat.md`. */
  path: string;
  /** Whether it was written (false: a file is there and the request did not name it). */
  written: boolean;
  /** Whether a file was there already. */
  exists: boolean;
  /** The size in bytes of the file that was there. */
  size?: number;
  /** When the file that was there last changed (ISO 8601). */
  modified?: string;
  /** The file's name. */
  filename: string;
  /** The exported chat's id. */
  chat_id: string;
}
