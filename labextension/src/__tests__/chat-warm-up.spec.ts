/**
 * @jest-environment jsdom
 */

/**
 * Cheap per user: the chat panel tells the server once, the first time it is
 * shown, that a user is about to ask a model (`POST warm`), so the server loads its model SDK
 * then instead of at start.
 */

import './lumino-dom';

import { Widget } from '@lumino/widgets';

import { hintWhenFirstShown, sendWarmUpHint } from '../chat/warmUp';

/** Let the hook's deferred check run. */
const settle = () => new Promise(resolve => setTimeout(resolve, 0));

describe('the warm-up hint', () => {
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it('is sent once, when a hidden panel is first shown', async () => {
    const panel = new Widget();
    panel.hide();
    const hint = jest.fn(async () => undefined);
    hintWhenFirstShown(panel, hint);
    Widget.attach(panel, document.body);
    await settle();
    expect(hint).not.toHaveBeenCalled(); // attached, but hidden: a collapsed side area

    panel.show();
    await settle();
    expect(hint).toHaveBeenCalledTimes(1);

    panel.hide();
    panel.show();
    Widget.detach(panel);
    Widget.attach(panel, document.body);
    await settle();
    expect(hint).toHaveBeenCalledTimes(1);
    panel.dispose();
  });

  it('is sent when the panel comes back open with the page', async () => {
    const panel = new Widget();
    const hint = jest.fn(async () => undefined);
    hintWhenFirstShown(panel, hint);
    expect(hint).not.toHaveBeenCalled(); // not on the page yet
    Widget.attach(panel, document.body);
    await settle();
    expect(hint).toHaveBeenCalledTimes(1);
    panel.dispose();
  });

  it('is sent at once for a panel already visible', () => {
    const panel = new Widget();
    Widget.attach(panel, document.body);
    const hint = jest.fn(async () => undefined);
    hintWhenFirstShown(panel, hint);
    expect(hint).toHaveBeenCalledTimes(1);
    panel.dispose();
  });

  it('never for a panel disposed before it was shown', async () => {
    const panel = new Widget();
    panel.hide();
    const hint = jest.fn(async () => undefined);
    hintWhenFirstShown(panel, hint);
    Widget.attach(panel, document.body);
    panel.dispose();
    await settle();
    expect(hint).not.toHaveBeenCalled();
  });

  it('posts to the warm route and swallows a failure', async () => {
    const calls: [string, RequestInit | undefined][] = [];
    const ok = async <T>(endPoint?: string, init?: RequestInit): Promise<T> => {
      calls.push([endPoint ?? '', init]);
      return { warm_up: true } as T;
    };
    await sendWarmUpHint(ok);
    expect(calls).toEqual([['warm', { method: 'POST', body: '{}' }]]);

    const debug = jest.spyOn(console, 'debug').mockImplementation(() => {});
    const failing = async <T>(): Promise<T> => {
      throw new Error('404');
    };
    await expect(sendWarmUpHint(failing)).resolves.toBeUndefined();
    expect(debug).toHaveBeenCalledTimes(1);
    debug.mockRestore();
  });
});
