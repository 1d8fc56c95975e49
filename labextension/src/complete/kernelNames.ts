/**
 * The kernel's names for inline completion (variables, DataFrame columns, dict keys,
 * signatures), read through the one silent kernel read (`common/kernelRead.ts`), whose user
 * expression calls `chapyter_ext.context.completion_names`; and the keywords callees accept
 * (`chapyter_ext.context.signatures.accepted_keywords`).
 */

import type { Kernel } from '@jupyterlab/services';

import { readJSON, readVariableList } from '../common/kernelRead';
import type { IVariableSummary } from '../common/snapshot';
import type { Accepted } from './keywords';

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

/** The user expression reading what `callees` accept as keywords; it binds no name. */
export function keywordsExpression(callees: string[]): string {
  // Callees are dotted ASCII names (checked before), so their JSON is a Python literal too.
  return (
    "__import__('IPython').display.JSON(__import__('chapyter_ext.context.signatures', " +
    "fromlist=['accepted_keywords']).accepted_keywords(get_ipython().user_ns, " +
    `${JSON.stringify(callees)}))`
  );
}

/** What each of `callees` accepts as keywords (null: unknown); null when the kernel cannot tell. */
export async function readKeywords(
  kernel: Kernel.IKernelConnection,
  callees: string[]
): Promise<Record<string, Accepted> | null> {
  const data = await readJSON(kernel, keywordsExpression(callees));
  return data && typeof data === 'object' && !Array.isArray(data)
    ? (data as Record<string, Accepted>)
    : null;
}
