/** `POST chapyter-ext/fix`: one proposed change to one cell (Fix, Edit with AI). */

import { requestAPI } from '../request';
import { ICellCode, IErrorInfo } from './logic';

/** The body of `POST chapyter-ext/fix`. */
export interface IFixRequest {
  /** The notebook's path. */
  notebook: string;
  /** "fix" (an error to correct) or "edit" (an instruction to follow). */
  mode: 'fix' | 'edit';
  /** The cell asked about. */
  cell: ICellCode;
  /** Its error output (fix mode). */
  error?: IErrorInfo;
  /** Earlier cells defining the failing name or column. */
  related?: ICellCode[];
  /** What to change (edit mode). */
  instruction?: string;
  /** The chat's context snapshot of the notebook (kernel summary), as `POST chat` takes. */
  context?: unknown;
  /** The model to ask (default: the server's). */
  model?: string;
}

/** The server's answer: the whole new code of one cell. */
export interface IFixProposal {
  /** The cell to change: the asked one, or a related one holding the cause. */
  cell_id: string;
  /** The full new code of that cell. */
  code: string;
  /** One or two sentences. */
  explanation: string;
  /** The model that answered. */
  model: string;
  /** "fix" or "edit". */
  kind: 'fix' | 'edit';
  /** sha256 of the instruction or the error line. */
  request_sha256: string;
  /**
   * Why the proposal is not offered as "Accept and run", one line naming the setting (the
   * bundled model's review first, `Chapyter.run_policy`); null or absent when it may run at
   * once.
   */
  hold?: string | null;
  /**
   * False: nothing is offered (the answer failed the guard rails, or the small model could
   * not write one that passes); `explanation` is the one line saying so.
   */
  runnable?: boolean;
}

/** Ask the server for a proposal; rejects with a `ServerAPIError` (one line). */
export function requestFix(
  body: IFixRequest,
  signal?: AbortSignal
): Promise<IFixProposal> {
  return requestAPI<IFixProposal>('fix', {
    method: 'POST',
    body: JSON.stringify(body),
    signal
  });
}
