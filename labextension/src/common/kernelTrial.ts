/**
 * A step's trial and guard through the notebook's own kernel connection (the server never
 * reaches the kernel): the trial's expression evaluated silently, its report read back, or
 * the error that kept the kernel from starting one (a kernel without chapyter-ext); and the
 * guard armed for the code about to run unasked. The agent and Fix's **Accept and run** use
 * the same two calls.
 */

import type { Kernel } from '@jupyterlab/services';

import { readJSON, silentExecute } from './kernelRead';

/**
 * What the kernel gave for a trial: its report (`chapyter_ext.trial.TrialReport` as JSON), or
 * why it could not even start one.
 */
export type TrialOutcome =
  | { report: { [key: string]: unknown } }
  | { failure: { ename: string; evalue: string } };

/** Evaluate a trial `expression` silently in `kernel`: the report, or why there is none. */
export async function kernelTrial(
  kernel: Kernel.IKernelConnection,
  expression: string
): Promise<TrialOutcome> {
  // Right after a cell failed the kernel aborts requests for a moment: asked again then.
  for (let attempt = 1; ; attempt++) {
    const reply = await silentExecute(kernel, '', { trial: expression });
    const content = reply.content as {
      status: string;
      user_expressions?: { [key: string]: any };
    };
    if (content.status === 'aborted' && attempt < 4) {
      await new Promise(resolve => setTimeout(resolve, 200 * attempt));
      continue;
    }
    const value = content.user_expressions?.trial;
    const report = value?.data?.['application/json'];
    if (content.status === 'ok' && value?.status === 'ok' && report) {
      return { report };
    }
    return {
      failure: {
        ename: String(value?.ename ?? content.status),
        evalue: String(value?.evalue ?? '')
      }
    };
  }
}

/** Arm the kernel's guard with `expression`; whether the kernel armed it. */
export async function armGuard(
  kernel: Kernel.IKernelConnection,
  expression: string
): Promise<boolean> {
  const value = await readJSON(kernel, expression);
  return (value as { armed?: unknown } | null)?.armed === true;
}
