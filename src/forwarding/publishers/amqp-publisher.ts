import type { ChannelModel, ConfirmChannel, Message } from 'amqplib';
import type { NameTemplate } from '../name-template.js';
import type { ClaimedForward } from '../outbox/outbox.js';
import { bareHost, brokerLookup, checkLiteralHost } from './broker-address.js';
import type { OpenedConnection } from './broker-connection.js';
import { renderName } from './broker-names.js';
import {
  ABORTED,
  attemptTimer,
  BrokerPublisher,
  describeBrokerError,
  failed,
  PUBLISHED,
  type BrokerPublisherOptions,
} from './broker-publisher.js';
import { unlessAborted } from './unless-aborted.js';
import type { Destination } from '../destination.js';
import type { PublishResult } from './publisher.js';

/** A publish waiting for its confirm; `returned` once the broker handed it back unroutable. */
interface Pending {
  messageId: string;
  returned: boolean;
}

interface AmqpHandle {
  model: ChannelModel;
  channel: ConfirmChannel;
  /** In publish order: a `basic.return` comes before the confirm of the message it returns. */
  pending: Pending[];
  /** Why the server closed the channel (a missing exchange), for the publishes it took down. */
  channelError?: string;
}

/**
 * Publishes forwards to RabbitMQ (AMQP 0-9-1, CONTRACT 7) on a confirm
 * channel: persistent messages with the raw body bytes, `messageId` set to
 * the delivery id, and `mandatory`, so that a message no queue takes comes
 * back and is a failed attempt that says so. Success is the publisher
 * confirm. A missing exchange makes the server close the channel: the
 * attempts on it fail with its reason, and the connection is opened again.
 */
export class AmqpPublisher extends BrokerPublisher<AmqpHandle> {
  private readonly exchange: string;
  private readonly routingKey: NameTemplate;

  constructor(destination: Destination, options: BrokerPublisherOptions) {
    const { settings, template } = BrokerPublisher.brokerSettings(destination, 'amqp', (amqp) => amqp.routingKey);
    super(destination, options, settings.url, async (handle) => {
      await handle.channel.waitForConfirms().catch(() => undefined);
      await handle.model.close();
    });
    this.exchange = settings.exchange;
    this.routingKey = template;
  }

  protected async send(handle: AmqpHandle, claimed: ClaimedForward, signal: AbortSignal): Promise<PublishResult> {
    const { delivery } = claimed;
    const { timeoutMs } = this.destination;
    const eventType = delivery.eventType ?? null;
    const routingKey = renderName(this.routingKey, 'amqp', { source: delivery.source, eventType });
    if (Buffer.byteLength(routingKey) > 255)
      return failed(`the routing key is longer than 255 bytes (${Buffer.byteLength(routingKey)})`);
    const entry: Pending = { messageId: delivery.id, returned: false };
    const timer = attemptTimer(timeoutMs);
    const confirmed = new Promise<Error | null>((resolve) => {
      void timer.expired.then(() => resolve(new Error(`timeout: no publisher confirm within ${timeoutMs} ms`)));
      try {
        handle.pending.push(entry);
        handle.channel.publish(
          this.exchange,
          routingKey,
          delivery.raw,
          {
            persistent: true,
            mandatory: true,
            messageId: delivery.id,
            // A short string of AMQP holds 255 bytes: a longer Content-Type is left out rather than cut.
            ...(Buffer.byteLength(delivery.contentType) <= 255 ? { contentType: delivery.contentType } : {}),
            timestamp: Math.floor(delivery.receivedAt / 1000),
            headers: {
              // A transform's headers join the message's metadata (CONTRACT 10); its body is `delivery.raw` already.
              ...claimed.transformHeaders,
              source: delivery.source,
              eventType: eventType ?? '',
              receivedAt: new Date(delivery.receivedAt).toISOString(),
            },
          },
          (error: unknown) => resolve(error === null || error === undefined ? null : toError(error)),
        );
      } catch (error) {
        resolve(toError(error));
      }
    });
    try {
      const outcome = await unlessAborted(confirmed, signal);
      if (outcome === 'aborted') return failed(ABORTED);
      if (outcome !== null) {
        const reason = handle.channelError ?? describeBrokerError(outcome, this.url);
        return failed(/channel closed/i.test(outcome.message) ? `not confirmed: ${reason}` : reason);
      }
      if (entry.returned) {
        return failed(
          `unroutable: no queue is bound to exchange ${JSON.stringify(this.exchange)} for routing key ${JSON.stringify(routingKey)} (the broker returned the message)`,
        );
      }
      return PUBLISHED;
    } finally {
      timer.clear();
      const at = handle.pending.indexOf(entry);
      if (at !== -1) handle.pending.splice(at, 1);
    }
  }

  protected async open(): Promise<OpenedConnection<AmqpHandle>> {
    const { allowPrivateNetwork, timeoutMs } = this.destination;
    checkLiteralHost(bareHost(this.url), allowPrivateNetwork);
    const lookup = brokerLookup(allowPrivateNetwork);
    // Loaded with the first connection: a server without AMQP destinations never loads it.
    const amqp = await import('amqplib');
    const model = await amqp.connect(this.url.href, { timeout: timeoutMs, ...(lookup === undefined ? {} : { lookup }) });
    let handle: AmqpHandle | undefined;
    const lost = new Promise<unknown>((resolve) => {
      // Without a listener, an 'error' event would end the process; the 'close' that follows says it.
      model.on('error', () => undefined);
      model.once('close', (error?: Error) => resolve(error));
    });
    try {
      const channel = await model.createConfirmChannel();
      const opened: AmqpHandle = { model, channel, pending: [] };
      handle = opened;
      channel.on('error', (error: Error) => {
        opened.channelError = describeBrokerError(error, this.url);
      });
      channel.on('return', (message: Message) => {
        const id: unknown = message.properties.messageId;
        const entry = opened.pending.find((p) => p.messageId === id && !p.returned);
        if (entry !== undefined) entry.returned = true;
      });
      const channelLost = new Promise<unknown>((resolve) => {
        channel.once('close', () => resolve(new Error(opened.channelError ?? 'the broker closed the channel')));
      });
      return { handle: opened, lost: Promise.race([lost, channelLost]) };
    } catch (error) {
      if (handle === undefined) await model.close().catch(() => undefined);
      throw error;
    }
  }
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
