import {
  isPromptSource,
  normalizeRequest,
  parsePrompt,
  requestSha256,
  sha256Hex
} from '../contract';
import { createHash } from 'crypto';

describe('sha256Hex', () => {
  it.each(['', 'abc', 'plot x\n', 'é ünïcode 📈', 'x'.repeat(1000)])(
    'matches node crypto for %j',
    text => {
      expect(sha256Hex(text)).toBe(
        createHash('sha256').update(text, 'utf8').digest('hex')
      );
    }
  );

  it('matches the vector the Python side is tested against', () => {
    // chapyter_ext.prompts.request_sha256("plot x\n") hashes "plot x".
    expect(requestSha256('plot x\n')).toBe(
      createHash('sha256').update('plot x').digest('hex')
    );
  });
});

describe('prompt cells', () => {
  it('recognises %%ai only as the first non-blank line', () => {
    expect(isPromptSource('%%ai\nplot')).toBe(true);
    expect(isPromptSource('\n  \n%%ai --no-run\nplot')).toBe(true);
    expect(isPromptSource('%%aix\nplot')).toBe(false);
    expect(isPromptSource('x = 1\n%%ai\nplot')).toBe(false);
    expect(isPromptSource('%ai status')).toBe(false);
  });

  it('parses flags, the model and the request', () => {
    const parsed = parsePrompt(
      '%%ai --no-run -m gpt-x --regenerate\nplot it\nnicely'
    )!;
    expect(parsed.options).toEqual({
      model: 'gpt-x',
      run: false,
      noRun: true,
      noContext: false,
      regenerate: true
    });
    expect(parsed.model).toBe('gpt-x');
    expect(parsed.request).toBe('plot it\nnicely');
    expect(parsePrompt('%%ai --model=m2\nx')!.model).toBe('m2');
    expect(parsePrompt('print(1)')).toBeNull();
  });

  it('normalises like the kernel: CRLF, trailing spaces, blank ends', () => {
    expect(normalizeRequest('\n\nplot x  \r\nnow\t\n\n')).toBe('plot x\nnow');
    expect(requestSha256('plot x')).toBe(requestSha256('plot x  \n\n'));
    expect(requestSha256('plot x')).not.toBe(requestSha256('plot y'));
  });
});
