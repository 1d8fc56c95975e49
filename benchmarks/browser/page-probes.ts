/** What the browser benchmarks record inside the page, installed before JupyterLab loads. */

import { Page } from '@playwright/test';

/**
 * Wrap the page's `fetch` (before JupyterLab captures it) so that, for requests to a URL that
 * matches `route` (a RegExp source) while `window.__bench.armed`, `window.__bench` gets
 * `fetch` (the request left), `headers` (its response headers came) and `tokenBytes` (the bytes
 * of its first `token` event reached the page, apart from when the page gets to draw them), in
 * the page's `performance.now()` ms. The page reads its own copy of the stream.
 */
export async function tapTokenStream(page: Page, route: string): Promise<void> {
  await page.addInitScript((source: string) => {
    const w = window as any;
    const pattern = new RegExp(source);
    const original = window.fetch.bind(window);
    window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : String(input);
      const b = w.__bench;
      if (!b?.armed || !pattern.test(url)) {
        return original(input, init);
      }
      b.fetch = performance.now();
      const response = await original(input, init);
      b.headers = performance.now();
      if (!response.body) {
        return response;
      }
      const [mine, theirs] = response.body.tee();
      void (async () => {
        const reader = mine.getReader();
        const decoder = new TextDecoder();
        let text = '';
        while (!b.tokenBytes) {
          const { value, done } = await reader.read();
          if (done) {
            break;
          }
          text += decoder.decode(value, { stream: true });
          if (text.includes('event: token')) {
            b.tokenBytes = performance.now();
          }
        }
        void reader.cancel();
      })();
      return new Response(theirs, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers
      });
    };
  }, route);
}
