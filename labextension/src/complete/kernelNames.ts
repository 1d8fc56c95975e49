/**
 * The kernel's names for inline completion (variables, DataFrame columns, dict keys,
 * signatures), read through the one silent kernel read (`common/kernelRead.ts`), whose user
 * expression calls `chapyter_ext.context.completion_names`.
 */

import type { Kernel } from '@jupyterlab/services';

import { readVariableList } from '../common/kernelRead';
import type { IVariableSummary } from '../common/snapshot';

/** The user expression; it binds no name. */
export const NAMES_EXPRESSION =
  "__import__('IPython').display.JSON(__import__('chapyter_ext.context', " +
  "fromlist=['completion_names']).completion_names(get_ipython().user_ns, " +
  'get_ipython().user_ns_hidden))';

/** Ask a kernel for its names; null when it cannot tell (no chapyter_ext). */
export function readNames(
  kernel: Kernel.IKernelConnection
): Promise<IVariableSummary[] | null> {
  return readVariableList(kernel, NAMES_EXPRESSION);
}
