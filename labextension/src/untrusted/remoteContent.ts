/**
 * What an output would fetch from another host when it is shown: the rule of
 * `chapyter_ext/untrusted/remote_content.py`, tested with it against
 * `tests/vectors/remote_content.json`. This file holds the pure parts (addresses, CSS,
 * `srcset`, refresh, JSON, which attribute fetches); `htmlGate.ts` walks a parsed document
 * with them. Remote is what a browser fetches from a host other than the page's: http(s),
 * ftp, ws(s), protocol-relative `//host` (slashes or backslashes); `data:` and relative
 * addresses are local; a link fetches nothing until it is clicked. Pure: no DOM.
 */

/** What a fetch is for. */
export type ResourceKind =
  | 'image'
  | 'stylesheet'
  | 'font'
  | 'frame'
  | 'media'
  | 'script'
  | 'link-prefetch'
  | 'refresh'
  | 'base'
  | 'data';

/** One fetch from another host that showing an output would make. */
export interface IRemoteResource {
  /** The address as the browser reads it (tabs and newlines dropped, trimmed). */
  url: string;
  /** Host and port it goes to, lower case, without user info. */
  host: string;
  /** What it is fetched as. */
  kind: ResourceKind;
}

/** An address found in a text, remote or not, with what it would be fetched as. */
export interface IFoundAddress {
  /** The address as written (references and escapes decoded). */
  address: string;
  /** What it would be fetched as. */
  kind: ResourceKind;
  /** The attribute it was read from, if any. */
  attribute?: string;
}

const REMOTE_SCHEMES = new Set(['http', 'https', 'ftp', 'ws', 'wss']);
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/** `{url, host}` when a browser would fetch `address` from another host, else null. */
export function remoteHost(
  address: string
): { url: string; host: string } | null {
  // eslint-disable-next-line no-control-regex
  const url = address.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');
  const cleaned = url.replace(/[\t\n\r]/g, '');
  const scheme = SCHEME.exec(cleaned);
  let rest: string;
  if (scheme) {
    if (!REMOTE_SCHEMES.has(scheme[1].toLowerCase())) {
      return null;
    }
    rest = cleaned.slice(scheme[0].length);
  } else if (/^[/\\]{2}/.test(cleaned)) {
    rest = cleaned;
  } else {
    return null;
  }
  const authority = rest.replace(/^[/\\]+/, '').split(/[/\\?#]/, 1)[0];
  const host = authority.slice(authority.lastIndexOf('@') + 1).toLowerCase();
  return host ? { url: cleaned, host } : null;
}

/** The remote ones of `found`, each address and kind once, in order. */
export function remoteOnly(found: readonly IFoundAddress[]): IRemoteResource[] {
  const seen = new Set<string>();
  const resources: IRemoteResource[] = [];
  for (const { address, kind } of found) {
    const remote = remoteHost(address);
    const key = remote ? `${kind} ${remote.url}` : '';
    if (remote && !seen.has(key)) {
      seen.add(key);
      resources.push({ ...remote, kind });
    }
  }
  return resources;
}

// --- CSS ------------------------------------------------------------------------------------

const CSS_COMMENT = /\/\*[\s\S]*?(?:\*\/|$)/g;
const CSS_ESCAPE =
  /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(\r\n|[\n\r\f])|([\s\S]))/g;
const CSS_TOKEN = new RegExp(
  '@import\\s*(?:url\\(\\s*(?:"([^"]*)"|\'([^\']*)\'|([^"\')]*?))\\s*\\)|"([^"]*)"|\'([^\']*)\')' +
    '|(@namespace\\b[^;{}]*)' +
    '|(?<![\\w-])(?:url|src)\\(\\s*(?:"([^"]*)"|\'([^\']*)\'|([^"\')]*?))\\s*\\)' +
    '|(?<![\\w-])((?:-webkit-)?image-set\\(|image\\()',
  'gi'
);
const CSS_STRING = /"([^"]*)"|'([^']*)'/g;
const FONT_FACE = /@font-face\s*\{/gi;

function cssUnescape(
  _whole: string,
  hex: string | undefined,
  newline: string | undefined,
  char: string | undefined
): string {
  if (newline !== undefined) {
    return '';
  }
  if (char !== undefined) {
    return char;
  }
  const code = parseInt(hex!, 16);
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return '\ufffd';
  }
  return String.fromCodePoint(code);
}

/** The index just past the bracket that closes the one opened before `start`. */
function closing(text: string, start: number, open: string, close: string) {
  let depth = 1;
  let quote = '';
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === quote) {
        quote = '';
      }
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === open) {
      depth++;
    } else if (char === close && --depth === 0) {
      return index + 1;
    }
  }
  return text.length;
}

/**
 * Every address `css` would fetch, remote or not: `url()`, `src()`, `@import` (with or
 * without `url()`: "stylesheet"), the strings of `image-set()`/`image()`; inside
 * `@font-face`, "font". `@namespace` fetches nothing. Comments dropped, escapes decoded.
 */
export function cssAddresses(
  css: string,
  kind: ResourceKind = 'image'
): IFoundAddress[] {
  const text = css.replace(CSS_COMMENT, ' ').replace(CSS_ESCAPE, cssUnescape);
  const fonts: [number, number][] = [];
  for (const match of text.matchAll(FONT_FACE)) {
    const start = match.index! + match[0].length;
    fonts.push([start, closing(text, start, '{', '}')]);
  }
  const found: [number, IFoundAddress][] = [];
  for (const match of text.matchAll(CSS_TOKEN)) {
    const at = match.index!;
    if (match[6] !== undefined) {
      continue;
    }
    if (match[10] !== undefined) {
      const start = at + match[0].length;
      const inner = text.slice(start, closing(text, start, '(', ')') - 1);
      for (const string of inner.matchAll(CSS_STRING)) {
        const before = inner.slice(0, string.index).trimEnd();
        if (!/(?<![\w-])(?:url|src)\($/i.test(before)) {
          const address = string[1] ?? string[2];
          found.push([start + string.index!, { address, kind }]);
        }
      }
      continue;
    }
    const imported = [1, 2, 3, 4, 5]
      .map(i => match[i])
      .find(g => g !== undefined);
    if (imported !== undefined) {
      found.push([at, { address: imported, kind: 'stylesheet' }]);
      continue;
    }
    const address = [7, 8, 9].map(i => match[i]).find(g => g !== undefined)!;
    const inFont = fonts.some(([start, end]) => at >= start && at < end);
    found.push([at, { address, kind: inFont ? 'font' : kind }]);
  }
  found.sort((a, b) => a[0] - b[0]);
  return found.map(([, item]) => item);
}

// --- HTML attributes -------------------------------------------------------------------------

/** Attributes that fetch, by HTML element (lower-case names), and as what. */
const HTML_FETCHES: { [tag: string]: { [attribute: string]: ResourceKind } } = {
  img: { src: 'image', srcset: 'image' },
  source: { src: 'media', srcset: 'image' },
  video: { src: 'media', poster: 'image' },
  audio: { src: 'media' },
  track: { src: 'media' },
  iframe: { src: 'frame' },
  frame: { src: 'frame' },
  embed: { src: 'frame' },
  object: { data: 'frame' },
  script: { src: 'script' },
  base: { href: 'base' }
};
for (const tag of [
  'body',
  'table',
  'td',
  'th',
  'tr',
  'thead',
  'tbody',
  'tfoot'
]) {
  HTML_FETCHES[tag] = { background: 'image' };
}

/** In SVG, the elements whose `href`/`xlink:href` fetch. */
const SVG_FETCHES: { [tag: string]: ResourceKind } = {
  image: 'image',
  use: 'image',
  feimage: 'image',
  script: 'script'
};

/** SVG presentation attributes that take `url()`. */
export const SVG_URL_ATTRIBUTES = new Set([
  'fill',
  'stroke',
  'filter',
  'clip-path',
  'mask',
  'marker-start',
  'marker-mid',
  'marker-end',
  'cursor'
]);

/** `<link rel>` tokens that fetch, and as what. */
const LINK_RELS: { [rel: string]: ResourceKind } = {
  stylesheet: 'stylesheet',
  icon: 'image',
  'apple-touch-icon': 'image',
  'apple-touch-icon-precomposed': 'image',
  'mask-icon': 'image'
};
for (const rel of 'preload prefetch preconnect dns-prefetch modulepreload prerender manifest'.split(
  ' '
)) {
  LINK_RELS[rel] = 'link-prefetch';
}

/** The addresses of a `srcset` (HTML's candidate parsing: commas inside a URL stay). */
export function srcsetUrls(srcset: string): string[] {
  const urls: string[] = [];
  const space = (c: string) => ' \t\n\r\f'.includes(c);
  let index = 0;
  while (index < srcset.length) {
    while (
      index < srcset.length &&
      (space(srcset[index]) || srcset[index] === ',')
    ) {
      index++;
    }
    const start = index;
    while (index < srcset.length && !space(srcset[index])) {
      index++;
    }
    let url = srcset.slice(start, index);
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
    } else if (url) {
      let depth = 0;
      for (; index < srcset.length; index++) {
        const char = srcset[index];
        if (char === '(') {
          depth++;
        } else if (char === ')') {
          depth = Math.max(0, depth - 1);
        } else if (char === ',' && depth === 0) {
          break;
        }
      }
    }
    if (url) {
      urls.push(url);
    }
  }
  return urls;
}

/** The address a `<meta http-equiv=refresh content=...>` goes to, if any. */
export function refreshUrl(content: string): string | null {
  const match = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?([\s\S]*)$/i.exec(content);
  let rest = (match?.[1] ?? '').trim();
  if (rest[0] === '"' || rest[0] === "'") {
    rest = rest.slice(1).split(rest[0], 1)[0];
  }
  return rest || null;
}

/**
 * What one element's attributes, read in order, would fetch; `srcdoc` (an iframe's page)
 * is read by `srcdoc` when given.
 */
export function attributeAddresses(
  tag: string,
  attributes: readonly [string, string][],
  inSvg: boolean,
  srcdoc?: (html: string) => IFoundAddress[]
): IFoundAddress[] {
  const value = (name: string) =>
    attributes.find(([n]) => n === name)?.[1] ?? '';
  const all: IFoundAddress[] = [];
  let found: IFoundAddress[] = [];
  const fetches = inSvg ? {} : (HTML_FETCHES[tag] ?? {});
  const rels =
    tag === 'link'
      ? value('rel').toLowerCase().split(/\s+/).filter(Boolean)
      : [];
  for (const [name, text] of attributes) {
    found = [];
    if (name === 'style') {
      found.push(...cssAddresses(text));
    } else if (tag === 'iframe' && name === 'srcdoc') {
      found.push(...(srcdoc?.(text) ?? []));
    } else if (inSvg && (name === 'href' || name === 'xlink:href')) {
      if (tag in SVG_FETCHES) {
        found.push({ address: text, kind: SVG_FETCHES[tag] });
      }
    } else if (inSvg && SVG_URL_ATTRIBUTES.has(name)) {
      found.push(...cssAddresses(text));
    } else if (tag === 'link' && (name === 'href' || name === 'imagesrcset')) {
      const kinds = rels
        .filter(rel => rel in LINK_RELS)
        .map(rel => LINK_RELS[rel]);
      if (kinds.length && name === 'href') {
        found.push({ address: text, kind: kinds[0] });
      } else if (kinds.length && rels.includes('preload')) {
        found.push(
          ...srcsetUrls(text).map(address => ({
            address,
            kind: 'link-prefetch' as const
          }))
        );
      }
    } else if (tag === 'input' && name === 'src') {
      if (value('type').trim().toLowerCase() === 'image') {
        found.push({ address: text, kind: 'image' });
      }
    } else if (tag === 'meta' && name === 'content') {
      const target =
        value('http-equiv').trim().toLowerCase() === 'refresh'
          ? refreshUrl(text)
          : null;
      if (target) {
        found.push({ address: target, kind: 'refresh' });
      }
    } else if (name in fetches) {
      const kind = fetches[name];
      const addresses = name.endsWith('srcset') ? srcsetUrls(text) : [text];
      found.push(...addresses.map(address => ({ address, kind })));
    }
    all.push(...found.map(item => ({ ...item, attribute: name })));
  }
  return all;
}

// --- JSON ------------------------------------------------------------------------------------

/** Keys whose values name an address without loading it (a schema's id, a link). */
const JSON_SKIPPED_KEYS = new Set(['$schema', '$id', 'href']);

/** Every string of a JSON value that could be an address a renderer loads ("data"). */
export function jsonAddresses(value: unknown, found: IFoundAddress[] = []) {
  if (Array.isArray(value)) {
    value.forEach(item => jsonAddresses(item, found));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (!JSON_SKIPPED_KEYS.has(key)) {
        jsonAddresses(item, found);
      }
    }
  } else if (typeof value === 'string' && !/\s/.test(value.trim())) {
    found.push({ address: value, kind: 'data' });
  }
  return found;
}

/** Whether a MIME type is read as JSON. */
export function isJsonMime(mime: string): boolean {
  return mime === 'application/json' || mime.endsWith('+json');
}
