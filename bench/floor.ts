/**
 * The floors the CLI benches measure against, compiled the way minikubelet is (bench/build-floor.ts):
 *   floor hello          prints one line (a compiled Bun process's start-up and exit)
 *   floor rows DB        steps through every event row in the events command's order, printing nothing but the count
 */
import { Database } from "bun:sqlite";

const [mode, path] = process.argv.slice(2);
if (mode === "hello") {
  console.log("hello");
} else if (mode === "rows" && path) {
  const db = new Database(path, { readonly: true });
  let rows = 0;
  for (const _ of db.query("SELECT id, pod_uid, namespace, pod, container, type, reason, message, count, first_at, last_at, revision, created_revision FROM events ORDER BY last_at, id").iterate()) rows++;
  console.log(rows);
} else {
  console.error("usage: floor hello | floor rows DB");
  process.exit(2);
}
