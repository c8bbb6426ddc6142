/**
 * Drives the agent's API with npm's @kubernetes/client-node under Node, as a user's script would,
 * and prints one JSON line per step for node-client.test.ts to check: create (a body without
 * apiVersion or kind), an informer, the library's Watch, list, read log (Log and
 * readNamespacedPodLog), exec, delete (port-forward has its own script, portforward-node.mjs).
 * Usage: node node-client.mjs KUBECONFIG NAMESPACE POD
 */
import { Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";

const [kubeconfig, namespace, pod] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);

const report = (step, facts) => console.log(JSON.stringify({ step, ...facts }));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One step; a failure is reported (with the API's status and body when there is one) rather than ending the script. */
async function attempt(step, action) {
  try {
    await action();
  } catch (error) {
    report(step, { error: { code: error?.code, body: error?.body, message: String(error?.message ?? error) } });
  }
}

/** A Writable that keeps what it is given, as text. */
function collector() {
  const sink = { text: "" };
  sink.stream = new Writable({ write: (chunk, _encoding, done) => ((sink.text += String(chunk)), done()) });
  return sink;
}

/** Resolves when `predicate()` holds, polling; rejects after `ms`. */
async function until(what, predicate, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const informerEvents = [];
let informer;

await attempt("informer-start", async () => {
  const list = () => core.listNamespacedPod({ namespace, labelSelector: "client=node" });
  informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, list, "client=node");
  for (const verb of ["add", "update", "delete"]) informer.on(verb, (obj) => informerEvents.push(`${verb}:${obj.metadata.name}:${obj.status?.phase ?? ""}`));
  informer.on("error", (err) => informerEvents.push(`error:${err?.message ?? err}`));
  await informer.start();
  report("informer-start", {});
});

const watchEvents = [];
let watchRequest;
await attempt("watch-start", async () => {
  const watch = new k8s.Watch(kc);
  watchRequest = await watch.watch(`/api/v1/namespaces/${namespace}/pods`, { fieldSelector: `metadata.name=${pod}` }, (type, obj) => watchEvents.push(`${type}:${obj.status?.phase ?? ""}`), (err) => err && err.name !== "AbortError" && watchEvents.push(`error:${err.message}`));
  report("watch-start", {});
});

await attempt("create", async () => {
  const body = {
    metadata: { name: pod, labels: { client: "node" } },
    // Ready a second after it runs, so the informer and the watch see it change, not only appear.
    spec: {
      containers: [{ name: "web", image: "busybox", command: [process.execPath, "-e", 'console.log("hello from node"); setInterval(() => {}, 1 << 30)'], readinessProbe: { exec: { command: ["true"] }, initialDelaySeconds: 1, periodSeconds: 1 } }],
      terminationGracePeriodSeconds: 1,
    },
  };
  const created = await core.createNamespacedPod({ namespace, body });
  report("create", { name: created.metadata.name, kind: created.kind, phase: created.status?.phase });
});

await attempt("running", async () => {
  await until("the pod running and ready", async () => (await core.readNamespacedPod({ name: pod, namespace })).status?.containerStatuses?.[0]?.ready === true);
  await until("the informer's running pod", () => informerEvents.some((event) => event.endsWith(":Running")), 10_000);
  report("running", { watch: [...watchEvents], informer: [...informerEvents], cached: informer.list(namespace).map((p) => p.metadata.name) });
});

await attempt("list", async () => {
  const listed = await core.listNamespacedPod({ namespace, labelSelector: "client=node" });
  report("list", { names: listed.items.map((p) => p.metadata.name), resourceVersion: listed.metadata?.resourceVersion });
});

await attempt("log", async () => {
  let text = "";
  await until("the pod's output", async () => (text = await core.readNamespacedPodLog({ name: pod, namespace })).includes("hello"), 10_000);
  const streamed = collector();
  // 1.4.0's Log pipes the body into the stream and never calls its done callback: the stream's finish is the end.
  const finished = new Promise((resolve) => streamed.stream.on("finish", resolve));
  await new k8s.Log(kc).log(namespace, pod, "web", streamed.stream, { follow: false });
  await finished;
  report("log", { text, streamed: streamed.text });
});

await attempt("exec", async () => {
  const out = collector();
  const err = collector();
  const status = await new Promise((resolve, reject) => {
    new k8s.Exec(kc).exec(namespace, pod, "web", ["sh", "-c", "echo out; echo err >&2; exit 3"], out.stream, err.stream, null, false, resolve).catch(reject);
  });
  await sleep(100);
  report("exec", { stdout: out.text, stderr: err.text, status: status.status, reason: status.reason, exitCode: status.details?.causes?.find((c) => c.reason === "ExitCode")?.message });
});

await attempt("delete", async () => {
  const deleted = await core.deleteNamespacedPod({ name: pod, namespace });
  report("delete", { kind: deleted.kind, deletionTimestamp: deleted.metadata?.deletionTimestamp ?? null });
  await until("the informer's delete", () => informerEvents.some((event) => event.startsWith(`delete:${pod}`)), 20_000);
  await until("the watch's DELETED", () => watchEvents.some((event) => event.startsWith("DELETED")), 5_000);
  report("gone", { watch: [...watchEvents], informer: [...informerEvents], cached: informer.list(namespace).map((p) => p.metadata.name) });
});

watchRequest?.abort();
await informer?.stop();
process.exit(0);
