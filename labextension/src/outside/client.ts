/**
 * The page's side of the outside agents' relay over HTTP: one subscription to
 * `GET outside/events` per page (read as server-sent events, reconnected with backoff), the
 * open notebooks reported (`POST outside/notebooks`), and the answers (`outside/trial`,
 * `outside/result`, `outside/stop`), all through `request.ts` (auth and XSRF included).
 */

import { decodeChunks, readEvents } from '../common/sse';
import { requestAPI, requestResponse } from '../request';
import type { TrialOutcome } from '../common/kernelTrial';
import type { IOutsideClient } from './calls';
import {
  backoff,
  IOutsideCall,
  IOutsideCancel,
  IOutsideResultBody,
  IOutsideTrialDecision,
  readCall,
  readCancel,
  readTrialDecision
} from './wire';

function post(endPoint: string, body: unknown): Promise<unknown> {
  return requestAPI<unknown>(endPoint, {
    method: 'POST',
    body: JSON.stringify(body)
  });
}

/** The routes the calls answer through. */
export class OutsideClient implements IOutsideClient {
  /** For the page `pageId`. */
  constructor(readonly pageId: string) {}

  async trial(
    body: { call_id: string } & TrialOutcome
  ): Promise<IOutsideTrialDecision> {
    return readTrialDecision(await post('outside/trial', body));
  }

  async result(body: IOutsideResultBody): Promise<void> {
    await post('outside/result', body);
  }

  async stop(body: { client?: string }): Promise<void> {
    await post('outside/stop', body);
  }

  /** Tell the server which notebooks this page has open. */
  async notebooks(
    notebooks: { path: string; kernel: string; cells: number }[]
  ): Promise<void> {
    await post('outside/notebooks', { page: this.pageId, notebooks });
  }
}

/** What the subscription hands on. */
export interface IOutsideHandlers {
  call(call: IOutsideCall): void;
  cancel(cancel: IOutsideCancel): void;
  /** (Re)connected: report the open notebooks again. */
  connected(): void;
}

/** The one subscription of a page, kept open with backoff until `dispose`. */
export class OutsideSubscription {
  /** Subscribe as `pageId`, handing the events to `handlers`. */
  constructor(
    readonly pageId: string,
    private _handlers: IOutsideHandlers
  ) {}

  /** Whether the stream is open now. */
  get connected(): boolean {
    return this._connected;
  }

  /** Start (once). */
  start(): void {
    if (!this._running) {
      this._running = true;
      void this._loop();
    }
  }

  /** Stop for good. */
  dispose(): void {
    this._running = false;
    this._abort?.abort();
    clearTimeout(this._timer);
    this._wake?.();
  }

  private async _loop(): Promise<void> {
    let failures = 0;
    while (this._running) {
      let refused = false;
      try {
        await this._once();
        failures = 0;
      } catch (error) {
        const status = (error as { status?: unknown })?.status;
        refused = status === 403 || status === 404;
        failures++;
      }
      this._connected = false;
      if (!this._running) {
        return;
      }
      await new Promise<void>(resolve => {
        this._wake = resolve;
        this._timer = setTimeout(resolve, backoff(failures, refused));
      });
    }
  }

  private async _once(): Promise<void> {
    this._abort = new AbortController();
    const response = await requestResponse(
      `outside/events?page=${encodeURIComponent(this.pageId)}`,
      { headers: { Accept: 'text/event-stream' }, signal: this._abort.signal }
    );
    if (!response.body) {
      throw new Error('The event stream has no body.');
    }
    this._connected = true;
    this._handlers.connected();
    for await (const event of readEvents(decodeChunks(response.body))) {
      if (event.event === 'call') {
        const call = readCall(event.data);
        if (call) {
          this._handlers.call(call);
        }
      } else if (event.event === 'cancel') {
        const cancel = readCancel(event.data);
        if (cancel) {
          this._handlers.cancel(cancel);
        }
      }
    }
  }

  private _abort: AbortController | null = null;
  private _connected = false;
  private _running = false;
  private _timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private _wake: (() => void) | null = null;
}
