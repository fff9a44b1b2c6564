export type { PruneOptions } from './prune.js';
export { createSqliteStore, type RunSummary, type SqliteStore, type SqliteStoreOptions } from './sqliteStore.js';
