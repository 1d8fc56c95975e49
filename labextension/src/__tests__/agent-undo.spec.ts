/**
 * @jest-environment jsdom
 */

/**
 * Undo that restores the kernel, from the browser: the expressions the kernel module's
 * `expression()` writes, the answers checked, a snapshot before each step that runs code,
 * the chat told once where the kernel keeps none, Undo (of the turn, to before a step) that
 * removes cells and puts the variables back, and what the Undo buttons say before a click.
 */

import { ChatEvent } from '../common/events';
import {
  KernelUndo,
  NO_UNDO_IN_KERNEL,
  previewAnswer,
  pythonString,
  restoreAnswer,
  takeAnswer,
  undoExpression
} from '../common/kernelUndo';
import { IChatMessage } from '../chat/tokens';
import { AgentController } from '../agent/controller';
import { AgentTurn } from '../agent/runner';
import { noSnapshotNotice, TurnSnapshots } from '../agent/snapshots';
import { StepsView } from '../agent/steps';
import {
  collect,
  done,
  FakeClient,
  FakeNotebook,
  start,
  step,
  until
} from './agentFakes';

/** The function an expression calls, and its arguments after the shell. */
function call(expression: string): string {
  return expression.replace(
    /^__import__\('chapyter_ext\.snapshot\.kernel', fromlist=\['(\w+)'\]\)\.\1\(get_ipython\(\), /,
    '$1('
  );
}

describe('the kernel calls', () => {
  it('are the expressions chapyter_ext.snapshot.kernel.expression() writes', () => {
    // Copied from Python: expression('preview', 'turn-1', 2), expression('release', 't').
    expect(undoExpression('preview', 'turn-1', 2)).toBe(
      "__import__('chapyter_ext.snapshot.kernel', fromlist=['preview'])" +
        ".preview(get_ipython(), 'turn-1', 2)"
    );
    expect(undoExpression('release', 't')).toBe(
      "__import__('chapyter_ext.snapshot.kernel', fromlist=['release'])" +
        ".release(get_ipython(), 't')"
    );
    expect(call(undoExpression('take', 'a', 3.7))).toBe("take('a', 3)");
  });

  it("quote strings as Python's repr does (printable ASCII), escape the rest", () => {
    // Python: repr("it's"), repr('say "hi"'), repr('both \' "'), repr('back\\slash'), ...
    expect(pythonString("it's")).toBe('"it\'s"');
    expect(pythonString('say "hi"')).toBe('\'say "hi"\'');
    expect(pythonString('both \' "')).toBe("'both \\' \"'");
    expect(pythonString('back\\slash')).toBe("'back\\\\slash'");
    expect(pythonString('new\nline')).toBe("'new\\nline'");
    expect(pythonString('\x7f')).toBe("'\\x7f'");
    // Not Python's text for these, but the same value.
    expect(pythonString('café')).toBe("'caf\\xe9'");
    expect(pythonString('π😀')).toBe("'\\u03c0\\U0001f600'");
  });

  it('check the answers: a kernel without the module gives no snapshot, and says why', () => {
    expect(takeAnswer(null)).toEqual({ ok: false, why: NO_UNDO_IN_KERNEL });
    expect(takeAnswer({ ok: false, why: 'not Linux' })).toEqual({
      ok: false,
      why: 'not Linux'
    });
    expect(takeAnswer({ ok: true, why: 'ignored' })).toEqual({
      ok: true,
      why: null
    });
    expect(previewAnswer('junk').line).toBe(
      `Undo removes the cells only: ${NO_UNDO_IN_KERNEL}.`
    );
    const unavailable = previewAnswer({
      available: false,
      why: 'no snapshot was taken before this step',
      line: 'no snapshot was taken before this step'
    });
    expect(unavailable.line).toBe(
      'Undo removes the cells only: no snapshot was taken before this step.'
    );
    const preview = previewAnswer({
      available: true,
      why: null,
      restore: ['df', 7],
      remove: ['tmp'],
      cannot: [{ name: 'conn', why: 'does not pickle' }, { why: 'no name' }],
      line: 'Undo restores df; removes tmp; cannot restore conn (does not pickle).'
    });
    expect(preview.restore).toEqual(['df']);
    expect(preview.cannot).toEqual([{ name: 'conn', why: 'does not pickle' }]);
    expect(preview.line).toContain('cannot restore conn');
    expect(restoreAnswer(undefined).ok).toBe(false);
    expect(restoreAnswer({ ok: true, restored: ['x'] }).line).toBe(
      'The variables are as they were.'
    );
  });

  it('a read that throws (no kernel, a closed connection) is no answer', async () => {
    const asked: string[] = [];
    const undo = new KernelUndo(async expression => {
      asked.push(call(expression));
      throw new Error('closed');
    });
    expect((await undo.take('t', 0)).ok).toBe(false);
    expect((await undo.restore('t', 1)).ok).toBe(false);
    expect(asked).toEqual(["take('t', 0)", "restore('t', 1)"]);
  });
});

describe('snapshots of a turn', () => {
  it('before each step that runs code, with its index; none before reads', async () => {
    const notebook = new FakeNotebook();
    const turn = new AgentTurn({
      client: new FakeClient(),
      notebook,
      snapshots: new TurnSnapshots(new KernelUndo(e => notebook.readJSON(e)))
    });
    const read: ChatEvent = {
      ...(step('s2', '') as any),
      op: 'evaluate',
      expression: 'x'
    };
    await collect(turn, [
      start,
      step('s1', 'x = 1'),
      read,
      step('s3', 'x = 2'),
      done
    ]);
    expect(notebook.reads.map(call)).toEqual([
      "take('turn1', 0)",
      "take('turn1', 2)"
    ]);
    // Each snapshot is taken before its step's cell runs.
    expect(notebook.ran).toEqual(['new1', 'new2']);
  });

  it('none before a step the user skipped; one after approval, before its cell runs', async () => {
    const notebook = new FakeNotebook();
    const turn = new AgentTurn({
      client: new FakeClient(),
      notebook,
      snapshots: new TurnSnapshots(new KernelUndo(e => notebook.readJSON(e)))
    });
    const running = collect(turn, [
      start,
      step('s1', 'x = 1', true),
      step('s2', 'y = 2', true),
      done
    ]);
    await until(() => turn.steps[0]?.state === 'approval');
    expect(notebook.reads).toEqual([]);
    turn.decide('s1', { run: false });
    await until(() => turn.steps[1]?.state === 'approval');
    turn.decide('s2', { run: true, code: 'y = 3' });
    await running;
    expect(notebook.reads.map(call)).toEqual(["take('turn1', 1)"]);
  });

  it('where the kernel keeps none, the chat is told once (a notice), and Undo says why', async () => {
    const notebook = new FakeNotebook();
    notebook.kernel = () => ({ ok: false, why: 'not Linux' });
    const client = new FakeClient();
    const agent = new AgentController({ client, notebook: () => notebook });
    const notices: string[] = [];
    for (const id of ['r1', 'r2']) {
      const reply: IChatMessage = {
        id,
        role: 'assistant',
        content: '',
        model: '',
        created: '',
        status: 'streaming'
      };
      client.results = [];
      client.events = [start, step('s1', 'x = 1'), step('s2', 'y = 2'), done];
      client.turn = () => agent.turn(reply);
      const events = await agent.open(
        { notebook: 'a.ipynb', message: 'go' },
        reply,
        new AbortController().signal,
        () => undefined
      );
      for await (const event of events) {
        if (event.type === 'notice') {
          notices.push(event.message);
        }
      }
      reply.status = 'complete';
      const preview = await agent.preview(reply, 'a.ipynb')!;
      expect(preview.line).toBe('Undo removes the cells only: not Linux.');
      expect(agent.undo(reply, 'a.ipynb')).toBe(2);
      expect((await agent.restore(reply, 'a.ipynb'))!.line).toBe(
        'The variables stay as they are: not Linux.'
      );
    }
    expect(notices).toEqual([noSnapshotNotice('not Linux')]);
    // Preview and restore asked nothing of a kernel that kept no snapshot.
    expect(notebook.reads.every(r => call(r).startsWith('take('))).toBe(true);
  });

  it('a snapshot that failed before a later one is no state to go back to', () => {
    const snapshots = new TurnSnapshots(null);
    (snapshots as any)._tried = [
      { step: 0, ok: false },
      { step: 2, ok: true }
    ];
    expect(snapshots.at(0)).toBeNull();
    expect(snapshots.at(1)).toBe(2);
    expect(snapshots.at(3)).toBeNull();
    expect(snapshots.taken).toEqual([2]);
  });
});

describe('Undo', () => {
  async function endedTurn(): Promise<{
    agent: AgentController;
    notebook: FakeNotebook;
    reply: IChatMessage;
  }> {
    const notebook = new FakeNotebook();
    const client = new FakeClient();
    client.events = [
      start,
      step('s1', 'x = 1'),
      step('s2', 'y = 2'),
      step('s3', 'z = 3'),
      done
    ];
    const agent = new AgentController({
      client,
      notebook: path => (path === 'a.ipynb' ? notebook : null)
    });
    const reply: IChatMessage = {
      id: 'local',
      role: 'assistant',
      content: '',
      model: '',
      created: '',
      status: 'streaming'
    };
    client.turn = () => agent.turn(reply);
    const events = await agent.open(
      { notebook: 'a.ipynb', message: 'go' },
      reply,
      new AbortController().signal,
      () => undefined
    );
    for await (const event of events) {
      void event;
    }
    reply.id = 'turn1';
    reply.status = 'complete';
    notebook.reads = [];
    return { agent, notebook, reply };
  }

  it('"Undo this turn" removes the cells and restores the state before step 0', async () => {
    const { agent, notebook, reply } = await endedTurn();
    expect((await agent.preview(reply, 'a.ipynb'))!.line).toBe(
      'Undo brings back x and removes y.'
    );
    expect(agent.undo(reply, 'a.ipynb')).toBe(3);
    expect((await agent.restore(reply, 'a.ipynb'))!.line).toBe(
      'Brought back x, removed y.'
    );
    expect(notebook.reads.map(call)).toEqual([
      "preview('turn1', 0)",
      "restore('turn1', 0)"
    ]);
    expect(agent.isUndone(reply)).toBe(true);
  });

  it('"Undo to before step 2" removes the cells of steps 2 on and restores before it', async () => {
    const { agent, notebook, reply } = await endedTurn();
    expect(agent.undo(reply, 'a.ipynb', 1)).toBe(2);
    expect(notebook.removals).toEqual([['new2', 'new3']]);
    await agent.restore(reply, 'a.ipynb', 1);
    expect(notebook.reads.map(call)).toEqual(["restore('turn1', 1)"]);
    expect(agent.isUndone(reply)).toBe(false);
    expect(agent.undoneFrom(reply)).toBe(1);
  });

  it('a turn from the history restores at its first step that put a cell', async () => {
    const notebook = new FakeNotebook();
    const agent = new AgentController({
      client: new FakeClient(),
      notebook: () => notebook
    });
    const recorded = (cell_id: string, step_id: string) => ({
      step_id,
      tool: cell_id ? 'run_code' : 'read_cell',
      title: '',
      code: cell_id ? 'x = 1' : '',
      cell_id,
      outcome: ''
    });
    const reply: IChatMessage = {
      id: 'old',
      role: 'assistant',
      content: '',
      model: '',
      created: '',
      status: 'complete',
      steps: [recorded('', 's1'), recorded('b', 's2')]
    };
    await agent.restore(reply, 'a.ipynb');
    expect(notebook.reads.map(call)).toEqual(["restore('old', 1)"]);
    // A chat that came with the notebook's file: never undone, the kernel never asked.
    const imported = { ...reply, imported: true };
    expect(agent.preview(imported, 'a.ipynb')).toBeNull();
    expect(agent.restore(imported, 'a.ipynb')).toBeNull();
    expect(agent.undo(imported, 'a.ipynb')).toBe(0);
    expect(notebook.reads).toHaveLength(1);
  });

  it('the buttons say what Undo will restore, and then what it did', async () => {
    const { agent, notebook, reply } = await endedTurn();
    const view = new StepsView(reply, {
      agent,
      notebookPath: () => 'a.ipynb'
    });
    document.body.appendChild(view.node);
    const undo = view.node.querySelector<HTMLButtonElement>(
      '.jp-Chapyter-agentUndo'
    )!;
    const note = view.node.querySelector<HTMLElement>(
      '.jp-Chapyter-agentUndoNote'
    )!;
    await until(() => note.textContent === 'Undo brings back x and removes y.');
    expect(note.hidden).toBe(false);
    expect(undo.title).toContain('Undo brings back x and removes y.');
    const stepUndo = Array.from(
      view.node.querySelectorAll<HTMLButtonElement>(
        '.jp-Chapyter-agentStepUndo'
      )
    );
    // The first step's is "Undo this turn"; the later steps each have one.
    expect(
      stepUndo.map(b => (b.hidden ? '' : b.getAttribute('aria-label')))
    ).toEqual([
      '',
      'Undo from here, to before step 2',
      'Undo from here, to before step 3'
    ]);
    stepUndo[2].dispatchEvent(new Event('focus'));
    await until(() => stepUndo[2].title.includes('brings back x'));
    stepUndo[2].click();
    await until(() => note.textContent!.includes('Brought back x'));
    expect(note.textContent).toBe(
      'Removed 1 cell (Ctrl+Z in the notebook brings it back). Brought back x, removed y.'
    );
    expect(stepUndo[2].hidden).toBe(true);
    expect(undo.hidden).toBe(false);
    undo.click();
    await until(() => note.textContent!.startsWith('Removed 2 cells'));
    await until(() => note.textContent!.includes('Brought back'));
    expect(undo.hidden).toBe(true);
    expect(notebook.reads.map(call)).toEqual([
      "preview('turn1', 0)",
      "preview('turn1', 2)",
      "restore('turn1', 2)",
      "restore('turn1', 0)"
    ]);
    view.dispose();
  });
});
