/**
 * @jest-environment jsdom
 */

/**
 * An outside agent's calls in the page, without JupyterLab: each call goes to the notebook it
 * names (or answers `not_open`), reads answer at once, acting calls follow the server's
 * decision (run; try: the trial judged by the server, then run under its guard or ask; ask:
 * a card naming the client with exactly the code, Approve / Reject), a cancel removes a
 * pending card and posts nothing, Stop posts `outside/stop`, and undo restores the snapshot
 * taken before the last run and removes its cell. The card's DOM is checked too.
 */

import { TextEncoder } from 'util';

import {
  IApprovalCard,
  IApprovalRequest,
  IOutsideClient,
  IOutsideNotebook,
  OutsideCalls,
  RunOutcome
} from '../outside/calls';
import { OutsideCard } from '../outside/card';
import {
  approvalTitle,
  cellResult,
  clientName,
  IOutsideCall,
  IOutsideResultBody,
  outsideCellMetadata,
  backoff,
  readCall,
  readCancel
} from '../outside/wire';

// jsdom has none; the provenance hashes the code with it.
(globalThis as any).TextEncoder ??= TextEncoder;

jest.mock('@jupyterlab/ui-components', () => ({
  checkIcon: null,
  closeIcon: null,
  stopIcon: null
}));

class FakeNotebook implements IOutsideNotebook {
  constructor(readonly path = 'a.ipynb') {}
  cellsList: { id: string; source: string }[] = [{ id: 'c1', source: 'x = 1' }];
  ran: string[] = [];
  taken: string[] = [];
  restored: string[] = [];
  trials: string[] = [];
  armed: string[] = [];
  interrupted = 0;
  armOk = true;
  inserted: { code: string; client: string; below: string }[] = [];
  cannotRun(): string | null {
    return null;
  }
  describe() {
    return {
      path: this.path,
      kernel: 'Python 3',
      cells: this.cellsList.length
    };
  }
  cells() {
    return this.cellsList.map((c, index) => ({
      id: c.id,
      index,
      type: 'code',
      source: c.source,
      execution_count: null,
      outputs: [],
      images: []
    }));
  }
  async variables(names?: string[]) {
    const all = [{ name: 'x', type: 'int', summary: '1' }];
    return names ? all.filter(v => names.includes(v.name)) : all;
  }
  source(cellId: string) {
    const index = this.cellsList.findIndex(c => c.id === cellId);
    return index < 0
      ? null
      : { source: this.cellsList[index].source, name: `cell [${index + 1}]` };
  }
  insert(code: string, client: string, _callId: string, below: string) {
    const id = `new${this.inserted.length}`;
    this.inserted.push({ code, client, below });
    this.cellsList.push({ id, source: code });
    return id;
  }
  setSource(cellId: string, source: string) {
    this.cellsList.find(c => c.id === cellId)!.source = source;
  }
  release: (() => void) | null = null;
  async run(cellId: string): Promise<RunOutcome> {
    this.ran.push(cellId);
    if (this.release === null && this.hold) {
      await new Promise<void>(resolve => (this.release = resolve));
    }
    return {
      ran: true,
      result: cellResult(cellId, 1, [
        { output_type: 'stream', name: 'stdout', text: 'hi\n' }
      ])
    };
  }
  hold = false;
  remove(ids: string[]) {
    const before = this.cellsList.length;
    this.cellsList = this.cellsList.filter(c => !ids.includes(c.id));
    return before - this.cellsList.length;
  }
  async trial(expression: string) {
    this.trials.push(expression);
    return { report: { ok: true } };
  }
  async arm(guard: string) {
    this.armed.push(guard);
    return this.armOk;
  }
  async interrupt() {
    this.interrupted++;
  }
  async take(turn: string) {
    this.taken.push(turn);
    return { ok: true, why: null };
  }
  async restore(turn: string) {
    this.restored.push(turn);
    return {
      ok: true,
      restored: ['x'],
      removed: [],
      cannot: [],
      line: 'x is back.'
    };
  }
}

class FakeClient implements IOutsideClient {
  results: IOutsideResultBody[] = [];
  trials: unknown[] = [];
  stops: unknown[] = [];
  decision = {
    needs_approval: false,
    reasons: [],
    concerns: [],
    preview: [],
    guard: 'guard()' as string | null
  };
  async trial(body: unknown) {
    this.trials.push(body);
    return this.decision;
  }
  async result(body: IOutsideResultBody) {
    this.results.push(body);
  }
  async stop(body: unknown) {
    this.stops.push(body);
  }
}

class FakeCard implements IApprovalCard {
  answer: Promise<boolean>;
  decide: (approved: boolean) => void = () => undefined;
  lines: string[] = [];
  cancelled = '';
  constructor(
    readonly request: IApprovalRequest,
    readonly stop: () => void
  ) {
    this.answer = new Promise(resolve => (this.decide = resolve));
  }
  running() {
    this.lines.push('running');
  }
  finish(line: string) {
    this.lines.push(line);
  }
  cancel(reason: string) {
    this.cancelled = reason;
    this.decide(false);
  }
}

function setUp() {
  const notebook = new FakeNotebook();
  const client = new FakeClient();
  const cards: FakeCard[] = [];
  const calls = new OutsideCalls(
    {
      find: path => (path === notebook.path ? notebook : null),
      all: () => [notebook]
    },
    client,
    (request, stop) => {
      const card = new FakeCard(request, stop);
      cards.push(card);
      return card;
    }
  );
  return { notebook, client, cards, calls };
}

function call(fields: Partial<IOutsideCall> & { tool: string }): IOutsideCall {
  return {
    callId: 'k1',
    client: 'claude-code 1.2',
    arguments: {},
    notebook: 'a.ipynb',
    acts: false,
    decision: null,
    reasons: [],
    trial: null,
    code: null,
    ...fields
  };
}

const flush = () => new Promise(resolve => setTimeout(resolve, 0));

describe('the wire', () => {
  it('reads call and cancel events and ignores what is not one', () => {
    const read = readCall(
      JSON.stringify({
        call_id: 'k',
        client: 'claude-code 1.2',
        tool: 'run_code',
        arguments: { code: 'print(1)' },
        notebook: 'a.ipynb',
        acts: true,
        decision: 'ask',
        reasons: ['it writes files'],
        trial: null,
        code: 'print(1)'
      })
    );
    expect(read).toMatchObject({
      callId: 'k',
      tool: 'run_code',
      decision: 'ask',
      acts: true,
      code: 'print(1)'
    });
    expect(readCall('not json')).toBeNull();
    expect(readCall('{"tool": "x"}')).toBeNull();
    expect(
      readCall('{"call_id": "k", "tool": "undo", "decision": "maybe"}')
    ).toMatchObject({ decision: null, acts: true });
    expect(readCancel('{"call_id": "k", "reason": "timeout"}')).toEqual({
      callId: 'k',
      reason: 'timeout'
    });
  });

  it('names the client without its version', () => {
    expect(clientName('claude-code 1.2')).toBe('claude-code');
    expect(clientName('Visual Studio Code')).toBe('Visual Studio Code');
    expect(approvalTitle(call({ tool: 'run_code' }))).toBe(
      'claude-code wants to run this cell'
    );
  });

  it('gives outputs as text and PNGs apart', () => {
    expect(
      cellResult('c', 3, [
        { output_type: 'stream', name: 'stdout', text: ['a', 'b\n'] },
        { output_type: 'display_data', data: { 'image/png': 'iV BO\n' } },
        { output_type: 'error', ename: 'ValueError', evalue: 'bad' }
      ])
    ).toEqual({
      cell_id: 'c',
      execution_count: 3,
      outputs: ['ab\n', 'ValueError: bad'],
      images: ['iVBO'],
      error: { ename: 'ValueError', evalue: 'bad' }
    });
  });

  it('marks the cells it makes with the client', () => {
    const metadata = outsideCellMetadata('print(1)', 'claude-code 1.2', 'k');
    expect(metadata).toMatchObject({
      role: 'generated',
      source: 'outside',
      generated_by: 'outside',
      client: 'claude-code 1.2',
      call_id: 'k'
    });
  });

  it('waits longer after each failure, longest when the route is refused', () => {
    expect(backoff(0)).toBeLessThan(backoff(3));
    expect(backoff(99)).toBe(backoff(0, true));
  });
});

describe('OutsideCalls', () => {
  it('answers not_open for a notebook this page does not have', async () => {
    const { calls, client } = setUp();
    await calls.handle(call({ tool: 'read_cells', notebook: 'b.ipynb' }));
    expect(client.results).toEqual([
      expect.objectContaining({ call_id: 'k1', status: 'not_open' })
    ]);
    expect(client.results[0].message).toContain('b.ipynb');
  });

  it('answers reads at once', async () => {
    const { calls, client } = setUp();
    await calls.handle(call({ tool: 'list_notebooks', notebook: '' }));
    await calls.handle(call({ tool: 'read_cells' }));
    await calls.handle(
      call({ tool: 'describe_variable', arguments: { name: 'x' } })
    );
    await calls.handle(
      call({ tool: 'describe_variable', arguments: { name: 'nope' } })
    );
    expect(client.results.map(r => r.status)).toEqual([
      'ok',
      'ok',
      'ok',
      'error'
    ]);
    expect(client.results[0].result).toEqual({
      notebooks: [{ path: 'a.ipynb', kernel: 'Python 3', cells: 1 }]
    });
    expect((client.results[1].result as any).cells[0].source).toBe('x = 1');
    expect(client.results[2].result).toEqual({
      variable: { name: 'x', type: 'int', summary: '1' }
    });
  });

  it('asks with a card naming the client and exactly the code, then inserts and runs it', async () => {
    const { calls, client, cards, notebook } = setUp();
    const done = calls.handle(
      call({
        tool: 'run_code',
        acts: true,
        decision: 'ask',
        reasons: ['it writes a file'],
        arguments: { code: 'print("hi")', below_cell_id: 'c1' },
        code: 'print("hi")'
      })
    );
    await flush();
    expect(cards).toHaveLength(1);
    expect(cards[0].request.title).toBe('claude-code wants to run this cell');
    expect(cards[0].request.code).toBe('print("hi")');
    expect(notebook.inserted).toEqual([]);
    cards[0].decide(true);
    const body = await done;
    expect(notebook.inserted).toEqual([
      { code: 'print("hi")', client: 'claude-code 1.2', below: 'c1' }
    ]);
    expect(notebook.taken).toEqual(['outside-k1']);
    expect(body).toMatchObject({ status: 'ok' });
    expect(body!.result).toMatchObject({ cell_id: 'new0', outputs: ['hi\n'] });
    expect(client.results).toEqual([body]);
    expect(cards[0].lines).toEqual(['running', 'Done.']);
  });

  it('refuses when the user rejects: nothing is inserted', async () => {
    const { calls, client, cards, notebook } = setUp();
    const done = calls.handle(
      call({ tool: 'run_code', acts: true, decision: 'ask', code: 'rm()' })
    );
    await flush();
    cards[0].decide(false);
    await done;
    expect(notebook.inserted).toEqual([]);
    expect(client.results[0]).toMatchObject({
      status: 'refused',
      message: 'The user rejected it in JupyterLab.'
    });
  });

  it('runs at once under "run"', async () => {
    const { calls, client, cards, notebook } = setUp();
    await calls.handle(
      call({ tool: 'run_code', acts: true, decision: 'run', code: '1 + 1' })
    );
    expect(cards).toEqual([]);
    expect(notebook.ran).toEqual(['new0']);
    expect(client.results[0].status).toBe('ok');
  });

  it('tries first under "try": runs under the guard, or asks when the server or the guard says so', async () => {
    const { calls, client, cards, notebook } = setUp();
    const tried = call({
      tool: 'run_code',
      acts: true,
      decision: 'try',
      trial: 'trial()',
      code: 'x = 2'
    });
    await calls.handle(tried);
    expect(notebook.trials).toEqual(['trial()']);
    expect(client.trials).toEqual([{ call_id: 'k1', report: { ok: true } }]);
    expect(notebook.armed).toEqual(['guard()']);
    expect(cards).toEqual([]);
    expect(notebook.ran).toHaveLength(1);

    notebook.armOk = false;
    const asked = calls.handle({ ...tried, callId: 'k2' });
    await flush();
    expect(cards).toHaveLength(1);
    expect(cards[0].request.concerns).toContain(
      'the kernel could not arm the guard'
    );
    cards[0].decide(true);
    await asked;

    client.decision = { ...client.decision, needs_approval: true };
    const judged = calls.handle({ ...tried, callId: 'k3' });
    await flush();
    expect(cards).toHaveLength(2);
    cards[1].decide(false);
    expect((await judged)!.status).toBe('refused');
  });

  it('removes a pending card on cancel and posts nothing', async () => {
    const { calls, client, cards, notebook } = setUp();
    const done = calls.handle(
      call({ tool: 'run_code', acts: true, decision: 'ask', code: 'x' })
    );
    await flush();
    expect(calls.cancel('k1', 'timeout')).toBe(true);
    expect(await done).toBeNull();
    expect(cards[0].cancelled).toBe('timeout');
    expect(notebook.inserted).toEqual([]);
    expect(client.results).toEqual([]);
    expect(calls.cancel('k1', 'again')).toBe(false);
  });

  it('Stop on a running call interrupts the kernel and posts outside/stop', async () => {
    const { calls, client, cards, notebook } = setUp();
    notebook.hold = true;
    const done = calls.handle(
      call({ tool: 'run_code', acts: true, decision: 'ask', code: 'sleep()' })
    );
    await flush();
    cards[0].decide(true);
    await flush();
    cards[0].stop();
    expect(notebook.interrupted).toBe(1);
    expect(client.stops).toEqual([{ client: 'claude-code 1.2' }]);
    notebook.release!();
    await done;
  });

  it('edits a cell after its diff is accepted; refuses a run of a cell that changed', async () => {
    const { calls, client, cards, notebook } = setUp();
    const done = calls.handle(
      call({
        tool: 'edit_cell',
        acts: true,
        decision: 'ask',
        arguments: { cell_id: 'c1', source: 'x = 2' },
        code: 'x = 2'
      })
    );
    await flush();
    expect(cards[0].request.diff).toEqual({ before: 'x = 1', after: 'x = 2' });
    expect(cards[0].request.title).toBe('claude-code wants to change cell [1]');
    cards[0].decide(true);
    await done;
    expect(notebook.cellsList[0].source).toBe('x = 2');
    expect(client.results[0].result).toEqual({
      cell_id: 'c1',
      source: 'x = 2'
    });

    await calls.handle(
      call({
        callId: 'k2',
        tool: 'run_cell',
        acts: true,
        decision: 'run',
        arguments: { cell_id: 'c1' },
        code: 'x = 1'
      })
    );
    expect(client.results[1].status).toBe('error');
    expect(notebook.ran).toEqual([]);
  });

  it('undo restores the snapshot of the last run and removes its cell', async () => {
    const { calls, client, cards, notebook } = setUp();
    await calls.handle(
      call({ tool: 'run_code', acts: true, decision: 'run', code: 'x = 5' })
    );
    expect(notebook.cellsList.map(c => c.id)).toEqual(['c1', 'new0']);
    const done = calls.handle(
      call({ callId: 'k2', tool: 'undo', acts: true, decision: 'ask' })
    );
    await flush();
    expect(cards[0].request.title).toBe(
      'claude-code wants to undo its last run'
    );
    cards[0].decide(true);
    await done;
    expect(notebook.restored).toEqual(['outside-k1']);
    expect(notebook.cellsList.map(c => c.id)).toEqual(['c1']);
    expect(client.results[1].result).toMatchObject({
      cells_removed: 1,
      kernel_restored: true,
      restored: ['x']
    });
    await calls.handle(
      call({ callId: 'k3', tool: 'undo', acts: true, decision: 'run' })
    );
    expect(client.results[2]).toMatchObject({ status: 'error' });
    expect(client.results[2].message).toContain('nothing to undo');
  });
});

describe('OutsideCard', () => {
  function request(fields: Partial<IApprovalRequest> = {}): IApprovalRequest {
    return {
      call: call({ tool: 'run_code', code: 'print(1)' }),
      title: 'claude-code wants to run this cell',
      code: 'print(1)',
      diff: null,
      reasons: ['it prints'],
      concerns: [],
      ...fields
    };
  }

  it('names the client, shows the code and answers from labelled buttons', async () => {
    const card = new OutsideCard(request(), () => undefined);
    document.body.appendChild(card.node);
    expect(card.node.textContent).toContain(
      'claude-code wants to run this cell'
    );
    expect(
      card.node.querySelector('.jp-Chapyter-outsideCode')!.textContent
    ).toBe('print(1)');
    const approve = card.node.querySelector<HTMLButtonElement>(
      'button[aria-label="Approve"]'
    )!;
    expect(
      card.node.querySelector('button[aria-label="Reject"]')
    ).not.toBeNull();
    card.focus();
    expect(document.activeElement).toBe(approve);
    approve.click();
    expect(await card.answer).toBe(true);
    expect(approve.hidden).toBe(true);
    card.running();
    const stop = card.node.querySelector<HTMLButtonElement>(
      'button[aria-label="Stop"]'
    )!;
    expect(stop.hidden).toBe(false);
    card.finish('Done.');
    expect(stop.hidden).toBe(true);
    expect(card.node.querySelector('[role="status"]')!.textContent).toBe(
      'Done.'
    );
    card.node.remove();
  });

  it('rejects on Escape and shows an edit as a line diff', async () => {
    const card = new OutsideCard(
      request({ code: null, diff: { before: 'a\nb', after: 'a\nc' } }),
      () => undefined
    );
    const rows = [...card.node.querySelectorAll('.jp-Chapyter-diffLine')].map(
      row => row.textContent
    );
    expect(rows).toEqual(['  a', '- b', '+ c']);
    card.node.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })
    );
    expect(await card.answer).toBe(false);
  });

  it('goes when cancelled', async () => {
    const gone = jest.fn();
    const card = new OutsideCard(request(), () => undefined, gone);
    card.cancel('timeout');
    expect(await card.answer).toBe(false);
    expect(gone).toHaveBeenCalled();
    expect(card.node.classList.contains('jp-mod-cancelled')).toBe(true);
  });
});
