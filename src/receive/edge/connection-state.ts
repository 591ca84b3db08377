import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ProblemCode } from '../../platform/errors/problem-catalogue.js';

/**
 * What the edge knows about one connection from one request to the next:
 * the answers Node is writing on it, the webhook requests pipelined on it,
 * a request answered before its body ended, and what Node's parser refused
 * there. One per connection, found by its socket through `Connections`; it
 * goes with the socket.
 */
export class ConnectionState {
  /**
   * Answers begun on this connection and not yet finished, in the order of
   * their requests, which is the order Node writes them in: the first is the
   * one being written (Node's own record of it is private).
   */
  private readonly unfinished: ServerResponse[] = [];

  /** The connection's latest webhook answer, and whether it may close the connection (see mayReadRequest). */
  private lastWebhookAnswer: ServerResponse | undefined;
  private lastWebhookAnswerMayClose = false;

  /**
   * The current request was answered before its body ended: the rest of its
   * body is being read and thrown away (discard-rest.ts), and a parser error
   * in it only closes the connection.
   */
  answeredEarly = false;

  /**
   * What the connection's request was answered here, when Node's parser cut
   * it while a route was reading its body: `request_timeout` (408), or a body
   * that broke HTTP halfway (a bad chunk: 400). The route logs that status.
   */
  refusal: ProblemCode | undefined;
  /** The detail of that answer, for the request's kept refusal. */
  refusalDetail: string | undefined;

  /** A parser refusal waits for the answer in flight to be written whole before it (parser-refusals.ts). */
  refusalWaits = false;

  constructor(private readonly socket: Socket) {}

  /** Registers the answer to a request that arrived on this connection; every request's answer is registered. */
  begin(res: ServerResponse): void {
    this.unfinished.push(res);
    // Node starts writing the next answer in its own 'finish' listener, added before this one.
    res.once('finish', () => {
      const at = this.unfinished.indexOf(res);
      if (at !== -1) this.unfinished.splice(at, 1);
    });
  }

  /** The answer being written on this connection (unfinished, first in line); none between requests. */
  answerInFlight(): ServerResponse | undefined {
    return this.unfinished[0];
  }

  /*
   * Webhook requests pipelined on one connection (HTTP/1.1 lets a client send
   * the next request before the answer to the one before): Node parses them
   * at once and writes their answers in order, but once one answer closes the
   * connection, the answers queued behind it are never written. A delivery
   * stored for such a request would be kept without its sender ever hearing
   * so, and sent again.
   *
   * Two answers close a connection: any answer while shutting down, which
   * therefore closes it only when no request is behind it (`hasRequestBehind`),
   * and a refusal of a request that asked `Expect: 100-continue` without being
   * sent `100 Continue` (Node closes those, the body not having been read). So
   * a request behind one that may close its connection waits until that answer
   * is out, and is not read at all when it closed the connection. Requests
   * behind any other answer are read at once and share commits as usual.
   */

  /**
   * Registers `res` as the connection's latest webhook answer, and tells
   * whether its request may be read: at once (true), or once the answer
   * before it is out (a promise of false when that answer closed the
   * connection).
   */
  mayReadRequest(res: ServerResponse, expectsContinue: boolean): Promise<boolean> | boolean {
    const before = this.lastWebhookAnswer;
    const beforeMayClose = this.lastWebhookAnswerMayClose;
    this.lastWebhookAnswer = res;
    this.lastWebhookAnswerMayClose = expectsContinue;
    if (before === undefined || before.writableFinished || before.destroyed) return this.isOpen();
    if (!beforeMayClose) return true;
    return new Promise((resolve) => {
      const done = (): void => {
        before.off('finish', done);
        before.off('close', done);
        // Node's own 'finish' listener, added first, has already ended the socket if that answer closes it.
        resolve(this.isOpen());
      };
      before.once('finish', done);
      before.once('close', done);
    });
  }

  /** True when another webhook request was pipelined behind `res` on this connection. */
  hasRequestBehind(res: ServerResponse): boolean {
    return this.lastWebhookAnswer !== undefined && this.lastWebhookAnswer !== res;
  }

  /** `res`, the latest webhook answer, closes the connection: a request that arrives behind it waits for it. */
  markClosing(res: ServerResponse): void {
    if (res === this.lastWebhookAnswer) this.lastWebhookAnswerMayClose = true;
  }

  private isOpen(): boolean {
    return !this.socket.destroyed && !this.socket.writableEnded;
  }
}

/** Each connection's state, by its socket, for as long as the socket lives. */
export class Connections {
  private readonly states = new WeakMap<Socket, ConnectionState>();

  of(socket: Socket): ConnectionState {
    let state = this.states.get(socket);
    if (state === undefined) {
      state = new ConnectionState(socket);
      this.states.set(socket, state);
    }
    return state;
  }
}
