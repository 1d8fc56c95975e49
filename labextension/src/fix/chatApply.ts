/**
 * The bridge from the chat's code blocks to "Apply to cell N": the Fix plugin sets
 * {@link chatApplier} at start; the chat asks it, per code block, whether the code modifies
 * an existing cell of the active notebook. No imports, so neither side depends on the other.
 */

/** An offer for one code block: the button's text and what it does. */
export interface IApplyOffer {
  /** e.g. "Apply to cell 3". */
  label: string;
  /** Show the code as a diff in that cell. */
  apply(): void;
}

/** Who answers the chat's question (null: no Fix plugin, no offer). */
export const chatApplier: {
  current:
    ((code: string, origin: { model: string }) => IApplyOffer | null) | null;
} = { current: null };
