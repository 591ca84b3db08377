import type { ConfigFile, EventTypeConfig, HandshakeConfig, SourceConfig } from '../config/source-config-schema.js';
import { createVerifier } from '../verify/create-verifier.js';
import type { Verifier } from '../verify/verifier.js';
import { compileRoutes, type Route } from '../forwarding/routes.js';
import { RateLimiter } from './rate-limiter.js';
import { ACCEPT_KINDS, DEFAULT_ACCEPT, type AcceptKind } from '../body/media-type.js';
import { compileAnswer, type CustomAnswer } from './custom-answer.js';

/** What a source may change about receiving. */
export interface SourcePolicy {
  maxBodyBytes: number;
  /** Accept any JSON value at the top level, not only objects. */
  anyJson: boolean;
}

/** Everything the receiver needs to know about one source, resolved from the config file. */
export interface SourceRule {
  policy: SourcePolicy;
  /** The kinds of body taken (CONTRACT 9). */
  accept: readonly AcceptKind[];
  /** What a stored delivery is answered, when not section 1's JSON (CONTRACT 9). */
  answer?: CustomAnswer;
  verifier?: Verifier;
  /** `keep`: a delivery that fails verification is stored as failed (and still answered 401). */
  onFailure: 'reject' | 'keep';
  /** Lower-case header name whose value identifies a delivery for deduplication. */
  dedupHeader?: string;
  handshake?: HandshakeConfig;
  /**
   * The secrets a handshake may answer with (Zoom, X): the handshake's own
   * `secret`, else the zoom scheme's secrets, in the configured order.
   */
  handshakeSecrets?: readonly string[];
  rateLimiter?: RateLimiter;
  /** Where its deliveries are forwarded (CONTRACT 6); empty: nowhere. */
  routes: readonly Route[];
  /** Where its event type is read when its scheme does not say (CONTRACT 8). */
  eventType?: EventTypeConfig;
}

/** The rules in force: the config file resolved, swapped whole on reload. */
export class SourceRules {
  private readonly rules = new Map<string, SourceRule>();
  private readonly unconfigured: SourceRule;

  /** Throws `SourceRuleError` naming the source when a rule cannot be built. */
  constructor(
    readonly strict: boolean,
    defaults: SourcePolicy,
    sources: Record<string, SourceConfig> = {},
    /** Sources the file does not name take every body (RECEPTION_ACCEPT_ANY=on). */
    acceptAny = false,
  ) {
    this.unconfigured = {
      policy: { ...defaults, anyJson: acceptAny || defaults.anyJson },
      accept: acceptAny ? ACCEPT_KINDS : DEFAULT_ACCEPT,
      onFailure: 'reject',
      routes: [],
    };
    for (const [name, config] of Object.entries(sources)) {
      try {
        this.rules.set(name, resolveRule(config, defaults));
      } catch (error) {
        throw new SourceRuleError(`sources.${name}.${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  static fromConfig(config: ConfigFile | undefined, defaults: SourcePolicy, acceptAny = false): SourceRules {
    return new SourceRules(config?.strict ?? false, defaults, config?.sources ?? {}, acceptAny);
  }

  /** The source's rule; undefined when strict mode refuses a source the file does not name. */
  forSource(name: string): SourceRule | undefined {
    return this.rules.get(name) ?? (this.strict ? undefined : this.unconfigured);
  }

  get configuredSources(): string[] {
    return [...this.rules.keys()];
  }
}

function resolveRule(config: SourceConfig, defaults: SourcePolicy): SourceRule {
  const rule: SourceRule = {
    policy: {
      maxBodyBytes: config.maxBodyBytes ?? defaults.maxBodyBytes,
      anyJson: config.anyJson ?? defaults.anyJson,
    },
    accept: config.accept ?? DEFAULT_ACCEPT,
    onFailure: config.onFailure ?? 'reject',
    routes: compileRoutes(config.forward),
  };
  if (config.verify !== undefined) rule.verifier = createVerifier(config.verify);
  if (config.eventType !== undefined) rule.eventType = config.eventType;
  if (config.dedup !== undefined) rule.dedupHeader = config.dedup.header.toLowerCase();
  if (config.handshake !== undefined) {
    rule.handshake = config.handshake;
    if (config.handshake.secret !== undefined) rule.handshakeSecrets = [config.handshake.secret];
    else if (config.verify?.scheme === 'zoom') rule.handshakeSecrets = config.verify.secrets;
  }
  if (config.response !== undefined) rule.answer = compileAnswer(config.response);
  if (config.rateLimit !== undefined) rule.rateLimiter = new RateLimiter(config.rateLimit.requests, config.rateLimit.perSeconds);
  return rule;
}

export class SourceRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceRuleError';
  }
}
