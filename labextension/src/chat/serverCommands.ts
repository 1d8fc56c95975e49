/**
 * The server's slash commands (`GET chapyter-ext/commands`, from the
 * `chapyter_ext.slash_commands` entry point) in the chat's `/` menu, beside the browser's.
 * Running one sends `/name args` as a message whose request names the command (`command`),
 * so the server applies the command's prompt to that turn; while a reply streams it is
 * queued like any message.
 */

import { requestAPI } from '../request';
import { parseSlash, SlashCommandRegistry } from './slashCommands';
import type { ISlashCommand } from './tokens';

/** One command as `GET commands` lists it. */
export interface IServerCommand {
  name: string;
  description: string;
  /** What follows the name, as listed ("" when nothing). */
  args: string;
}

/** The slash command that sends `/name args` through `send` (false: nothing was sent). */
export function serverSlashCommand(
  info: IServerCommand,
  send: (text: string) => Promise<boolean>
): ISlashCommand {
  return {
    name: info.name,
    description: info.description,
    args: info.args || undefined,
    run: async args => {
      const text = args ? `/${info.name} ${args}` : `/${info.name}`;
      return (await send(text))
        ? undefined
        : `/${info.name}: nothing was sent (open a notebook first).`;
    }
  };
}

/** What the browser needs to merge the server's commands into the chat input. */
export interface IServerCommandsTarget {
  /** The chat's command registry (the built-ins are already in it). */
  registry: SlashCommandRegistry;
  /** Send (or queue) a message. */
  send(text: string): Promise<boolean>;
  /** Where to say which server command a message runs (the chat model's hook). */
  setCommandFor(commandFor: (text: string) => string | undefined): void;
}

/**
 * Add the server's commands to the registry (a browser command of the same name wins) and
 * name them in the requests of the messages that run them. A server without the route, or
 * with the chat off, leaves the browser's commands alone.
 */
export async function addServerCommands(
  target: IServerCommandsTarget,
  list: () => Promise<{ commands: IServerCommand[] }> = () =>
    requestAPI<{ commands: IServerCommand[] }>('commands')
): Promise<string[]> {
  const mine = new Map<string, ISlashCommand>();
  // Only while the registry still holds our record: a plugin may replace it later.
  target.setCommandFor(text => {
    const name = parseSlash(text)?.name;
    return name &&
      mine.has(name) &&
      target.registry.get(name) === mine.get(name)
      ? name
      : undefined;
  });
  let listed: IServerCommand[];
  try {
    listed = (await list()).commands ?? [];
  } catch {
    return [];
  }
  for (const info of listed) {
    if (target.registry.get(info.name)) {
      continue;
    }
    const command = serverSlashCommand(info, target.send);
    try {
      target.registry.add(command);
    } catch {
      continue; // a name the browser does not take
    }
    mine.set(info.name, target.registry.get(info.name)!);
  }
  return [...mine.keys()];
}
