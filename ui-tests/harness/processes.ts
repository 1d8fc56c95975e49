/**
 * The processes a test run starts, seen through /proc: whether one is alive, what runs below
 * it, and how to stop one (its id and its process group only, never by name).
 */

import * as fs from 'fs';

/** One process: its id and command line. */
export interface IProcess {
  pid: number;
  cmd: string;
}

/** Whether `pid` runs (a zombie, exited but not yet reaped, does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf-8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Every live process below `root`, children first. */
export function descendants(root: number): IProcess[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf-8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: IProcess[] = [];
  const todo = [...(children.get(root) ?? [])];
  while (todo.length) {
    const pid = todo.pop()!;
    let cmd = '';
    try {
      cmd = fs
        .readFileSync(`/proc/${pid}/cmdline`, 'utf-8')
        .replace(/\0/g, ' ');
    } catch {
      continue;
    }
    found.push({ pid, cmd });
    todo.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Whether a command line is the bundled local model's server. */
export function isModelServer(cmd: string): boolean {
  return cmd.includes('llama_cpp') || cmd.includes('chapyter_ext.local_model');
}

/** Wait until `done()` holds or `ms` have passed; whether it held. */
export async function waitUntil(
  done: () => boolean,
  ms: number
): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) {
      return false;
    }
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  return true;
}

/**
 * SIGTERM, then wait up to `graceMs` for the process to exit (JupyterLab then shuts its
 * kernels down, which run in their own sessions, out of reach of a signal to its group).
 * Whether it exited.
 */
export async function terminate(
  pid: number,
  graceMs: number
): Promise<boolean> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return !alive(pid);
  }
  return waitUntil(() => !alive(pid), graceMs);
}

/** SIGKILL to the process group `pid` leads (what is left of it). */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone, with its whole group.
  }
}

/** SIGKILL to one process. */
export function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
