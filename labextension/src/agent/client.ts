/**
 * Agent mode's calls to the server extension (`POST agent`, `POST agent/result`,
 * `POST agent/trial`), over `request.ts`.
 */

import { postEventStream } from '../common/eventStream';
import { requestAPI, ServerAPIError } from '../request';
import { ChatEvent, readChatEvents } from '../common/events';
import { ChatRequestError } from '../chat/tokens';
import {
  IAgentClient,
  IAgentRequest,
  IStepResultBody,
  ITrialBody,
  ITrialDecision
} from './tokens';

function asChatError(error: unknown): unknown {
  if (error instanceof ServerAPIError) {
    return new ChatRequestError(error.kind, error.message, error.status);
  }
  return error;
}

/** The {@link IAgentClient} that talks to the Jupyter server. */
export class AgentClient implements IAgentClient {
  /** `POST agent`, streamed: the turn's typed events. */
  async agent(
    request: IAgentRequest,
    signal: AbortSignal
  ): Promise<AsyncIterable<ChatEvent>> {
    try {
      return readChatEvents(await postEventStream('agent', request, signal));
    } catch (error) {
      throw asChatError(error);
    }
  }

  /** `POST agent/trial`: the server's decision on a step's trial. */
  async trial(body: ITrialBody): Promise<ITrialDecision> {
    try {
      return await requestAPI<ITrialDecision>('agent/trial', {
        method: 'POST',
        body: JSON.stringify(body)
      });
    } catch (error) {
      throw asChatError(error);
    }
  }

  /** `POST agent/result`. */
  async result(body: IStepResultBody): Promise<void> {
    try {
      await requestAPI<{ ok: boolean }>('agent/result', {
        method: 'POST',
        body: JSON.stringify(body)
      });
    } catch (error) {
      throw asChatError(error);
    }
  }
}
