import type { AttemptResponse, ClaimedForward } from '../outbox/outbox.js';
import type { ConnectionStatus } from './broker-connection.js';

/** What one attempt came to. */
export interface PublishResult {
  ok: boolean;
  /** The destination's HTTP status; null when there was none. */
  status: number | null;
  /** Why it failed, for the forward's `lastError` and the log (never a secret or a header value). */
  error: string | null;
  /** The destination asked for this wait before the next attempt (`Retry-After`), in ms. */
  retryAfterMs?: number;
  /** What the destination answered (an HTTP destination's headers and first 4 KiB); null or absent when nothing did. */
  response?: AttemptResponse | null;
  /**
   * No attempt can ever succeed until the config changes (the private-network
   * guard refused the address): the forward is `failed` at once (CONTRACT 6).
   */
  permanent?: boolean;
}

/**
 * Hands one claimed forward to a destination: an HTTP endpoint or a broker
 * (NATS JetStream, RabbitMQ, Redis Streams). One per destination; it owns
 * that destination's connections.
 */
export interface Publisher {
  publish(claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult>;
  /** A broker's connection: its state and last error (an HTTP destination has none to show). */
  connection?(): ConnectionStatus;
  /** Closes the connections once what is in flight settled (or was aborted). */
  close(): Promise<void>;
}
