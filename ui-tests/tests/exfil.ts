/**
 * A loopback "exfil" server that counts what reaches it, and a log of every request the page
 * makes to anything but the Jupyter server: how the trust specs see whether showing something
 * fetched from elsewhere. Each spec passes its own ports.
 */

import { Page } from '@playwright/test';
import * as http from 'http';

const LAB_ORIGIN = new URL(process.env.CHAPYTER_UI_LAB_URL!).origin;

/** A small picture, so a loaded image shows in the screenshots. */
export function picture(label: string, fill: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40">` +
    `<rect width="160" height="40" fill="${fill}"/>` +
    `<text x="8" y="26" font-family="sans-serif" font-size="16" fill="white">${label}</text></svg>`
  );
}

/** A loopback HTTP server on a real socket that counts the requests it receives. */
export class ExfilServer {
  readonly requests: string[] = [];
  port = 0;

  /** `ports`: the first free one is used. */
  constructor(private readonly _ports: number[]) {}

  async start(): Promise<void> {
    for (const port of this._ports) {
      if (await this._listen(port)) {
        this.port = port;
        return;
      }
    }
    throw new Error(`no free port among ${this._ports.join(', ')}`);
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>(resolve => this._server.close(() => resolve()));
  }

  private _listen(port: number): Promise<boolean> {
    this._server = http.createServer((request, response) => {
      this.requests.push(request.url ?? '');
      const css = (request.url ?? '').includes('.css');
      response.writeHead(200, {
        'Content-Type': css ? 'text/css' : 'image/svg+xml',
        'Access-Control-Allow-Origin': '*',
        'Cache-Control': 'no-store'
      });
      response.end(
        css
          ? '.jp-Chapyter-fetchedStyle { outline: 2px solid #b3261e; }'
          : picture('fetched by click', '#b3261e')
      );
    });
    return new Promise(resolve => {
      this._server.once('error', () => resolve(false));
      this._server.listen(port, '127.0.0.1', () => resolve(true));
    });
  }

  private _server!: http.Server;
}

/** Every request the page makes to anything but the Jupyter server. */
export function foreignRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on('request', request => {
    const url = request.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) {
      return;
    }
    if (new URL(url).origin !== LAB_ORIGIN) {
      seen.push(url);
    }
  });
  return seen;
}

/** Give the page time to fetch what it would fetch (images load right after a render). */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(() => new Promise(resolve => setTimeout(resolve, 1500)));
}
