/**
 * The chat input's pure rules: which token opens the menu, how items are ranked,
 * the text after a pick; the slash command registry and its built-ins; the `mentions`
 * field of a request (only when there are some, in plain and agent turns alike) and the
 * mentions kept on the stored user message; what `@` lists of variables, cells and files.
 */

import {
  findTrigger,
  moveActive,
  rankItems,
  replaceToken
} from '../chat/inputMenuLogic';
import { mentionsField, mentionsFromServer } from '../chat/mentions';
import {
  cellItems,
  fileItems,
  splitFileQuery,
  variableItems
} from '../chat/mentionSources';
import {
  builtinCommands,
  IBuiltinTarget,
  parseSlash,
  SlashCommandRegistry
} from '../chat/slashCommands';
import { messageFromServer } from '../chat/thread';
import type { IChatMention, IChatMode } from '../chat/tokens';
import { Signal } from '@lumino/signaling';
import { FakeClient, flush, makeModel, ManualStream } from './chatFakes';

const item = (label: string) => ({ id: label, label, insert: `@${label}` });

describe('findTrigger', () => {
  it.each([
    ['/', 1, { char: '/', start: 0, query: '' }],
    ['/mo', 3, { char: '/', start: 0, query: 'mo' }],
    ['@', 1, { char: '@', start: 0, query: '' }],
    ['look at @df', 11, { char: '@', start: 8, query: 'df' }],
    ['a\n@data/x', 9, { char: '@', start: 2, query: 'data/x' }],
    ['@df and @s', 10, { char: '@', start: 8, query: 's' }]
  ])('%j at %i opens the menu', (text, caret, expected) => {
    expect(findTrigger(text, caret)).toEqual(expected);
  });

  it.each([
    ['', 0],
    ['a /x', 4], // `/` only at the very start
    ['mail@host', 9], // `@` only at a word start
    ['@df ', 4], // a space ends the token
    ['@df', 0], // the caret is before it
    ['x', 1]
  ])('%j at %i does not', (text, caret) => {
    expect(findTrigger(text, caret)).toBeNull();
  });
});

describe('rankItems', () => {
  const items = ['sales', 'df_sales', 'presales', 'df', 'cell [4]'].map(item);

  it('puts prefixes first, then word starts, then substrings', () => {
    expect(rankItems(items, 'sal').map(i => i.label)).toEqual([
      'sales',
      'df_sales',
      'presales'
    ]);
  });

  it('ignores case, keeps the order for an empty query, limits', () => {
    expect(rankItems(items, 'DF').map(i => i.label)).toEqual([
      'df_sales',
      'df'
    ]);
    expect(rankItems(items, '')).toHaveLength(5);
    expect(rankItems(items, '', 2)).toHaveLength(2);
    expect(rankItems(items, '4').map(i => i.label)).toEqual(['cell [4]']);
    expect(rankItems(items, 'zzz')).toEqual([]);
  });
});

describe('replaceToken', () => {
  it('replaces the typed token and adds a space', () => {
    const trigger = findTrigger('see @d please', 6)!;
    expect(replaceToken('see @d please', trigger, 6, '@df')).toEqual({
      text: 'see @df please',
      caret: 7
    });
    const end = findTrigger('@d', 2)!;
    expect(replaceToken('@d', end, 2, '@df')).toEqual({
      text: '@df ',
      caret: 4
    });
  });

  it('adds no space when the menu stays open (a folder)', () => {
    const trigger = findTrigger('@da', 3)!;
    expect(replaceToken('@da', trigger, 3, '@data/', true)).toEqual({
      text: '@data/',
      caret: 6
    });
  });

  it('moves the active row around', () => {
    expect(moveActive(0, 3, 1)).toBe(1);
    expect(moveActive(2, 3, 1)).toBe(0);
    expect(moveActive(0, 3, -1)).toBe(2);
    expect(moveActive(0, 0, 1)).toBe(-1);
  });
});

function target(over: Partial<IBuiltinTarget> = {}) {
  const done: string[] = [];
  const base: IBuiltinTarget = {
    newChat: async () => done.push('new'),
    exportChat: async () => void done.push('export'),
    models: () => [
      { name: 'fast', model: 'gpt-4o-mini', host: 'h' },
      { name: 'Local', model: 'llama3', host: 'h' }
    ],
    selectModel: name => void done.push(`model ${name}`),
    fixLastError: async () => false,
    explainActiveCell: async () => done.push('explain') > 0
  };
  const registry = new SlashCommandRegistry();
  builtinCommands({ ...base, ...over }).forEach(c => registry.add(c));
  return { registry, done };
}

describe('slash commands', () => {
  it('parses a command, and only a command', () => {
    expect(parseSlash('/model fast')).toEqual({ name: 'model', args: 'fast' });
    expect(parseSlash(' /Clear ')).toEqual({ name: 'clear', args: '' });
    expect(parseSlash('/usr/bin is what?')).toBeNull();
    expect(parseSlash('hello /clear')).toBeNull();
    expect(parseSlash('/')).toBeNull();
  });

  it('lists the built-ins with their descriptions', () => {
    const { registry } = target();
    const items = registry.menuItems('');
    expect(items.map(i => i.label)).toEqual([
      'clear',
      'export',
      'model',
      'fix',
      'explain'
    ]);
    expect(items[2].detail).toMatch(/^NAME · Switch the model/);
    expect(items[2]).toMatchObject({ insert: '/model ', keepOpen: true });
    expect(items[0]).toMatchObject({ insert: '/clear' });
  });

  it('completes model names', () => {
    const { registry } = target();
    expect(registry.menuItems('model l').map(i => i.insert)).toEqual([
      '/model Local'
    ]);
    expect(registry.menuItems('model ')).toHaveLength(2);
    expect(registry.menuItems('clear x')).toEqual([]);
  });

  it('runs them; an unknown one is one line and nothing else', async () => {
    const { registry, done } = target();
    expect(await registry.run('/clear')).toBe('');
    expect(await registry.run('/export')).toBe('');
    expect(await registry.run('/model local')).toBe('Model: Local');
    expect(await registry.run('/model gpt-5')).toBe(
      'Unknown model "gpt-5": one of fast, Local.'
    );
    expect(await registry.run('/fix')).toBe('No error to fix');
    expect(await registry.run('/explain')).toBe('');
    expect(await registry.run('/foo bar')).toBe(
      'Unknown command /foo: type / to list the commands.'
    );
    expect(await registry.run('not a command')).toBeNull();
    expect(done).toEqual(['new', 'export', 'model Local', 'explain']);
  });

  it('says a failure in one line, and takes commands from plugins', async () => {
    const { registry } = target({
      fixLastError: async () => {
        throw new Error('Fix is\nnot installed');
      }
    });
    expect(await registry.run('/fix')).toBe(
      '/fix failed: Fix is not installed'
    );
    registry.add({
      name: 'Plan',
      description: 'Plan first',
      run: args => `planned ${args}`
    });
    expect(await registry.run('/plan load data')).toBe('planned load data');
    expect(() =>
      registry.add({ name: '9x', description: '', run: () => undefined })
    ).toThrow(/Not a slash command name/);
  });
});

describe('mentions', () => {
  const df: IChatMention = { kind: 'variable', name: 'df', label: 'df' };

  it('adds the field only when there are mentions, each once', () => {
    expect(mentionsField([])).toEqual({});
    expect(mentionsField(null)).toEqual({});
    expect(mentionsField([df, { ...df }])).toEqual({ mentions: [df] });
  });

  it('keeps well-formed mentions of a stored message', () => {
    const message = messageFromServer({
      id: 'u',
      role: 'user',
      content: 'look at @df',
      mentions: [
        df,
        { kind: 'file', path: 'a.csv', label: 'a.csv' },
        { kind: 'bogus', label: 'x' } as unknown as IChatMention
      ]
    });
    expect(message.mentions).toEqual([
      df,
      { kind: 'file', path: 'a.csv', label: 'a.csv' }
    ]);
    expect(messageFromServer({ id: 'v' }).mentions).toBeUndefined();
    expect(mentionsFromServer('nope')).toBeUndefined();
  });

  it('sends them with the message typed, and keeps them on it', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    await model.loadConfig();
    await model.setNotebook('a.ipynb');
    model.mentionsFor = text => (text === 'about @df' ? [df] : []);
    void model.send('about @df');
    await flush();
    expect(client.requests[0].mentions).toEqual([df]);
    expect(model.messages[0].mentions).toEqual([df]);
    client.streams[0].send({
      type: 'done',
      messageId: 'm',
      text: 'ok',
      status: 'complete'
    });
    client.streams[0].end();
    await flush();
    void model.send('no mention');
    await flush();
    expect('mentions' in client.requests[1]).toBe(false);
    expect(model.messages[2].mentions).toBeUndefined();
  });

  it('goes with an agent turn too', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    await model.loadConfig();
    await model.setNotebook('a.ipynb');
    const seen: unknown[] = [];
    const mode: IChatMode = {
      enabled: true,
      changed: new Signal<object, void>({}),
      open: async (request, _reply, signal) => {
        seen.push(request.mentions);
        const stream = new ManualStream(signal);
        stream.end();
        return stream;
      },
      stop: () => undefined,
      controls: () => ({ node: {} as HTMLElement, update: () => undefined }),
      placeholder: '',
      chipNote: () => '',
      chipDetails: () => ''
    };
    model.agent = mode;
    model.mentionsFor = () => [df];
    await model.send('plot @df');
    expect(seen).toEqual([[df]]);
  });
});

describe('what @ lists', () => {
  it('names variables with their type and shape', () => {
    const [item] = variableItems([
      {
        name: 'df',
        type: 'DataFrame',
        summary: 'long',
        head: '5 rows × 2 columns'
      }
    ]);
    expect(item).toMatchObject({
      label: 'df',
      detail: 'DataFrame · 5 rows × 2 columns',
      insert: '@df',
      mention: { kind: 'variable', name: 'df', label: 'df' }
    });
  });

  it('names cells as the notebook shows them, with their first line', () => {
    const items = cellItems([
      { id: 'a', type: 'code', executionCount: 4, source: 'x = 1\ny = 2' },
      { id: 'b', type: 'markdown', source: '' }
    ]);
    expect(items.map(i => [i.label, i.detail, i.insert])).toEqual([
      ['cell [4]', 'x = 1', '@cell[4]'],
      ['the 2nd cell', '(empty markdown cell)', '@cell#2']
    ]);
    expect(items[0].mention).toEqual({
      kind: 'cell',
      cellId: 'a',
      label: 'cell [4]'
    });
  });

  it('lists folders (navigable) before files, hidden ones left out', () => {
    expect(splitFileQuery('data/sa')).toEqual({ dir: 'data', name: 'sa' });
    expect(splitFileQuery('sa')).toEqual({ dir: '', name: 'sa' });
    const items = fileItems([
      { name: 'b.csv', path: 'data/b.csv', type: 'file' },
      { name: 'raw', path: 'data/raw', type: 'directory' },
      { name: '.git', path: 'data/.git', type: 'directory' }
    ]);
    expect(items.map(i => [i.label, i.insert, !!i.keepOpen])).toEqual([
      ['raw/', '@data/raw/', true],
      ['b.csv', '@data/b.csv', false]
    ]);
    expect(items[1].mention).toEqual({
      kind: 'file',
      path: 'data/b.csv',
      label: 'data/b.csv'
    });
  });
});
