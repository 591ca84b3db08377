import { Type, type Static } from 'typebox';

/** A transform's name: like a destination's, 1 to 64 letters, digits, ".", "_" or "-", beginning with a letter or digit. */
export const TRANSFORM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The longest deadline and the largest heap a transform may have. */
export const MAX_TIMEOUT_MS = 10_000;
export const MAX_MEMORY_MB = 256;

/** One entry of the config's `transforms` (CONTRACT 10): its code (a file, or inline) and its limits. */
export const TransformConfigSchema = Type.Object(
  {
    /** The module's file, relative to the config file. */
    file: Type.Optional(Type.String({ minLength: 1 })),
    /** The module's code, inline. */
    code: Type.Optional(Type.String({ minLength: 1 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS })),
    memoryMb: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MEMORY_MB })),
  },
  { additionalProperties: false },
);
export type TransformConfig = Static<typeof TransformConfigSchema>;
