import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempWorkspace } from './helpers.js';

const salesFixture = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'sales.csv');

/** A fresh workspace holding the bundled sales CSV at data/sales.csv. */
export async function salesWorkspace(): Promise<string> {
  const workspace = await tempWorkspace();
  await mkdir(join(workspace, 'data'));
  await copyFile(salesFixture, join(workspace, 'data', 'sales.csv'));
  return workspace;
}

/** Writes a chart list for data_visualization; returns its path. */
export async function writePlan(workspace: string, charts: unknown, name = 'charts.json'): Promise<string> {
  const path = join(workspace, name);
  await writeFile(path, JSON.stringify(charts));
  return path;
}
