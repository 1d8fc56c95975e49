/**
 * What the server says of its settings reaches the chat: the lines of settings a
 * lock or a value that could not be used replaced, a chat turned off, agent mode turned off.
 */

import { AgentController } from '../agent/controller';
import { agentMode } from '../agent/mode';
import { IAgentClient } from '../agent/tokens';
import { CHAT_OFF } from '../chat/tokens';
import { FakeClient, makeModel } from './chatFakes';

const LOCKED =
  "ChapyterExtApp.models is locked by the administrator to {'class': …}: your {'mine': …} is not used.";

describe("the server's settings in the chat", () => {
  it("shows each of the server's lines until dismissed", async () => {
    const client = new FakeClient();
    client.config$ = {
      ...(client.config$ as object),
      notices: [LOCKED, 7, ''] as unknown as string[]
    } as typeof client.config$;
    const model = makeModel(client);
    let changes = 0;
    model.changed.connect(() => changes++);
    await model.loadConfig();
    expect(model.serverNotices).toEqual([LOCKED]);
    expect(model.chatOff).toBe(false);
    model.dismissServerNotices();
    expect(model.serverNotices).toEqual([]);
    expect(changes).toBeGreaterThan(1);
  });

  it('sends nothing when the server turned the chat off, and says so', async () => {
    const client = new FakeClient();
    client.config$ = {
      ...(client.config$ as object),
      features: { chat: false, agent: false, inline_completion: true },
      notices: [LOCKED]
    } as typeof client.config$;
    const model = makeModel(client);
    await model.loadConfig();
    await model.setNotebook('a.ipynb');
    expect(model.chatOff).toBe(true);
    expect(model.serverNotices).toEqual([CHAT_OFF, LOCKED]);
    expect(await model.send('hello')).toBe(false);
    expect(client.calls).not.toContain('chat');
    expect(model.messages).toEqual([]);
  });

  it('a server without features keeps everything on', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    await model.loadConfig();
    expect(model.chatOff).toBe(false);
    expect(model.serverNotices).toEqual([]);
  });

  it('agent mode turned off on the server takes no message, the saved toggle kept', () => {
    const agent = new AgentController({
      client: {} as IAgentClient,
      notebook: () => null
    });
    const mode = agentMode(agent);
    let changes = 0;
    agent.changed.connect(() => changes++);
    agent.enabled = true;
    expect(mode.enabled).toBe(true);
    agent.setServerAvailable(false);
    expect(agent.available).toBe(false);
    expect(mode.enabled).toBe(false);
    // The person's own toggle (a setting) is what it was, for a server that offers it.
    expect(agent.enabled).toBe(true);
    agent.setServerAvailable(true);
    expect(mode.enabled).toBe(true);
    expect(changes).toBe(3);
  });
});
