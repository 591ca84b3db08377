import { classifyMediaType } from '../body/media-type.js';
import { JsonPaths, jsonStringsAt, pathKey, type JsonPath } from '../body/json-strings.js';
import { parseFormBody, type FormBody } from '../body/parse-form.js';
import type { EventTypeConfig } from '../config/source-config-schema.js';
import type { HeaderList } from '../platform/http/header-list.js';

/** What a delivery's event type is read from: the same when it is received and when an older one is filled in. */
export interface EventTypeSubject {
  /** The verification scheme of its source (`verification.scheme`), if any. */
  scheme: string | undefined;
  /** The headers as the delivery keeps them (redacted ones included as `[redacted]`). */
  headers: HeaderList;
  contentType: string;
  raw: Buffer;
  /** The form fields when the receiver has parsed them already, or a multipart body's fields (read as a form's). */
  form?: FormBody;
  /** A `text` body's JSON text, when it is JSON (as AWS SNS sends): read as a JSON body. */
  jsonText?: Buffer;
}

/** The longest event type kept; a longer one is cut (an index entry must stay small on every store). */
export const MAX_EVENT_TYPE_LENGTH = 256;

/** The body fields the rules below may read, all found in one pass over a JSON body. */
const TYPE: JsonPath = ['type'];
const EVENT: JsonPath = ['event'];
const EVENT_TYPE: JsonPath = ['eventType'];
const EVENT_UNDERSCORE_TYPE: JsonPath = ['event_type'];
const ACTION: JsonPath = ['action'];
const SLACK_INNER: JsonPath = ['event', 'type'];
const GENERIC: readonly JsonPath[] = [TYPE, EVENT, EVENT_TYPE, EVENT_UNDERSCORE_TYPE];
const RULE_PATHS: readonly JsonPath[] = [...GENERIC, ACTION, SLACK_INNER];
/** The paths read for a source without a `body` setting, made ready once. */
const DEFAULT_PATHS = new JsonPaths(RULE_PATHS);
/** The paths read for each `eventType` setting with a `body` path, made ready on its first delivery (a reload makes new settings). */
const settingPaths = new WeakMap<EventTypeConfig, { list: readonly JsonPath[]; ready: JsonPaths }>();

function pathsFor(setting: EventTypeConfig | undefined): { list: readonly JsonPath[]; ready: JsonPaths } {
  if (setting?.body === undefined) return { list: RULE_PATHS, ready: DEFAULT_PATHS };
  let paths = settingPaths.get(setting);
  if (paths === undefined) {
    const list = [...RULE_PATHS, settingPath(setting.body)];
    paths = { list, ready: new JsonPaths(list) };
    settingPaths.set(setting, paths);
  }
  return paths;
}

/**
 * A delivery's event type (CONTRACT 8), or null: from what its scheme
 * carries (GitHub `X-GitHub-Event` with the body's `action` as
 * `pull_request.opened`; Stripe's and Standard Webhooks' body `type`;
 * Shopify `X-Shopify-Topic`; Slack's `event.type`, else `type`; Zoom's
 * `event`); else from the source's own `eventType` setting (a header, or a
 * dotted path into the body; null when it is missing: no fallback); else
 * the `X-GitHub-Event` (with `action`) or `X-Shopify-Topic` header; else the
 * first of the body's `type`, `event`, `eventType`, `event_type` that is a
 * string. An empty string is no type; NUL and lone surrogates become U+FFFD
 * (PostgreSQL's text holds neither), and a type is cut to 256 characters.
 */
export function eventTypeOf(subject: EventTypeSubject, setting?: EventTypeConfig): string | null {
  const body = new BodyFields(subject, setting);
  return clean(rawEventType(subject, setting, body));
}

function rawEventType(subject: EventTypeSubject, setting: EventTypeConfig | undefined, body: BodyFields): string | undefined {
  const { headers } = subject;
  switch (subject.scheme) {
    case 'github':
      return github(headers, body);
    case 'stripe':
    case 'standard-webhooks':
      return body.get(TYPE);
    case 'shopify':
      return header(headers, 'x-shopify-topic');
    case 'zoom':
      return body.get(EVENT);
    case 'slack':
      return body.get(SLACK_INNER) ?? body.get(TYPE);
    default:
      break;
  }
  if (setting?.header !== undefined) return header(headers, setting.header.toLowerCase());
  if (setting?.body !== undefined) return body.get(settingPath(setting.body));
  return github(headers, body) ?? header(headers, 'x-shopify-topic') ?? firstOf(GENERIC, body);
}

function firstOf(paths: readonly JsonPath[], body: BodyFields): string | undefined {
  for (const path of paths) {
    const value = body.get(path);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `X-GitHub-Event`, with the body's `action` as `pull_request.opened`. */
function github(headers: HeaderList, body: BodyFields): string | undefined {
  const event = header(headers, 'x-github-event');
  if (event === undefined) return undefined;
  const action = body.get(ACTION) ?? body.formPayload(ACTION);
  return action === undefined ? event : `${event}.${action}`;
}

/** The first value of the header `name` (lower case), or undefined when it is absent or empty. */
function header(headers: HeaderList, name: string): string | undefined {
  for (const [key, value] of headers) {
    if (key.length === name.length && key.toLowerCase() === name) return value === '' ? undefined : value;
  }
  return undefined;
}

/** The setting's `body` path: `data.kind` is the key `kind` of the object under `data`. */
function settingPath(path: string): JsonPath {
  return path.split('.');
}

// eslint-disable-next-line no-control-regex
const UNHOLDABLE = /\u0000|\p{Cs}/gu;

/** An event type as stored: an empty one is none, NUL and lone surrogates are U+FFFD, at most 256 characters. */
export function keptEventType(type: string): string | null {
  return clean(type);
}

function clean(type: string | undefined): string | null {
  if (type === undefined || type === '') return null;
  const cut = type.length <= MAX_EVENT_TYPE_LENGTH ? type : type.slice(0, MAX_EVENT_TYPE_LENGTH);
  // A pair cut in half leaves a lone surrogate: replaced with the others.
  return cut.replace(UNHOLDABLE, '\ufffd');
}

/**
 * The body's string fields that the rules ask for, read once, on the first
 * ask: from a JSON body without parsing it (json-strings.ts), from a form
 * by field name (a form's keys are literal: the setting `data.kind` names the
 * field `data.kind`).
 */
class BodyFields {
  private fields: Map<string, string> | undefined;
  /** The form's fields, once read (a form or multipart body only). */
  private form: FormBody | undefined;
  private readonly paths: { list: readonly JsonPath[]; ready: JsonPaths };

  constructor(
    private readonly subject: EventTypeSubject,
    setting: EventTypeConfig | undefined,
  ) {
    this.paths = pathsFor(setting);
  }

  get(path: JsonPath): string | undefined {
    this.fields ??= this.read();
    return this.fields.get(pathKey(path));
  }

  /**
   * A string field of the JSON in a form's `payload` field: how GitHub sends
   * a webhook whose content type is `application/x-www-form-urlencoded`
   * (`payload=<the JSON, URL-encoded>`).
   */
  formPayload(path: JsonPath): string | undefined {
    this.fields ??= this.read();
    const payload = this.form?.payload;
    const text = Array.isArray(payload) ? payload[0] : payload;
    if (typeof text !== 'string') return undefined;
    return jsonStringsAt(Buffer.from(text, 'utf8'), [path]).get(pathKey(path));
  }

  private read(): Map<string, string> {
    const { contentType, raw, form, jsonText } = this.subject;
    if (jsonText !== undefined) return jsonStringsAt(jsonText, this.paths.ready);
    const kind = classifyMediaType(contentType);
    if (kind === 'json') return jsonStringsAt(raw, this.paths.ready);
    const fields = new Map<string, string>();
    if (kind !== 'form' && form === undefined) return fields;
    let parsed = form;
    try {
      parsed ??= parseFormBody(raw);
    } catch {
      return fields;
    }
    this.form = parsed;
    for (const path of this.paths.list) {
      const value = Object.hasOwn(parsed, path.join('.')) ? parsed[path.join('.')] : undefined;
      const first = Array.isArray(value) ? value[0] : value;
      if (typeof first === 'string') fields.set(pathKey(path), first);
    }
    return fields;
  }
}
