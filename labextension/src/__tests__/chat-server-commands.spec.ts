/** The server's slash commands merged into the chat input's registry (`chat/serverCommands.ts`). */

import { addServerCommands } from '../chat/serverCommands';
import { builtinCommands, SlashCommandRegistry } from '../chat/slashCommands';

function setUp(names: string[]) {
  const registry = new SlashCommandRegistry();
  const target = {
    models: () => [],
    newChat: async () => undefined,
    exportChat: async () => undefined,
    selectModel: () => undefined,
    fixLastError: async () => true,
    explainActiveCell: async () => true
  };
  builtinCommands(target).forEach(command => registry.add(command));
  const sent: string[] = [];
  let commandFor: (text: string) => string | undefined = () => undefined;
  const list = async () => ({
    commands: names.map(name => ({
      name,
      description: `does ${name}`,
      args: 'NAME'
    }))
  });
  const added = addServerCommands(
    {
      registry,
      send: async text => (sent.push(text), true),
      setCommandFor: f => (commandFor = f)
    },
    list
  );
  return { registry, sent, added, commandFor: (t: string) => commandFor(t) };
}

describe('server slash commands', () => {
  it('are listed beside the browser commands and send their message', async () => {
    const { registry, sent, added, commandFor } = setUp(['describe']);
    expect(await added).toEqual(['describe']);
    const item = registry.menuItems('').find(i => i.label === 'describe');
    expect(item?.detail).toBe('NAME · does describe');
    expect(await registry.run('/describe sales')).toBe('');
    expect(sent).toEqual(['/describe sales']);
    expect(commandFor('/describe sales')).toBe('describe');
    expect(commandFor('describe sales')).toBeUndefined();
    expect(commandFor('/clear')).toBeUndefined();
  });

  it('leave a browser command of the same name alone', async () => {
    const { registry, added, commandFor } = setUp(['clear', 'tldr']);
    expect(await added).toEqual(['tldr']);
    expect(registry.get('clear')?.description).toMatch(/new chat/);
    expect(commandFor('/clear')).toBeUndefined();
    registry.add({
      name: 'tldr',
      description: 'a plugin took it',
      run: () => ''
    });
    expect(commandFor('/tldr x')).toBeUndefined();
  });

  it('are none when the server does not answer', async () => {
    const registry = new SlashCommandRegistry();
    const names = await addServerCommands(
      { registry, send: async () => true, setCommandFor: () => undefined },
      () => Promise.reject(new Error('404'))
    );
    expect(names).toEqual([]);
    expect(registry.list()).toEqual([]);
  });
});
