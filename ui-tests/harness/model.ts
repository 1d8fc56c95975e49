/**
 * The loopback OpenAI-compatible model's control API (`chapyter_ext.testing.openai_server`):
 * script its answers, route them by prompt, read the requests it received.
 */

/** A scripted answer of the fake model (fields of `chapyter_ext.testing.openai_server.Reply`). */
export interface IReply {
  content?: string;
  status?: number;
  error?: string;
  chunk_size?: number;
  chunk_delay?: number;
  delay?: number;
  headers?: { [name: string]: string };
  /** `error.type` of an error body (e.g. LiteLLM's `budget_exceeded`). */
  error_type?: string;
  /** `error.code` of an error body. */
  error_code?: string;
  /** The `usage` the reply reports (streams: when the request asks for it). */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Function calls the reply makes (served as OpenAI `tool_calls`). */
  tool_calls?: {
    name: string;
    arguments: { [key: string]: unknown } | string;
  }[];
}

/** A request the fake model received, as `GET /_control/requests` reports it. */
export interface IRecordedRequest {
  method: string;
  path: string;
  body: any;
  source: string | null;
  headers: { [name: string]: string };
  /** Whether the client closed the connection before the answer ended. */
  disconnected: boolean;
  /** When the first content chunk was written (the model's clock, epoch seconds). */
  first_chunk_at: number | null;
}

/** A fenced Python block, as a model answers. */
export function fenced(code: string): string {
  return '```python\n' + code + '\n```';
}

/** An answer that streams slowly (about `seconds` in all), so a test can act while it does. */
export function slowReply(content: string, seconds = 6): IReply {
  const chunk_size = 4;
  const chunks = Math.max(1, Math.ceil(content.length / chunk_size));
  return { content, chunk_size, chunk_delay: seconds / chunks };
}

function reply(r: IReply | string): IReply {
  return typeof r === 'string' ? { content: r } : r;
}

/** The fake model's control endpoints (the run's model: `CHAPYTER_UI_LLM_URL`). */
export const model = {
  async reset(): Promise<void> {
    await control('POST', '/_control/reset', {});
  },
  /** Queue answers, served in order to requests no route matches. */
  async script(...replies: (IReply | string)[]): Promise<void> {
    await control('POST', '/_control/script', { replies: replies.map(reply) });
  },
  /** Answer `reply` whenever the last user message contains `when` (until reset). */
  async route(when: string, answer: IReply | string): Promise<void> {
    await control('POST', '/_control/route', { when, reply: reply(answer) });
  },
  /** Every request received so far. */
  async requests(): Promise<IRecordedRequest[]> {
    return (await control('GET', '/_control/requests'))
      .requests as IRecordedRequest[];
  },
  /** Chat completion requests received so far. */
  async chatRequests(): Promise<IRecordedRequest[]> {
    return (await model.requests()).filter(
      r => r.path === '/v1/chat/completions'
    );
  }
};

async function control(
  method: string,
  route: string,
  body?: unknown
): Promise<any> {
  const response = await fetch(`${process.env.CHAPYTER_UI_LLM_URL}${route}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  if (!response.ok) {
    throw new Error(
      `${method} ${route}: ${response.status} ${await response.text()}`
    );
  }
  return response.json();
}
