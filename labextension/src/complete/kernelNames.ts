/**
 * The kernel's names for inline completion (variables, DataFrame columns, dict keys,
 * signatures), read through the notebook's own kernel connection: one silent execute request
 * whose user expression calls `chapyter_ext.context.completion_names`, so nothing is printed,
 * nothing lands in the history and no name is bound in the user's namespace.
 */

import type { Kernel } from '@jupyterlab/services';

import { readVariableList } from '../chat/notebookContext';
import type { IVariablesReply } from '../chat/variables';

/** The user expression; it binds no name. */
export const NAMES_EXPRESSION =
  "__import__('IPython').display.JSON(__import__('chapyter_ext.context', " +
  "fromlist=['completion_names']).completion_names(get_ipython().user_ns, " +
  'get_ipython().user_ns_hidden))';

/** Ask a kernel for its names; the value is null when it cannot tell (no chapyter_ext). */
export function readNames(
  kernel: Kernel.IKernelConnection
): Promise<IVariablesReply> {
  return readVariableList(kernel, NAMES_EXPRESSION);
}
