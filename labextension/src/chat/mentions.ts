/**
 * @-mentions: the `mentions` field of a chat or agent request, and the mentions
 * read back from a stored message. Pure; their chips are `mentionChips.ts`'s.
 */

import type { IChatMention } from './tokens';

const KINDS = ['variable', 'cell', 'file'];

/** The key telling two mentions of the same thing apart from others. */
export function mentionKey(mention: IChatMention): string {
  const id = mention.name ?? mention.cellId ?? mention.path ?? mention.label;
  return `${mention.kind}\u0000${id}`;
}

/**
 * The request field of `mentions`: `{mentions}` (each named once) when there are some, else
 * nothing, so a request without mentions is the same as before.
 */
export function mentionsField(
  mentions: readonly IChatMention[] | null | undefined
): {
  mentions?: IChatMention[];
} {
  const seen = new Set<string>();
  const unique = (mentions ?? []).filter(mention => {
    const key = mentionKey(mention);
    return !seen.has(key) && !!seen.add(key);
  });
  return unique.length ? { mentions: unique.map(m => ({ ...m })) } : {};
}

/** The well-formed mentions of a stored message (its file may have been edited), or none. */
export function mentionsFromServer(data: unknown): IChatMention[] | undefined {
  if (!Array.isArray(data)) {
    return undefined;
  }
  const found: IChatMention[] = [];
  for (const raw of data as { [key: string]: unknown }[]) {
    if (!raw || !KINDS.includes(raw.kind as string)) {
      continue;
    }
    const mention: IChatMention = {
      kind: raw.kind as IChatMention['kind'],
      label: String(raw.label ?? raw.name ?? raw.path ?? raw.cellId ?? '')
    };
    for (const key of ['name', 'cellId', 'path'] as const) {
      if (typeof raw[key] === 'string') {
        mention[key] = raw[key] as string;
      }
    }
    if (mention.label) {
      found.push(mention);
    }
  }
  return found.length ? found : undefined;
}
