/**
 * What showing a text as a MIME type would fetch from other hosts: the TypeScript side of
 * `chapyter_ext.untrusted.remote_content.remote_resources`, tested with it against
 * `tests/vectors/remote_content.json`. HTML and SVG are read as parsed documents (inert),
 * Markdown through `marked` (JupyterLab's own parser) into HTML, CSS and JSON as text.
 */

import { Marked } from 'marked';

import { parseHtml, remoteInDocument } from './htmlGate';
import {
  cssAddresses,
  IRemoteResource,
  isJsonMime,
  jsonAddresses,
  remoteOnly
} from './remoteContent';

const markdown = new Marked({ gfm: true });

/** The remote fetches of `text` shown as `mime`, in reading order, each once. */
export function remoteResources(text: string, mime: string): IRemoteResource[] {
  const type = mime.split(';')[0].trim().toLowerCase();
  if (isJsonMime(type)) {
    try {
      return remoteOnly(jsonAddresses(JSON.parse(text)));
    } catch {
      return [];
    }
  }
  if (type === 'text/css') {
    return remoteOnly(cssAddresses(text));
  }
  if (type === 'text/markdown') {
    return remoteInDocument(
      parseHtml(markdown.parse(text, { async: false }) as string)
    );
  }
  if (type === 'text/html' || type === 'image/svg+xml') {
    return remoteInDocument(parseHtml(text));
  }
  return [];
}
