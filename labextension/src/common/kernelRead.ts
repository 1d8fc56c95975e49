/**
 * The one silent kernel read every feature uses: an execute request through the notebook's
 * own kernel connection (kernels may be remote; the server never opens a client of its own)
 * with `silent` and no history, whose user expression displays JSON. Nothing is printed,
 * nothing lands in the history, no name is bound in the user's namespace. Right after a cell
 * fails, ipykernel aborts every request that arrives before its queue is clear: the read is
 * asked again a few times then.
 */

import type { Kernel, KernelMessage } from '@jupyterlab/services';

import type { IVariableSummary } from './snapshot';

/** How one read ended. */
export interface IKernelReply<T> {
  /** "ok", "aborted" (the kernel dropped it after an error; try again) or "error". */
  status: 'ok' | 'aborted' | 'error';
  /** The value, when the status is "ok". */
  value: T | null;
}

/** One silent execute request of `code` with `expressions` as user expressions; its reply. */
export function silentExecute(
  kernel: Kernel.IKernelConnection,
  code: string,
  expressions: { [name: string]: string } = {}
): Promise<KernelMessage.IExecuteReplyMsg> {
  return kernel.requestExecute(
    {
      code,
      silent: true,
      store_history: false,
      user_expressions: expressions,
      allow_stdin: false,
      stop_on_error: false
    },
    true
  ).done;
}

/**
 * Read again while the kernel aborts the request; the value, or null when the kernel
 * cannot tell (it failed, or kept aborting).
 */
export async function readRetrying<T>(
  read: () => Promise<IKernelReply<T>>,
  attempts = 4,
  delayMs = 200
): Promise<T | null> {
  for (let attempt = 1; ; attempt++) {
    const reply = await read();
    if (reply.status !== 'aborted' || attempt >= attempts) {
      return reply.status === 'ok' ? reply.value : null;
    }
    await new Promise(resolve => setTimeout(resolve, delayMs * attempt));
  }
}

/** One read of `expression`'s `application/json` value. */
async function readOnce(
  kernel: Kernel.IKernelConnection,
  expression: string
): Promise<IKernelReply<unknown>> {
  const reply = await silentExecute(kernel, '', { value: expression });
  const content = reply.content as {
    status: string;
    user_expressions?: { [key: string]: any };
  };
  if (content.status === 'aborted') {
    return { status: 'aborted', value: null };
  }
  const result = content.user_expressions?.value;
  if (content.status !== 'ok' || result?.status !== 'ok') {
    return { status: 'error', value: null };
  }
  return { status: 'ok', value: result.data?.['application/json'] ?? null };
}

/**
 * The `application/json` value `expression` displays, evaluated silently; null when the
 * kernel cannot tell.
 */
export function readJSON(
  kernel: Kernel.IKernelConnection,
  expression: string
): Promise<unknown> {
  return readRetrying(() => readOnce(kernel, expression));
}

/**
 * The list of `{name, type, summary}` that `expression` displays as JSON; `extra` keeps more
 * fields of each item. Null when the kernel cannot tell (e.g. no chapyter_ext there).
 */
export async function readVariableList(
  kernel: Kernel.IKernelConnection,
  expression: string,
  extra: (item: any) => Partial<IVariableSummary> = () => ({})
): Promise<IVariableSummary[] | null> {
  const data = await readJSON(kernel, expression);
  if (!Array.isArray(data)) {
    return null;
  }
  return data
    .filter(v => v && typeof v.name === 'string')
    .map(v => ({
      name: String(v.name),
      type: String(v.type ?? ''),
      summary: String(v.summary ?? ''),
      ...extra(v)
    }));
}
