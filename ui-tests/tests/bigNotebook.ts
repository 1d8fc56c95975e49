/**
 * A big notebook for the big-notebook spec and benchmark: a first cell that makes the
 * kernel's variables, then code cells that look run, each with a stream output and a rich
 * result (text and an HTML table), one of them with an error. Written through the contents
 * API, so no kernel has to run 1,000 cells.
 */

import { clearChat, jupyterApi, notebookJson } from '../harness/jupyter';

/** Id of the big notebook's cell at `index`. */
export function bigCellId(index: number): string {
  return `c${index}`;
}

/** Index of the cell that shows the notebook's one error (about the middle). */
export function errorCellIndex(count: number): number {
  return Math.floor(count / 2);
}

/**
 * The first cell: it gives the kernel variables for the context (twelve small DataFrames),
 * so that the context fills its budget once it ran.
 */
export const BIG_KERNEL_SETUP = [
  'import pandas as pd',
  'for _i in range(12):',
  "    globals()[f'station{_i}'] = pd.DataFrame({'day': range(30), 'rain_mm': [(_i * 7 + d) % 23 for d in range(30)], 'wind_kmh': [(_i + d * 3) % 41 for d in range(30)], 'city': [f'city{d % 5}' for d in range(30)]})",
  'del _i'
].join('\n');

function bigCell(index: number, count: number): object {
  if (index === 0) {
    return {
      id: bigCellId(0),
      cell_type: 'code',
      source: BIG_KERNEL_SETUP,
      metadata: {},
      outputs: [],
      execution_count: null
    };
  }
  const name = `part${index}`;
  const rows = Array.from(
    { length: 8 },
    (_, row) =>
      `<tr><td>${row}</td><td>${(index * 31 + row * 7) % 97}</td></tr>`
  ).join('');
  const outputs: object[] = [
    {
      output_type: 'stream',
      name: 'stdout',
      text: `loaded ${name}: ${index * 3 + 8} rows\n`
    },
    {
      output_type: 'execute_result',
      execution_count: index + 1,
      metadata: {},
      data: {
        'text/plain': Array.from(
          { length: 8 },
          (_, row) => `${row}    ${(index * 31 + row * 7) % 97}`
        ).join('\n'),
        'text/html': `<table><thead><tr><th></th><th>${name}</th></tr></thead><tbody>${rows}</tbody></table>`
      }
    }
  ];
  if (index === errorCellIndex(count)) {
    outputs.push({
      output_type: 'error',
      ename: 'KeyError',
      evalue: "'price'",
      traceback: [
        'Traceback (most recent call last)',
        `Cell In[${index + 1}], line 2`,
        `----> 2 ${name}['price'].sum()`,
        "KeyError: 'price'"
      ]
    });
  }
  return {
    id: bigCellId(index),
    cell_type: 'code',
    source: [
      `# Part ${index}: the readings of station ${index % 37}, cleaned and summed by day`,
      `${name} = load_part(${index}, columns=['day', 'station', 'rain_mm', 'wind_kmh'])`,
      `${name} = ${name}.dropna(subset=['rain_mm']).query('rain_mm >= 0')`,
      `${name}['week'] = ${name}['day'] // 7`,
      `${name}.groupby('week')[['rain_mm', 'wind_kmh']].sum().head(8)`
    ].join('\n'),
    metadata: {},
    outputs,
    execution_count: index + 1
  };
}

/** The nbformat 4.5 notebook of `count` cells (see the module's doc). */
export function bigNotebookJson(count: number): object {
  return {
    ...notebookJson([]),
    cells: Array.from({ length: count }, (_, index) => bigCell(index, count))
  };
}

/** Save the big notebook of `count` cells as `name.ipynb`, with no chat history; its path. */
export async function createBigNotebook(
  name: string,
  count: number
): Promise<string> {
  const file = `${name}.ipynb`;
  await jupyterApi('PUT', `/api/contents/${encodeURIComponent(file)}`, {
    type: 'notebook',
    format: 'json',
    content: bigNotebookJson(count)
  });
  await clearChat(file);
  return file;
}
