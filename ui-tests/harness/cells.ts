/** What a test knows of a notebook's cells, and the prompt/generated pair read from them. */

/** What a test needs to know of one cell. */
export interface ICellInfo {
  id: string;
  index: number;
  type: string;
  source: string;
  chapyter: { [key: string]: any } | null;
  executionCount: number | null;
  executionState: string | null;
  /** One entry per output: its type, MIME types and its text (plain, stream or traceback). */
  outputs: { type: string; mimes: string[]; text: string }[];
  /** The jp-Chapyter-* classes of the cell widget. */
  classes: string[];
  active: boolean;
  selected: boolean;
}

/** A prompt cell and the cell right below it (its generated cell, once there is one). */
export interface IPair {
  prompt: ICellInfo;
  /** The cell below the prompt, whatever it is (undefined at the end of the notebook). */
  below: ICellInfo | undefined;
  /** `below`, when it is a generated cell. */
  generated: ICellInfo | undefined;
  cells: ICellInfo[];
}

/** The prompt cell `promptId` and the cell below it (never "the last cell"). */
export function pairOf(cells: ICellInfo[], promptId = 'prompt'): IPair {
  const index = cells.findIndex(c => c.id === promptId);
  if (index < 0) {
    throw new Error(`no cell ${promptId}`);
  }
  const below = cells[index + 1];
  return {
    prompt: cells[index],
    below,
    generated: below?.chapyter?.role === 'generated' ? below : undefined,
    cells
  };
}

/** Every output's text of a cell, one per line. */
export function outputText(cell: ICellInfo | undefined): string {
  return (cell?.outputs ?? []).map(o => o.text).join('\n');
}

/** One cell by id. */
export function byId(cells: ICellInfo[], id: string): ICellInfo {
  const cell = cells.find(c => c.id === id);
  if (!cell) {
    throw new Error(`no cell ${id}`);
  }
  return cell;
}

/** Whether a cell has run and finished. */
export function ran(cell: ICellInfo | undefined): boolean {
  return (
    !!cell && cell.executionCount !== null && cell.executionState === 'idle'
  );
}
