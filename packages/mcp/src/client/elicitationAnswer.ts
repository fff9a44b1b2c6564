import type { ElicitationAnswer, JsonSchema } from '@openmanus/core';

// MCP's requested schemas are flat: an object whose properties are strings (with a format, bounds or
// an enum), numbers, integers, booleans, or arrays of enum values (a multi-select). An answer is
// checked here, by hand, rather than by compiling the server's schema (Ajv keeps every schema it
// compiles, and a server may send any number of them).

type Property = Readonly<Record<string, unknown>>;

/** A form's fields, as its schema gives them. */
export const propertiesOf = (schema: JsonSchema): Readonly<Record<string, Property>> => {
  const properties = (schema as { properties?: unknown }).properties;
  return typeof properties === 'object' && properties !== null ? (properties as Record<string, Property>) : {};
};

/**
 * `content` with the schema's defaults for the fields it leaves out (SEP-1034: a person who
 * accepts a form without touching a field accepts its default).
 */
export function withSchemaDefaults(schema: JsonSchema, content: ElicitationAnswer): ElicitationAnswer {
  const filled: Record<string, ElicitationAnswer[string]> = { ...content };
  for (const [key, property] of Object.entries(propertiesOf(schema))) {
    if (filled[key] === undefined && property.default !== undefined) {
      filled[key] = property.default as ElicitationAnswer[string];
    }
  }
  return filled;
}

/** Why `content` does not match the requested schema, or `undefined` when it does. */
export function checkElicitationAnswer(schema: JsonSchema, content: ElicitationAnswer): string | undefined {
  const properties = propertiesOf(schema);
  const required = (schema as { required?: unknown }).required;
  for (const key of Array.isArray(required) ? required : []) {
    if (typeof key === 'string' && content[key] === undefined) return `"${key}" is required`;
  }
  for (const [key, value] of Object.entries(content)) {
    const property = properties[key];
    if (!property) return `"${key}" is not a field of the form`;
    const problem = checkValue(property, value);
    if (problem !== undefined) return `"${key}" ${problem}`;
  }
  return undefined;
}

/** The values an enum property allows: `enum`, or the `const` of each `oneOf` / `anyOf` entry. */
function allowedOf(property: Property): readonly unknown[] | undefined {
  if (Array.isArray(property.enum)) return property.enum;
  const options = Array.isArray(property.oneOf) ? property.oneOf : Array.isArray(property.anyOf) ? property.anyOf : [];
  const consts = options.flatMap((option: unknown) =>
    typeof option === 'object' && option !== null && 'const' in option ? [(option as { const: unknown }).const] : [],
  );
  return consts.length > 0 ? consts : undefined;
}

/** The string formats MCP's forms use (besides `uri`), and what a value of each must look like. */
const FORMATS: Readonly<Record<string, { readonly pattern: RegExp; readonly what: string }>> = {
  email: { pattern: /^[^\s@]+@[^\s@]+$/, what: 'an email address' },
  date: { pattern: /^\d{4}-\d{2}-\d{2}$/, what: 'a date (YYYY-MM-DD)' },
  'date-time': {
    pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i,
    what: 'a date and time (ISO 8601)',
  },
};

function checkValue(property: Property, value: unknown): string | undefined {
  const num = (key: string) => (typeof property[key] === 'number' ? (property[key] as number) : undefined);
  switch (property.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be a string';
      const allowed = allowedOf(property);
      if (allowed && !allowed.includes(value)) return `must be one of ${JSON.stringify(allowed)}`;
      const min = num('minLength');
      const max = num('maxLength');
      if (min !== undefined && value.length < min) return `must have at least ${min} characters`;
      if (max !== undefined && value.length > max) return `must have at most ${max} characters`;
      const format = typeof property.format === 'string' ? property.format : undefined;
      if (format === 'uri' && !URL.canParse(value)) return 'must be a URI';
      const known = format ? FORMATS[format] : undefined;
      if (known && !known.pattern.test(value)) return `must be ${known.what}`;
      return undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (property.type === 'integer' && !Number.isInteger(value)) return 'must be an integer';
      const min = num('minimum');
      const max = num('maximum');
      if (min !== undefined && value < min) return `must be at least ${min}`;
      if (max !== undefined && value > max) return `must be at most ${max}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'array': {
      if (!Array.isArray(value)) return 'must be a list';
      const items = typeof property.items === 'object' && property.items !== null ? (property.items as Property) : {};
      const allowed = allowedOf(items);
      const wrong = value.find(
        (item) => typeof item !== 'string' || (allowed !== undefined && !allowed.includes(item)),
      );
      if (wrong !== undefined) return `has ${JSON.stringify(wrong)}, which is not one of its options`;
      const min = num('minItems');
      const max = num('maxItems');
      if (min !== undefined && value.length < min) return `must have at least ${min} items`;
      if (max !== undefined && value.length > max) return `must have at most ${max} items`;
      return undefined;
    }
    default:
      return 'has a type this client cannot check';
  }
}
