/**
 * A notebook on disk holds no secret: cells print the key the JupyterLab server is
 * configured with (`FAKE_KEY`, its OPENAI_API_KEY) in a stream, an HTML display and a
 * traceback; after Ctrl+S the file holds `<redacted>` in their place (escaped in HTML, so
 * that it shows) and nothing else changed, the page says so in one line, and shows
 * `<redacted>` too, so the next save writes nothing new. The cells' code, which builds the key from two halves, is untouched.
 */

import {
  expect,
  FAKE_KEY,
  jupyterApi,
  Lab,
  savedNotebook,
  test
} from './fixtures';

const HALVES = `'${FAKE_KEY.slice(0, 3)}' + '${FAKE_KEY.slice(3)}'`;

const CELLS = [
  { id: 'stream', source: `print('key:', ${HALVES})` },
  {
    id: 'html',
    source: `from IPython.display import HTML\nHTML('<b>' + ${HALVES} + '</b>')`
  },
  { id: 'error', source: `raise ValueError(${HALVES})` },
  { id: 'plain', source: "print('nothing secret here')" }
];

/** Whether the open notebook has unsaved changes. */
async function dirty(lab: Lab, file: string): Promise<boolean> {
  return lab.page.evaluate(file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    return panel.context.model.dirty as boolean;
  }, file);
}

/** A traceback's text without its colours. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Every output's text, as saved, one per line. */
function savedText(nb: any): string {
  return nb.cells
    .flatMap((c: any) => c.outputs ?? [])
    .map((o: any) =>
      [o.text, o.evalue, ...(o.traceback ?? []), ...Object.values(o.data ?? {})]
        .filter(v => typeof v === 'string')
        .join('\n')
    )
    .join('\n');
}

test('Ctrl+S writes <redacted> where an output showed the key, and says so', async ({
  lab
}) => {
  const file = await lab.newNotebook('saved-secrets', CELLS);
  for (const cell of CELLS) {
    await lab.runCell(file, cell.id);
    await lab.waitForCells(
      file,
      cells => cells.find(c => c.id === cell.id)!.outputs.length > 0,
      `${cell.id} ran`
    );
  }
  const shown = await lab.cells(file);
  expect(shown[0].outputs[0].text).toBe(`key: ${FAKE_KEY}\n`);
  await expect(
    (await lab.cellLocator(file, 'html')).locator('.jp-OutputArea-output b')
  ).toHaveText(FAKE_KEY);

  // Ctrl+S, from the keyboard, as a person saves.
  await lab.focusEditor(file, 'plain');
  await lab.page.keyboard.press('Control+s');

  const note = lab.page.locator('.Toastify__toast', {
    hasText: 'replaced a configured secret'
  });
  await expect(note).toHaveCount(1);
  await expect(note).toContainText(
    'chapyter-ext replaced a configured secret with <redacted> in 3 outputs of saved-secrets.ipynb before saving it.'
  );
  // The page shows what the file holds, and nothing is left to save.
  await lab.waitForCells(
    file,
    cells =>
      cells[0].outputs[0].text === 'key: <redacted>\n' &&
      plain(cells[2].outputs[0].text).endsWith('ValueError: <redacted>'),
    'the page shows <redacted> too'
  );
  await expect(
    (await lab.cellLocator(file, 'html')).locator('.jp-OutputArea-output b')
  ).toHaveText('<redacted>');
  expect(await dirty(lab, file)).toBe(false);
  await expect(note).toBeInViewport({ ratio: 1 }); // slid in whole
  await lab.screenshot('saved-secrets-01-note');

  // On disk: the marker where the key was, everything else as the page had it.
  const saved = await savedNotebook(file);
  expect(savedText(saved)).not.toContain(FAKE_KEY);
  expect(saved.cells.map((c: any) => c.id)).toEqual(CELLS.map(c => c.id));
  expect(saved.cells.map((c: any) => c.source)).toEqual(
    CELLS.map(c => c.source)
  );
  expect(saved.cells[0].outputs[0].text).toBe('key: <redacted>\n');
  // In HTML the marker is escaped: written plain it would read as a tag and show nothing.
  expect(saved.cells[1].outputs[0].data['text/html']).toBe(
    '<b>&lt;redacted&gt;</b>'
  );
  expect(saved.cells[2].outputs[0].evalue).toBe('<redacted>');
  expect(saved.cells[3].outputs[0].text).toBe('nothing secret here\n');
  expect(saved.cells.map((c: any) => c.execution_count)).toEqual(
    shown.map(c => c.executionCount)
  );

  // Saved again: nothing left to replace, no second note, the same file.
  const before = await jupyterApi(
    'GET',
    `/api/contents/${encodeURIComponent(file)}?content=1`
  );
  await lab.focusEditor(file, 'plain');
  await lab.page.keyboard.press('Control+s');
  await expect
    .poll(
      async () =>
        (
          await jupyterApi(
            'GET',
            `/api/contents/${encodeURIComponent(file)}?content=0`
          )
        ).last_modified,
      { message: 'saved again' }
    )
    .not.toBe(before.last_modified);
  expect(await savedNotebook(file)).toEqual(before.content);
  await lab.page.waitForTimeout(1000); // an event would have arrived by now
  expect(
    await lab.page
      .locator('.Toastify__toast', { hasText: 'replaced a configured secret' })
      .count()
  ).toBeLessThanOrEqual(1);
});
