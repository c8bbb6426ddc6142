/** Placeholder names; the CRI log module replaces this file. */
export const CRI_LOG_NAME = "container.log";
export const LEGACY_LOG_NAME = "log";
