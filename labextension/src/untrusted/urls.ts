/**
 * Which URLs in untrusted text may do what: a link is followed only on a click (a click is
 * consent), an image is never fetched when the text is shown, since its URL can carry the
 * notebook's data out. Only `data:` images show at once: they make no request. Pure: no DOM.
 */

/** Where an image of untrusted text comes from, and so whether it may show at once. */
export type ImageSource =
  /** A `data:image/...` URL: shown at once, nothing is fetched. */
  | { kind: 'inline'; url: string }
  /** A URL that would be fetched: shown only when the reader asks, `host` names where. */
  | { kind: 'remote'; url: string; host: string }
  /** Never shown (another scheme, or no URL). */
  | { kind: 'blocked'; reason: string };

const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+(?:;[^,]*)?,/i;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function resolve(href: string, base: string): URL | null {
  try {
    return new URL(href, base);
  } catch {
    return null;
  }
}

/**
 * What an image's `href` may do. Relative and protocol-relative URLs are resolved against
 * `base` (the page): they would be fetched too, from the Jupyter server or another host.
 */
export function imageSource(href: string, base: string): ImageSource {
  const trimmed = href.trim();
  if (!trimmed) {
    return { kind: 'blocked', reason: 'no address' };
  }
  if (DATA_IMAGE.test(trimmed)) {
    return { kind: 'inline', url: trimmed };
  }
  const url = resolve(trimmed, base);
  if (!url) {
    return { kind: 'blocked', reason: 'not a valid address' };
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    return { kind: 'remote', url: url.href, host: url.host };
  }
  return { kind: 'blocked', reason: `${url.protocol} address` };
}

/**
 * The address a link of untrusted text may open: absolute http(s) and mailto only (no
 * `javascript:`, no relative path into the server), or null when it stays plain text.
 */
export function linkHref(href: string, base: string): string | null {
  const trimmed = href.trim();
  if (!SCHEME.test(trimmed) && !trimmed.startsWith('//')) {
    return null;
  }
  const url = resolve(trimmed, base);
  if (!url) {
    return null;
  }
  return ['http:', 'https:', 'mailto:'].includes(url.protocol)
    ? url.href
    : null;
}
