/** What the browser benchmarks share once their samples are in: statistics, the machine, the result file. */

import * as fs from 'fs';
import * as os from 'os';

import { chromiumVersion } from '../../ui-tests/harness/browser';

/** Nearest rank: the smallest value with at least `q` of the values at or below it. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * n, median, p90 (nearest rank), min and max of `values`, in ms, rounded to `digits`. The
 * median is nearest-rank too, or with `midpoint` the mean of the two middle values of an even
 * count.
 */
export function stats(
  values: number[],
  { digits = 1, midpoint = false } = {}
): { [name: string]: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const median =
    midpoint && n % 2 === 0
      ? (sorted[n / 2 - 1] + sorted[n / 2]) / 2
      : quantile(sorted, 0.5);
  return {
    n,
    median_ms: round(median, digits),
    p90_ms: round(quantile(sorted, 0.9), digits),
    min_ms: round(sorted[0], digits),
    max_ms: round(sorted[n - 1], digits)
  };
}

/** The machine a run measured on: cores, load before and after, the browser. */
export function machine(loadBefore: number[]): { [name: string]: unknown } {
  return {
    cpus: os.cpus().length,
    loadavg_1m_before: round(loadBefore[0]),
    loadavg_1m_after: round(os.loadavg()[0]),
    chromium: chromiumVersion()
  };
}

/** Where run.sh reads the result (BENCH_RESULTS). */
export const RESULTS = process.env.BENCH_RESULTS!;

/** Write the result for run.sh to print. */
export function writeResult(result: object): void {
  fs.writeFileSync(RESULTS, JSON.stringify(result, null, 2) + '\n');
}
