/**
 * The kernel's names for inline completion (variables, DataFrame columns, dict keys,
 * signatures), read through the notebook's own kernel connection: one silent execute request
 * whose user expression calls `chapyter_ext.completion_names`, so nothing is printed, nothing
 * lands in the history and no name is bound in the user's namespace.
 */

import type { Kernel } from '@jupyterlab/services';

import type { IVariablesReply } from '../chat/variables';

/** The user expression; it binds no name. */
export const NAMES_EXPRESSION =
  "__import__('IPython').display.JSON(__import__('chapyter_ext.completion_names', " +
  "fromlist=['completion_names']).completion_names(get_ipython().user_ns, " +
  'get_ipython().user_ns_hidden))';

/** Ask a kernel for its names; the value is null when it cannot tell (no chapyter_ext). */
export async function readNames(
  kernel: Kernel.IKernelConnection
): Promise<IVariablesReply> {
  const future = kernel.requestExecute(
    {
      code: '',
      silent: true,
      store_history: false,
      user_expressions: { names: NAMES_EXPRESSION },
      allow_stdin: false,
      stop_on_error: false
    },
    true
  );
  const reply = await future.done;
  const content = reply.content as {
    status: string;
    user_expressions?: { [key: string]: any };
  };
  if (content.status === 'aborted') {
    return { status: 'aborted', value: null };
  }
  const result = content.user_expressions?.names;
  const data = result?.data?.['application/json'];
  if (
    content.status !== 'ok' ||
    result?.status !== 'ok' ||
    !Array.isArray(data)
  ) {
    return { status: 'error', value: null };
  }
  const value = data
    .filter(v => v && typeof v.name === 'string')
    .map(v => ({
      name: String(v.name),
      type: String(v.type ?? ''),
      summary: String(v.summary ?? '')
    }));
  return { status: 'ok', value };
}
