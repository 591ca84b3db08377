import { Type } from 'typebox';

/** The transforms API's shapes (CONTRACT 10): validation, serialization and the OpenAPI document. */

export const TransformListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      name: Type.String(),
      version: Type.String({ description: "the first 12 hex digits of the SHA-256 of the transform's code" }),
      timeoutMs: Type.Integer({ description: 'the deadline of one run' }),
      memoryMb: Type.Integer({ description: "the limit of the transform's heap" }),
      usedBy: Type.Array(Type.Object({ source: Type.String(), destination: Type.String() }), {
        description: 'the routes (`sources.<source>.forward[]`) that name this transform',
      }),
    }),
  ),
});

export const TransformParamsSchema = Type.Object({ name: Type.String({ maxLength: 1000 }) });

export const TransformRunBodySchema = Type.Object(
  { deliveryId: Type.String({ minLength: 1, maxLength: 1000, description: "the delivery's id or seq" }) },
  { additionalProperties: false },
);

const Logs = Type.Array(Type.String(), { description: 'what the transform wrote with console.log, the first 20 lines' });

export const TransformRunSchema = Type.Union([
  Type.Object({
    output: Type.Union(
      [
        Type.Object({
          body: Type.Optional(Type.Unknown({ description: 'absent: the raw bytes are sent as received' })),
          headers: Type.Optional(Type.Record(Type.String(), Type.String())),
        }),
        Type.Null(),
      ],
      { description: 'null: the forward would be dropped (cancelled), nothing sent' },
    ),
    logs: Logs,
    durationMs: Type.Number(),
    version: Type.String({ description: 'the version of the transform that ran' }),
  }),
  Type.Object({
    error: Type.String({
      description: 'why the run failed: a throw, its time or memory limit, an output that is not { body, headers }',
    }),
    logs: Logs,
    durationMs: Type.Number(),
    version: Type.String(),
  }),
]);
