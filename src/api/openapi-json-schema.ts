/**
 * OpenAPI 3.1 schemas are JSON Schema 2020-12, but TypeBox and Fastify's Ajv
 * speak draft-07: a `Type.Tuple` is `items: [...]` with `additionalItems`,
 * which 2020-12 spells `prefixItems` and `items`. The routes keep draft-07
 * (that is what validates and serializes them); the document gets the
 * 2020-12 form, rewritten here.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords whose value is one schema. */
const ONE = ['items', 'additionalItems', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];
/** Keywords whose value is a list of schemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value is a map of name to schema. */
const MAP = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];

/**
 * Rewrites one schema and those inside it, in place: a tuple's `items: [...]`
 * becomes `prefixItems`, and its `additionalItems` becomes `items`. Only
 * schema keywords are followed, so an `example` or a `default` that has an
 * `items` array is left as it is.
 */
export function toJsonSchema2020(schema: unknown): void {
  if (!isObject(schema)) return;
  const { items } = schema;
  if (Array.isArray(items)) {
    schema.prefixItems = items;
    const rest = schema.additionalItems;
    delete schema.items;
    delete schema.additionalItems;
    if (rest !== undefined) schema.items = rest;
  }
  for (const key of ONE) toJsonSchema2020(schema[key]);
  for (const key of LIST) {
    const list = schema[key];
    if (Array.isArray(list)) for (const item of list) toJsonSchema2020(item);
  }
  for (const key of MAP) {
    const map = schema[key];
    if (isObject(map)) for (const item of Object.values(map)) toJsonSchema2020(item);
  }
}

/** Every schema of an OpenAPI document's media types, parameters and headers, and its components. */
export function documentSchemasTo2020(doc: { paths?: object; components?: object }): void {
  const each = (value: unknown): JsonObject[] => (isObject(value) ? Object.values(value) : []).filter(isObject);
  const list = (value: unknown): JsonObject[] => (Array.isArray(value) ? value.filter(isObject) : []);
  const inContent = (holder: JsonObject): void => {
    for (const media of each(holder.content)) toJsonSchema2020(media.schema);
  };
  const inParameters = (holder: JsonObject): void => {
    for (const parameter of list(holder.parameters)) {
      toJsonSchema2020(parameter.schema);
      inContent(parameter);
    }
  };
  const inHeaders = (holder: JsonObject): void => {
    for (const header of each(holder.headers)) {
      toJsonSchema2020(header.schema);
      inContent(header);
    }
  };
  for (const pathItem of each(doc.paths)) {
    inParameters(pathItem);
    for (const operation of Object.values(pathItem).filter(isObject)) {
      inParameters(operation);
      if (isObject(operation.requestBody)) inContent(operation.requestBody);
      for (const response of each(operation.responses)) {
        inContent(response);
        inHeaders(response);
      }
    }
  }
  const components = doc.components as JsonObject | undefined;
  for (const schema of each(components?.schemas)) toJsonSchema2020(schema);
  for (const parameter of each(components?.parameters)) toJsonSchema2020(parameter.schema);
  for (const response of each(components?.responses)) {
    inContent(response);
    inHeaders(response);
  }
  for (const body of each(components?.requestBodies)) inContent(body);
}
