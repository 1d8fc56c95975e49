/**
 * Reading a `%%ai` line and a prompt cell, exactly as `chapyter_ext.contract` does: words
 * split on `\s`, the decided spellings only, one-line errors naming the word at fault.
 */

/** What a `%%ai` line asks for. */
export interface IMagicOptions {
  /** The value of `--model`/`-m`, if given. */
  model: string | null;
  /** `--run`: run the code where no frontend runs it. */
  run: boolean;
  /** `--no-run`: insert the code without running it. */
  noRun: boolean;
  /** `--no-context`: send only the request. */
  noContext: boolean;
  /** `--regenerate`: ask again even when up to date. */
  regenerate: boolean;
}

/** A `%%ai` line that cannot be read; the message is one line. */
export class MagicLineError extends Error {
  /** Its name, for messages. */
  readonly name = 'MagicLineError';
}

/** The options of a `%%ai` line, as listed in every error message. */
export const VALID_OPTIONS =
  '--model NAME (or -m NAME), --run, --no-run, --no-context, --regenerate';

const FLAGS: { [word: string]: 'run' | 'noRun' | 'noContext' | 'regenerate' } =
  {
    '--run': 'run',
    '--no-run': 'noRun',
    '--no-context': 'noContext',
    '--regenerate': 'regenerate'
  };

const QUOTES = ['"', "'"];

/** The magic line of a prompt cell: `%%ai` then white space or the end. */
export const MAGIC_LINE = /^%%ai(?:\s|$)/;

function lineError(problem: string): MagicLineError {
  return new MagicLineError(
    `Cannot read the %%ai line: ${problem}. Valid options: ${VALID_OPTIONS}.`
  );
}

function hasQuote(text: string): boolean {
  return QUOTES.some(q => text.includes(q));
}

function isQuoted(text: string): boolean {
  return text.length >= 2 && QUOTES.includes(text[0]) && text.endsWith(text[0]);
}

function unquote(value: string, word: string): string {
  const inner = isQuoted(value) ? value.slice(1, -1) : value;
  if (hasQuote(inner)) {
    throw lineError(`unbalanced quote in '${word}'`);
  }
  return inner;
}

/**
 * Read the options of a `%%ai` line (with or without its leading `%%ai`); throws
 * `MagicLineError`. Same rules as `chapyter_ext.contract.parse_magic_line`.
 */
export function parseMagicLine(line: string): IMagicOptions {
  let text = line.trim();
  if (MAGIC_LINE.test(text)) {
    text = text.slice('%%ai'.length);
  }
  const words = text
    .trim()
    .split(/\s+/)
    .filter(word => word !== '');
  const options: IMagicOptions = {
    model: null,
    run: false,
    noRun: false,
    noContext: false,
    regenerate: false
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const bare = isQuoted(word) ? word.slice(1, -1) : word;
    if (bare === '--model' || bare === '-m') {
      const following = words[i + 1] ?? '';
      if (!following || following.startsWith('-')) {
        throw lineError(`'${word}' needs a model name`);
      }
      options.model = unquote(following, following);
      i++;
    } else if (
      bare.startsWith('--model=') ||
      (bare.startsWith('-m') && !bare.startsWith('--'))
    ) {
      let raw = bare.startsWith('--')
        ? bare.slice('--model='.length)
        : bare.slice(2);
      if (raw.startsWith('=') && !bare.startsWith('--')) {
        raw = raw.slice(1); // -m=NAME, as argparse reads it
      }
      options.model = unquote(raw, word);
      if (!options.model) {
        throw lineError(`'${word}' needs a model name`);
      }
    } else if (hasQuote(bare)) {
      throw lineError(`unbalanced quote in '${word}'`);
    } else if (Object.prototype.hasOwnProperty.call(FLAGS, bare)) {
      options[FLAGS[bare]] = true;
    } else if (bare.startsWith('-')) {
      throw lineError(`unknown option '${word}'`);
    } else {
      throw lineError(`unexpected word '${word}'`);
    }
  }
  if (options.run && options.noRun) {
    throw new MagicLineError(
      '--run and --no-run contradict each other: choose one.'
    );
  }
  return options;
}

/** The parts of a `%%ai` cell. */
export interface IPromptCell {
  /** The options of its line; null if the line cannot be read. */
  options: IMagicOptions | null;
  /** The request: everything below the magic line. */
  request: string;
  /** Why the options could not be read, else null. */
  error: string | null;
  /** The model the line names, if any (null when unreadable). */
  model: string | null;
}

function firstLineIndex(lines: string[]): number {
  return lines.findIndex(line => line.trim() !== '');
}

/**
 * Split a prompt cell into its options and its request, or null if it is no prompt. A line
 * whose options cannot be read still makes a prompt (options null, error set).
 */
export function parsePrompt(source: string): IPromptCell | null {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const first = firstLineIndex(lines);
  if (first < 0 || !MAGIC_LINE.test(lines[first])) {
    return null;
  }
  const request = lines.slice(first + 1).join('\n');
  try {
    const options = parseMagicLine(lines[first]);
    return { options, request, error: null, model: options.model };
  } catch (reason) {
    if (!(reason instanceof MagicLineError)) {
      throw reason;
    }
    return { options: null, request, error: reason.message, model: null };
  }
}

/** Whether a code cell's source is a `%%ai` prompt. */
export function isPromptSource(source: string): boolean {
  return parsePrompt(source) !== null;
}
