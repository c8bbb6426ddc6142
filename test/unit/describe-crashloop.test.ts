import { expect, test } from "bun:test";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

// kubectl's tabwriter keeps trailing spaces (`Image ID:` with no value, `True ` in Conditions).
const EXPECTED = `Name:         crash-lab
Namespace:    demo
Node:         lab/127.0.0.1
Start Time:   Thu, 01 Jan 2026 12:00:00 +0000
Labels:       <none>
Annotations:  kubernetes.io/config.hash: hash-crash-1
              kubernetes.io/config.seen: 2026-01-01T12:00:00Z
              kubernetes.io/config.source: file
Status:       Running
IP:           10.0.0.2
IPs:
  IP:  10.0.0.2
Containers:
  crash:
    Container ID:  fake://crash-3-5
    Image:         busybox:1.36
    Image ID:      
    Port:          <none>
    Host Port:     <none>
    Command:
      sh
      -c
      exit 1
    State:          Terminated
      Reason:       Error
      Exit Code:    1
      Started:      Thu, 01 Jan 2026 12:00:33 +0000
      Finished:     Thu, 01 Jan 2026 12:00:34 +0000
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
      Started:      Thu, 01 Jan 2026 12:00:12 +0000
      Finished:     Thu, 01 Jan 2026 12:00:13 +0000
    Ready:          False
    Restart Count:  3
    Environment:
      MODE:  fail
    Mounts:  <none>
Conditions:
  Type                        Status
  PodReadyToStartContainers   True 
  Initialized                 True 
  Ready                       False 
  ContainersReady             False 
Volumes:                      <none>
QoS Class:                    BestEffort
Node-Selectors:               <none>
Tolerations:                  <none>
Attempts:
  Container  Attempt  Started  Duration  Exit Code  Reason  Killed By  Container ID
  ---------  -------  -------  --------  ---------  ------  ---------  ------------
  crash      0        60s ago  1s        1          Error   -          crash-0-2
  crash      1        59s ago  1s        1          Error   -          crash-1-3
  crash      2        48s ago  1s        1          Error   -          crash-2-4
  crash      3        27s ago  1s        1          Error   -          crash-3-5
Events:
  Type     Reason   Age                From     Message
  ----     ------   ----               ----     -------
  Normal   Created  27s (x4 over 60s)  kubelet  Created container: crash
  Normal   Started  27s (x4 over 60s)  kubelet  Started container crash
  Warning  Exited   26s (x4 over 59s)  kubelet  Container crash exited with code 1 (Error)
  Warning  BackOff  26s (x3 over 58s)  kubelet  Back-off restarting failed container crash in pod crash-lab
`;

test("describe prints kubectl's layout for a crash loop, with BackOff counts and every attempt", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  const crash = pod({ name: "crash", containers: [container("crash", { command: ["sh", "-c", "exit 1"], env: [{ name: "MODE", value: "fail" }] })] });
  await h.kubelet.sync(desired(crash));
  await h.advance(60);
  let out = "";
  await describeCommand("pod", "crash-lab", { db: h.dbPath }, { clock: h.clock, stdout: (t) => (out += t), utcOffsetMinutes: 0 });
  expect(out).toBe(EXPECTED);
  h.agent.close();
});

test("describe of a pod that is not there names it and the database", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web" })));
  await expect(describeCommand("pod", "nope", { db: h.dbPath }, { clock: h.clock, stdout: () => {} })).rejects.toThrow(
    `Error from server (NotFound): pods "nope" not found\nno pod named nope in any namespace of ${h.dbPath}`,
  );
  h.agent.close();
});
