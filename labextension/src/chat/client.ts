/** The chat's calls to the server extension, over `request.ts`. */

import { postEventStream } from '../common/eventStream';
import { requestAPI, ServerAPIError } from '../request';
import type { INotebookSnapshot } from '../common/snapshot';
import { ChatEvent, readChatEvents } from '../common/events';
import {
  ChatRequestError,
  IChatClient,
  IChatConfig,
  IChatRequest,
  IChatExport,
  IContextPreview,
  IExportSaved,
  IHistoryView
} from './tokens';

function asChatError(error: unknown): unknown {
  if (error instanceof ServerAPIError) {
    return new ChatRequestError(error.kind, error.message, error.status);
  }
  return error;
}

async function call<T>(endPoint: string, init: RequestInit = {}): Promise<T> {
  try {
    return await requestAPI<T>(endPoint, init);
  } catch (error) {
    throw asChatError(error);
  }
}

function json(method: string, body: unknown): RequestInit {
  return { method, body: JSON.stringify(body) };
}

/** A query string of the parameters that have a value. */
function query(params: { [key: string]: string | null | undefined }): string {
  const parts = Object.entries(params)
    .filter(([, value]) => !!value)
    .map(([key, value]) => `${key}=${encodeURIComponent(value!)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** The {@link IChatClient} that talks to the Jupyter server. */
export class ChatClient implements IChatClient {
  /** `GET config`. */
  config(): Promise<IChatConfig> {
    return call<IChatConfig>('config');
  }

  /** `POST chat`, streamed: the reply's typed events. */
  async chat(
    request: IChatRequest,
    signal: AbortSignal
  ): Promise<AsyncIterable<ChatEvent>> {
    try {
      return readChatEvents(await postEventStream('chat', request, signal));
    } catch (error) {
      throw asChatError(error);
    }
  }

  /** `POST context`: the server's text and chip for a notebook snapshot. */
  context(snapshot: INotebookSnapshot, message = ''): Promise<IContextPreview> {
    const body = message.trim() ? { snapshot, message } : { snapshot };
    return call<IContextPreview>('context', json('POST', body));
  }

  /** `POST chat/stop`. */
  async stop(messageId: string): Promise<boolean> {
    const reply = await call<{ stopped: boolean }>(
      'chat/stop',
      json('POST', { message_id: messageId })
    );
    return !!reply?.stopped;
  }

  /** `GET history?notebook=[&notebook_id=]`. */
  history(notebook: string, notebookId?: string | null): Promise<IHistoryView> {
    return call<IHistoryView>(
      `history${query({ notebook, notebook_id: notebookId })}`
    );
  }

  /** `POST history/new`. */
  newChat(notebook: string, notebookId?: string | null): Promise<IHistoryView> {
    const body = notebookId
      ? { notebook, notebook_id: notebookId }
      : { notebook };
    return call<IHistoryView>('history/new', json('POST', body));
  }

  /** `DELETE history?notebook=`. */
  clearHistory(
    notebook: string,
    notebookId?: string | null
  ): Promise<IHistoryView> {
    return call<IHistoryView>(
      `history${query({ notebook, notebook_id: notebookId })}`,
      { method: 'DELETE' }
    );
  }

  /** `POST history/import`. */
  importChat(
    notebook: string,
    notebookId: string | null,
    chat: unknown
  ): Promise<IHistoryView> {
    const body = notebookId
      ? { notebook, notebook_id: notebookId, chat }
      : { notebook, chat };
    return call<IHistoryView>('history/import', json('POST', body));
  }

  /** `GET history/export`. */
  exportChat(
    notebook: string,
    notebookId?: string | null,
    chatId?: string | null
  ): Promise<IChatExport> {
    return call<IChatExport>(
      `history/export${query({ notebook, notebook_id: notebookId, chat_id: chatId })}`
    );
  }

  /** `POST history/export`. */
  saveExport(
    notebook: string,
    notebookId: string | null,
    chatId: string | null,
    replace: string | null
  ): Promise<IExportSaved> {
    return call<IExportSaved>(
      'history/export',
      json('POST', {
        notebook,
        notebook_id: notebookId,
        chat_id: chatId,
        replace
      })
    );
  }
}
