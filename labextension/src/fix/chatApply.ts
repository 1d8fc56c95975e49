/**
 * The bridge from the chat's code blocks to "Apply to cell N": the Fix plugin sets
 * {@link chatApplier} at start; the chat asks it, per code block, whether the code modifies
 * an existing cell of the active notebook. Neither side imports the other.
 */

import { cellCode } from '../contract';

/** An offer for one code block: the button's text and what it does. */
export interface IApplyOffer {
  /** e.g. "Apply to cell 3". */
  label: string;
  /** Show the code as a diff in that cell. */
  apply(): void;
}

/** Who answers the chat's question (null: no Fix plugin, no offer). */
export const chatApplier: {
  current: ((code: string, origin: IApplyOrigin) => IApplyOffer | null) | null;
} = { current: null };

/** Where an applied code block comes from. */
export interface IApplyOrigin {
  /** The model that wrote it. */
  model: string;
  /** Why it must not be offered as "Accept and run" (review first), or null. */
  hold?: string | null;
}

/**
 * The offer for a code block whose source (from the Markdown lexer, as shown) is `code`, or
 * null. The code is passed as a cell would hold it ({@link cellCode}), as "Insert below"
 * inserts it, so the diff shown and the code applied are that one string.
 */
export function applyOffer(
  code: string,
  origin: IApplyOrigin
): IApplyOffer | null {
  return chatApplier.current?.(cellCode(code), origin) ?? null;
}
