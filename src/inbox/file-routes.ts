import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { classifyMediaType } from '../body/media-type.js';
import { multipartFile } from '../body/parse-multipart.js';
import { ProblemError } from '../platform/errors/problem-catalogue.js';
import type { InboxStore } from '../deliveries/delivery-store.js';
import type { TokenGuard } from '../platform/http/auth.js';
import { attachmentDisposition, downloadContentType } from './file-download.js';
import { DeliveryRefParamsSchema, MAX_PARAM_LENGTH, ProblemSchema } from '../api/schemas.js';
import { deliveryOrNotFound } from '../deliveries/delivery-ref.js';

export interface FileRoutesOptions {
  store: InboxStore;
  guard: TokenGuard;
}

const FileParamsSchema = Type.Object({
  id: DeliveryRefParamsSchema.properties.id,
  index: Type.String({ maxLength: MAX_PARAM_LENGTH, description: "The file's place in the delivery's body.files, from 0" }),
});

/**
 * One file of a multipart delivery (CONTRACT 9: the file bytes stay in the
 * raw body): read out of the raw bytes again, sent as an attachment, its
 * type and name made safe (file-download.ts), never shown in place.
 */
export const fileRoutes: FastifyPluginAsyncTypebox<FileRoutesOptions> = async (app, { store, guard }) => {
  app.addHook('onRequest', guard.requireToken);
  app.get(
    '/api/deliveries/:id/files/:index',
    {
      schema: {
        description: "One file of a multipart delivery: its bytes as sent, as an attachment with the sender's file name",
        params: FileParamsSchema,
        response: {
          // For the document only: a Buffer is sent as it is, never serialized.
          200: Type.Unsafe<Buffer>({
            description:
              "The file's bytes. Content-Type is the part's own type when it is one that browsers never run (PNG, JPEG, PDF, plain text...), else application/octet-stream",
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          }),
          401: ProblemSchema,
          404: ProblemSchema,
          429: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const { id, index } = request.params;
      const delivery = await deliveryOrNotFound(store, id);
      const at = /^\d{1,6}$/.test(index) ? Number(index) : -1;
      const found =
        at >= 0 && classifyMediaType(delivery.contentType) === 'multipart' && delivery.parsedBody !== 'null'
          ? await multipartFile(delivery.raw, delivery.contentType, at)
          : undefined;
      if (found === undefined) {
        throw new ProblemError(
          'not_found',
          `The delivery has no file "${index.slice(0, 20)}": its body.files lists the files, from 0.`,
        );
      }
      return reply
        .header('content-type', downloadContentType(found.file.contentType))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('content-disposition', attachmentDisposition(found.file.filename, `${delivery.id}-file-${at}`))
        .send(found.bytes);
    },
  );
};
