import { Type, type Static } from 'typebox';

/** The config file's `alerts` (CONTRACT 11, docs/alerts.md): when a backlog is an issue, and who is told of issues. */

/** One `alerts.notify` entry: a destination's name, or the destination with the transform that shapes the event. */
export const NotifyRouteSchema = Type.Object(
  {
    to: Type.String({ minLength: 1 }),
    transform: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);
export const NotifyEntrySchema = Type.Union([Type.String({ minLength: 1 }), NotifyRouteSchema]);
export type NotifyEntryConfig = Static<typeof NotifyEntrySchema>;

/** The most notify destinations a config may name. */
export const MAX_NOTIFY = 100;

export const AlertsConfigSchema = Type.Object(
  {
    /** A destination whose oldest unsettled forward is older than this opens a `backlog` issue (300 when absent). */
    backlogSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 86_400 })),
    /** The destinations that receive `issue.opened` and `issue.resolved` events. */
    notify: Type.Optional(Type.Array(NotifyEntrySchema, { maxItems: MAX_NOTIFY })),
  },
  { additionalProperties: false },
);
export type AlertsConfig = Static<typeof AlertsConfigSchema>;
