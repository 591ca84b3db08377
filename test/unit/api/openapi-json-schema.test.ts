import { describe, expect, it } from 'vitest';
import { documentSchemasTo2020, toJsonSchema2020 } from '../../../src/api/openapi-json-schema.js';

describe('TypeBox tuples in the OpenAPI document as JSON Schema 2020-12', () => {
  it('turns items: [...] into prefixItems, and additionalItems into items, however deep', () => {
    const schema = {
      type: 'object',
      properties: {
        headers: {
          type: 'array',
          items: { type: 'array', additionalItems: false, items: [{ type: 'string' }, { type: 'string' }], minItems: 2 },
        },
        response: { anyOf: [{ type: 'array', items: [{ type: 'integer' }] }, { type: 'null' }] },
      },
    };
    toJsonSchema2020(schema);
    expect(schema.properties.headers.items).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'string' }],
      items: false,
      minItems: 2,
    });
    // No additionalItems: further items stay allowed, as in draft-07.
    expect(schema.properties.response.anyOf[0]).toEqual({ type: 'array', prefixItems: [{ type: 'integer' }] });
  });

  it("leaves an example's own `items` array alone", () => {
    const example = { items: [{ id: 'a' }], nextCursor: null };
    const doc = {
      paths: {
        '/api/things': {
          get: {
            responses: {
              200: {
                content: {
                  'application/json': {
                    schema: { type: 'object', properties: { items: { type: 'array', items: [{ type: 'object' }] } } },
                    example,
                  },
                },
              },
            },
          },
        },
      },
    };
    documentSchemasTo2020(doc);
    const media = doc.paths['/api/things'].get.responses[200].content['application/json'];
    expect(media.example).toEqual({ items: [{ id: 'a' }], nextCursor: null });
    expect(media.schema.properties.items).toEqual({ type: 'array', prefixItems: [{ type: 'object' }] });
  });
});
