/**
 * `%%ai` self-correction: what the executor sends the kernel when generated code raised
 * (`RETRY_MARKER` execute metadata), and the line the prompt cell ends with. The kernel says
 * how many retries remain (the payload's `retries_left`), so the cap is decided there.
 */

/** The error output of a run that raised, as the kernel reported it. */
export interface IRetryError {
  /** Exception name, e.g. "NameError". */
  ename: string;
  /** Exception message. */
  evalue: string;
  /** Traceback frames as IPython formats them (the kernel keeps the user's own). */
  traceback: string[];
}

/** The `RETRY_MARKER` metadata of a request to correct code that raised. */
export interface IRetryRequest {
  /** 1 for the first correction. */
  attempt: number;
  /** The code that raised. */
  code: string;
  /** Its error. */
  error: IRetryError;
}

/** What a failed run of generated code reports (JupyterLab's `KernelError` has these). */
export interface IFailedRun {
  /** Exception name. */
  errorName?: unknown;
  /** Exception message. */
  errorValue?: unknown;
  /** Traceback frames. */
  traceback?: unknown;
}

/**
 * The request to correct `code` after it failed with `failure`, or null when no retry is
 * left (`retriesLeft` is what the kernel allowed) or the failure is not an error of the code.
 */
export function retryRequest(
  code: string,
  failure: IFailedRun | null | undefined,
  attempt: number,
  retriesLeft: number | undefined
): IRetryRequest | null {
  if (!failure || !retriesLeft || retriesLeft < 1 || !code.trim()) {
    return null;
  }
  const ename = typeof failure.errorName === 'string' ? failure.errorName : '';
  if (!ename || ename === 'KeyboardInterrupt') {
    // An interrupt is the user's decision, not a bug to fix.
    return null;
  }
  const frames = Array.isArray(failure.traceback) ? failure.traceback : [];
  return {
    attempt,
    code,
    error: {
      ename,
      evalue: typeof failure.errorValue === 'string' ? failure.errorValue : '',
      traceback: frames.filter((f): f is string => typeof f === 'string')
    }
  };
}

/** The line a prompt cell ends with after `retries` corrections (none after 0). */
export function retryNote(retries: number, fixed: boolean): string {
  if (retries < 1) {
    return '';
  }
  const times = `${retries} ${retries === 1 ? 'retry' : 'retries'}`;
  return fixed
    ? `✓ fixed after ${times}.\n`
    : `✗ still failing after ${times}: the last attempt is kept below with its error.\n`;
}
