/**
 * Outside agents in the AI Chat: the tokens MCP clients use (name, created, last used), one
 * created (its secret shown once, with Copy, and the ready `mcpServers` JSON) and revoked.
 */

import { Widget } from '@lumino/widgets';

import { element } from '../common/dom';
import {
  ICreatedToken,
  IOutsideToken,
  ITokensClient,
  mcpServersJSON,
  serverTokens,
  shownDate
} from './tokensClient';

/** What the view needs besides the DOM (fakes in tests). */
export interface ITokensViewOptions {
  client?: ITokensClient;
  /** Put text on the clipboard (the plugin passes JupyterLab's `Clipboard.copyToSystem`). */
  copy?: (text: string) => void;
  /** The MCP endpoint's URL (this server's by default). */
  endpoint?: string;
}

/** The "Outside agents" section: list, create, revoke. */
export class OutsideTokensView extends Widget {
  constructor(options: ITokensViewOptions = {}) {
    super();
    this._client = options.client ?? serverTokens;
    this._copy =
      options.copy ?? (text => void navigator.clipboard?.writeText(text));
    this._endpoint = options.endpoint;
    this.addClass('jp-Chapyter-outsideTokens');
    const heading = element('h2', '', {}, 'Outside agents (MCP)');
    const intro = element(
      'p',
      'jp-Chapyter-outsideIntro',
      {},
      'MCP clients (Claude Code, Codex, VS Code, ...) can work in the notebooks open here ' +
        'with a token. Every action they take asks you in the AI Chat first.'
    );
    const form = element('form', 'jp-Chapyter-outsideCreate');
    const label = element(
      'label',
      '',
      { for: 'jp-Chapyter-outsideName' },
      'Token name'
    );
    this._name = element('input', 'jp-mod-styled', {
      id: 'jp-Chapyter-outsideName',
      type: 'text',
      maxlength: '80',
      placeholder: 'e.g. claude-code'
    });
    const create = element(
      'button',
      'jp-Button jp-mod-styled jp-mod-accept',
      { type: 'submit' },
      'Create token'
    );
    form.append(label, this._name, create);
    form.addEventListener('submit', event => {
      event.preventDefault();
      void this.create(this._name.value);
    });
    this._created = element('div', 'jp-Chapyter-outsideCreated', {
      hidden: ''
    });
    const table = element('table', 'jp-Chapyter-outsideList');
    table.appendChild(element('caption', '', {}, 'Tokens'));
    const head = element('tr', '');
    for (const title of ['Name', 'Created', 'Last used', 'Revoke']) {
      head.appendChild(element('th', '', { scope: 'col' }, title));
    }
    table.appendChild(element('thead', '')).appendChild(head);
    this._rows = table.appendChild(element('tbody', ''));
    this._status = element('p', 'jp-Chapyter-outsideStatus', {
      role: 'status',
      'aria-live': 'polite'
    });
    this.node.append(heading, intro, form, this._created, table, this._status);
  }

  /** Read the list from the server again. */
  async refresh(): Promise<void> {
    try {
      this._show(await this._client.list());
    } catch (error) {
      this._say(`Could not list the tokens: ${(error as Error).message}`);
    }
  }

  /** Create a token named `name`; its secret is shown until the next one or the view closes. */
  async create(name: string): Promise<void> {
    name = name.trim();
    if (!name) {
      this._say('Give the token a name (the agent it is for).');
      this._name.focus();
      return;
    }
    let made: ICreatedToken;
    try {
      made = await this._client.create(name);
    } catch (error) {
      this._say(`Could not create the token: ${(error as Error).message}`);
      return;
    }
    this._name.value = '';
    this._showCreated(made);
    this._say(`Created "${made.name}". Copy it now: it is not shown again.`);
    await this.refresh();
  }

  /** Revoke `token`: clients using it are refused from now on. */
  async revoke(token: IOutsideToken): Promise<void> {
    try {
      await this._client.revoke(token.id);
    } catch (error) {
      this._say(
        `Could not revoke "${token.name}": ${(error as Error).message}`
      );
      return;
    }
    this._say(`Revoked "${token.name}".`);
    await this.refresh();
  }

  protected onAfterAttach(): void {
    void this.refresh();
  }

  private _show(tokens: IOutsideToken[]): void {
    this._rows.replaceChildren();
    if (!tokens.length) {
      const row = this._rows.appendChild(element('tr', ''));
      row.appendChild(element('td', '', { colspan: '4' }, 'No tokens yet.'));
      return;
    }
    for (const token of tokens) {
      const row = this._rows.appendChild(element('tr', ''));
      row.appendChild(element('td', '', {}, token.name));
      row.appendChild(element('td', '', {}, shownDate(token.created)));
      row.appendChild(element('td', '', {}, shownDate(token.last_used)));
      const revoke = element(
        'button',
        'jp-Button jp-mod-styled jp-mod-warn',
        { type: 'button', 'aria-label': `Revoke ${token.name}` },
        'Revoke'
      );
      revoke.addEventListener('click', () => void this.revoke(token));
      row.appendChild(element('td', '')).appendChild(revoke);
    }
  }

  private _showCreated(made: ICreatedToken): void {
    const config = mcpServersJSON(made.name, made.token, this._endpoint);
    const secret = element('input', 'jp-mod-styled', {
      type: 'text',
      readonly: '',
      'aria-label': `Token ${made.name}`
    });
    secret.value = made.token;
    const pre = element('pre', 'jp-Chapyter-outsideConfig', {
      'aria-label': 'mcpServers configuration',
      tabindex: '0'
    });
    pre.textContent = config;
    this._created.replaceChildren(
      element(
        'p',
        '',
        {},
        `Token "${made.name}": copy it now, it is not shown again.`
      ),
      secret,
      this._copyButton('Copy token', made.token),
      element('p', '', {}, "The client's mcpServers configuration:"),
      pre,
      this._copyButton('Copy configuration', config)
    );
    this._created.hidden = false;
    secret.focus();
    secret.select();
  }

  private _copyButton(label: string, text: string): HTMLButtonElement {
    const node = element(
      'button',
      'jp-Button jp-mod-styled',
      { type: 'button' },
      label
    );
    node.addEventListener('click', () => {
      this._copy(text);
      this._say('Copied.');
    });
    return node;
  }

  private _say(text: string): void {
    this._status.textContent = text;
  }

  private _client: ITokensClient;
  private _copy: (text: string) => void;
  private _endpoint: string | undefined;
  private _name: HTMLInputElement;
  private _created: HTMLDivElement;
  private _rows: HTMLTableSectionElement;
  private _status: HTMLParagraphElement;
}
