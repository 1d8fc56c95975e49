/**
 * @jest-environment jsdom
 */

/**
 * Outside agents' tokens in the browser (`outside/tokensView.ts`, `outside/tokensClient.ts`):
 * listed without secrets, created with the secret shown once beside the ready `mcpServers`
 * JSON, copied, revoked; failures said in one line; every control labelled.
 */

import './lumino-dom';

import { Widget } from '@lumino/widgets';

import {
  ICreatedToken,
  IOutsideToken,
  ITokensClient,
  mcpEndpoint,
  mcpServersJSON,
  serverKey,
  shownDate
} from '../outside/tokensClient';
import { OutsideTokensView } from '../outside/tokensView';

const ENDPOINT = 'http://127.0.0.1:8888/base/chapyter-ext/mcp';

class FakeTokens implements ITokensClient {
  tokens: IOutsideToken[] = [];
  failCreate = '';
  async list(): Promise<IOutsideToken[]> {
    return this.tokens.map(t => ({ ...t }));
  }
  async create(name: string): Promise<ICreatedToken> {
    if (this.failCreate) {
      throw new Error(this.failCreate);
    }
    const id = `t${this.tokens.length + 1}`;
    this.tokens.push({
      id,
      name,
      created: '2026-11-27T10:00:00Z',
      last_used: null
    });
    return { id, name, token: `secret-${id}` };
  }
  async revoke(id: string): Promise<void> {
    this.tokens = this.tokens.filter(t => t.id !== id);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await Promise.resolve();
  }
}

function setUp() {
  const client = new FakeTokens();
  const copied: string[] = [];
  const view = new OutsideTokensView({
    client,
    copy: text => copied.push(text),
    endpoint: ENDPOINT
  });
  Widget.attach(view, document.body);
  const q = <T extends Element>(selector: string) =>
    view.node.querySelector(selector) as T;
  const rows = () =>
    Array.from(view.node.querySelectorAll('tbody tr')).map(
      row => row.textContent
    );
  const status = () => q<HTMLElement>('[role="status"]').textContent;
  return { client, copied, view, q, rows, status };
}

describe('the mcpServers configuration', () => {
  it('names the endpoint under the base URL and sends the token as a bearer', () => {
    expect(mcpEndpoint('http://h:1/base/')).toBe(
      'http://h:1/base/chapyter-ext/mcp'
    );
    const config = JSON.parse(mcpServersJSON('Claude Code!', 'abc', ENDPOINT));
    expect(config).toEqual({
      mcpServers: {
        'claude-code': {
          type: 'http',
          url: ENDPOINT,
          headers: { Authorization: 'Bearer abc' }
        }
      }
    });
    expect(serverKey('  ')).toBe('jupyter');
    expect(shownDate(null)).toBe('never');
    expect(shownDate('not a date')).toBe('not a date');
  });
});

describe('the Outside agents view', () => {
  afterEach(() => document.body.replaceChildren());

  it('lists, creates (the secret once, with Copy) and revokes', async () => {
    const { client, copied, view, q, rows, status } = setUp();
    await settle();
    expect(rows()).toEqual(['No tokens yet.']);

    const name = q<HTMLInputElement>('#jp-Chapyter-outsideName');
    expect(q('label[for="jp-Chapyter-outsideName"]').textContent).toBe(
      'Token name'
    );
    name.value = 'claude-code';
    q<HTMLFormElement>('form').dispatchEvent(
      new Event('submit', { cancelable: true })
    );
    await settle();
    const secret = q<HTMLInputElement>('input[aria-label="Token claude-code"]');
    expect(secret.value).toBe('secret-t1');
    expect(document.activeElement).toBe(secret);
    expect(name.value).toBe('');
    const config = q<HTMLElement>('.jp-Chapyter-outsideConfig').textContent!;
    expect(JSON.parse(config).mcpServers['claude-code'].headers).toEqual({
      Authorization: 'Bearer secret-t1'
    });
    // The list never holds the secret.
    expect(rows()).toHaveLength(1);
    expect(rows()[0]).toContain('claude-code');
    expect(rows()[0]).toContain('never');
    expect(q('tbody').textContent).not.toContain('secret-t1');
    expect(status()).toContain('not shown again');

    const buttons = Array.from(view.node.querySelectorAll('button'));
    buttons.find(b => b.textContent === 'Copy token')!.click();
    buttons.find(b => b.textContent === 'Copy configuration')!.click();
    expect(copied).toEqual(['secret-t1', config]);

    q<HTMLButtonElement>('button[aria-label="Revoke claude-code"]').click();
    await settle();
    expect(client.tokens).toEqual([]);
    expect(rows()).toEqual(['No tokens yet.']);
    expect(status()).toBe('Revoked "claude-code".');
    view.dispose();
  });

  it('asks for a name and says why a creation failed, in one line', async () => {
    const { client, q, status, view } = setUp();
    await settle();
    await view.create('   ');
    expect(status()).toBe('Give the token a name (the agent it is for).');
    client.failCreate = 'The MCP server is switched off.';
    await view.create('codex');
    expect(status()).toBe(
      'Could not create the token: The MCP server is switched off.'
    );
    expect(q<HTMLElement>('.jp-Chapyter-outsideCreated').hidden).toBe(true);
    view.dispose();
  });

  it('labels every control and keeps them in the tab order', async () => {
    const { client, view } = setUp();
    client.tokens.push({
      id: 'a',
      name: 'vscode',
      created: '2026-11-27T10:00:00Z',
      last_used: '2026-11-27T11:00:00Z'
    });
    await view.refresh();
    for (const control of Array.from(
      view.node.querySelectorAll('button, input')
    )) {
      const labelled =
        control.getAttribute('aria-label') ||
        control.textContent ||
        view.node.querySelector(`label[for="${control.id}"]`);
      expect(labelled).toBeTruthy();
      expect(control.getAttribute('tabindex')).not.toBe('-1');
    }
    view.dispose();
  });
});
