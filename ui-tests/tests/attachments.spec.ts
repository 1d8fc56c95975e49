/**
 * Attachments: a PNG picked with the paperclip goes to a model that takes images as an image
 * part; a CSV is described (columns, shape, first rows) in the request; "Load as variable"
 * saves the CSV beside the notebook and inserts a visible cell that, once run, defines it.
 */

import {
  askAndWait,
  byId,
  chatAnswers,
  expect,
  model,
  openChat,
  outputText,
  ownLab,
  ownLabPort,
  ran,
  test
} from './fixtures';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64'
);
const CSV = 'region,units,price\nnorth,12,3.5\nsouth,7,4.25\neast,3,9.0\n';

/** The text and image parts of a request's last message. */
function lastParts(request: any): any[] {
  const messages = request.body.messages;
  const content = messages[messages.length - 1].content;
  return Array.isArray(content) ? content : [{ type: 'text', text: content }];
}

test.describe('attachments', () => {
  ownLab({
    name: 'jupyterlab-attachments',
    // Its own port: Playwright may stop this server only at the end of the run, and the
    // local-model and starter specs take ownLabPort() itself.
    port: ownLabPort() + 3,
    model: { url: process.env.CHAPYTER_UI_LLM_URL! },
    config: {
      'jupyter_server_config.json': { Chapyter: { image_input: 'on' } }
    }
  });

  test('an image, a described table, and a table loaded as a variable', async ({
    lab
  }) => {
    const file = await lab.newNotebook('attachments', [
      { id: 'one', source: 'x = 1' }
    ]);
    await lab.focusEditor(file, 'one');
    const panel = await openChat(lab);
    const picker = panel.locator('.jp-Chapyter-chatAttachmentPicker');
    await expect(
      panel.getByRole('button', { name: 'Attach files' })
    ).toBeEnabled();

    // An image, to a model configured to take images: an image part.
    await model.script('A single dark pixel.');
    await picker.setInputFiles({
      name: 'dot.png',
      mimeType: 'image/png',
      buffer: PNG
    });
    const tray = panel.getByRole('list', { name: 'Files to send' });
    await expect(tray.getByRole('listitem')).toHaveText(/dot\.png/);
    await lab.screenshot('attachments-01-image-chip', panel);
    await askAndWait(panel, 'What is in this picture?');
    await expect(chatAnswers(panel).first()).toContainText('dark pixel');
    let requests = await model.chatRequests();
    const image = lastParts(requests[requests.length - 1]);
    expect(image.map(p => p.type)).toEqual(['text', 'image_url']);
    expect(image[1].image_url.url).toBe(
      `data:image/png;base64,${PNG.toString('base64')}`
    );

    // A CSV: described in the request.
    await model.script('Three regions; north sells most.');
    await picker.setInputFiles({
      name: 'sales.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(CSV)
    });
    await askAndWait(panel, 'Summarise this table');
    await expect(chatAnswers(panel).nth(1)).toContainText('north sells most');
    requests = await model.chatRequests();
    const table = lastParts(requests[requests.length - 1]);
    expect(table.map(p => p.type)).toEqual(['text']);
    expect(table[0].text).toContain('File "sales.csv" (text/csv, 56 B)');
    expect(table[0].text).toContain('A table of 3 rows × 3 columns.');
    expect(table[0].text).toContain('units (int64), price (float64)');
    expect(table[0].text).toContain('north');

    // Load as variable: a visible cell below the active one, run by the user.
    const sent = panel.getByRole('list', { name: 'Attached files' }).last();
    await expect(sent).toContainText('sales.csv');
    const load = sent.getByRole('button', {
      name: /^Load sales\.csv as a variable/
    });
    await load.focus();
    await load.press('Enter'); // keyboard reachable
    await expect(sent.getByRole('status')).toHaveText(
      'Saved sales.csv beside the notebook; run the new cell to load it as sales.'
    );
    const code = 'import pandas as pd\nsales = pd.read_csv("sales.csv")\nsales';
    let cells = await lab.cells(file);
    expect(cells.map(c => c.source)).toEqual(['x = 1', code]);
    expect(ran(cells[1])).toBe(false); // inserted, not run
    const folder = file.includes('/')
      ? file.slice(0, file.lastIndexOf('/') + 1)
      : '';
    const saved = await lab.api(
      'GET',
      `/api/contents/${folder}sales.csv?content=1&format=text`
    );
    expect(saved.content).toBe(CSV);
    await lab.screenshot('attachments-02-load-cell');

    await lab.runCell(file, cells[1].id);
    await lab.waitForCells(file, c => ran(c[1]), 'the load cell ran');
    cells = await lab.cells(file);
    expect(outputText(byId(cells, cells[1].id))).toContain('north');
    // The variable is in the kernel.
    await lab.setSource(
      file,
      cells[1].id,
      'print(sales.shape, list(sales.columns))'
    );
    await lab.runCell(file, cells[1].id);
    await lab.waitForCells(
      file,
      c => outputText(c[1]).includes('(3, 3)'),
      'the variable read back'
    );
    cells = await lab.cells(file);
    expect(outputText(cells[1])).toContain(
      "(3, 3) ['region', 'units', 'price']"
    );
    await lab.screenshot('attachments-03-variable');

    // After a reload the data is gone from the page: the button says so, nothing is written.
    await lab.save(file);
    await lab.reload();
    await lab.waitForKernelIdle(file);
    const again = (await openChat(lab))
      .getByRole('list', { name: 'Attached files' })
      .last();
    await again
      .getByRole('button', { name: /^Load sales\.csv as a variable/ })
      .click();
    await expect(again.getByRole('status')).toHaveText(
      '"sales.csv" is no longer here (sent files stay only until the page reloads): attach it again.'
    );
    expect((await lab.cells(file)).length).toBe(2);
  });
});
