/**
 * The frontend's layers, read from the source's own imports: shared machinery (`common/`,
 * `contract/`, `untrusted/` and the root modules) imports no feature folder; a feature folder
 * reaches another only through that one's public file (the chat's token and interfaces); no
 * import cycles; no module over 500 lines. CONTRIBUTING ("Where a new panel goes") says why.
 */

import * as fs from 'fs';
import * as path from 'path';

const SRC = path.join(__dirname, '..');

/** Folders of one feature each: they may not import each other's insides. */
const FEATURES = [
  'chat',
  'agent',
  'plan',
  'fix',
  'complete',
  'notebook',
  'outside',
  'savedSecrets'
];

/** The files through which a feature is reached from another (its token and interfaces). */
const PUBLIC = ['chat/tokens.ts'];

/** The entry point: it imports every feature's plugins. */
const ENTRY = 'index.ts';

/** Longest module, in lines. */
const MAX_LINES = 500;

/** Every module of the source (tests left out), relative to `src/`, with `/` separators. */
function modules(dir = SRC): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__tests__') {
        found.push(...modules(full));
      }
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      found.push(path.relative(SRC, full).split(path.sep).join('/'));
    }
  }
  return found.sort();
}

/** The relative module specifiers a source imports or re-exports (types included). */
export function specifiers(source: string): string[] {
  const pattern =
    /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  const found: string[] = [];
  for (const match of source.matchAll(pattern)) {
    found.push(match[1] ?? match[2]);
  }
  return found;
}

/** The module `specifier` names from `file`, among `known` (null when it names none). */
function resolve(
  file: string,
  specifier: string,
  known: Set<string>
): string | null {
  const base = path.posix.normalize(
    path.posix.join(path.posix.dirname(file), specifier)
  );
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) {
    if (known.has(candidate)) {
      return candidate;
    }
  }
  return null;
}

/** Module -> the modules it imports. */
export type ImportGraph = Map<string, string[]>;

/** The import graph of the source. */
function sourceGraph(): ImportGraph {
  const files = modules();
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const text = fs.readFileSync(path.join(SRC, file), 'utf-8');
    const targets = specifiers(text)
      .map(s => resolve(file, s, known))
      .filter((t): t is string => t !== null);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

function folderOf(file: string): string {
  return file.includes('/') ? file.split('/')[0] : '';
}

/** The imports that break the layering, as "from -> to: why". */
export function layerViolations(graph: ImportGraph): string[] {
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    const fromFolder = folderOf(from);
    for (const to of targets) {
      const toFolder = folderOf(to);
      if (!FEATURES.includes(toFolder) || toFolder === fromFolder) {
        continue;
      }
      if (from === ENTRY) {
        continue;
      }
      if (!FEATURES.includes(fromFolder)) {
        problems.push(
          `${from} -> ${to}: shared code imports a feature folder (${toFolder}/)`
        );
      } else if (!PUBLIC.includes(to)) {
        problems.push(
          `${from} -> ${to}: a feature reaches ${toFolder}/ only through ${PUBLIC.filter(p => folderOf(p) === toFolder).join(', ') || 'a token of its own'}`
        );
      }
    }
  }
  // A public file hands out interfaces only: its feature's insides stay behind it.
  for (const file of PUBLIC) {
    for (const to of graph.get(file) ?? []) {
      if (folderOf(to) === folderOf(file)) {
        problems.push(
          `${file} -> ${to}: a public file imports its feature's insides`
        );
      }
    }
  }
  return problems;
}

/** The import cycles of a graph, each as its files in order (one per strongly tied set). */
export function cycles(graph: ImportGraph): string[][] {
  // Tarjan's strongly connected components; a component of two or more files is a cycle,
  // and so is a file importing itself.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) {
        found.push(component.reverse());
      }
    }
  };
  for (const node of graph.keys()) {
    if (!indices.has(node)) {
      visit(node);
    }
  }
  return found;
}

describe('the layering rules', () => {
  it('read every kind of relative import', () => {
    const source = [
      "import { a } from './a';",
      "import type { B } from '../chat/b';",
      "export { c } from './c';",
      "export * from '../d';",
      "import './style';",
      "const e = import('./e');",
      "import { f } from '@lumino/f';"
    ].join('\n');
    expect(specifiers(source)).toEqual([
      './a',
      '../chat/b',
      './c',
      '../d',
      './style',
      './e'
    ]);
  });

  it('refuse shared code importing a feature, and features importing insides', () => {
    const graph: ImportGraph = new Map([
      ['common/sse.ts', ['chat/model.ts']],
      ['agent/steps.ts', ['chat/panel.ts', 'chat/tokens.ts', 'common/dom.ts']],
      ['chat/tokens.ts', ['chat/model.ts']],
      ['chat/model.ts', ['chat/tokens.ts']],
      ['index.ts', ['agent/plugin.ts']]
    ]);
    expect(layerViolations(graph)).toEqual([
      'common/sse.ts -> chat/model.ts: shared code imports a feature folder (chat/)',
      'agent/steps.ts -> chat/panel.ts: a feature reaches chat/ only through chat/tokens.ts',
      "chat/tokens.ts -> chat/model.ts: a public file imports its feature's insides"
    ]);
  });

  it('find cycles, long and short', () => {
    const graph: ImportGraph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['d.ts']],
      ['e.ts', ['a.ts']]
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });
});

describe('labextension/src', () => {
  const graph = sourceGraph();

  it('is read whole', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('agent/plugin.ts')).toContain('chat/tokens.ts');
  });

  it('keeps its layers: shared code imports no feature, features meet through tokens', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it(`has no module over ${MAX_LINES} lines`, () => {
    const long = [...graph.keys()]
      .map(file => ({
        file,
        lines: fs
          .readFileSync(path.join(SRC, file), 'utf-8')
          .split('\n')
          .filter((line, i, all) => i < all.length - 1 || line !== '').length
      }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
