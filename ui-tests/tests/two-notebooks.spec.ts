/**
 * Two notebooks side by side, each with its own kernel: a generation lands in the notebook
 * that asked for it, even while the other one has the focus (and generates too).
 */

import {
  createNotebook,
  expect,
  fenced,
  LOAD_EXT,
  model,
  test
} from './fixtures';

test('generation lands in the notebook that asked, while the other is focused', async ({
  lab
}) => {
  const slowCode = [
    '# notebook A: written slowly',
    'primes = [n for n in range(2, 50)',
    '          if all(n % d for d in range(2, n))]',
    "print('A found', len(primes), 'primes')"
  ].join('\n');
  const fastCode = "print('B says hello')\nb_only = True";
  await model.script(
    { content: fenced(slowCode), chunk_size: 6, chunk_delay: 0.25 },
    fenced(fastCode)
  );
  const fileA = await createNotebook('side-by-side-A', [
    { id: 'load', source: LOAD_EXT },
    { id: 'prompt', source: '%%ai\nfind the primes below 50' }
  ]);
  const fileB = await createNotebook('side-by-side-B', [
    { id: 'load', source: LOAD_EXT },
    { id: 'prompt', source: '%%ai\nsay hello from B' }
  ]);
  await lab.openNotebook(fileA);
  await lab.openNotebook(fileB, 'split-right');
  const kernels = await lab.page.evaluate(
    files => {
      const app = (window as any).jupyterapp;
      return Array.from(app.shell.widgets('main'))
        .filter((w: any) => files.includes(w.context?.path))
        .map((w: any) => w.sessionContext.session.kernel.id);
    },
    [fileA, fileB]
  );
  expect(new Set(kernels).size).toBe(2);

  await lab.runCell(fileA, 'load');
  await lab.runCell(fileB, 'load');
  await lab.waitForKernelIdle(fileA);
  await lab.waitForKernelIdle(fileB);

  // A asks; once its answer is streaming in, B takes the focus and asks too.
  await lab.runCell(fileA, 'prompt');
  await lab.waitForCells(
    fileA,
    cells =>
      cells.length === 3 &&
      cells[2].source.length > 0 &&
      cells[1].executionState === 'running',
    'A streaming into the cell below its prompt',
    60_000
  );
  await lab.runCell(fileB, 'prompt');
  expect(await lab.currentPath()).toBe(fileB);
  await lab.screenshot('06a-two-notebooks-streaming');

  const cellsB = await lab.waitForCells(
    fileB,
    cells => cells[2]?.outputs.some(o => o.text.includes('B says hello')),
    'B generated and ran its own code'
  );
  const cellsA = await lab.waitForCells(
    fileA,
    cells => cells[2]?.outputs.some(o => o.text.includes('A found 15 primes')),
    'A generated and ran its own code'
  );
  expect(cellsA.map(c => c.id)).toEqual(['load', 'prompt', cellsA[2].id]);
  expect(cellsB.map(c => c.id)).toEqual(['load', 'prompt', cellsB[2].id]);
  expect(cellsA[2].source).toBe(slowCode);
  expect(cellsB[2].source).toBe(fastCode);
  expect(cellsA[2].chapyter).toMatchObject({ generated_from: 'prompt' });
  expect(cellsA[1].chapyter).toMatchObject({ generated_cell: cellsA[2].id });
  expect(cellsB[1].chapyter).toMatchObject({ generated_cell: cellsB[2].id });
  // A finishing did not pull the focus away from B.
  expect(await lab.currentPath()).toBe(fileB);
  expect(await model.chatRequests()).toHaveLength(2);
  await lab.screenshot('06b-two-notebooks-done');
});
