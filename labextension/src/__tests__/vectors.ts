/** The shared test vectors (`tests/vectors/*.json`), which the Python tests read too. */

import * as fs from 'fs';
import * as path from 'path';

/** The parsed JSON of `tests/vectors/<name>`. */
export function readVectors<T = any>(name: string): T {
  const file = path.join(__dirname, '..', '..', '..', 'tests', 'vectors', name);
  return JSON.parse(fs.readFileSync(file, 'utf-8')) as T;
}
