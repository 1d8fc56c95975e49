/**
 * @jest-environment jsdom
 */

/**
 * Attachments, browser side: which files may go (images, tables, text), their
 * bounds and one-line refusals, the request's `attachments` field (only when there are
 * files), what a sent message keeps (names, types, sizes: no data), and the tray: paste,
 * drop, the paperclip, removable chips.
 */

// The icons' module ships as ES modules only, which jest cannot load: buttons without icons.
jest.mock('@jupyterlab/ui-components', () => ({ fileUploadIcon: null }));

import {
  attachmentNotes,
  attachmentsField,
  checkFile,
  classifyFile,
  FILE_LIMIT,
  formatSize,
  IMAGE_LIMIT,
  MAX_ATTACHMENTS,
  notesFromServer,
  PendingAttachments
} from '../chat/attachmentRules';
import {
  AttachmentTray,
  attachmentChips,
  readAttachment
} from '../chat/attachments';
import { messageFromServer } from '../chat/model';
import { FakeClient, flush, makeModel } from './chatFakes';

const MB = 1024 * 1024;
const XLSX =
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

describe('classifyFile', () => {
  it.each([
    ['plot.png', 'image/png', 'image', 'image/png'],
    ['PHOTO.JPG', '', 'image', 'image/jpeg'],
    ['anim.gif', 'image/gif', 'image', 'image/gif'],
    ['pic.webp', '', 'image', 'image/webp'],
    ['sales.csv', 'application/vnd.ms-excel', 'table', 'text/csv'],
    ['sales.tsv', '', 'table', 'text/tab-separated-values'],
    ['rows.json', 'application/json', 'table', 'application/json'],
    ['big.parquet', '', 'table', 'application/vnd.apache.parquet'],
    ['book.xlsx', '', 'table', XLSX],
    ['old.xls', '', 'table', 'application/vnd.ms-excel'],
    ['notes.txt', '', 'text', 'text/plain'],
    ['clean.py', 'text/x-python', 'text', 'text/x-python'],
    ['README.md', '', 'text', 'text/plain'],
    ['data.dat', 'text/plain', 'text', 'text/plain'],
    ['image.png', 'image/png; charset=binary', 'image', 'image/png'],
    // A pasted screenshot may come without a usable name.
    ['', 'image/png', 'image', 'image/png']
  ])('takes %s (%s) as %s %s', (name, mime, kind, type) => {
    expect(classifyFile(name, mime)).toEqual({ kind, type });
  });

  it.each([
    ['drawing.svg', 'image/svg+xml'],
    ['tool.exe', 'application/octet-stream'],
    ['archive.zip', 'application/zip'],
    ['data.dat', ''],
    ['page.pdf', 'application/pdf'],
    ['', 'application/octet-stream']
  ])('refuses %s (%s)', (name, mime) => {
    expect(classifyFile(name, mime)).toBeNull();
  });
});

describe('checkFile', () => {
  it('bounds images at 5 MB and other files at 20 MB, in one line naming the limit', () => {
    expect(checkFile({ name: 'a.png', type: '', size: IMAGE_LIMIT }).ok).toBe(
      true
    );
    expect(
      checkFile({ name: 'a.png', type: '', size: IMAGE_LIMIT + 1 })
    ).toEqual({
      ok: false,
      error: '"a.png" is over 5 MB: an image can be at most 5 MB.'
    });
    expect(checkFile({ name: 'a.csv', type: '', size: FILE_LIMIT }).ok).toBe(
      true
    );
    const big = checkFile({ name: 'a.csv', type: '', size: 31 * MB });
    expect(big).toEqual({
      ok: false,
      error: '"a.csv" is 31 MB: a file can be at most 20 MB.'
    });
    expect(IMAGE_LIMIT).toBe(5 * MB);
    expect(FILE_LIMIT).toBe(20 * MB);
  });

  it('refuses other kinds in one line saying what can be attached', () => {
    const refused = checkFile({ name: 'x.exe', type: '', size: 1 });
    expect(refused.ok).toBe(false);
    const error = (refused as { error: string }).error;
    expect(error).toMatch(/^"x\.exe" cannot be attached: only images/);
    expect(error).not.toContain('\n');
  });

  it.each([
    [0, '0 B'],
    [512, '512 B'],
    [1536, '1.5 KB'],
    [10 * 1024, '10 KB'],
    [5 * MB, '5 MB'],
    [5.25 * MB, '5.3 MB']
  ])('formats %d bytes as %s', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});

describe('attachmentsField', () => {
  it('adds no field without files', () => {
    expect(attachmentsField([])).toEqual({});
    expect('attachments' in attachmentsField([])).toBe(false);
  });

  it('sends exactly name, type, size and data of each file', () => {
    const pending = new PendingAttachments();
    pending.add({ name: 'a.csv', type: 'text/plain', size: 3, data: 'YSxi' });
    const field = attachmentsField(pending.items);
    expect(field).toEqual({
      attachments: [{ name: 'a.csv', type: 'text/csv', size: 3, data: 'YSxi' }]
    });
    expect(Object.keys(field.attachments![0]).sort()).toEqual([
      'data',
      'name',
      'size',
      'type'
    ]);
  });

  it('keeps names, types and sizes of a sent message, never the data', () => {
    const file = { name: 'p.png', type: 'image/png', size: 9, data: 'AAAA' };
    expect(attachmentNotes([file])).toEqual([
      { name: 'p.png', type: 'image/png', size: 9 }
    ]);
    expect(attachmentNotes([])).toBeUndefined();
    expect(
      notesFromServer([
        { name: 'p.png', type: 'image/png', size: 9 },
        { name: 'bad', size: '9' },
        null
      ])
    ).toEqual([{ name: 'p.png', type: 'image/png', size: 9 }]);
    expect(notesFromServer('nope')).toBeUndefined();
    const stored = messageFromServer({
      id: 'u',
      role: 'user',
      content: 'see',
      attachments: [{ name: 'p.png', type: 'image/png', size: 9 }]
    });
    expect(stored.attachments).toEqual([
      { name: 'p.png', type: 'image/png', size: 9 }
    ]);
    expect(messageFromServer({ id: 'v', role: 'user' })).not.toHaveProperty(
      'attachments'
    );
  });
});

describe('PendingAttachments', () => {
  it('adds, removes and hands over the files, and says why one was refused', () => {
    const pending = new PendingAttachments();
    let changes = 0;
    pending.changed.connect(() => changes++);
    const a = pending.add({ name: 'a.txt', type: '', size: 1, data: 'YQ==' })!;
    pending.add({ name: 'b.txt', type: '', size: 1, data: 'Yg==' });
    expect(pending.add({ name: 'c.exe', type: '', size: 1, data: '' })).toBe(
      null
    );
    expect(pending.error).toMatch(/"c\.exe" cannot be attached/);
    expect(pending.remove(a.id)).toBe(true);
    expect(pending.remove(a.id)).toBe(false);
    expect(pending.take().map(f => f.name)).toEqual(['b.txt']);
    expect(pending.items).toEqual([]);
    expect(pending.error).toBeNull();
    expect(changes).toBe(5);
  });

  it(`takes at most ${MAX_ATTACHMENTS} files for one message`, () => {
    const pending = new PendingAttachments();
    for (let i = 0; i <= MAX_ATTACHMENTS; i++) {
      pending.add({ name: `${i}.txt`, type: '', size: 1, data: '' });
    }
    expect(pending.items).toHaveLength(MAX_ATTACHMENTS);
    expect(pending.error).toMatch(/at most 10 files/);
  });
});

describe('the request body', () => {
  it('has attachments only when there are files, and the message keeps their notes', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    await model.setNotebook('a.ipynb');
    void model.send('plain');
    await flush();
    client.streams[0].finish('m1', 'ok');
    await flush();
    const file = { name: 'p.png', type: 'image/png', size: 4, data: 'iVBO' };
    void model.send('with a picture', [file]);
    await flush();
    expect(client.requests[0]).not.toHaveProperty('attachments');
    expect(client.requests[1].attachments).toEqual([file]);
    const asked = model.messages[2];
    expect(asked.role).toBe('user');
    expect(asked.attachments).toEqual([
      { name: 'p.png', type: 'image/png', size: 4 }
    ]);
    expect(JSON.stringify(asked)).not.toContain('iVBO');
  });
});

function pasteEvent(files: File[]): Event {
  const event = new Event('paste', { bubbles: true, cancelable: true });
  Object.defineProperty(event, 'clipboardData', { value: { files } });
  return event;
}

async function settle(): Promise<void> {
  // FileReader answers on a later turn of the event loop.
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

describe('AttachmentTray', () => {
  function setUp() {
    const pending = new PendingAttachments();
    const panel = document.createElement('div');
    const input = document.createElement('textarea');
    panel.appendChild(input);
    const tray = new AttachmentTray(pending, panel, input);
    panel.append(tray.node, tray.button);
    return { pending, panel, input, tray };
  }

  it('reads a file into base64', async () => {
    const file = new File(['a,b\n1,2\n'], 't.csv', { type: 'text/csv' });
    const read = await readAttachment(file);
    expect(read).toEqual({
      name: 't.csv',
      type: 'text/csv',
      size: 8,
      data: Buffer.from('a,b\n1,2\n').toString('base64')
    });
  });

  it('attaches a pasted file as a chip with name, size and a labelled Remove', async () => {
    const { pending, input, tray } = setUp();
    const event = pasteEvent([new File(['x,y\n'], 'xy.csv')]);
    input.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(true);
    await settle();
    expect(pending.items.map(f => [f.name, f.type, f.data])).toEqual([
      ['xy.csv', 'text/csv', Buffer.from('x,y\n').toString('base64')]
    ]);
    const chip = tray.node.querySelector('[role="listitem"]')!;
    expect(chip.textContent).toContain('xy.csv');
    expect(chip.textContent).toContain('4 B');
    tray.node
      .querySelector<HTMLButtonElement>(
        'button[aria-label="Remove attachment xy.csv"]'
      )!
      .click();
    expect(pending.items).toEqual([]);
    expect(tray.node.hidden).toBe(true);
  });

  it('leaves a paste of text to the input', () => {
    const { input } = setUp();
    const event = pasteEvent([]);
    input.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(false);
  });

  it('refuses a dropped image over 5 MB in one line, without reading it', async () => {
    const { pending, panel, tray } = setUp();
    const big = new File([new Uint8Array(IMAGE_LIMIT + 1)], 'huge.png', {
      type: 'image/png'
    });
    const drop = new Event('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(drop, 'dataTransfer', { value: { files: [big] } });
    panel.dispatchEvent(drop);
    expect(drop.defaultPrevented).toBe(true);
    await settle();
    expect(pending.items).toEqual([]);
    const line = tray.node.querySelector('[role="alert"]')!;
    expect(line.textContent).toBe(
      '"huge.png" is over 5 MB: an image can be at most 5 MB.'
    );
  });

  it('opens the file picker from a labelled paperclip button, off without a notebook', () => {
    const { tray } = setUp();
    expect(tray.button.tagName).toBe('BUTTON');
    expect(tray.button.getAttribute('aria-label')).toBe('Attach files');
    const picker =
      tray.node.querySelector<HTMLInputElement>('input[type="file"]')!;
    const opened = jest.spyOn(picker, 'click').mockImplementation(() => {});
    tray.button.click();
    expect(opened).toHaveBeenCalled();
    tray.enabled = false;
    expect(tray.button.disabled).toBe(true);
    const event = pasteEvent([new File(['x'], 'x.txt')]);
    tray.node.parentElement!.querySelector('textarea')!.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(false);
  });

  it('draws a sent message files as chips without Remove', () => {
    expect(attachmentChips(undefined)).toBeNull();
    const chips = attachmentChips([
      { name: 'p.png', type: 'image/png', size: 2048 }
    ])!;
    expect(chips.getAttribute('aria-label')).toBe('Attached files');
    expect(chips.textContent).toBe('p.png2 KB');
    expect(chips.querySelector('button')).toBeNull();
  });
});
