/**
 * @jest-environment jsdom
 */

/**
 * The chat input's popup and chips in the DOM: `@` lists and filters, the keys
 * (ArrowDown, Enter, Tab, Escape) are the menu's while it is open and never reach the
 * panel's Enter-sends, a pick keeps `@df` in the text and adds a chip that is a labelled
 * button (click, or Backspace in an empty input, removes it); `/` lists the commands, an
 * unknown one says so in one line and sends nothing; a sent message's chips are read-only.
 */

import { ChatInput } from '../chat/chatInput';
import { ChatExtension } from '../chat/extension';
import { mentionList } from '../chat/mentionChips';
import { CONTEXT, FakeClient, flush, makeModel } from './chatFakes';

async function setUp() {
  const client = new FakeClient();
  const model = makeModel(client);
  await model.loadConfig();
  await model.setNotebook('a.ipynb');
  const extension = new ChatExtension({
    model,
    config: () => client.config(),
    snapshot: async () => CONTEXT.snapshot,
    show: () => undefined
  });
  extension.mentionSource = () => [
    {
      id: 'df',
      label: 'df',
      detail: 'DataFrame · 3 rows',
      insert: '@df',
      mention: { kind: 'variable', name: 'df', label: 'df' }
    },
    {
      id: 'dx',
      label: 'dx',
      insert: '@dx',
      mention: { kind: 'variable', name: 'dx', label: 'dx' }
    },
    { id: 'data', label: 'data/', insert: '@data/', keepOpen: true }
  ];
  const row = document.createElement('div');
  const input = document.createElement('textarea');
  const send = document.createElement('button');
  send.className = 'jp-Chapyter-chatSend';
  row.append(input, send);
  document.body.append(row);
  // The panel's own handler: Enter sends what is typed.
  const sent: string[] = [];
  input.addEventListener('keydown', event => {
    if (event.key === 'Enter' && !event.shiftKey) {
      sent.push(input.value);
      void model.send(input.value);
      input.value = '';
    }
  });
  const chat = new ChatInput(input, model, extension);
  document.body.prepend(chat.node);
  return { client, model, extension, input, chat, sent };
}

function type(input: HTMLTextAreaElement, text: string): Promise<void> {
  input.value = text;
  input.setSelectionRange(text.length, text.length);
  input.dispatchEvent(new Event('input', { bubbles: true }));
  return flush();
}

function key(input: HTMLTextAreaElement, name: string): void {
  input.dispatchEvent(
    new KeyboardEvent('keydown', { key: name, bubbles: true, cancelable: true })
  );
}

afterEach(() => {
  document.body.textContent = '';
});

describe('the chat input menu', () => {
  it('lists, filters and picks a mention by keyboard', async () => {
    const { input, chat, sent } = await setUp();
    expect(input.getAttribute('aria-expanded')).toBe('false');
    await type(input, 'see @d');
    const list = chat.menu.node;
    expect(list.getAttribute('role')).toBe('listbox');
    expect(list.hidden).toBe(false);
    expect(input.getAttribute('aria-expanded')).toBe('true');
    expect(input.getAttribute('aria-controls')).toBe(list.id);
    const options = [...list.querySelectorAll('[role="option"]')];
    expect(options.map(o => o.textContent)).toEqual([
      'dfDataFrame · 3 rows',
      'dx',
      'data/'
    ]);
    expect(input.getAttribute('aria-activedescendant')).toBe(options[0].id);
    key(input, 'ArrowDown');
    expect(input.getAttribute('aria-activedescendant')).toBe(
      list.querySelectorAll('[role="option"]')[1].id
    );
    key(input, 'ArrowUp');
    key(input, 'Enter');
    await flush();
    expect(sent).toEqual([]); // the menu's Enter, not the panel's
    expect(input.value).toBe('see @df ');
    expect(list.hidden).toBe(true);
    expect(input.getAttribute('aria-expanded')).toBe('false');
    const chip = chat.chips.node.querySelector('button')!;
    expect(chip.getAttribute('aria-label')).toBe('Remove mention df');
    expect(chat.chips.node.hidden).toBe(false);
  });

  it('picks with Tab and a click, closes with Escape', async () => {
    const { input, chat } = await setUp();
    await type(input, '@dx');
    key(input, 'Tab');
    await flush();
    expect(input.value).toBe('@dx ');
    await type(input, '@d');
    key(input, 'Escape');
    expect(chat.menu.isOpen).toBe(false);
    await type(input, '@d');
    (chat.menu.node.children[0] as HTMLElement).click();
    await flush();
    expect(input.value).toBe('@df ');
    expect(chat.chips.mentions.map(m => m.label)).toEqual(['dx', 'df']);
  });

  it('keeps the menu open in a folder', async () => {
    const { input, chat } = await setUp();
    await type(input, '@dat');
    key(input, 'Enter');
    await flush();
    expect(input.value).toBe('@data/');
    expect(chat.chips.mentions).toEqual([]);
    expect(chat.menu.isOpen).toBe(true);
  });

  it('removes chips by click and by Backspace in an empty input', async () => {
    const { input, chat } = await setUp();
    chat.chips.add({ kind: 'variable', name: 'df', label: 'df' });
    chat.chips.add({ kind: 'file', path: 'a.csv', label: 'a.csv' });
    await type(input, '');
    key(input, 'Backspace');
    expect(chat.chips.mentions.map(m => m.label)).toEqual(['df']);
    chat.chips.node.querySelector('button')!.click();
    expect(chat.chips.mentions).toEqual([]);
    expect(chat.chips.node.hidden).toBe(true);
  });

  it('sends the chips with the message typed, then clears them', async () => {
    const { input, chat, client, sent } = await setUp();
    chat.chips.add({ kind: 'variable', name: 'df', label: 'df' });
    await type(input, 'about @df ');
    key(input, 'Enter');
    await flush();
    expect(sent).toEqual(['about @df ']);
    expect(client.requests[0].mentions).toEqual([
      { kind: 'variable', name: 'df', label: 'df' }
    ]);
    expect(chat.chips.mentions).toEqual([]);
  });
});

describe('slash commands in the input', () => {
  it('lists the commands on "/"', async () => {
    const { input, chat, extension } = await setUp();
    extension.addSlashCommand({
      name: 'hello',
      description: 'Say hello',
      run: () => 'hi'
    });
    await type(input, '/');
    expect(
      [...chat.menu.node.querySelectorAll('.jp-Chapyter-chatMenuLabel')].map(
        n => n.textContent
      )
    ).toEqual(['hello']);
    expect(chat.menu.node.textContent).toContain('Say hello');
  });

  it('runs a command instead of sending; an unknown one is one line', async () => {
    const { input, chat, client, sent, extension } = await setUp();
    extension.addSlashCommand({
      name: 'hello',
      description: 'Say hello',
      run: () => 'hi'
    });
    await type(input, '/foo');
    key(input, 'Enter');
    await flush();
    const status = chat.node.querySelector('[role="status"]')!;
    expect(status.textContent).toBe(
      'Unknown command /foo: type / to list the commands.'
    );
    expect(sent).toEqual([]);
    expect(client.requests).toEqual([]);
    expect(input.value).toBe('');
    await type(input, '/hello');
    key(input, 'Escape');
    (document.querySelector('.jp-Chapyter-chatSend') as HTMLElement).click();
    await flush();
    expect(status.textContent).toBe('hi');
    expect(client.requests).toEqual([]);
  });
});

describe("a sent message's mentions", () => {
  it('are drawn as read-only chips', () => {
    const list = mentionList([
      { kind: 'cell', cellId: 'a', label: 'cell [4]' }
    ]);
    expect(list.getAttribute('aria-label')).toBe('Mentioned');
    expect(list.textContent).toBe('@cell [4]');
    expect(list.querySelector('button')).toBeNull();
  });
});
