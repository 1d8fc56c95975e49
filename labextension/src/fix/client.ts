/**
 * `POST chapyter-ext/fix`: one proposed change to one cell (Fix, Edit with AI); `POST
 * chapyter-ext/fix/trial`: whether an accepted proposal that was tried first runs now.
 */

import type { TrialOutcome } from '../common/kernelTrial';
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
   * The expression that tries the code in a confined copy of the kernel before **Accept and
   * run** runs it (absent: no trial needed); its report goes to `POST fix/trial`.
   */
  trial?: string;
  /**
   * False: nothing is offered (the answer failed the guard rails, or the small model could
   * not write one that passes); `explanation` is the one line saying so.
   */
  runnable?: boolean;
}

/** The body of `POST chapyter-ext/fix/trial`: the accepted code and what its trial gave. */
export type IFixTrialRequest = {
  /** The code as the cell holds it once accepted. */
  code: string;
  /** The chat's context snapshot (the notebook's own functions count as consented to). */
  context?: unknown;
} & TrialOutcome;

/** The server's decision on an accepted proposal that was tried first. */
export interface IFixTrialDecision {
  /** Whether it runs now. */
  run: boolean;
  /** The expression that arms the kernel's guard first (null: none). */
  guard: string | null;
  /** Why it waits, one line naming the setting ('' when it runs). */
  why: string;
  /** What the trial tried or showed. */
  concerns: string[];
  /** What it would show and change. */
  preview: string[];
  /** Why the kernel made no trial ('' when it did). */
  unavailable: string;
}

/** `POST fix/trial`: whether the accepted code runs now. */
export function requestFixTrial(
  body: IFixTrialRequest
): Promise<IFixTrialDecision> {
  return requestAPI<IFixTrialDecision>('fix/trial', {
    method: 'POST',
    body: JSON.stringify(body)
  });
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
