/**
 * The schema migrations, embedded at build time (`bun build --compile` inlines text imports), so
 * the binary never reads migrations/ at run time. Append new files here in order; never edit an
 * applied one: `migrate()` refuses a database whose recorded hash differs.
 */
import init from "../../migrations/0001_init.sql" with { type: "text" };
import invalidManifests from "../../migrations/0002_invalid_manifests.sql" with { type: "text" };
import agentIdentity from "../../migrations/0003_agent_identity.sql" with { type: "text" };
import watchHistory from "../../migrations/0004_watch_history.sql" with { type: "text" };
import apiPods from "../../migrations/0005_api_pods.sql" with { type: "text" };
import agentSettings from "../../migrations/0006_agent_settings.sql" with { type: "text" };
import node from "../../migrations/0007_node.sql" with { type: "text" };
import dbBounds from "../../migrations/0008_dbbounds.sql" with { type: "text" };
import servedPod from "../../migrations/0009_served_pod.sql" with { type: "text" };
import namespaces from "../../migrations/0010_namespaces.sql" with { type: "text" };
import apiObjects from "../../migrations/0011_api_objects.sql" with { type: "text" };

export interface Migration {
  /** 1, 2, 3 ...: the number in the file name. */
  version: number;
  /** The file name, recorded in the schema table. */
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "0001_init.sql", sql: init },
  { version: 2, name: "0002_invalid_manifests.sql", sql: invalidManifests },
  { version: 3, name: "0003_agent_identity.sql", sql: agentIdentity },
  { version: 4, name: "0004_watch_history.sql", sql: watchHistory },
  { version: 5, name: "0005_api_pods.sql", sql: apiPods },
  { version: 6, name: "0006_agent_settings.sql", sql: agentSettings },
  { version: 7, name: "0007_node.sql", sql: node },
  { version: 8, name: "0008_dbbounds.sql", sql: dbBounds },
  { version: 9, name: "0009_served_pod.sql", sql: servedPod },
  { version: 10, name: "0010_namespaces.sql", sql: namespaces },
  { version: 11, name: "0011_api_objects.sql", sql: apiObjects },
];

/** Hex sha256 of a migration's text, as recorded when it was applied. */
export function migrationHash(sql: string): string {
  // Bun's hasher, not node:crypto: a read-only command checks these hashes at each start, and
  // loading node:crypto would cost it more than its query.
  return new Bun.CryptoHasher("sha256").update(sql).digest("hex");
}
