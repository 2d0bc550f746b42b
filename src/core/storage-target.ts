/** What the service writes to disk: call recordings, and the database. */
export const STORAGE_TARGETS = ["recording", "database"] as const;
export type StorageTarget = (typeof STORAGE_TARGETS)[number];
