/**
 * Slash commands of the chat input: one registry that the built-ins and other
 * plugins (`IChatExtension.addSlashCommand`) add to, what `/` lists, and what a typed
 * `/name args` does. The built-ins take what they act on as functions, so this is pure and
 * tested in node; the plugin passes the real ones (`chatInput.ts`).
 */

import type { IMenuItem } from './inputMenuLogic';
import type { IModelInfo, ISlashCommand } from './tokens';

/** `/name args` as typed: the name (lower case) and the rest, trimmed; null if not a command. */
export function parseSlash(
  text: string
): { name: string; args: string } | null {
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return match
    ? { name: match[1].toLowerCase(), args: (match[2] ?? '').trim() }
    : null;
}

/** The slash commands, in the order they were added. */
export class SlashCommandRegistry {
  /** Add `command` (replacing one of the same name). */
  add(command: ISlashCommand): void {
    const name = command.name.toLowerCase();
    if (!/^[a-z][\w-]*$/.test(name)) {
      throw new Error(`Not a slash command name: ${command.name}`);
    }
    this._commands.set(name, { ...command, name });
  }

  /** The command called `name`, or undefined. */
  get(name: string): ISlashCommand | undefined {
    return this._commands.get(name.toLowerCase());
  }

  /** Every command. */
  list(): ISlashCommand[] {
    return [...this._commands.values()];
  }

  /**
   * The menu for `query` (what follows `/`): the commands, or once a command with
   * completions is typed with a space, its argument's completions.
   */
  menuItems(query: string): IMenuItem[] {
    const space = query.indexOf(' ');
    if (space >= 0) {
      const command = this.get(query.slice(0, space));
      const typed = query.slice(space + 1);
      return (command?.complete?.(typed) ?? []).map(value => ({
        id: `slash-${command!.name}-${value}`,
        label: value,
        insert: `/${command!.name} ${value}`
      }));
    }
    return this.list().map(command => ({
      id: `slash-${command.name}`,
      label: command.name,
      detail: command.args
        ? `${command.args} · ${command.description}`
        : command.description,
      insert: command.complete ? `/${command.name} ` : `/${command.name}`,
      keepOpen: !!command.complete
    }));
  }

  /**
   * Run the command `text` types, if it is one: the line to show ('' for none), or null when
   * `text` is no command (it is sent as a message). An unknown name is one line; nothing
   * is sent.
   */
  async run(text: string): Promise<string | null> {
    const parsed = parseSlash(text);
    if (!parsed) {
      return null;
    }
    const command = this.get(parsed.name);
    if (!command) {
      return `Unknown command /${parsed.name}: type / to list the commands.`;
    }
    try {
      return (await command.run(parsed.args)) || '';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return `/${command.name} failed: ${message.split(/\s+/).join(' ')}`;
    }
  }

  private _commands = new Map<string, ISlashCommand>();
}

/** What the built-in commands act on. */
export interface IBuiltinTarget {
  /** Start a new chat for the notebook. */
  newChat(): Promise<unknown>;
  /** Run Export chat; a line when there is nothing to export. */
  exportChat(): Promise<string | void>;
  /** The models the server offers. */
  models(): readonly IModelInfo[];
  /** Make `name` the chat's model. */
  selectModel(name: string): void;
  /** Run Fix on the active notebook's last error; false when it shows none. */
  fixLastError(): Promise<boolean>;
  /** Explain the active cell (its error, or what it does); false when there is none. */
  explainActiveCell(): Promise<boolean>;
}

/**
 * The built-in commands: /clear, /export, /model NAME, /fix, /explain. (`/plan` is added by
 * the plan mode through the same registry.)
 */
export function builtinCommands(target: IBuiltinTarget): ISlashCommand[] {
  const names = () => target.models().map(info => info.name);
  return [
    {
      name: 'clear',
      description: 'Start a new chat (earlier chats are kept)',
      run: async () => void (await target.newChat())
    },
    {
      name: 'export',
      description: 'Export the chat as Markdown next to the notebook',
      run: () => target.exportChat()
    },
    {
      name: 'model',
      args: 'NAME',
      description: 'Switch the model that answers',
      complete: typed =>
        names().filter(name =>
          name.toLowerCase().startsWith(typed.toLowerCase())
        ),
      run: args => {
        if (!args) {
          return `Usage: /model NAME (one of: ${names().join(', ') || 'none'})`;
        }
        const found = names().find(n => n.toLowerCase() === args.toLowerCase());
        if (!found) {
          return `Unknown model "${args}": one of ${names().join(', ') || 'none'}.`;
        }
        target.selectModel(found);
        return `Model: ${found}`;
      }
    },
    {
      name: 'fix',
      description: "Fix the active notebook's last error",
      run: async () =>
        (await target.fixLastError()) ? undefined : 'No error to fix'
    },
    {
      name: 'explain',
      description: 'Explain the active cell',
      run: async () =>
        (await target.explainActiveCell()) ? undefined : 'No cell to explain'
    }
  ];
}
