// Every error class any @openmanus package exports (from every entry point of its package.json) is
// of the one family: it extends core's OpenManusError and owns codes no other class has.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OpenManusError } from '@openmanus/core';
import { describe, expect, it } from 'vitest';

const packagesDir = join(import.meta.dirname, '..', '..', '..', 'packages');

interface Manifest {
  readonly name: string;
  readonly exports: Readonly<Record<string, { readonly import: { readonly default: string } }>>;
}

/** Each package's entry points, as files of its build. */
const entries = readdirSync(packagesDir).flatMap((dir) => {
  const manifest: Manifest = JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8'));
  return Object.entries(manifest.exports).map(([subpath, conditions]) => ({
    entry: join(manifest.name, subpath),
    file: join(packagesDir, dir, conditions.import.default),
  }));
});

type ErrorClass = (abstract new (...args: never[]) => Error) & { readonly codes?: readonly string[] };

const isErrorClass = (value: unknown): value is ErrorClass =>
  typeof value === 'function' && value.prototype instanceof Error;

/** The error classes exported anywhere, each once (core's root entry re-exports its kernel's). */
async function exportedErrorClasses(): Promise<Map<ErrorClass, string>> {
  const found = new Map<ErrorClass, string>();
  for (const { entry, file } of entries) {
    const module: Record<string, unknown> = await import(pathToFileURL(file).href);
    for (const [name, value] of Object.entries(module)) {
      if (isErrorClass(value) && !found.has(value)) found.set(value, `${entry} ${name}`);
    }
  }
  return found;
}

describe('the error family', () => {
  it('walks every package', () => {
    const names = new Set(entries.map(({ entry }) => entry.split('/').slice(0, 2).join('/')));
    expect([...names].sort()).toEqual(
      [
        '@openmanus/a2a',
        '@openmanus/browser',
        '@openmanus/core',
        '@openmanus/durable',
        '@openmanus/flow',
        '@openmanus/mcp',
        '@openmanus/sandbox',
        '@openmanus/server',
        '@openmanus/sqlite',
        '@openmanus/tools',
        '@openmanus/tracing',
      ].sort(),
    );
  });

  it('every exported error class extends OpenManusError, under its own name, with codes of its own', async () => {
    const classes = await exportedErrorClasses();
    // The base and the 14 classes exported today (the others are met only through the base's code).
    expect(classes.size).toBeGreaterThanOrEqual(15);
    const owners = new Map<string, string>();
    for (const [errorClass, where] of classes) {
      if (errorClass === OpenManusError) continue;
      expect(errorClass.prototype, where).toBeInstanceOf(OpenManusError);
      expect(where.endsWith(` ${errorClass.name}`), `${where} is exported under its class name`).toBe(true);
      expect(errorClass.codes?.length, `${where} lists its codes`).toBeGreaterThan(0);
      for (const code of errorClass.codes ?? []) {
        expect(owners.get(code), `${code} of ${where}`).toBeUndefined();
        owners.set(code, where);
        expect(code).toMatch(/^[A-Z][A-Z_]*[A-Z]$/);
      }
    }
  });
});
