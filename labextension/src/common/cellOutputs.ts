/**
 * A code cell's nbformat outputs as the server and a model read them: each MIME value text
 * or an object (`wireOutput`), an output as one text (`outputText`), and the PNGs it drew
 * (`outputImages`). The agent's steps and an outside agent's calls read cells the same way.
 */

/** PNGs read back per cell, and their total size (base64 characters). */
export const MAX_IMAGES = 4;
export const MAX_IMAGE_CHARS = 4_000_000;

/** An output as the server validates it: every MIME value text or an object (JSON). */
export function wireOutput(output: { [key: string]: any }): {
  [key: string]: any;
} {
  if (!output.data || typeof output.data !== 'object') {
    return output;
  }
  const data: { [mime: string]: unknown } = {};
  for (const [mime, value] of Object.entries(output.data)) {
    const ok =
      typeof value === 'string' ||
      (Array.isArray(value) && value.every(v => typeof v === 'string')) ||
      (!!value && typeof value === 'object' && !Array.isArray(value));
    data[mime] = ok ? value : JSON.stringify(value);
  }
  return { ...output, data };
}

function text(value: unknown): string {
  return Array.isArray(value) ? value.join('') : String(value ?? '');
}

/** An nbformat output as text for a model (stream, text/plain, the error's name and value). */
export function outputText(output: { [key: string]: any }): string {
  switch (output.output_type) {
    case 'stream':
      return text(output.text);
    case 'error':
      return `${output.ename}: ${output.evalue}`;
    default: {
      const data = output.data ?? {};
      if ('text/plain' in data) {
        return text(data['text/plain']);
      }
      return `[${Object.keys(data).join(', ')}]`;
    }
  }
}

/** The PNGs (base64, no whitespace) of `outputs`, within {@link MAX_IMAGES} and the size cap. */
export function outputImages(outputs: { [key: string]: any }[]): string[] {
  const images: string[] = [];
  let size = 0;
  for (const output of outputs) {
    const png = output.data?.['image/png'];
    if (typeof png === 'string' && images.length < MAX_IMAGES) {
      const clean = png.replace(/\s+/g, '');
      if (size + clean.length <= MAX_IMAGE_CHARS) {
        images.push(clean);
        size += clean.length;
      }
    }
  }
  return images;
}
