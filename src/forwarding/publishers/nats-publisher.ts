import type { JetStreamClient } from '@nats-io/jetstream';
import type * as NatsClient from '@nats-io/transport-node';
import type { NatsConnection, TlsOptions } from '@nats-io/transport-node';
import type { NameTemplate } from '../name-template.js';
import type { ClaimedForward } from '../outbox/outbox.js';
import { bareHost, guardedAddress } from './broker-address.js';
import type { OpenedConnection } from './broker-connection.js';
import { renderName } from './broker-names.js';
import {
  ABORTED,
  BrokerPublisher,
  describeBrokerError,
  failed,
  PUBLISHED,
  type BrokerPublisherOptions,
} from './broker-publisher.js';
import { unlessAborted } from './unless-aborted.js';
import type { Destination } from '../destination.js';
import type { PublishResult } from './publisher.js';

interface NatsHandle {
  nc: NatsConnection;
  js: JetStreamClient;
  /** The client's module, loaded with the first connection (a server without NATS destinations never loads it). */
  client: typeof NatsClient;
}

/**
 * Publishes forwards to NATS JetStream (CONTRACT 7): the raw body bytes on
 * the destination's subject, with `Nats-Msg-Id` set to the delivery id so
 * that JetStream's duplicate window drops a repeat, and the metadata as
 * headers. Success is the stream's publish ack; a subject that no stream
 * takes gets no answer at all, which is a failed attempt that says so.
 */
export class NatsPublisher extends BrokerPublisher<NatsHandle> {
  private readonly subject: NameTemplate;

  constructor(destination: Destination, options: BrokerPublisherOptions) {
    const { settings, template } = BrokerPublisher.brokerSettings(destination, 'nats', (nats) => nats.subject);
    super(destination, options, settings.url, (handle) => handle.nc.close());
    this.subject = template;
  }

  protected async send(handle: NatsHandle, claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult> {
    const { delivery } = claimed;
    const { timeoutMs } = this.destination;
    const eventType = delivery.eventType ?? null;
    const subject = renderName(this.subject, 'nats', { source: delivery.source, eventType });
    const headers = handle.client.headers();
    // A header line carries no line break: the values go percent-encoded, as x-reception-source does over HTTP.
    headers.set('Reception-Source', encodeURIComponent(delivery.source));
    headers.set('Reception-Event-Type', encodeURIComponent(eventType ?? ''));
    headers.set('Reception-Received-At', new Date(delivery.receivedAt).toISOString());
    headers.set('Content-Type', delivery.contentType);
    // A transform's headers join the message's metadata (CONTRACT 10); its body is `delivery.raw` already.
    for (const [name, value] of Object.entries(claimed.transformHeaders ?? {})) headers.set(name, value);
    try {
      const answer = await unlessAborted(
        handle.js.publish(subject, delivery.raw, { msgID: delivery.id, headers, timeout: timeoutMs }),
        signal,
      );
      if (answer === 'aborted') return failed(ABORTED);
      return PUBLISHED;
    } catch (error) {
      if (noResponders(error, handle.client.errors)) {
        return failed(
          `no JetStream stream takes the subject ${JSON.stringify(subject)} (Reception declares nothing: add the subject to a stream)`,
        );
      }
      if (error instanceof handle.client.errors.TimeoutError) return failed(`timeout: no JetStream ack within ${timeoutMs} ms`);
      return failed(describeBrokerError(error, this.url));
    }
  }

  protected async open(): Promise<OpenedConnection<NatsHandle>> {
    const host = bareHost(this.url);
    const address = await guardedAddress(host, this.destination.allowPrivateNetwork);
    const server = `${address.includes(':') ? `[${address}]` : address}:${this.url.port === '' ? '4222' : this.url.port}`;
    const user = decodeURIComponent(this.url.username);
    const pass = decodeURIComponent(this.url.password);
    const client = await import('@nats-io/transport-node');
    const { jetstream } = await import('@nats-io/jetstream');
    const nc = await client.connect({
      servers: server,
      name: 'reception',
      // This destination's BrokerConnection reconnects (through the guard), not the client;
      // and the servers a cluster advertises are never added to the ones the config names.
      reconnect: false,
      ignoreClusterUpdates: true,
      resolve: false,
      timeout: this.destination.timeoutMs,
      ...(pass !== '' ? { user, pass } : user !== '' ? { token: user } : {}),
      // Connected by address, the certificate is still checked for the name (the client passes its TLS options on to node:tls).
      ...(this.url.protocol === 'tls:' ? { tls: address === host ? {} : ({ servername: host } as TlsOptions) } : {}),
    });
    return { handle: { nc, js: jetstream(nc, { timeout: this.destination.timeoutMs }), client }, lost: nc.closed() };
  }
}

/** No one answered the publish: no stream takes the subject (the client calls it "jetstream is not enabled"). */
function noResponders(error: unknown, errors: typeof NatsClient.errors): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof errors.NoRespondersError) return true;
    if (current instanceof errors.RequestError && current.isNoResponders()) return true;
    current = current.cause;
  }
  return false;
}
