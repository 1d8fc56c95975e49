/**
 * The request bodies against the wire contract (`requests` in `tests/vectors/contract.json`),
 * which `tests/server/test_request_contract.py` holds the server's parsing to: each body is
 * built by the real client (`chat/client.ts`, `agent/client.ts`, `fix/client.ts`,
 * `complete/client.ts`) and read off a fake fetch.
 * The bodies are typed `Required<...>`, so a field added to a request type fails to compile
 * here until the contract and this test name it too.
 */

import { PageConfig } from '@jupyterlab/coreutils';

import { AgentClient } from '../agent/client';
import type {
  IAgentRequest,
  IRunResult,
  IStepResultBody
} from '../agent/tokens';
import { ChatClient } from '../chat/client';
import type { IChatRequest } from '../chat/tokens';
import { streamCompletion } from '../complete/client';
import type { ICompletionBody } from '../complete/logic';
import { requestFix, requestFixTrial } from '../fix/client';
import type { IFixRequest } from '../fix/client';
import { readVectors } from './vectors';

const REQUESTS = readVectors('contract.json').requests;
const ROUTES: { [route: string]: any } = Object.fromEntries(
  REQUESTS.routes.map((entry: any) => [entry.route, entry])
);
const BASE = 'http://localhost:19270/lab-base/';

/** What each fetch posted: its route under the extension and its JSON body. */
let posted: { route: string; method: string; body: any }[] = [];
const realFetch = globalThis.fetch;

beforeAll(() => {
  PageConfig.setOption('baseUrl', BASE);
  globalThis.fetch = (async (request: Request) => {
    const route = new URL(request.url).pathname.replace(
      '/lab-base/chapyter-ext/',
      ''
    );
    posted.push({ route, method: request.method, body: await request.json() });
    const stream =
      route === 'chat' || route === 'agent' || route === 'complete';
    return new Response(stream ? ': keepalive\n\n' : '{"ok": true}', {
      status: 200,
      headers: {
        'Content-Type': stream ? 'text/event-stream' : 'application/json'
      }
    });
  }) as typeof fetch;
});

afterAll(() => {
  globalThis.fetch = realFetch;
});

beforeEach(() => {
  posted = [];
});

const SNAPSHOT = ROUTES.chat.example.context;

/** A chat body with every field the browser's type has (policy is the agent's). */
const CHAT: Required<Omit<IChatRequest, 'policy'>> = {
  notebook: 'work/sales.ipynb',
  chat_id: 'c',
  message: 'Which region grew fastest?',
  context: SNAPSHOT,
  model: 'gpt-4o-mini',
  notebook_id: '0123456789abcdef0123456789abcdef',
  command: 'describe',
  mentions: ROUTES.chat.example.mentions,
  attachments: ROUTES.chat.example.attachments,
  plan: true,
  plan_steps: ['Sum revenue by region']
};
const AGENT: Required<IAgentRequest> = { ...CHAT, policy: 'ask' };
const RUN: Required<IRunResult> = {
  cell_id: 'a1b2c3',
  execution_count: 3,
  outputs: [],
  figures: [],
  images: []
};
const RESULT: Required<IStepResultBody> = {
  message_id: 'm',
  step_id: 'step-1',
  status: 'ran',
  result: RUN,
  text: ''
};

/** A Fix body with every field its type has. */
const FIX: Required<IFixRequest> = {
  notebook: 'work/sales.ipynb',
  mode: 'fix',
  cell: { id: 'c2', index: 1, source: "df.groupby('regoin').sum()" },
  error: { ename: 'KeyError', evalue: "'regoin'", traceback: ['KeyError'] },
  related: [{ id: 'c1', index: 0, source: 'df = load()' }],
  instruction: '',
  context: SNAPSHOT,
  model: 'gpt-4o-mini'
};
/** A completion body with every field its type has. */
const COMPLETE: Required<ICompletionBody> = {
  prefix: 'df.',
  suffix: '',
  cells_above: ['import pandas as pd'],
  variables: [{ name: 'df', type: 'DataFrame', summary: '2 rows' }],
  language: 'python',
  editor: 'cell-c2'
};

/** Post every body the clients build, each route with all its fields (trial: both kinds). */
async function postEverything(): Promise<void> {
  const chat = new ChatClient();
  const agent = new AgentClient();
  const signal = new AbortController().signal;
  await chat.chat(CHAT, signal);
  await chat.stop('m');
  await agent.agent(AGENT, signal);
  await agent.result(RESULT);
  await agent.trial({
    message_id: 'm',
    step_id: 'step-1',
    report: { status: 'ran' }
  });
  await agent.trial({
    message_id: 'm',
    step_id: 'step-1',
    failure: { ename: 'NameError', evalue: "name 'x' is not defined" }
  });
  await requestFix(FIX, signal);
  await requestFixTrial({
    code: 'x = 1',
    context: SNAPSHOT,
    report: { status: 'ran' }
  });
  await requestFixTrial({
    code: 'x = 1',
    failure: { ename: 'NameError', evalue: "name 'x' is not defined" }
  });
  for await (const event of streamCompletion(COMPLETE, signal)) {
    void event;
  }
  await chat.context(SNAPSHOT, 'Which region grew fastest?');
}

function names(fields: any[]): string[] {
  return fields.map(field => field.name).sort();
}

describe('the request bodies', () => {
  it('go to exactly the contract routes, as POSTs', async () => {
    await postEverything();
    expect(new Set(posted.map(p => p.route))).toEqual(
      new Set(Object.keys(ROUTES))
    );
    for (const { route, method } of posted) {
      expect(method).toBe(ROUTES[route].method);
    }
  });

  it.each(Object.keys(ROUTES))(
    'of %s use exactly the contract field names',
    async route => {
      await postEverything();
      const bodies = posted.filter(p => p.route === route).map(p => p.body);
      const fields = ROUTES[route].fields;
      const seen = new Set(bodies.flatMap(body => Object.keys(body)));
      expect([...seen].sort()).toEqual(names(fields));
      for (const body of bodies) {
        for (const field of fields) {
          if (field.required) {
            expect(body).toHaveProperty([field.name]);
          }
          const value = body[field.name];
          if (field.items && value) {
            expect(Object.keys(value).sort()).toEqual(names(field.items));
          }
        }
      }
    }
  );

  it('names every field with a type and a meaning, and has an example', () => {
    for (const entry of REQUESTS.routes) {
      expect(entry.example).toBeTruthy();
      expect(entry.response).toBeTruthy();
      for (const field of entry.fields) {
        expect(typeof field.required).toBe('boolean');
        expect(field.type).toMatch(/^(string|boolean|number|object)(\[\])?$/);
        expect(field.meaning).toBeTruthy();
      }
    }
  });
});
