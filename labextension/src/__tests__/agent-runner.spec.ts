import { ChatEvent, decodeEvent } from '../common/events';
import { applyEvent, newThread } from '../chat/thread';
import { ChatRequestError, IChatMessage } from '../chat/tokens';
import { AgentController } from '../agent/controller';
import { AgentTurn, localOutcome } from '../agent/runner';
import {
  collect,
  done,
  FakeClient,
  FakeNotebook,
  start,
  step,
  until
} from './agentFakes';

describe('AgentTurn', () => {
  it('inserts each step below the previous one, runs it and posts what it left', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    const turn = new AgentTurn({
      client,
      notebook,
      describeModel: name => ({ model: `${name}-id`, endpoint: 'host' })
    });
    const seen = await collect(turn, [
      start,
      step('s1', 'print(boom)'),
      {
        type: 'step_done',
        stepId: 's1',
        outcome: 'NameError: boom',
        status: 'error',
        result: null
      },
      step('s2', 'print(42)'),
      done
    ]);
    expect(seen.map(e => e.type)).toEqual([
      'start',
      'step',
      'step_done',
      'step',
      'done'
    ]);
    // The first below the active cell, the next after the first.
    expect(notebook.cells).toEqual(['a', 'new1', 'new2', 'b', 'c']);
    expect(notebook.inserted[0].origin).toEqual({
      model: 'fake-id',
      endpoint: 'host',
      chatId: 'chat1',
      messageId: 'turn1',
      stepId: 's1'
    });
    expect(client.results.map(r => [r.step_id, r.status])).toEqual([
      ['s1', 'ran'],
      ['s2', 'ran']
    ]);
    expect(client.results[0].message_id).toBe('turn1');
    expect(client.results[0].result!.outputs[0].ename).toBe('NameError');
    expect(turn.steps.map(s => s.outcome)).toEqual(['NameError: boom', 'Ran.']);
    expect(turn.cellIds).toEqual(['new1', 'new2']);
  });

  it('waits for approval: Run with edited code, Skip posts "skipped"', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    let changes = 0;
    const turn = new AgentTurn({
      client,
      notebook,
      onChange: () => changes++
    });
    const running = collect(turn, [
      start,
      step('s1', 'x = 1', true),
      step('s2', 'import os; os.remove("f")', true),
      done
    ]);
    await until(() => turn.steps[0]?.state === 'approval');
    expect(notebook.inserted).toHaveLength(0);
    expect(turn.decide('s1', { run: true, code: 'x = 2' })).toBe(true);
    await until(() => turn.steps[1]?.state === 'approval');
    expect(notebook.inserted.map(c => c.code)).toEqual(['x = 2']);
    expect(turn.steps[0].code).toBe('x = 2');
    turn.decide('s2', { run: false });
    await running;
    expect(notebook.inserted).toHaveLength(1);
    expect(client.results.map(r => r.status)).toEqual(['ran', 'skipped']);
    expect(turn.steps[1].state).toBe('skipped');
    expect(changes).toBeGreaterThan(3);
    // An answer for a step that is not waiting does nothing.
    expect(turn.decide('s2', { run: false })).toBe(false);
  });

  it('tries a step first; a clean trial runs it unasked under the guard', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    await collect(turn, [start, step('s1', 'f(x)', true, 'trial(f(x))'), done]);
    expect(notebook.trials).toEqual(['trial(f(x))']);
    expect(client.trials).toEqual([
      { message_id: 'turn1', step_id: 's1', report: { status: 'ran' } }
    ]);
    // Armed before the cell ran, and the step never waited.
    expect(notebook.armed).toEqual(['arm(code)']);
    expect(notebook.inserted.map(c => c.code)).toEqual(['f(x)']);
    expect(client.results.map(r => r.status)).toEqual(['ran']);
    expect(turn.steps[0]).toMatchObject({
      tried: true,
      needsApproval: false,
      preview: ['prints: 42'],
      state: 'ran'
    });
  });

  it('a trial that tried something asks, listing it; approving runs it unguarded', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    client.decision = {
      needs_approval: true,
      reasons: ['calls `f`, which is not known to be safe'],
      concerns: ['tried to write out.csv'],
      preview: [],
      guard: null,
      notice: null
    };
    const turn = new AgentTurn({ client, notebook });
    const running = collect(turn, [start, step('s1', 'f(x)', true, 'T'), done]);
    await until(() => turn.steps[0]?.state === 'approval');
    expect(turn.steps[0].concerns).toEqual(['tried to write out.csv']);
    expect(turn.steps[0].reasons).toEqual([
      'calls `f`, which is not known to be safe'
    ]);
    turn.decide('s1', { run: true, code: 'f(x)' });
    await running;
    expect(notebook.armed).toEqual([]);
    expect(client.results.map(r => r.status)).toEqual(['ran']);
  });

  it("a kernel that cannot try says why, and the server's decision stands", async () => {
    const notebook = new FakeNotebook();
    notebook.trialOutcome = new Error('the kernel is gone');
    const client = new FakeClient();
    client.decision = { ...client.decision, needs_approval: true, guard: null };
    const turn = new AgentTurn({ client, notebook });
    const running = collect(turn, [start, step('s1', 'f(x)', true, 'T'), done]);
    await until(() => turn.steps[0]?.state === 'approval');
    expect(client.trials[0]).toEqual({
      message_id: 'turn1',
      step_id: 's1',
      failure: { ename: 'Error', evalue: 'the kernel is gone' }
    });
    turn.decide('s1', { run: false });
    await running;
    expect(client.results.map(r => r.status)).toEqual(['skipped']);
  });

  it('a guard the kernel could not arm makes the step ask', async () => {
    const notebook = new FakeNotebook();
    notebook.armWorks = false;
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    const running = collect(turn, [start, step('s1', 'f(x)', true, 'T'), done]);
    await until(() => turn.steps[0]?.state === 'approval');
    expect(turn.steps[0].concerns).toEqual([
      'the kernel could not arm the guard'
    ]);
    expect(notebook.inserted).toHaveLength(0);
    turn.decide('s1', { run: false });
    await running;
  });

  it('Stop ends a pending approval without posting, and interrupts a running cell', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    const waiting = collect(turn, [start, step('s1', 'x = 1', true), done]);
    await until(() => turn.steps[0]?.state === 'approval');
    turn.stop();
    await waiting;
    expect(turn.steps[0].state).toBe('stopped');
    expect(client.results).toEqual([]);
    expect(notebook.inserted).toEqual([]);

    const notebook2 = new FakeNotebook();
    notebook2.holdRuns = true;
    const client2 = new FakeClient();
    const turn2 = new AgentTurn({ client: client2, notebook: notebook2 });
    const running = collect(turn2, [start, step('s1', 'long()'), done]);
    await until(() => notebook2.ran.length === 1);
    turn2.stop();
    await running;
    expect(notebook2.interrupts).toBe(1);
    expect(turn2.steps[0].outcome).toBe('Interrupted.');
    // The server abandoned the step: nothing is posted after Stop.
    expect(client2.results).toEqual([]);
  });

  it('a turn the server ends while a step waits for approval does not hang', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    const seen = await collect(
      turn,
      [start, step('s1', 'x = 1', true), done],
      true
    );
    expect(seen.map(e => e.type)).toEqual(['start', 'step', 'done']);
    expect(turn.steps[0].state).toBe('stopped');
    expect(turn.steps[0].outcome).toBe('Not run: the turn ended.');
    expect(client.results).toEqual([]);
    expect(notebook.inserted).toEqual([]);
  });

  it('without a kernel nothing is inserted and the server hears why', async () => {
    const notebook = new FakeNotebook();
    notebook.noKernel = 'The notebook has no kernel.';
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    await collect(turn, [start, step('s1', 'x = 1'), done]);
    expect(notebook.inserted).toEqual([]);
    expect(client.results).toEqual([
      {
        message_id: 'turn1',
        step_id: 's1',
        status: 'failed_to_run',
        text: 'The notebook has no kernel.'
      }
    ]);
    expect(turn.steps[0].state).toBe('failed');
  });

  it('answers reads with text', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    await collect(turn, [
      start,
      {
        ...(step('r1', '') as any),
        kind: 'read_cell',
        op: 'read_cell',
        cell: '2'
      },
      {
        ...(step('r2', '') as any),
        kind: 'list_variables',
        op: 'evaluate',
        expression: 'variables()'
      },
      // A tool this version does not know how to carry out: said, never hung.
      {
        ...(step('r3', '') as any),
        kind: 'future',
        op: 'teleport',
        label: 'future'
      },
      done
    ]);
    expect(client.results.map(r => [r.status, r.text])).toEqual([
      ['ran', 'cell 2'],
      ['ran', 'x (int): 42'],
      [
        'failed_to_run',
        'This version of the chat cannot carry out "future" steps; reload the page.'
      ]
    ]);
    expect(notebook.evaluated).toEqual(['variables()']);
    expect(notebook.inserted).toEqual([]);
  });

  it('a server step: nothing runs here; approval is posted, the result shown', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    const turn = new AgentTurn({ client, notebook });
    const call = (id: string, needsApproval: boolean): ChatEvent => ({
      ...(step(id, '', needsApproval) as any),
      kind: 'time__get_current_time',
      op: 'call',
      runs: 'server',
      title: 'time · get_current_time',
      label: 'time · get_current_time',
      server: 'time',
      arguments: { timezone: 'UTC' }
    });
    const events = [
      start,
      call('m1', false),
      {
        type: 'step_done',
        stepId: 'm1',
        outcome: '{"timezone": "UTC"',
        status: 'ok',
        result: '{"timezone": "UTC"}'
      },
      call('m2', true),
      call('m3', true),
      done
    ] as ChatEvent[];
    const running = collect(turn, events);
    await until(
      () => turn.steps.length === 2 && turn.steps[1].state === 'approval'
    );
    expect(turn.steps[0].state).toBe('ran');
    expect(turn.steps[0].result).toBe('{"timezone": "UTC"}');
    turn.decide('m2', { run: true, code: '' });
    await until(
      () => turn.steps.length === 3 && turn.steps[2].state === 'approval'
    );
    turn.decide('m3', { run: false });
    await running;
    expect(client.results.map(r => [r.step_id, r.status])).toEqual([
      ['m2', 'approved'],
      ['m3', 'skipped']
    ]);
    // The turn ended before m2's result came: it is not left "calling".
    expect(turn.steps[1].state).toBe('stopped');
    expect(notebook.inserted).toEqual([]);
    expect(notebook.evaluated).toEqual([]);
  });

  it('a result the server refuses becomes failed_to_run, so the turn does not hang', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    client.refuse = new ChatRequestError('bad_request', 'too large', 400);
    const turn = new AgentTurn({ client, notebook });
    await collect(turn, [start, step('s1', 'x = 1'), done]);
    expect(client.results.map(r => r.status)).toEqual(['ran', 'failed_to_run']);
    expect(client.results[1].text).toContain('too large');
  });

  it('undo removes the cells the turn inserted, in one call', async () => {
    const notebook = new FakeNotebook();
    const turn = new AgentTurn({ client: new FakeClient(), notebook });
    await collect(turn, [
      start,
      step('s1', 'a = 1'),
      step('s2', 'b = 2'),
      done
    ]);
    expect(turn.undo()).toBe(2);
    expect(notebook.removals).toEqual([['new1', 'new2']]);
    expect(notebook.cells).toEqual(['a', 'b', 'c']);
    expect(turn.undone).toBe(true);
  });

  it('summarises a run in one line', () => {
    const result = (outputs: any[]) => ({
      cell_id: 'x',
      execution_count: 1,
      outputs,
      figures: [],
      images: []
    });
    expect(localOutcome(result([]))).toBe('Ran, no output.');
    expect(
      localOutcome(
        result([
          { output_type: 'error', ename: 'ValueError', evalue: 'bad\nvalue' }
        ])
      )
    ).toBe('ValueError: bad value');
  });
});

describe('AgentController', () => {
  function message(): IChatMessage {
    return {
      id: 'm',
      role: 'assistant',
      content: '',
      model: '',
      created: '',
      status: 'streaming'
    };
  }

  it("never uses a policy looser than the administrator's lock", () => {
    const agent = new AgentController({
      client: new FakeClient(),
      notebook: () => null
    });
    agent.setServerPolicy('risky', 'risky');
    expect(agent.policyFloor).toBe('risky');
    agent.policy = 'never';
    expect(agent.policy).toBe('risky');
    agent.policy = 'ask';
    expect(agent.policy).toBe('ask');
    agent.setServerPolicy('ask', 'nonsense');
    expect(agent.policyFloor).toBeNull();
  });

  it('sends the policy, runs the turn and keeps it per reply', async () => {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    client.events = [start, step('s1', 'x = 1', true), done];
    const agent = new AgentController({
      client,
      notebook: path => (path === 'a.ipynb' ? notebook : null)
    });
    const reply = message();
    client.turn = () => agent.turn(reply);
    expect(agent.policy).toBe('ask');
    agent.setServerPolicy('risky');
    expect(agent.policy).toBe('risky');
    agent.policy = 'never';
    expect(agent.policySetting).toBe('never');
    const events = await agent.open(
      { notebook: 'a.ipynb', message: 'hi' },
      reply,
      new AbortController().signal,
      () => undefined
    );
    expect(client.requests[0].policy).toBe('never');
    const seen: string[] = [];
    const consuming = (async () => {
      for await (const event of events) {
        seen.push(event.type);
      }
    })();
    await until(() => agent.turn(reply)?.steps[0]?.state === 'approval');
    expect(agent.decide(reply, 's1', { run: false })).toBe(true);
    await consuming;
    expect(seen).toEqual(['start', 'step', 'done']);
    expect(client.results[0].status).toBe('skipped');
    await expect(
      agent.open(
        { notebook: 'closed.ipynb', message: 'hi' },
        message(),
        new AbortController().signal,
        () => undefined
      )
    ).rejects.toThrow('closed.ipynb is not open');
  });

  it('learns the tools and MCP servers from the server, dropping malformed entries', () => {
    const agent = new AgentController({
      client: new FakeClient(),
      notebook: () => null
    });
    let changes = 0;
    agent.changed.connect(() => changes++);
    agent.setServerTools(
      [
        { name: 'run_code', label: 'run code' },
        { name: 'time__get_current_time', label: 'time · get_current_time' },
        { label: 'no name' },
        'junk'
      ],
      [{ name: 'time', running: false }, 7]
    );
    expect(agent.tools).toEqual({
      labels: ['run code', 'time · get_current_time'],
      servers: ['time']
    });
    expect(changes).toBe(1);
    agent.setServerTools(undefined, null);
    expect(agent.tools).toEqual({ labels: [], servers: [] });
  });

  it('undoes a stored turn by the cell ids of its steps', () => {
    const notebook = new FakeNotebook();
    const agent = new AgentController({
      client: new FakeClient(),
      notebook: () => notebook
    });
    const reply = {
      ...message(),
      status: 'complete' as const,
      steps: [
        {
          step_id: 's1',
          tool: 'run_code',
          title: 'ran code',
          code: 'x',
          cell_id: 'b',
          outcome: ''
        },
        {
          step_id: 's2',
          tool: 'read_cell',
          title: 'read cell 1',
          code: '',
          cell_id: '',
          outcome: ''
        }
      ]
    };
    expect(agent.undo(reply, 'a.ipynb')).toBe(1);
    expect(notebook.removals).toEqual([['b']]);
    expect(agent.isUndone(reply)).toBe(true);
  });
});

describe('agent events', () => {
  const sse = (event: string, data: unknown) => ({
    event,
    data: JSON.stringify(data),
    id: '',
    retry: null
  });

  it('decodes start, step, step_done and done with steps', () => {
    expect(
      decodeEvent(
        sse('start', {
          chat_id: 'c',
          message_id: 'm',
          model: 'x',
          policy: 'ask',
          tools: true,
          images: false
        }) as any
      )
    ).toEqual({
      type: 'start',
      chatId: 'c',
      messageId: 'm',
      model: 'x',
      policy: 'ask',
      tools: true,
      images: false
    });
    expect(
      decodeEvent(
        sse('step', {
          step_id: 's1',
          kind: 'run_code',
          code: 'x = 1',
          purpose: 'why',
          needs_approval: true,
          reasons: ['writes files: open("f", "w")', 3]
        }) as any
      )
    ).toEqual({
      type: 'step',
      stepId: 's1',
      kind: 'run_code',
      // An older server sent no op, runs or title: the kind says.
      op: 'run_cell',
      runs: 'kernel',
      title: '',
      label: 'run_code',
      server: '',
      expression: '',
      arguments: null,
      code: 'x = 1',
      purpose: 'why',
      cell: '',
      needsApproval: true,
      reasons: ['writes files: open("f", "w")'],
      trial: ''
    });
    expect(
      decodeEvent(sse('step', { step_id: 's1', kind: '' }) as any)
    ).toMatchObject({
      type: 'error',
      kind: 'bad_response'
    });
    // Any tool the server describes: the browser needs no list of its own.
    expect(
      decodeEvent(
        sse('step', {
          step_id: 's2',
          kind: 'db__query',
          op: 'call',
          runs: 'server',
          title: 'db · query',
          label: 'db · query',
          server: 'db',
          arguments: { sql: 'select 1' },
          needs_approval: true,
          reasons: []
        }) as any
      )
    ).toMatchObject({
      type: 'step',
      kind: 'db__query',
      op: 'call',
      runs: 'server',
      server: 'db',
      arguments: { sql: 'select 1' }
    });
    expect(
      decodeEvent(
        sse('step_done', { step_id: 's1', outcome: 'Out: 42' }) as any
      )
    ).toEqual({
      type: 'step_done',
      stepId: 's1',
      outcome: 'Out: 42',
      status: '',
      result: null
    });
    const doneEvent = decodeEvent(
      sse('done', {
        message_id: 'm',
        text: 'It is 42.',
        status: 'stopped',
        steps: [
          { step_id: 's1', code: 'x', cell_id: 'c1', outcome: 'ok' },
          'junk',
          {
            step_id: 's2',
            code: 'f()',
            outcome: 'skipped',
            trial: {
              status: 'ran',
              concerns: ['tried to write a', 7],
              ran: false
            }
          }
        ],
        halt: 'Stopped after 10 steps.'
      }) as any
    );
    expect(doneEvent).toEqual({
      type: 'done',
      messageId: 'm',
      text: 'It is 42.',
      status: 'stopped',
      steps: [
        {
          step_id: 's1',
          tool: '',
          title: '',
          code: 'x',
          cell_id: 'c1',
          outcome: 'ok',
          trial: null
        },
        {
          step_id: 's2',
          tool: '',
          title: '',
          code: 'f()',
          cell_id: '',
          outcome: 'skipped',
          // A recorded trial keeps its string lines only.
          trial: {
            status: 'ran',
            concerns: ['tried to write a'],
            preview: [],
            ran: false
          }
        }
      ],
      halt: 'Stopped after 10 steps.'
    });
    // The thread keeps what ran on the reply.
    const thread = newThread('a.ipynb');
    const reply: IChatMessage = {
      id: 'r',
      role: 'assistant',
      content: '',
      model: '',
      created: '',
      status: 'streaming'
    };
    expect(applyEvent(thread, reply, doneEvent!)).toEqual({
      do: 'end',
      status: 'stopped'
    });
    expect(reply.steps).toHaveLength(2);
    expect(reply.halt).toBe('Stopped after 10 steps.');
  });
});
