/**
 * @jest-environment jsdom
 */

/**
 * Checked numbers on screen (`chat/numberMarks.ts`): where each verdict goes in the rendered
 * answer, and the marks with their descriptions.
 */

import type { INumberVerdict } from '../common/events';
import { numberVerdicts } from '../common/numberVerdicts';
import { answerParts } from '../common/events';
import {
  markDescription,
  markNumbers,
  NOT_FOUND_TEXT,
  placeMarks
} from '../chat/numberMarks';

function verdict(
  text: string,
  start: number,
  status: INumberVerdict['status'],
  label = ''
): INumberVerdict {
  return {
    text,
    start,
    end: start + text.length,
    value: 0,
    status,
    where: label ? [{ kind: 'output', label, excerpt: `x: ${text}` }] : []
  };
}

describe('placeMarks', () => {
  it('places each verdict in order, skipping trivial ones and glued digits', () => {
    const texts = ['Revenue 10.46 and 0.46, ', 'then 0.46 again; 3 rows'];
    const places = placeMarks(texts, [
      verdict('0.46', 30, 'found', 'cell [1] output'),
      verdict('0.46', 20, 'not_found'),
      verdict('3', 40, 'trivial')
    ]);
    expect(places.map(p => [p.node, p.start, p.end, p.verdict.status])).toEqual(
      [
        [0, 18, 22, 'not_found'],
        [1, 5, 9, 'found']
      ]
    );
  });

  it('leaves a verdict the rendering changed unmarked, and goes on', () => {
    const places = placeMarks(
      ['about ', '1.2', 'M users, 98,765 left'],
      [verdict('1.2M', 6, 'found', 'x'), verdict('98,765', 20, 'not_found')]
    );
    expect(places).toHaveLength(1);
    expect(places[0]).toMatchObject({ node: 2, start: 9, end: 15 });
  });

  it('does not mark a number inside an identifier or a longer number', () => {
    expect(
      placeMarks(['df2 x12 1234 12.5'], [verdict('12', 0, 'not_found')])
    ).toEqual([]);
    expect(
      placeMarks(['12.5% of 12'], [verdict('12', 9, 'not_found')])[0].start
    ).toBe(9);
  });
});

describe('markDescription', () => {
  it('says where a found number was and that a missing one was not', () => {
    const found = verdict('42', 0, 'found', 'cell [4] output');
    found.where.push({ kind: 'variable', label: 'df summary', excerpt: '' });
    expect(markDescription(found)).toBe(
      'Found in cell [4] output; df summary: “x: 42”'
    );
    expect(markDescription(verdict('43', 0, 'not_found'))).toBe(
      `43: ${NOT_FOUND_TEXT}`
    );
  });
});

describe('markNumbers', () => {
  it('wraps found and missing numbers outside code, each described', () => {
    const root = document.createElement('div');
    root.innerHTML =
      '<p>Total <strong>10,006.50</strong>, not 10,106.5 in 3 weeks.</p>' +
      '<pre><code>print(10106.5)</code></pre><p>Also <code>10,106.5</code>.</p>';
    const count = markNumbers(root, [
      verdict('10,006.50', 8, 'found', 'cell [7] output'),
      verdict('10,106.5', 26, 'not_found'),
      verdict('3', 38, 'trivial'),
      verdict('10,106.5', 90, 'not_found')
    ]);
    expect(count).toBe(2);
    const marks = Array.from(root.querySelectorAll('.jp-Chapyter-number'));
    expect(marks.map(m => [m.className, m.textContent])).toEqual([
      ['jp-Chapyter-number jp-mod-found', '10,006.50'],
      ['jp-Chapyter-number jp-mod-notFound', '10,106.5']
    ]);
    expect(marks.map(m => m.getAttribute('tabindex'))).toEqual(['0', '0']);
    expect(marks[0].getAttribute('aria-description')).toBe(
      'Found in cell [7] output: “x: 10,006.50”'
    );
    expect(marks[1].getAttribute('aria-description')).toBe(
      `10,106.5: ${NOT_FOUND_TEXT}`
    );
    // The answer's text is the answer's: the descriptions are not in it.
    expect(root.querySelector('p')?.textContent).toBe(
      'Total 10,006.50, not 10,106.5 in 3 weeks.'
    );
    expect(root.querySelector('pre')?.textContent).toBe('print(10106.5)');
    expect(root.querySelector('p code')?.textContent).toBe('10,106.5');
    expect(root.querySelector('strong .jp-Chapyter-number')).not.toBeNull();
  });

  it('marks nothing without verdicts', () => {
    const root = document.createElement('div');
    root.textContent = 'It is 42.';
    expect(markNumbers(root, undefined)).toBe(0);
    expect(root.innerHTML).toBe('It is 42.');
  });
});

describe('numberVerdicts', () => {
  it('reads a done event and a stored message alike, dropping damaged verdicts', () => {
    const raw = [
      {
        text: '42',
        start: 1,
        end: 3,
        value: 42,
        status: 'found',
        where: [{ kind: 'output', label: 'cell [1] output', excerpt: '42' }, 7]
      },
      { text: '43', start: 'x', end: 2, status: 'found' },
      { text: '44', start: 0, end: 2, status: 'maybe' },
      'junk'
    ];
    expect(numberVerdicts(raw)).toEqual([
      {
        text: '42',
        start: 1,
        end: 3,
        value: 42,
        status: 'found',
        where: [{ kind: 'output', label: 'cell [1] output', excerpt: '42' }]
      }
    ]);
    expect(answerParts({ numbers: raw }).numbers).toHaveLength(1);
    expect(answerParts({}).numbers).toBeUndefined();
    expect(numberVerdicts(null)).toEqual([]);
  });
});
