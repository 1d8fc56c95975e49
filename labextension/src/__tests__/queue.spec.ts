import { RunQueue } from '../notebook/queue';

/** A task that resolves when told to, logging when it starts and ends. */
function deferred(log: string[], name: string, fail = false) {
  let release!: () => void;
  const done = new Promise<void>(resolve => (release = resolve));
  const task = async () => {
    log.push(`start ${name}`);
    await done;
    log.push(`end ${name}`);
    if (fail) {
      throw new Error(`KernelReplyNotOK ${name}`);
    }
    return true;
  };
  return { task, release };
}

const tick = () => new Promise(resolve => setTimeout(resolve, 0));

describe('RunQueue', () => {
  it('runs ordinary cells at once, pipelined', async () => {
    const queue = new RunQueue<object>();
    const nb = {};
    const log: string[] = [];
    const a = deferred(log, 'a');
    const b = deferred(log, 'b');
    const batch = queue.join(nb, 'a');
    queue.join(nb, 'b');
    void queue.schedule(nb, batch, a.task, () => false, false);
    void queue.schedule(nb, batch, b.task, () => false, false);
    expect(log).toEqual(['start a', 'start b']);
    a.release();
    b.release();
  });

  it('makes every later cell wait for a prompt cell, in order', async () => {
    const queue = new RunQueue<object>();
    const nb = {};
    const log: string[] = [];
    const p1 = deferred(log, 'p1');
    const c = deferred(log, 'c');
    const p2 = deferred(log, 'p2');
    const batch = queue.join(nb, 'p1');
    queue.join(nb, 'c');
    queue.join(nb, 'p2');
    const runs = [
      queue.schedule(nb, batch, p1.task, () => false, true),
      queue.schedule(nb, batch, c.task, () => false, false),
      queue.schedule(nb, batch, p2.task, () => false, true)
    ];
    await tick();
    expect(log).toEqual(['start p1']);
    p1.release();
    await tick();
    expect(log).toEqual(['start p1', 'end p1', 'start c', 'start p2']);
    c.release();
    p2.release();
    await Promise.all(runs);
    expect(log.slice(-2).sort()).toEqual(['end c', 'end p2']);
  });

  it('groups the cells of one synchronous run into one batch', async () => {
    const queue = new RunQueue<object>();
    const nb = {};
    const first = queue.join(nb, 'a');
    expect(queue.join(nb, 'b')).toBe(first);
    expect([...first.cellIds]).toEqual(['a', 'b']);
    await tick();
    const second = queue.join(nb, 'c');
    expect(second).not.toBe(first);
    expect(second.cellIds.size).toBe(1);
  });

  it('keeps notebooks independent', async () => {
    const queue = new RunQueue<object>();
    const log: string[] = [];
    const nb1 = {};
    const nb2 = {};
    const p = deferred(log, 'p');
    const other = deferred(log, 'other');
    void queue.schedule(nb1, queue.join(nb1, 'p'), p.task, () => false, true);
    void queue.schedule(
      nb2,
      queue.join(nb2, 'x'),
      other.task,
      () => false,
      false
    );
    await tick();
    expect(log).toEqual(['start p', 'start other']);
    p.release();
    other.release();
  });

  it('skips the rest of a batch after a failed prompt, but not later batches', async () => {
    const queue = new RunQueue<object>();
    const nb = {};
    const log: string[] = [];
    const p = deferred(log, 'p', true);
    const c = deferred(log, 'c');
    const batch = queue.join(nb, 'p');
    queue.join(nb, 'c');
    const failed = queue.schedule(nb, batch, p.task, () => false, true);
    const skipped = queue.schedule(nb, batch, c.task, () => false, false);
    p.release();
    await expect(failed).rejects.toThrow('KernelReplyNotOK');
    await expect(skipped).resolves.toBe(false);
    expect(log).toEqual(['start p', 'end p']);
    await tick();
    const later = deferred(log, 'later');
    const run = queue.schedule(
      nb,
      queue.join(nb, 'later'),
      later.task,
      () => false,
      false
    );
    later.release();
    await expect(run).resolves.toBe(true);
  });
});
