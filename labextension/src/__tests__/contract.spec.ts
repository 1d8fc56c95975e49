/** The notebook contract against the vectors the Python side is tested against too. */

import { readVectors } from './vectors';
import {
  acceptedChange,
  codeBlockKey,
  codeSha256,
  findGeneratedIndex,
  findPromptIndex,
  generatedMetadata,
  generationPayloadItem,
  hasSyntaxError,
  ICellView,
  IMagicOptions,
  isEdited,
  isGeneratedCell,
  isNotebookId,
  isPromptCell,
  isUpToDate,
  lastChange,
  linkGenerated,
  MagicLineError,
  newNotebookId,
  notebookChatInfo,
  normalizeRequest,
  parseMagicLine,
  parsePrompt,
  promptMetadata,
  readGenerationPayload,
  requestSha256,
  withNotebookId
} from '../contract';

const VECTORS = readVectors('contract.json');

/** Cases as jest's `each` table: a label, then the case. */
function table(
  cases: any[],
  label: (c: any, i: number) => unknown
): [unknown, any][] {
  return cases.map((c, i) => [label(c, i), c]);
}

/** Options as the vectors spell them (the Python field names). */
function snake(
  options: IMagicOptions | null
): { [key: string]: unknown } | null {
  return options
    ? {
        model: options.model,
        run: options.run,
        no_run: options.noRun,
        no_context: options.noContext,
        regenerate: options.regenerate
      }
    : null;
}

function view(cell: any): ICellView {
  const source = Array.isArray(cell.source)
    ? cell.source.join('')
    : cell.source;
  return {
    id: cell.id,
    type: cell.cell_type,
    source,
    chapyter: cell.metadata?.chapyter ?? null
  };
}

describe('magic lines', () => {
  it.each(table(VECTORS.magic_lines, c => c.line))('%j', (_line, c: any) => {
    if (c.options) {
      expect(snake(parseMagicLine(c.line))).toEqual(c.options);
      return;
    }
    let error: unknown = null;
    try {
      parseMagicLine(c.line);
    } catch (reason) {
      error = reason;
    }
    expect(error).toBeInstanceOf(MagicLineError);
    const message = (error as Error).message;
    expect(message).toContain(c.error);
    expect(message.startsWith(c.error_prefix ?? '')).toBe(true);
    expect(message).not.toContain('\n');
  });
});

describe('prompt cells', () => {
  it.each(table(VECTORS.prompts, c => c.source))('%j', (_source, c: any) => {
    const parsed = parsePrompt(c.source);
    if (c.prompt === null) {
      expect(parsed).toBeNull();
      return;
    }
    expect(parsed).not.toBeNull();
    expect(parsed!.request).toBe(c.prompt.request);
    expect(snake(parsed!.options)).toEqual(c.prompt.options);
    if (c.prompt.error === null) {
      expect(parsed!.error).toBeNull();
    } else {
      expect(parsed!.error).toContain(c.prompt.error);
      expect(parsed!.model).toBeNull();
    }
  });
});

describe('hashes', () => {
  it.each(table(VECTORS.normalize_request, c => c.text))(
    'normalizeRequest(%j)',
    (_text, c: any) => {
      expect(normalizeRequest(c.text)).toBe(c.normalized);
    }
  );

  it.each(table(VECTORS.request_sha256, c => c.text))(
    'requestSha256(%j)',
    (_text, c: any) => {
      expect(requestSha256(c.text)).toBe(c.sha256);
    }
  );

  it.each(table(VECTORS.code_sha256, c => c.code))(
    'codeSha256(%j)',
    (_code, c: any) => {
      expect(codeSha256(c.code)).toBe(c.sha256);
    }
  );

  it.each(table(VECTORS.code_block_key, c => c.code))(
    'codeBlockKey(%j)',
    (_code, c: any) => {
      expect(codeBlockKey(c.code)).toBe(c.key);
      expect(codeBlockKey(c.normalized)).toBe(c.key);
    }
  );
});

describe('metadata', () => {
  it.each(table(VECTORS.generated_metadata, (_c, i) => i))(
    'generatedMetadata #%d',
    (_i, c: any) => {
      const metadata = generatedMetadata(c.fields);
      expect(metadata).toEqual(c.metadata);
      expect(Object.keys(metadata)).toEqual(Object.keys(c.metadata));
    }
  );

  it.each(table(VECTORS.link_generated, (_c, i) => i))(
    'linkGenerated #%d',
    (_i, c: any) => {
      const metadata = linkGenerated(c.provenance, c.prompt_id);
      expect(metadata).toEqual(c.metadata);
      expect(Object.keys(metadata)).toEqual(Object.keys(c.metadata));
    }
  );

  it.each(table(VECTORS.accepted_change, c => c.name))(
    'acceptedChange: %s',
    (_name, c: any) => {
      const before = JSON.stringify(c.metadata);
      const metadata = acceptedChange(c.metadata, c.fields);
      expect(metadata).toEqual(c.result);
      expect(Object.keys(metadata)).toEqual(Object.keys(c.result));
      expect(JSON.stringify(c.metadata)).toEqual(before);
      expect(lastChange(metadata)).toEqual(c.result.changes.at(-1));
    }
  );

  it('acceptedChange refuses an unknown kind', () => {
    expect(() =>
      acceptedChange(null, {
        kind: 'magic' as any,
        model: 'm',
        code: '',
        request_sha256: ''
      })
    ).toThrow(/unknown change kind/);
  });

  it('promptMetadata', () => {
    for (const c of VECTORS.prompt_metadata) {
      expect(promptMetadata(c.generated_id)).toEqual(c.metadata);
    }
  });

  it.each(table(VECTORS.generation_payload_item, (_c, i) => i))(
    'generationPayloadItem #%d',
    (_i, c: any) => {
      const item = generationPayloadItem(c.code, c.metadata, c.run);
      expect(item).toEqual(c.item);
      expect(readGenerationPayload({ payload: [item] })).toEqual({
        code: c.code,
        metadata: c.metadata,
        run: c.run
      });
    }
  );

  it.each(table(VECTORS.read_generation_payload, (_c, i) => i))(
    'readGenerationPayload #%d',
    (_i, c: any) => {
      expect(readGenerationPayload(c.reply)).toEqual(c.generation);
    }
  );
});

describe('links', () => {
  it.each(table(VECTORS.links, c => c.name))('%s', (_name, c: any) => {
    const cells: ICellView[] = c.cells.map(view);
    for (const [prompt, generated] of c.generated_index) {
      expect(findGeneratedIndex(cells, prompt)).toBe(generated);
    }
    for (const [generated, prompt] of c.prompt_index) {
      expect(findPromptIndex(cells, generated)).toBe(prompt);
    }
    const indices = (test: (cell: ICellView) => boolean) =>
      cells.map((cell, i) => (test(cell) ? i : -1)).filter(i => i >= 0);
    expect(indices(isPromptCell)).toEqual(c.prompt_cells);
    expect(indices(isGeneratedCell)).toEqual(c.generated_cells);
    expect(indices(cell => isGeneratedCell(cell) && isEdited(cell))).toEqual(
      c.edited
    );
    for (const [prompt, generated, expected] of c.up_to_date) {
      expect(isUpToDate(cells[prompt], cells[generated])).toBe(expected);
    }
    expect(
      indices(cell => isGeneratedCell(cell) && hasSyntaxError(cell))
    ).toEqual(c.syntax_error);
  });
});

describe('the notebook-level contract', () => {
  it.each(table(VECTORS.notebook_ids, c => JSON.stringify(c.value)))(
    'isNotebookId %s',
    (_name, c: any) => {
      expect(isNotebookId(c.value)).toBe(c.valid);
    }
  );

  it.each(table(VECTORS.notebook_chat_info, c => c.name))(
    'notebookChatInfo: %s',
    (_name, c: any) => {
      expect(notebookChatInfo(c.metadata)).toEqual(c.info);
    }
  );

  it.each(table(VECTORS.with_notebook_id, (_c, i) => i))(
    'withNotebookId #%d',
    (_i, c: any) => {
      const before = JSON.stringify(c.chapyter);
      if (c.error) {
        expect(() => withNotebookId(c.chapyter, c.notebook_id)).toThrow();
        return;
      }
      expect(withNotebookId(c.chapyter, c.notebook_id)).toEqual(c.result);
      expect(JSON.stringify(c.chapyter)).toBe(before);
    }
  );

  it('makes fresh, well-formed ids', () => {
    const ids = new Set([newNotebookId(), newNotebookId(), newNotebookId()]);
    expect(ids.size).toBe(3);
    for (const id of ids) {
      expect(isNotebookId(id)).toBe(true);
      expect(id).toHaveLength(32);
    }
  });
});
