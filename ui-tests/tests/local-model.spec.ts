/**
 * The bundled local model, end to end: a JupyterLab of its own, started with no OPENAI_* or
 * CHAPYTER_* variables, so chapyter-ext serves SmolLM2-135M through llama-cpp-python. The
 * checks are about the path (the request reaches the model and the answer comes back to the
 * notebook and the chat), never about the tiny model's words.
 *
 * The server and the model's server are stopped in afterAll (the model's one by JupyterLab's
 * stop_extension on SIGTERM), and the test checks that no llama_cpp server is left.
 */

import {
  ask,
  chatAnswers,
  expect,
  LOAD_EXT,
  openChat,
  outputText,
  ownLab,
  ownLabPort,
  test
} from './fixtures';

const LOCAL_MODEL = 'SmolLM2-135M-Instruct';
const ANSWER_TIMEOUT = 180_000;

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

test.describe('local model', () => {
  const local = ownLab(
    {
      name: 'jupyterlab-local',
      port: ownLabPort(),
      model: 'bundled',
      config: {
        // Agent turns with the tiny model: short answers, few steps, no approval (the
        // browser test checks the path, not the model's skill).
        'jupyter_server_config.json': {
          Chapyter: {
            agent_max_steps: 2,
            agent_time_limit: 200,
            agent_policy: 'never',
            max_tokens: 256
          }
        }
      }
    },
    ({ clean, leftover }) => {
      expect(clean, 'JupyterLab (local model) stopped on SIGTERM').toBe(true);
      expect(
        leftover,
        'llama_cpp servers left after JupyterLab stopped'
      ).toEqual([]);
    }
  );

  test('with no endpoint configured, the bundled model answers the chat and %%ai', async ({
    lab,
    page
  }, testInfo) => {
    test.setTimeout(330_000);
    const file = await lab.newNotebook('local-model', [
      { id: 'load', source: LOAD_EXT },
      {
        id: 'prompt',
        source:
          '%%ai --no-context\nwrite a python function add(a, b) that returns a + b'
      },
      { id: 'after', source: 'print(6*7)' }
    ]);

    // The chat first, so JupyterLab itself starts the model's server (and must stop it).
    const panel = await openChat(lab);
    await expect(panel.getByRole('combobox', { name: 'Model' })).toHaveValue(
      LOCAL_MODEL
    );
    const notice = panel.locator('.jp-Chapyter-chatNotice');
    await expect(notice).toBeVisible();
    await expect(notice).toContainText(
      `Using ${LOCAL_MODEL}, a tiny bundled local model`
    );
    await lab.screenshot('local-01-chat-notice', panel);

    await ask(panel, 'Say hello.');
    const stop = panel.getByRole('button', { name: 'Stop' });
    await expect(stop).toBeVisible();
    const reply = chatAnswers(panel).first();
    // The first words arrive (the model's server starts on this first request).
    await expect(reply.locator('.jp-Chapyter-chatMarkdown')).not.toBeEmpty({
      timeout: ANSWER_TIMEOUT
    });
    await expect(stop).toBeHidden({ timeout: ANSWER_TIMEOUT });
    await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
    await expect(reply).not.toHaveClass(/jp-mod-error/);
    await expect(reply).not.toHaveClass(/jp-mod-streaming/);
    await expect(reply.locator('.jp-Chapyter-chatStatus')).toHaveCount(0);
    await expect(panel.getByRole('alert')).toBeHidden();
    expect(
      (await reply.locator('.jp-Chapyter-chatMarkdown').innerText()).trim()
    ).not.toBe('');
    await expect(reply.locator('.jp-Chapyter-chatAuthor')).toHaveText(
      LOCAL_MODEL
    );
    await lab.screenshot('local-02-chat-answer', panel);
    // JupyterLab started the model's server: it is JupyterLab's child.
    expect(
      local().modelServers().length,
      'a model server below JupyterLab'
    ).toBeGreaterThan(0);

    // %%ai in the kernel, through the same (reused) server.
    await lab.runCell(file, 'load', 'Shift+Enter');
    await lab.waitForCells(
      file,
      cells => cells.find(c => c.id === 'load')!.executionCount !== null,
      'the extension loaded'
    );
    await lab.waitForKernelIdle(file);
    await lab.runCell(file, 'prompt', 'Shift+Enter');
    const { cells, prompt, below } = await lab.waitForPair(
      file,
      ({ prompt, generated }) =>
        prompt.executionState === 'idle' &&
        // Review first (Chapyter.local_review): inserted below, not run.
        ((!!generated &&
          outputText(prompt).includes(
            'it waits for your review (setting: Local review)'
          )) ||
          prompt.outputs.some(o => o.type === 'error')),
      'a generated cell below the prompt, or one error line on the prompt',
      { timeout: ANSWER_TIMEOUT }
    );
    local().modelServers();
    if (below?.chapyter) {
      expect(below.type).toBe('code');
      expect(below.chapyter).toMatchObject({
        role: 'generated',
        source: 'magic',
        generated_from: 'prompt',
        model: LOCAL_MODEL
      });
      expect(prompt.chapyter).toMatchObject({
        role: 'prompt',
        generated_cell: below.id
      });
      expect(below.executionCount).toBeNull();
      await lab.screenshot('local-03-generated');
    } else {
      // No usable code from the tiny model: one chapyter-ext line, and no cell inserted.
      const errors = prompt.outputs.filter(o => o.type === 'error');
      expect(errors).toHaveLength(1);
      const text = errors[0].text.replace(ANSI, '').trim();
      expect(text).toMatch(/^chapyter-ext: [^\n]+$/);
      expect(cells.map(c => c.id).slice(0, 3)).toEqual([
        'load',
        'prompt',
        'after'
      ]);
      expect(cells.filter(c => c.chapyter?.role === 'generated')).toHaveLength(
        0
      );
      await lab.screenshot('local-03-error');
    }
    testInfo.annotations.push({
      type: '%%ai outcome',
      description: below?.chapyter ? 'generated cell' : 'error line'
    });

    // The kernel is still usable.
    await lab.waitForKernelIdle(file, ANSWER_TIMEOUT);
    await lab.runCell(file, 'after');
    await lab.waitForCells(
      file,
      cells =>
        cells
          .find(c => c.id === 'after')!
          .outputs.some(o => o.text.trim() === '42'),
      'print(6*7) prints 42'
    );
    await lab.screenshot('local-04-kernel-usable');
  });

  test('agent mode with the bundled model: a turn completes through the fenced-code protocol', async ({
    lab
  }, testInfo) => {
    test.setTimeout(300_000);
    const file = await lab.newNotebook('local-agent', [
      { id: 'data', source: 'x = 6' }
    ]);
    await lab.runCell(file, 'data');
    await lab.waitForKernelIdle(file);

    const panel = await openChat(lab);
    await panel.getByRole('checkbox', { name: 'Agent mode' }).check();
    await ask(panel, 'Compute x * 7 with Python and tell me the result.');
    const stop = panel.getByRole('button', { name: 'Stop' });
    await expect(stop).toBeVisible();
    // The turn ends: an answer, or one line saying a cap was hit; never stuck, never broken.
    await expect(stop).toBeHidden({ timeout: 240_000 });
    local().modelServers();
    const reply = chatAnswers(panel).last();
    await expect(reply).not.toHaveClass(/jp-mod-streaming/);
    await expect(reply).not.toHaveClass(/jp-mod-error/);
    await expect(reply.locator('.jp-Chapyter-chatAuthor')).toHaveText(
      LOCAL_MODEL
    );
    expect((await reply.innerText()).trim()).not.toBe('');
    // Whatever ran is a real cell of the notebook, with the agent's provenance.
    const cells = await lab.cells(file);
    const agentCells = cells.filter(c => c.chapyter?.source === 'agent');
    for (const cell of agentCells) {
      expect(cell.chapyter).toMatchObject({
        role: 'generated',
        model: LOCAL_MODEL
      });
    }
    testInfo.annotations.push({
      type: 'agent outcome',
      description: `${agentCells.length} step cell(s)`
    });
    await lab.screenshot('local-05-agent-turn', panel);
  });
});
